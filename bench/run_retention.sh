#!/usr/bin/env bash
# Retention benchmark (never part of `make test`; called by bench/run.sh):
# period retirement throughput (periods/s, freed MB/s) vs the commit MB/s of
# the same data in the same run, and a concurrent page read's p99 idle vs
# during retirement, postgres kind and filesystem binding, on SQLite and on
# PostgreSQL (ADCP_BENCH_PG_URL, else a throwaway durable cluster).
# ADCP_BENCH_RET_PERIODS sets the periods of 1,000 rows (default 1000; the
# issue's figure: 10000).
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
if [ -z "${ADCP_BENCH_PG_URL:-}" ] && [ -x "$root/scripts/pg-cluster.sh" ]; then
  eval "$(ADCP_PG_FSYNC=on "$root/scripts/pg-cluster.sh" start)"
  trap '"$root/scripts/pg-cluster.sh" stop "$ADCP_TEST_PG_DIR" >/dev/null 2>&1 || true' EXIT
  export ADCP_BENCH_PG_URL="$ADCP_TEST_PG_URL"
fi
scratch="$root/$build/bench-retention"
rm -rf "$scratch" && mkdir -p "$scratch"
echo "== retention (bench_retention, ${ADCP_BENCH_RET_PERIODS:-1000} periods x 1000 rows) =="
"$root/$build/bench/bench_retention" "$scratch" "${ADCP_BENCH_PG_URL:-}" | tee "$root/$build/bench-retention.jsonl"
python3 - "$root/$build/bench-retention.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    print(f"{o['engine']:8} {o['kind']:10} retire {o['retire_periods_per_s']:8.1f} periods/s {o['freed_mb_per_s']:7.1f} MB/s freed"
          f" = {o['ratio_freed_to_commit']*100:.0f}% of commit {o['commit_mb_per_s']:.1f} MB/s (target >= 50%);"
          f" page p99 {o['page_p99_idle_ms']:.2f} ms idle, {o['page_p99_during_ms']:.2f} ms during = {o['p99_ratio']:.2f}x (target <= 2x);"
          f" without run-queue waits {o['page_p99_idle_no_runq_ms']:.2f} -> {o['page_p99_during_no_runq_ms']:.2f} ms = {o['p99_ratio_no_runq']:.2f}x")
PY
rm -rf "$scratch"
