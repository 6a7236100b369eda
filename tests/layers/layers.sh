#!/bin/sh
# tests/layers/layers.sh SOURCE_DIR OBJECT.o... — the layering check (issue 31):
# scripts/check-layers.py passes on the tree, and catches what it must: an
# upward call (rooms.txt with json above rows), an upward edge missing from
# the allowlist (the fence ranked above the ledger), an allowlisted edge that
# no longer exists, a reason-less entry.
set -eu
src=$1
shift
command -v python3 >/dev/null 2>&1 || { echo "layers: python3 is required (scripts/install-deps.sh)" >&2; exit 1; }
chk="$src/scripts/check-layers.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adcp-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "layers test: $*" >&2; exit 1; }

python3 "$chk" "$src" "$@" || fail "the tree has an upward edge (above)"

# expect_fail NAME PATTERN ARGS...: the check exits non-zero and says PATTERN.
expect_fail() {
  name=$1 pat=$2
  shift 2
  if python3 "$chk" "$@" "$src" $objs >"$tmp/out" 2>&1; then fail "$name: accepted"; fi
  grep -q -- "$pat" "$tmp/out" || { cat "$tmp/out" >&2; fail "$name: no '$pat' in the refusal"; }
}
objs="$*"
awk '/^json$/ { next } { print } /^rows$/ { print "json" }' "$src/scripts/rooms.txt" >"$tmp/rooms"
expect_fail "json above rows" "upward call: src/rows/.* (room rows) calls adcp_j.*(room json)" --rooms "$tmp/rooms"
# The fence ranked above the ledger: the ledger's header including the fence's is an upward edge no line allows.
awk '/^fence$/ { next } { print } /^ledger$/ { print "fence" }' "$src/scripts/rooms.txt" >"$tmp/rooms1"
expect_fail "edge not allowlisted" "upward include: include/adcp/ledger.h:[0-9]* (room ledger) includes adcp/fence.h (room fence)" \
  --rooms "$tmp/rooms1"
{ cat "$src/scripts/layers-allow.txt"; echo "call src/ledger/read.c adcp_audit_checkpoint_create # gone"; } >"$tmp/allow2"
expect_fail "stale allowlist line" "allowed edge 'call src/ledger/read.c adcp_audit_checkpoint_create' no longer exists" \
  --allow "$tmp/allow2"
{ cat "$src/scripts/layers-allow.txt"; echo "call src/ledger/read.c adcp_audit_checkpoint_create"; } >"$tmp/allow3"
expect_fail "entry without a reason" "needs its reason" --allow "$tmp/allow3"
echo "layers test: ok"
