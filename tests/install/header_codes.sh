#!/bin/sh
# tests/install/header_codes.sh SOURCE_DIR — every public function that can
# fail names the error codes it returns (ARCHITECTURE "Comments"; issue 33).
# A function is fallible when it is declared in include/adcp/*.h and returns
# int (0 or a negative ADCP_E* code). Its comment — the comment block right
# above it, which may head a group of declarations with no blank line between
# them, or one on its own lines — must name at least one code (ADCP_EX, X or
# the wire name, e.g. ADCP_ESTORAGE, STORAGE, STORAGE_ERROR), or say "never
# fails" (predicates, counts and versions that return no code). Every header
# is read, so a header added later is held to the same rule. Prints each
# offender as FILE:LINE: NAME and exits 1 when there is one.
set -eu
src=$1
codes=$(sed -n 's/^[[:space:]]*ADCP_E\([A-Z0-9_]*\) = -[0-9]*.*/\1/p' "$src/include/adcp/core.h" | grep -v '^CODE_MIN$')
wire=$(sed -n 's/^[[:space:]]*"\([A-Z][A-Z0-9_]*\)",$/\1/p' "$src/src/core/error.c")
[ -n "$codes" ] || { echo "header_codes: no ADCP_E* codes found in core.h" >&2; exit 1; }
list=$(for c in $codes; do printf '%s E%s ADCP_E%s ' "$c" "$c" "$c"; done; echo $wire)
status=0
for h in "$src"/include/adcp/*.h; do
  awk -v codes="$list" -v file="include/adcp/${h##*/}" '
    BEGIN { n = split(codes, a, " "); for (i = 1; i <= n; i++) known[a[i]] = 1; bad = 0 }
    function names_code(t,   m, i, w) {
      if (tolower(t) ~ /never fails/) return 1
      m = split(t, w, /[^A-Za-z0-9_]+/)
      for (i = 1; i <= m; i++) if (w[i] in known) return 1
      return 0
    }
    # Text of a line outside comments (a comment opened earlier on it is dropped).
    function code_of(l) { gsub(/\/\*.*\*\//, "", l); return l }
    {
      line = $0
      if (incomment) {
        cur = cur " " line
        if (line ~ /\*\//) { incomment = 0; lastc = 1 }
        next
      }
      if (line ~ /^[[:space:]]*$/) { cur = ""; lastc = 0; next }
      if (line ~ /^[[:space:]]*\/\*/) {
        if (!lastc) cur = ""
        cur = cur " " line
        if (line !~ /\*\//) incomment = 1; else lastc = 1
        next
      }
      lastc = 0
      c = code_of(line)
      # Declarations continue until their ";"; their own comments count.
      if (indecl) {
        decl = decl " " line
        if (c ~ /;/) { indecl = 0; check() }
        next
      }
      if (depth == 0 && c ~ /^(ADCP_API )?int[[:space:]]+\**adcp_[a-z0-9_]+\(/) {
        decl = line; dline = NR
        name = c; sub(/^(ADCP_API )?int[[:space:]]+\**/, "", name); sub(/\(.*/, "", name)
        if (c ~ /;/) check(); else indecl = 1
        next
      }
      if (depth == 0 && c ~ /^(ADCP_API )?[a-z_][a-z0-9_ ]*[ *]adcp_[a-z0-9_]+\(/) {
        if (c !~ /;/) { while ((getline nxt) > 0) { if (code_of(nxt) ~ /;/) break } }
        next # not int: nothing to return but its value
      }
      o = gsub(/\{/, "{", c); cl = gsub(/\}/, "}", c); depth += o - cl
      cur = ""
    }
    function check() {
      if (!names_code(cur " " decl)) { printf "%s:%d: %s names no error code\n", file, dline, name; bad = 1 }
    }
    END { exit bad }
  ' "$h" || status=1
done
[ "$status" = 0 ] && echo "header_codes: ok: every public int function names its error codes"
exit "$status"
