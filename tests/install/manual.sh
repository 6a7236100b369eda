#!/bin/bash
# tests/install/manual.sh BINARY MANUAL_DIR — the manual and completions against
# the dispatch table (`BINARY help --commands`): every command answers --help
# (exit 0, text on stdout) and `help COMMAND` with the same text, has a page
# adcp-ledger-COMMAND.1 whose text is exactly that help (no drift) and an entry
# in adcp-ledger(1); the bash completion parses, loads and completes commands,
# subcommands and options; the zsh completion parses.
set -u
bin=$1 dir=$2
status=0
fail() { echo "manual test: $*" >&2; status=1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adcp-manual.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$bin" help --commands >"$tmp/commands" || fail "help --commands failed"
[ -s "$tmp/commands" ] || fail "help --commands printed nothing"
# The page text between .nf and .fi, with the roff escapes of gen-manual.sh undone.
page_text() { sed -n '/^\.nf$/,/^\.fi$/p' "$1" | sed -e '1d' -e '$d' -e 's/^\\&//' -e 's/\\-/-/g' -e 's/\\e/\\/g'; }
n=0
while IFS=$'\t' read -r name summary; do
  n=$((n + 1))
  [ -n "$summary" ] || fail "$name: no summary in the dispatch table"
  if ! "$bin" "$name" --help >"$tmp/help" 2>"$tmp/err"; then fail "$name --help exits non-zero"; continue; fi
  [ -s "$tmp/help" ] || fail "$name --help prints nothing on stdout"
  "$bin" help "$name" >"$tmp/help2" 2>/dev/null || fail "help $name exits non-zero"
  cmp -s "$tmp/help" "$tmp/help2" || fail "help $name differs from $name --help"
  page=$dir/man1/adcp-ledger-$name.1
  if [ ! -f "$page" ]; then fail "$name: no man page adcp-ledger-$name.1"; continue; fi
  page_text "$page" >"$tmp/page"
  cmp -s "$tmp/help" "$tmp/page" || fail "adcp-ledger-$name.1 differs from '$name --help' (rebuild the manual)"
  grep -q "^\.BR adcp\\\\-ledger\\\\-$(printf '%s' "$name" | sed 's/-/\\\\-/g') (1)$" "$dir/man1/adcp-ledger.1" ||
    fail "adcp-ledger.1 does not list $name"
  if command -v groff >/dev/null 2>&1; then
    warn=$(groff -k -man -ww -z "$page" 2>&1)
    [ -z "$warn" ] || fail "adcp-ledger-$name.1: groff warnings: $warn"
  fi
done <"$tmp/commands"
[ "$n" -gt 0 ] || fail "no commands"
# No page without a command either (a removed command leaves none behind).
for p in "$dir"/man1/adcp-ledger-*.1; do
  c=$(basename "$p" .1); c=${c#adcp-ledger-}
  cut -f1 "$tmp/commands" | grep -qx -- "$c" || fail "man page for $c, which is not in the dispatch table"
done

# The configuration file and the library have pages too, groff-clean.
for p in "$dir/man5/adcp-ledger.conf.5" "$dir/man3/adcp-ledger.3"; do
  [ -f "$p" ] || { fail "no page $(basename "$p")"; continue; }
  if command -v groff >/dev/null 2>&1; then
    warn=$(groff -k -man -ww -z "$p" 2>&1)
    [ -z "$warn" ] || fail "$(basename "$p"): groff warnings: $warn"
  fi
done
# Every docs/NAME.md a page names exists (it is installed: tests/install/install.sh).
src_docs=$(cd "$(dirname "$0")/../../docs" && pwd)
for ref in $(cat "$dir"/man*/* | sed 's/\\-/-/g' | grep -o 'docs/[a-z0-9-]*\.md' | sort -u); do
  [ -f "$src_docs/${ref#docs/}" ] || fail "a man page names $ref, which does not exist"
done

bc=$dir/completion/adcp-ledger
bash -n "$bc" || fail "bash completion: syntax error"
out=$(bash --norc --noprofile -c '. "$1" || exit 1; complete -p adcp-ledger' _ "$bc" 2>&1) || fail "bash completion does not load: $out"
[[ $out == *"-F _adcp_ledger"*"adcp-ledger"* ]] || fail "bash completion registers no function: $out"
complete_words() { # WORDS... -> COMPREPLY, one per line
  bash --norc --noprofile -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _adcp_ledger; printf "%s\n" "${COMPREPLY[@]}"' _ "$bc" "$@"
}
first=$(head -n 1 "$tmp/commands" | cut -f1)
complete_words adcp-ledger "${first:0:3}" | grep -qx -- "$first" || fail "bash completion: '${first:0:3}' does not complete to $first"
complete_words adcp-ledger --db x "" | grep -qx -- "$first" || fail "bash completion: commands after --db URL"
if grep -q '^binding' "$tmp/commands"; then
  complete_words adcp-ledger binding "" | grep -qx probe || fail "bash completion: binding subcommands"
fi
if grep -q '^commit' "$tmp/commands"; then
  complete_words adcp-ledger commit --acc | grep -qx -- --account || fail "bash completion: commit options"
fi
complete_words adcp-ledger help "" | grep -qx -- "$first" || fail "bash completion: help COMMAND"
# From the option tables: enumeration values, files only where a file is
# expected, binding IDs from the configuration, subcommands from the tables.
if grep -q '^commit' "$tmp/commands"; then
  [ "$(complete_words adcp-ledger commit --finality "" | sort | tr '\n' ' ')" = "official snapshot " ] ||
    fail "bash completion: commit --finality does not offer snapshot and official"
  (cd "$tmp" && : >rows.jsonl && complete_words adcp-ledger commit --totals row | grep -qx rows.jsonl) ||
    fail "bash completion: commit --totals does not offer files"
  (cd "$tmp" && [ -z "$(complete_words adcp-ledger commit --account row)" ]) ||
    fail "bash completion: commit --account offers files"
  mkdir -p "$tmp/b"
  printf '{"bindings":[{"id":"fsone","provider":"filesystem","prefix":"p","location":{"root":"r"},"root_dir":"%s/b"}]}' \
    "$tmp" >"$tmp/cfg.json"
  (PATH=$(dirname "$bin"):$PATH; complete_words adcp-ledger --config "$tmp/cfg.json" commit --binding "" | grep -qx fsone) ||
    fail "bash completion: commit --binding does not offer the configured binding IDs"
fi
if grep -q '^changes' "$tmp/commands"; then
  complete_words adcp-ledger changes "" | grep -qx resync || fail "bash completion: changes subcommands"
fi

zc=$dir/completion/_adcp-ledger
head -n 1 "$zc" | grep -qx '#compdef adcp-ledger' || fail "zsh completion: no #compdef line"
if command -v zsh >/dev/null 2>&1; then
  zsh -n "$zc" || fail "zsh completion: syntax error"
else
  fail "zsh is not installed (scripts/install-deps.sh installs it): the zsh completion is unchecked"
fi
[ "$status" = 0 ] && echo "manual test: ok ($n commands)"
exit "$status"
