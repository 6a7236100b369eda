#!/usr/bin/env bash
# A tenth of the spec's example day (bench/bench_day.c): 200 obligations x 96
# pulses of ~1,000 gen-rows.py rows, half of them header-only repeats, written by
# 4 processes into PostgreSQL (filesystem binding >= 256 KiB, postgres kind
# below) while one process follows the change feed and one samples verified
# 500-row pages. Prints the processes' JSON lines and a summary.
#   bench/day.sh [BUILD]      ADCP_BENCH_DAY_SCALE=0.25 runs a quarter of the pulses
# PostgreSQL: ADCP_BENCH_PG_URL (reused, e.g. by bench/run.sh), else a throwaway
# cluster with fsync on. Objects go to a temporary directory removed at the end.
# A database with revisions is settled (VACUUM, CHECKPOINT) before the clock; a
# fresh one is not (see bench_day.c).
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=${ADCP_SHARED_DIR:-$root/../shared}
pool="$root/$build/bench-day-pool.jsonl"
if [ ! -s "$pool" ]; then
  python3 "$shared/bench/gen-rows.py" 20011 11 > "$pool.tmp" && mv "$pool.tmp" "$pool"
fi
own_pg=""
if [ -z "${ADCP_BENCH_PG_URL:-}" ]; then
  eval "$(ADCP_PG_FSYNC=on "$root/scripts/pg-cluster.sh" start)"
  own_pg=$ADCP_TEST_PG_DIR
  export ADCP_BENCH_PG_URL="$ADCP_TEST_PG_URL"
fi
if [ -z "${ADCP_BENCH_PG_PID:-}" ] && [ -n "${ADCP_TEST_PG_DIR:-}" ] && [ -r "$ADCP_TEST_PG_DIR/data/postmaster.pid" ]; then
  export ADCP_BENCH_PG_PID=$(head -1 "$ADCP_TEST_PG_DIR/data/postmaster.pid")
fi
objects=$(mktemp -d "${TMPDIR:-/tmp}/adcp-bench-day-XXXXXX")
trap 'rm -rf "$objects"; [ -z "$own_pg" ] || "$root/scripts/pg-cluster.sh" stop "$own_pg" >/dev/null 2>&1 || true' EXIT
out="$root/$build/bench-day.jsonl"
echo "== a tenth of the spec's day (bench_day, scale ${ADCP_BENCH_DAY_SCALE:-1}) =="
"$root/$build/bench/bench_day" "$pool" "$ADCP_BENCH_PG_URL" "$objects" | tee "$out"
python3 - "$out" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
w = [o for o in objs if o.get("role") == "writer"]
pages = next(o for o in objs if o.get("role") == "pages")
feed = next(o for o in objs if o.get("role") == "feed")
d = next(o for o in objs if o.get("measure") == "day")
wall = d["wall_s"]
commits = sum(o["commits"] for o in w); canon = sum(o["canonical_bytes"] for o in w)
new = sum(o["new_bytes"] for o in w); ho = sum(o["header_only"] for o in w)
obj = sum(o["object_kind"] for o in w); pg = sum(o["postgres_kind"] for o in w)
rows = sum(o["rows"] for o in w)
summary = {"measure": "day_summary", "x_real_time": d["x_real_time"], "wall_s": wall, "real_time_s": d["real_time_s"],
           "commits_per_s": round(commits / wall, 1), "rows_per_s": round(rows / wall),
           "mb_per_s": round(canon / wall / 1e6, 1), "new_mb_per_s": round(new / wall / 1e6, 1),
           "header_only": ho, "object_kind": obj, "postgres_kind": pg,
           "page_p50_ms": pages["p50_ms"], "page_p99_ms": pages["p99_ms"], "page_reads": pages["reads"],
           "feed_changes": feed["changes"], "feed_lag_p99_ms": feed["lag_p99_ms"],
           "max_rss_kb": {"writers": [o["max_rss_kb"] for o in w], "feed": feed["max_rss_kb"], "pages": pages["max_rss_kb"]},
           "client_cpu_s": d["client_cpu_s"], "server_cpu_s": d["server_cpu_s"],
           "client_sys_cpu_s": d.get("client_sys_cpu_s"), "server_sys_cpu_s": d.get("server_sys_cpu_s"),
           "cores_full_day_from_wall": d["cores_full_day_from_wall"], "cores_full_day_from_cpu": d["cores_full_day_from_cpu"],
           "settle_before_s": d.get("settle_before_s")}
print(json.dumps(summary))
print(f"day: {d['revisions']} revisions ({ho} header-only; {obj} filesystem, {pg} postgres kind) in {wall:.1f} s = "
      f"{d['x_real_time']:.0f}x real time (target >= 150x); {commits / wall:.0f} commits/s, {canon / wall / 1e6:.1f} MB/s "
      f"canonical ({new / wall / 1e6:.1f} MB/s new bytes)")
print(f"day: verified 500-row pages during the load p50 {pages['p50_ms']:.2f} ms p99 {pages['p99_ms']:.2f} ms "
      f"(target p99 <= 10 ms, {pages['reads']} reads); feed {feed['changes']} changes, lag p99 {feed['lag_p99_ms']:.0f} ms")
rss = ", ".join(f"{k / 1024:.0f}" for k in summary["max_rss_kb"]["writers"])
print(f"day: peak RSS MiB: writers {rss}; feed {feed['max_rss_kb'] / 1024:.0f}; pages {pages['max_rss_kb'] / 1024:.0f}")
kern = ""
if "client_sys_cpu_s" in d:
    kern = f" (the kernel's share: {d['client_sys_cpu_s']:.0f} + {d['server_sys_cpu_s']:.0f} s)"
print(f"day: CPU {d['client_cpu_s']:.0f} s client + {d['server_cpu_s']:.0f} s PostgreSQL{kern}; a full day at real time needs "
      f"{d['cores_full_day_from_wall']:.2f} cores (from wall time on {d['machine_cores']}) / "
      f"{d['cores_full_day_from_cpu']:.2f} (from CPU time)")
if d.get("settle_before_s", -1) >= 0:
    print(f"day: VACUUM (ANALYZE) and CHECKPOINT before the clock took {d['settle_before_s']:.1f} s (ADCP_BENCH_DAY_SETTLE=0: none)")
PY
