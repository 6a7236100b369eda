#!/usr/bin/env bash
# bench room: an A/B of per-commit client and server CPU between two builds
# (issue 32). Runs bench_statements of OLD and NEW alternately, RUNS times
# each, on a fresh SQLite file or a PostgreSQL database recreated before every
# run, and prints each kind's median ms per build and the change. Alternating
# spreads a machine's drift (steal, a neighbour) over both builds alike.
#   bench/ab_statements.sh OLD_BUILD NEW_BUILD DB ROWS REPEATS [RUNS]
#     DB  sqlite (a temporary file) or a PostgreSQL admin URL; the database
#         adcp_bench_ab on that server is dropped and created for every run
# Not a test; exit 2 on bad usage.
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
old=$1 new=$2 db=$3 rows=$4 repeats=$5 runs=${6:-4}
for b in "$old" "$new"; do
  if [ ! -x "$b/bench/bench_statements" ]; then
    echo "ab_statements: $b/bench/bench_statements is not built" >&2
    exit 2
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$runs"); do
  for side in old new; do
    b=$old
    [ "$side" = new ] && b=$new
    rm -rf "$tmp/objects" "$tmp"/ab.db*
    mkdir -p "$tmp/objects"
    if [ "$db" = sqlite ]; then
      url="sqlite:$tmp/ab.db"
    else
      psql "$db" -qc "DROP DATABASE IF EXISTS adcp_bench_ab" -c "CREATE DATABASE adcp_bench_ab" 2>/dev/null
      url="${db%/*}/adcp_bench_ab"
    fi
    "$b/bench/bench_statements" "$url" "$tmp/objects" "$rows" "$repeats" | grep '^{' >> "$tmp/$side.jsonl"
  done
done
python3 - "$tmp" <<'EOF'
import collections, json, statistics, sys
d = {}
for side in ("old", "new"):
    by = collections.defaultdict(list)
    for line in open(f"{sys.argv[1]}/{side}.jsonl"):
        j = json.loads(line)
        by[(j["binding"], j["kind"])].append((j["client_cpu_ms"], j["server_cpu_ms"]))
    d[side] = by
print("| kind | client ms old -> new | server ms old -> new |")
print("| --- | --- | --- |")
for key, xs in d["old"].items():
    ys = d["new"].get(key, [])
    if not ys:
        continue
    co, cn = statistics.median(x[0] for x in xs), statistics.median(y[0] for y in ys)
    so, sn = statistics.median(x[1] for x in xs), statistics.median(y[1] for y in ys)
    pct = f" ({(cn - co) / co * 100:+.0f}%)" if co else ""
    print(f"| {key[0]} kind, {key[1]} | {co:.2f} -> {cn:.2f}{pct} | {so:.2f} -> {sn:.2f} |")
EOF
