#!/usr/bin/env bash
# Reader line check (bench_lines): the non-recursive validator against the
# canonicalizer it replaced, on the same generated rows in the same run.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=${ADCP_SHARED_DIR:-$root/../shared}
rows=${ADCP_BENCH_LINE_ROWS:-200000}
data="$root/$build/bench-lines-$rows.jsonl"
if [ ! -s "$data" ]; then
  python3 "$shared/bench/gen-rows.py" "$rows" > "$data.tmp" && mv "$data.tmp" "$data"
fi
pin=""; command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
echo "== reader line check (best of 5) =="
$pin "$root/$build/bench/bench_lines" "$data" 5
