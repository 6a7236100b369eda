#!/usr/bin/env bash
# Peak memory of the CLI (issue 19 target: every figure <= 64 MiB, independent
# of revision size), measured with /usr/bin/time -v: `commit` and full `read`
# of the 1,000,000 bench rows, and `verify --all` over ADCP_BENCH_MEM_REVISIONS
# (default 100) such revisions (the same rows committed again: header-only
# revisions, each still verified in full). SQLite in a fresh file; PostgreSQL
# (ADCP_BENCH_PG_URL, e.g. from bench/run.sh) in a fresh account, verified with
# `verify --account` so other benchmarks' revisions are not counted.
#   bench/run_mem.sh [BUILD]
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=${ADCP_SHARED_DIR:-$root/../shared}
rows=${ADCP_BENCH_ROWS:-1000000}
revs=${ADCP_BENCH_MEM_REVISIONS:-100}
data="$root/$build/bench-rows-$rows.jsonl"
if [ ! -s "$data" ]; then
  python3 "$shared/bench/gen-rows.py" "$rows" > "$data.tmp" && mv "$data.tmp" "$data"
fi
cli="$root/$build/adcp-ledger"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adcp-bench-mem-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# peak ENGINE MEASURE CMD... : runs CMD (stdout discarded) and prints one JSON line.
peak() {
  local engine=$1 measure=$2; shift 2
  /usr/bin/time -v "$@" >/dev/null 2>"$tmp/time.txt" || { cat "$tmp/time.txt" >&2; exit 1; }
  python3 - "$engine" "$measure" "$tmp/time.txt" <<'PY'
import json, re, sys
t = open(sys.argv[3]).read()
kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
w = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", t).group(1).split(":")
s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(w)))
print(json.dumps({"engine": sys.argv[1], "measure": sys.argv[2], "max_rss_mib": round(kb / 1024, 1),
                  "seconds": round(s, 2), "target_mib": 64}))
PY
}
run_engine() {
  local engine=$1 url=$2 account=$3 verify_scope=$4
  local common=(--account "$account" --obligation ob_mem --finality snapshot --period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z)
  peak "$engine" "commit_1x$rows" "$cli" --db "$url" commit "${common[@]}" --revision "rev_mem_${account}_1" "$data"
  peak "$engine" "read_1x$rows" "$cli" --db "$url" read --account "$account" --revision "rev_mem_${account}_1"
  local maxkb=0 i
  for i in $(seq 2 "$revs"); do
    /usr/bin/time -f %M "$cli" --db "$url" commit "${common[@]}" --revision "rev_mem_${account}_$i" "$data" \
      >/dev/null 2>"$tmp/m.txt" || { cat "$tmp/m.txt" >&2; exit 1; }
    kb=$(tail -1 "$tmp/m.txt"); [ "$kb" -gt "$maxkb" ] && maxkb=$kb
  done
  [ "$revs" -gt 1 ] && echo "{\"engine\":\"$engine\",\"measure\":\"commit_header_only_x$((revs - 1))\",\"max_rss_mib\":$((maxkb / 1024)),\"target_mib\":64}"
  peak "$engine" "verify_${revs}x$rows" "$cli" --db "$url" verify $verify_scope --quiet
}
echo "== peak memory of commit, read and verify (bench/run_mem.sh, $revs revisions of $rows rows) =="
out="$root/$build/bench-mem.jsonl"
: > "$out"
"$cli" --db "sqlite:$tmp/mem.db" init >/dev/null
run_engine sqlite "sqlite:$tmp/mem.db" acct_mem --all | tee -a "$out"
rm -f "$tmp"/mem.db*
if [ -n "${ADCP_BENCH_PG_URL:-}" ]; then
  acct="acct_mem_$(date +%s)"
  # Migrated here too: bench_ledger, which migrates the cluster, may have failed or been skipped.
  "$cli" --db "$ADCP_BENCH_PG_URL" migrate >/dev/null
  run_engine postgres "$ADCP_BENCH_PG_URL" "$acct" "--account $acct" | tee -a "$out"
fi
python3 - "$out" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    print(f"{o['engine']:8} {o['measure']:34} peak RSS {o['max_rss_mib']:6.1f} MiB (target <= 64 MiB)")
PY
