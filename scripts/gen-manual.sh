#!/bin/sh
# scripts/gen-manual.sh BINARY OUTDIR VERSION — the manual and the shell
# completions, generated from the built CLI itself so they cannot drift from it:
#   `BINARY help --commands` lists the dispatch table (NAME<TAB>SUMMARY),
#   `BINARY help --options` the option tables (completions), and
#   `BINARY --help` / `BINARY NAME --help` are the texts.
# Writes OUTDIR/man1/adcp-ledger.1, OUTDIR/man1/adcp-ledger-NAME.1 per command,
# OUTDIR/man5/adcp-ledger.conf.5 and OUTDIR/man3/adcp-ledger.3 (from packaging/man/),
# OUTDIR/completion/adcp-ledger (bash) and OUTDIR/completion/_adcp-ledger (zsh).
# Fails when a command has no --help (exit status not 0, or nothing printed).
# Run by the build (cmake/install.cmake); docs/packaging.md.
set -eu
bin=$1
out=$2
version=${3:-}
mkdir -p "$out/man1" "$out/man3" "$out/man5" "$out/completion"
here=$(cd "$(dirname "$0")/.." && pwd)
# The help texts name design notes as docs/NAME.md: those are installed under
# share/doc/adcp-ledger/docs/ (cmake/install.cmake); every page says so.
docs_note='The files docs/\fINAME\fR.md named above are installed as \fIshare/doc/adcp\-ledger/docs/NAME.md\fR under the installation prefix.'
for p in man5/adcp-ledger.conf.5 man3/adcp-ledger.3; do
  sed "s/@VERSION@/$version/" "$here/packaging/man/$(basename "$p")" >"$out/$p"
done
tab=$(printf '\t')

