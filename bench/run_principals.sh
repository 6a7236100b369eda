#!/usr/bin/env bash
# Principal and subscription-state benchmark (bench/bench_principals.c): CAS
# updates/s with 1 and 8 writers against a bare UPDATE measured in the same
# run, grant-journal appends/s, and list_principals page time at 1,000 vs
# 1,000,000 principals, on a fresh SQLite file (synchronous=FULL) and on
# PostgreSQL (fsync on; ADCP_BENCH_PG_URL, else a throwaway loopback cluster).
# Targets: >= 2,000 CAS updates/s with 8 writers on PostgreSQL; page time flat.
# usage: bench/run_principals.sh [BUILD_DIR]   (ADCP_BENCH_N_CAS, ADCP_BENCH_N_JOURNAL, ADCP_BENCH_BIG)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="$root/$build/bench/bench_principals"
ncas=${ADCP_BENCH_N_CAS:-4000}; nj=${ADCP_BENCH_N_JOURNAL:-2000}; big=${ADCP_BENCH_BIG:-1000000}
tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; }
if [ -z "${ADCP_BENCH_PG_URL:-}" ]; then
  out=$(ADCP_PG_FSYNC=on "$root/scripts/pg-cluster.sh" start) || { echo "run_principals.sh: no PostgreSQL cluster" >&2; exit 1; }
  eval "$out"
  cleanup() { "$root/scripts/pg-cluster.sh" stop "$ADCP_TEST_PG_DIR" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
  ADCP_BENCH_PG_URL=$ADCP_TEST_PG_URL
fi
trap cleanup EXIT
echo "== principals: SQLite (file, synchronous=FULL) =="
"$bin" "sqlite:$tmp/bench.db" "$ncas" "$nj" "$big" | tee "$tmp/sqlite.jsonl"
echo "== principals: PostgreSQL (loopback, fsync on) =="
"$bin" "$ADCP_BENCH_PG_URL" "$ncas" "$nj" "$big" | tee "$tmp/pg.jsonl"
python3 - "$tmp/sqlite.jsonl" "$tmp/pg.jsonl" <<'PY'
import json, sys
bad = False
for f in sys.argv[1:]:
    for l in open(f):
        o = json.loads(l)
        e, m = o["engine"], o["measure"]
        if m.startswith("cas_") or m.startswith("journal_"):
            unit = "updates" if m.startswith("cas_") else "appends"
            tgt = ""
            if e == "postgres" and m == "cas_update_8":
                ok = o["updates_per_s"] >= 2000
                bad |= not ok
                tgt = f" (target >= 2000/s) {'ok' if ok else 'MISSED'}"
            print(f"{e:8} {m:22} {o[unit + '_per_s']:8.0f} {unit}/s, {o['writers']} writer(s) = "
                  f"{o['ratio_to_raw_update_1']*100:.0f}% of a bare 1-writer UPDATE; {o['conflicts']} conflicts{tgt}")
        elif m.startswith("list_page"):
            extra = ""
            if "p50_ratio_to_1k" in o:
                ok = o["p50_ratio_to_1k"] <= 3
                bad |= not ok
                extra = f" = {o['p50_ratio_to_1k']:.2f}x the 1,000-principal page (target flat) {'ok' if ok else 'MISSED'}"
            print(f"{e:8} {m:22} {o['principals']:>8} principals: page of 100 p50 {o['p50_ms']:.3f} ms "
                  f"p99 {o['p99_ms']:.3f} ms{extra}")
        elif m == "raw_update_1":
            print(f"{e:8} {m:22} {o['updates_per_s']:8.0f} updates/s (reference)")
# 3 = ran, but a target was missed (bench/run.sh tells it from a failure)
sys.exit(3 if bad else 0)
PY
