#!/bin/sh
# tests/install/abi.sh SOURCE_DIR SHARED_LIB STATIC_LIB SONAME — the ABI surface
# (docs/abi.md): the SONAME; only adcp_* symbols exported, each declared in a
# public header; internal functions hidden; every global of the static archive
# is adcp_* too (internals: adcp_<room>__NAME); every include/adcp/*.h wraps its
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
# The static archive too: an embedder links every global of it, hidden or not,
# so an internal global is adcp_<room>__NAME, never a bare name that can collide.
bad_ar=$(grep -v '^adcp_' "$tmp/archive" || true)
[ -z "$bad_ar" ] || fail "globals outside adcp_* in the static archive: $(echo $bad_ar)"
hidden=$(comm -23 "$tmp/archive" "$tmp/exported" | wc -l)
[ "$hidden" -gt 0 ] || fail "no internal symbol is hidden: is the library built with -fvisibility=hidden?"

# check_headers DIR: every DIR/*.h uses the macros (prints what is wrong).
check_headers() {
  rc=0
  for h in "$1"/*.h; do
    n=$(basename "$h")
    b=$(grep -c '^ADCP_BEGIN_DECLS$' "$h" || true)
    e=$(grep -c '^ADCP_END_DECLS$' "$h" || true)
    if [ "$b" != 1 ] || [ "$e" != 1 ]; then
      echo "include/adcp/$n: needs exactly one ADCP_BEGIN_DECLS and one ADCP_END_DECLS line (found $b and $e)"
      rc=1
    fi
    if [ "$n" != core.h ] && grep -q 'extern "C"' "$h"; then
      echo "include/adcp/$n: uses extern \"C\" itself; ADCP_BEGIN_DECLS/ADCP_END_DECLS provide it"
      rc=1
    fi
    # Declarations must sit between the two macros.
    awk '/^ADCP_BEGIN_DECLS$/ { inside = 1 } /^ADCP_END_DECLS$/ { inside = 0 }
         /^[a-z].*\(/ && !inside && !/^typedef/ && !/^static/ { print FILENAME ":" FNR ": outside ADCP_BEGIN_DECLS: " $0; bad = 1 }
         END { exit bad }' "$h" || rc=1
  done
  return "$rc"
}
if ! msg=$(check_headers "$src/include/adcp"); then fail "$msg"; fi
# The check itself catches a new header written the old way (extern "C", no macros).
mkdir "$tmp/inc"
printf '#ifndef X_H\n#define X_H\n#include "adcp/core.h"\n#ifdef __cplusplus\nextern "C" {\n#endif\nint adcp_x_new(void);\n#ifdef __cplusplus\n}\n#endif\n#endif\n' >"$tmp/inc/x.h"
check_headers "$tmp/inc" >/dev/null && fail "the header check accepts a header without ADCP_BEGIN_DECLS"
[ "$status" = 0 ] && echo "abi test: ok ($(wc -l <"$tmp/exported") exported, $hidden hidden)"
exit "$status"
