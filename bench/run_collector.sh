#!/usr/bin/env bash
# Orphan-collector benchmark (never part of `make test`; called by bench/run.sh):
# one filesystem binding holding ADCP_BENCH_COLLECTOR_N objects (default
# 1,000,000; 1% orphans) on SQLite: objects listed and checked per second by a
# dry-run pass against a bare listing of the same objects in the same run
# (the reference), the database cost per listed object, the deleting pass and
# the peak RSS. Target: >= 20,000 objects listed and checked per second.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
scratch="$root/$build/bench-collector"
rm -rf "$scratch" && mkdir -p "$scratch"
echo "== collector (bench_collector, ${ADCP_BENCH_COLLECTOR_N:-1000000} objects, 1% orphans, filesystem + SQLite) =="
"$root/$build/bench/bench_collector" "$scratch" | tee "$root/$build/bench-collector.jsonl"
python3 - "$root/$build/bench-collector.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    print(f"{o['engine']:8} {o['objects']} objects: listed+checked {o['listed_checked_per_s']:.0f}/s (target >= 20000)"
          f" = {o['ratio_to_list_only']*100:.0f}% of a bare listing {o['list_only_per_s']:.0f}/s;"
          f" DB {o['db_us_per_listed']:.1f} us per listed object; deleted {o['deleted']} in {o['delete_pass_s']:.1f} s;"
          f" peak RSS {o['rss_kb_peak']/1024:.1f} MiB (after setup {o['rss_kb_after_setup']/1024:.1f} MiB);"
          f" per CPU second: {o['listed_checked_per_cpu_s']:.0f} listed+checked vs {o['list_only_per_cpu_s']:.0f} bare,"
          f" DB {o['db_cpu_us_per_listed']:.1f} us CPU per listed object")
PY
rm -rf "$scratch"
