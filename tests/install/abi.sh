#!/bin/sh
# tests/install/abi.sh SOURCE_DIR SHARED_LIB STATIC_LIB SONAME — the ABI surface
# (docs/abi.md): the SONAME; only adcp_* symbols exported, each declared in a
# public header; internal functions hidden; every include/adcp/*.h wraps its
# declarations in ADCP_BEGIN_DECLS / ADCP_END_DECLS (a new header without them
# would export nothing and lose C++ linkage), with no extern "C" of its own.
set -eu
src=$1 so=$2 ar=$3 soname=$4
fail() { echo "abi test: $*" >&2; status=1; }
status=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adcp-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

got=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$got" = "$soname" ] || fail "SONAME is '$got', expected '$soname'"

nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/exported"
[ -s "$tmp/exported" ] || fail "the shared library exports nothing"
bad=$(grep -v '^adcp_' "$tmp/exported" || true)
[ -z "$bad" ] || fail "exported symbols outside adcp_*: $(echo $bad)"
cat "$src"/include/adcp/*.h >"$tmp/headers"
while read -r sym; do
  grep -qw -- "$sym" "$tmp/headers" || fail "exported symbol $sym is declared in no public header (internal: declare it in src/, it stays hidden)"
done <"$tmp/exported"
nm -g --defined-only "$ar" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/archive"
hidden=$(comm -23 "$tmp/archive" "$tmp/exported" | wc -l)
[ "$hidden" -gt 0 ] || fail "no internal symbol is hidden: is the library built with -fvisibility=hidden?"

for h in "$src"/include/adcp/*.h; do
  n=$(basename "$h")
  b=$(grep -c '^ADCP_BEGIN_DECLS$' "$h" || true)
  e=$(grep -c '^ADCP_END_DECLS$' "$h" || true)
  [ "$b" = 1 ] && [ "$e" = 1 ] || fail "include/adcp/$n: needs exactly one ADCP_BEGIN_DECLS and one ADCP_END_DECLS line (found $b and $e)"
  if [ "$n" != core.h ] && grep -q 'extern "C"' "$h"; then
    fail "include/adcp/$n: uses extern \"C\" itself; ADCP_BEGIN_DECLS/ADCP_END_DECLS provide it"
  fi
  # Declarations must sit between the two macros.
  awk '/^ADCP_BEGIN_DECLS$/ { inside = 1 } /^ADCP_END_DECLS$/ { inside = 0 }
       /^[a-z].*\(/ && !inside && !/^typedef/ && !/^static/ { print FILENAME ":" FNR ": " $0; bad = 1 }
       END { exit bad }' "$h" || fail "include/adcp/$n: a declaration outside ADCP_BEGIN_DECLS/ADCP_END_DECLS"
done
[ "$status" = 0 ] && echo "abi test: ok ($(wc -l <"$tmp/exported") exported, $hidden hidden)"
exit "$status"
