#!/usr/bin/env bash
# Change-feed benchmark (never part of `make test`; called by bench/run.sh):
# read throughput of the deployment and account feeds over 1,000,000 change
# rows, 500-change page latency, and the p50 cost the feed adds to a
# 1,000-row commit (with vs without, interleaved, same run), on SQLite and on
# PostgreSQL (ADCP_BENCH_PG_URL, else a throwaway durable cluster).
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
if [ -z "${ADCP_BENCH_PG_URL:-}" ] && [ -x "$root/scripts/pg-cluster.sh" ]; then
  eval "$(ADCP_PG_FSYNC=on "$root/scripts/pg-cluster.sh" start)"
  trap '"$root/scripts/pg-cluster.sh" stop "$ADCP_TEST_PG_DIR" >/dev/null 2>&1 || true' EXIT
  export ADCP_BENCH_PG_URL="$ADCP_TEST_PG_URL"
fi
db="$root/$build/bench-feed.db"
rm -f "$db" "$db-wal" "$db-shm"
echo "== change feed (bench_feed) =="
"$root/$build/bench/bench_feed" "$db" "${ADCP_BENCH_PG_URL:-}" | tee "$root/$build/bench-feed.jsonl"
python3 - "$root/$build/bench-feed.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    m = o["measure"]
    if m.startswith("read_"):
        print(f"{o['engine']:8} {m:28} {o['changes_per_s']:10.0f} changes/s ({o['changes']} changes, pages of {o['page']})")
    elif m.startswith("page_500"):
        print(f"{o['engine']:8} {m:28} p50 {o['p50_ms']:.2f} ms  p99 {o['p99_ms']:.2f} ms (target p99 <= 5 ms)")
    elif m.startswith("commit_1000"):
        print(f"{o['engine']:8} {m:40} p50 {o['with_feed_ms']:.2f} ms with feed, {o['without_feed_ms']:.2f} ms "
              f"without = +{o['added_pct']:.1f}% (target <= 5%)")
PY
rm -f "$db" "$db-wal" "$db-shm"
