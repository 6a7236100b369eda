#!/usr/bin/env bash
# Issue-event outbox benchmark (never part of `make test`; called by
# bench/run.sh): events claimed and completed per second over 100,000 pending
# events with 1 and 4 workers on PostgreSQL (ADCP_BENCH_PG_URL, else a
# throwaway durable cluster) and 1 on SQLite, and the time of one claim at
# 1,000 vs 100,000 pending events.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
if [ -z "${ADCP_BENCH_PG_URL:-}" ] && [ -x "$root/scripts/pg-cluster.sh" ]; then
  eval "$(ADCP_PG_FSYNC=on "$root/scripts/pg-cluster.sh" start)"
  trap '"$root/scripts/pg-cluster.sh" stop "$ADCP_TEST_PG_DIR" >/dev/null 2>&1 || true' EXIT
  export ADCP_BENCH_PG_URL="$ADCP_TEST_PG_URL"
fi
db="$root/$build/bench-issues.db"
rm -f "$db" "$db-wal" "$db-shm"
echo "== issue-event outbox (bench_issues) =="
"$root/$build/bench/bench_issues" "$db" "${ADCP_BENCH_PG_URL:-}" | tee "$root/$build/bench-issues.jsonl"
python3 - "$root/$build/bench-issues.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    m = o["measure"]
    if m == "claim_complete_1_worker":
        print(f"{o['engine']:8} {m:26} {o['events_per_s']:8.0f} events/s ({o['events']} events, claims of 100)")
    elif m == "claim_complete_4_workers":
        print(f"{o['engine']:8} {m:26} {o['events_per_s']:8.0f} events/s = {o['ratio_to_1_worker']:.2f}x one worker"
              f" (target >= 5000/s on PostgreSQL)")
    elif m == "claim_latency":
        big = [k for k in o if k.startswith("ms_at_") and k != "ms_at_1000"][0]
        print(f"{o['engine']:8} {m:26} {o['ms_at_1000']:.3f} ms at 1,000 pending, {o[big]:.3f} ms at "
              f"{o['pending_big']:,} = {o['ratio']:.2f}x (target: flat)")
PY
rm -f "$db" "$db-wal" "$db-shm"
