#!/bin/sh
# tests/layers/versioned_init.sh SOURCE_DIR CC — the versioned-struct check
# (issue 31): scripts/check-versioned-init.py passes on the tree, and catches
# what it must on a copy: a versioned struct that lost its ADCP_VERSIONED mark,
# and a mark that no longer makes the compiler refuse a positional initialiser.
set -eu
src=$1 cc=$2
command -v python3 >/dev/null 2>&1 || { echo "versioned_init: python3 is required (scripts/install-deps.sh)" >&2; exit 1; }
chk="$src/scripts/check-versioned-init.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adcp-versioned.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "versioned_init test: $*" >&2; exit 1; }

rc=0
python3 "$chk" "$src" "$cc" || rc=$?
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || fail "the tree has an unmarked versioned struct or a mark the compiler ignores (above)"

# expect_fail NAME PATTERN: the check on the copy exits non-zero and says PATTERN.
expect_fail() {
  if python3 "$chk" "$tmp/tree" "$cc" >"$tmp/out" 2>&1; then fail "$1: accepted"; fi
  grep -q -- "$2" "$tmp/out" || { cat "$tmp/out" >&2; fail "$1: no '$2' in the refusal"; }
}
copy() { rm -rf "$tmp/tree" && mkdir "$tmp/tree" && cp -R "$src/include" "$src/src" "$tmp/tree/"; }

copy
sed 's/typedef struct ADCP_VERSIONED adcp_ledger_options {/typedef struct adcp_ledger_options {/' \
  "$src/include/adcp/ledger.h" >"$tmp/tree/include/adcp/ledger.h"
expect_fail "unmarked struct" "include/adcp/ledger.h:[0-9]*: struct adcp_ledger_options starts with int version but is not ADCP_VERSIONED"

copy
sed 's/^#define ADCP_VERSIONED __attribute__((designated_init))$/#define ADCP_VERSIONED/' \
  "$src/include/adcp/core.h" >"$tmp/tree/include/adcp/core.h"
expect_fail "inert mark" "the compiler accepted a positional initialiser of: .*adcp_ledger_options"
echo "versioned_init test: ok"
