#!/bin/sh
# tests/json/dtoa_table.sh SOURCE_DIR — room json: src/json/dtoa_table.c is exactly
# what scripts/gen-dtoa-table.py writes (a hand edit of the table, or a generator
# change not regenerated, fails here). Exit 77 (skipped, never passed) without python3.
set -eu
src=$1
command -v python3 >/dev/null 2>&1 || { echo "dtoa_table: python3 is not installed; cannot regenerate" >&2; exit 77; }
tmp=$(mktemp "${TMPDIR:-/tmp}/adcp-dtoa.XXXXXX")
trap 'rm -f "$tmp"' EXIT
python3 "$src/scripts/gen-dtoa-table.py" >"$tmp"
if ! cmp -s "$tmp" "$src/src/json/dtoa_table.c"; then
  echo "dtoa_table: src/json/dtoa_table.c differs from scripts/gen-dtoa-table.py output:" >&2
  diff "$tmp" "$src/src/json/dtoa_table.c" | head -20 >&2
  exit 1
fi
echo "dtoa_table: ok ($(grep -c '/\* 1e' "$tmp") entries regenerated, identical)"
