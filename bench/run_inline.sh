#!/usr/bin/env bash
# Inline staging benchmark (bench/bench_inline.c): stage throughput and read
# p99 for 4 KiB and 1 MiB payloads against the raw insert of the same bytes,
# on a fresh SQLite file and on a throwaway PostgreSQL cluster (loopback).
# Target: staging 1 MiB payloads >= 50% of raw insert throughput.
# usage: bench/run_inline.sh [BUILD_DIR]   (ADCP_BENCH_N4K, ADCP_BENCH_N1M)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="$root/$build/bench/bench_inline"
n4=${ADCP_BENCH_N4K:-2000}; n1=${ADCP_BENCH_N1M:-200}
tmp=$(mktemp -d)
out=$("$root/scripts/pg-cluster.sh" start) || { echo "run_inline.sh: no PostgreSQL cluster" >&2; exit 1; }
eval "$out"
trap '"$root/scripts/pg-cluster.sh" stop "$ADCP_TEST_PG_DIR" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
echo "== SQLite (file, synchronous=FULL) =="
"$bin" "sqlite:$tmp/bench.db" "$n4" "$n1" | tee "$tmp/sqlite.jsonl"
echo "== PostgreSQL (loopback) =="
"$bin" "$ADCP_TEST_PG_URL" "$n4" "$n1" | tee "$tmp/pg.jsonl"
python3 - "$tmp/sqlite.jsonl" "$tmp/pg.jsonl" <<'PY'
import json, sys
bad = False
for f in sys.argv[1:]:
    for l in open(f):
        o = json.loads(l)
        if o["measure"] == "stage_vs_raw" and o["payload_bytes"] == 1048576:
            ok = o["ratio"] >= 0.5
            bad |= not ok
            print(f"{o['engine']}: staging 1 MiB = {o['ratio']*100:.0f}% of raw insert (target >= 50%) {'ok' if ok else 'MISSED'}")
# 3 = ran, but a target was missed (bench/run.sh tells it from a failure)
sys.exit(3 if bad else 0)
PY