# roff: backslashes first, then minus signs (so options copy as ASCII "-"),
# then lines that would start a request.
roff() {
  sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

commands=$("$bin" help --commands)
[ -n "$commands" ] || { echo "gen-manual.sh: $bin help --commands printed nothing" >&2; exit 1; }

helptext() { # NAME -> the command's --help on stdout, or fail
  if ! text=$("$bin" "$1" --help 2>/dev/null) || [ -z "$text" ]; then
    echo "gen-manual.sh: '$bin $1 --help' failed or printed nothing" >&2
    return 1
  fi
  printf '%s\n' "$text"
}

# ---- man pages ----
main_help=$("$bin" --help)
{
  printf '.\\" -*- coding: UTF-8 -*-\n'
  printf '.TH ADCP\\-LEDGER 1 """" "adcp\\-ledger %s" "adcp-ledger manual"\n' "$version"
  printf '.SH NAME\nadcp\\-ledger \\- verifiable storage of AdCP reporting revisions\n'
  printf '.SH DESCRIPTION\nThe text below is what \\fBadcp\\-ledger \\-\\-help\\fR prints.\n.PP\n.nf\n'
  printf '%s\n' "$main_help" | roff
  printf '.fi\n.SH COMMANDS\nEach command has its own page, \\fBadcp\\-ledger\\-\\fICOMMAND\\fR(1), with the text of\n'
  printf '\\fBadcp\\-ledger help \\fICOMMAND\\fR.\n'
  printf '%s\n' "$commands" | while IFS="$tab" read -r name summary; do
    printf '.TP\n.BR adcp\\-ledger\\-%s (1)\n' "$(printf '%s' "$name" | roff)"
    printf '%s\n' "$summary" | roff
  done
  printf '.SH FILES\nThe design notes and guides: \\fIshare/doc/adcp\\-ledger/docs/\\fR under the installation prefix\n'
  printf '(cli.md, config.md, operations.md, \\&...). %s\n' "$docs_note"
  printf '.SH SEE ALSO\n.BR adcp\\-ledger.conf (5),\n.BR adcp\\-ledger (3)\n'
} >"$out/man1/adcp-ledger.1"

printf '%s\n' "$commands" | while IFS="$tab" read -r name summary; do
  text=$(helptext "$name")
  ename=$(printf '%s' "$name" | roff)
  {
    printf '.\\" -*- coding: UTF-8 -*-\n'
    printf '.TH ADCP\\-LEDGER\\-%s 1 "" "adcp\\-ledger %s" "adcp-ledger manual"\n' \
      "$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]' | roff)" "$version"
    printf '.SH NAME\nadcp\\-ledger\\-%s \\- %s\n' "$ename" "$(printf '%s' "$summary" | roff)"
    printf '.SH DESCRIPTION\nThe text of \\fBadcp\\-ledger %s \\-\\-help\\fR (also \\fBadcp\\-ledger help %s\\fR).\n' \
      "$ename" "$ename"
    printf '.PP\n.nf\n'
    printf '%s\n' "$text" | roff
    printf '.fi\n.SH FILES\n%s\n' "$docs_note"
    printf '.SH SEE ALSO\n.BR adcp\\-ledger (1),\n.BR adcp\\-ledger.conf (5)\n'
  } >"$out/man1/adcp-ledger-$name.1"
done

# ---- completions ----
# From the option tables (`help --options`: COMMAND<TAB>OPTION<TAB>KIND<TAB>VALUES,
# and COMMAND<TAB><TAB>sub<TAB>NAME): each command's options, the values of
# its enumerations, files only for file options, binding IDs (from
# `config check --json`) for binding options. Subcommands of commands without
# subcommand tables come from their usage lines.
options=$("$bin" help --options)
[ -n "$options" ] || { echo "gen-manual.sh: $bin help --options printed nothing" >&2; exit 1; }
top() { printf '%s' "$1" | cut -d' ' -f1; }
opts_for() { # NAME -> its options (every subcommand's too), space-separated
  printf '%s\n' "$options" | awk -F '\t' -v c="$1" '{ split($1, w, " ") } w[1] == c && $2 != "" && !seen[$2]++ { printf "%s ", $2 }'
}
subs_for() { # NAME TEXT -> subcommands from the table, else from the usage lines
  s=$(printf '%s\n' "$options" | awk -F '\t' -v c="$1" '$1 == c && $3 == "sub" { printf "%s ", $4 }')
  [ -n "$s" ] && { printf '%s' "$s"; return; }
  subcommands_of "$1" "$2"
}
subcommands_of() { # NAME TEXT
  printf '%s\n' "$2" | awk -v cmd="$1" '
    /adcp-ledger/ { for (i = 1; i < NF; i++) if ($i == cmd) {
        n = split($(i + 1), parts, "|")
        for (k = 1; k <= n; k++) if (parts[k] ~ /^[a-z][a-z-]*$/ && !seen[parts[k]]++) printf "%s ", parts[k]
        break } }'
}
options_of() { printf '%s\n' "$1" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' '; }
globals=$(options_of "$main_help")
# Global options that take a value: shown as "--opt VALUE" in the main help.
value_globals=$(printf '%s\n' "$main_help" | grep -o -- '--[a-z][a-z0-9-]* [A-Z][A-Z_]*' | cut -d' ' -f1 | sort -u |
  tr '\n' '|' | sed 's/|$//')
[ -n "$value_globals" ] || value_globals='--db|--config'
names=$(printf '%s\n' "$commands" | cut -f1 | tr '\n' ' ')

{
  printf '# bash completion for adcp-ledger. Generated by scripts/gen-manual.sh from\n'
  printf "# 'adcp-ledger help --commands' and 'help --options' (the option tables); do not edit.\n"
  printf '_adcp_ledger_bindings() {\n'
  printf '  local i cfg=()\n'
  printf '  for ((i = 1; i < COMP_CWORD; i++)); do [[ ${COMP_WORDS[i]} == --config ]] && cfg=(--config "${COMP_WORDS[i+1]}"); done\n'
  printf '  adcp-ledger "${cfg[@]}" config check --json 2>/dev/null | grep -o '"'"'"id":"[^"]*"'"'"' | cut -d'"'"'"'"'"' -f4\n'
  printf '}\n'
  printf '_adcp_ledger() {\n'
  printf '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n'
  printf '  local commands="%s help"\n' "$names"
  printf '  local globals="%s"\n' "$globals"
  printf '  local i cmd="" at=0\n'
  printf '  for ((i = 1; i < COMP_CWORD; i++)); do\n'
  printf '    case ${COMP_WORDS[i]} in\n'
  printf '      %s) ((i++)) ;;\n' "$value_globals"
  printf '      -*) ;;\n'
  printf '      *) cmd=${COMP_WORDS[i]}; at=$i; break ;;\n'
  printf '    esac\n'
  printf '  done\n'
  printf '  case $prev in\n'
  printf '    --config) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;\n'
  printf '  esac\n'
  printf '  case "$cmd $prev" in\n'
  printf '%s\n' "$options" | awk -F '\t' '$3 == "file" || $3 == "enum" || $3 == "binding" || $3 == "value" {
      split($1, w, " "); key = w[1] " " $2
      if (seen[key]++) next
      if ($3 == "file") printf "    \"%s\") COMPREPLY=($(compgen -f -- \"$cur\")); return 0 ;;\n", key
      else if ($3 == "enum") printf "    \"%s\") COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return 0 ;;\n", key, $4
      else if ($3 == "binding") printf "    \"%s\") COMPREPLY=($(compgen -W \"$(_adcp_ledger_bindings)\" -- \"$cur\")); return 0 ;;\n", key
      else printf "    \"%s\") COMPREPLY=(); return 0 ;;\n", key }'
  printf '  esac\n'
  printf '  if [[ -z $cmd ]]; then\n'
  printf '    COMPREPLY=($(compgen -W "$commands $globals" -- "$cur")); return 0\n'
  printf '  fi\n'
  printf '  local opts="" subs=""\n'
  printf '  case $cmd in\n'
  printf '    help) subs=$commands ;;\n'
  printf '%s\n' "$commands" | while IFS="$tab" read -r name summary; do
    text=$(helptext "$name")
    printf '    %s) opts="%s--json"; subs="%s" ;;\n' "$name" "$(opts_for "$name")" "$(subs_for "$name" "$text")"
  done
  printf '  esac\n'
  printf '  if [[ $cur == -* ]]; then\n'
  printf '    COMPREPLY=($(compgen -W "$opts --db --config --help" -- "$cur"))\n'
  printf '  elif [[ -n $subs && $COMP_CWORD -eq $((at + 1)) ]]; then\n'
  printf '    COMPREPLY=($(compgen -W "$subs" -- "$cur"))\n'
  printf '  else\n'
  printf '    COMPREPLY=($(compgen -f -- "$cur"))\n'
  printf '  fi\n'
  printf '  return 0\n'
  printf '}\n'
  printf 'complete -F _adcp_ledger adcp-ledger\n'
} >"$out/completion/adcp-ledger"

zq() { printf '%s' "$1" | sed -e "s/'/'\\\\''/g" -e 's/:/\\:/g'; } # zsh single-quoted, colons escaped
{
  printf '#compdef adcp-ledger\n'
  printf '# zsh completion for adcp-ledger. Generated by scripts/gen-manual.sh from\n'
  printf "# 'adcp-ledger help --commands' and each command's --help; do not edit.\n"
  printf '_adcp-ledger() {\n'
  printf '  local curcontext=$curcontext state line\n'
  printf '  local -a commands opts subs\n'
  printf '  commands=(\n'
  printf '%s\n' "$commands" | while IFS="$tab" read -r name summary; do
    printf "    '%s:%s'\n" "$(zq "$name")" "$(zq "$summary")"
  done
  printf "    'help:print the help of a command'\n"
  printf '  )\n'
  printf "  _arguments -C '--db[database URL]:url:' '--config[configuration file]:file:_files' \\\\\n"
  printf "    '(- *)--version[print the versions]' '(- *)--help[print the help]' \\\\\n"
  printf "    '1:command:->command' '*::argument:->argument'\n"
  printf '  case $state in\n'
  printf "    command) _describe -t commands 'adcp-ledger command' commands ;;\n"
  printf '    argument)\n'
  printf '      case $words[1] in\n'
  printf '        help) subs=(${commands%%%%:*}) ;;\n'
  printf '%s\n' "$commands" | while IFS="$tab" read -r name summary; do
    text=$(helptext "$name")
    printf '        %s) opts=(%s--json); subs=(%s) ;;\n' "$name" "$(opts_for "$name")" "$(subs_for "$name" "$text")"
  done
  printf '      esac\n'
  printf '      if [[ $PREFIX == -* ]]; then compadd -- $opts --db --config --help\n'
  printf '      elif (( CURRENT == 2 && $#subs )); then compadd -- $subs\n'
  printf '      else _files; fi ;;\n'
  printf '  esac\n'
  printf '}\n'
  printf '_adcp-ledger "$@"\n'
} >"$out/completion/_adcp-ledger"
