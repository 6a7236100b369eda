#!/usr/bin/env bash
# Tamper-evident history benchmark (bench/bench_audit.c), on a fresh SQLite
# file and on PostgreSQL (ADCP_BENCH_PG_URL, else a throwaway durable cluster):
# commit latency of 1,000-row revisions with and without the audit log (same
# run, interleaved; target <= 3% added), a checkpoint over 1,000,000 leaves
# (target <= 1 s), audit throughput without and with an outside checkpoint
# (target >= 100,000 headers/s), proof size and verify time. With
# ADCP_BENCH_AUDIT_SOAK=N it then soaks the forgery property test
# (tests/audit/test_audit.c) for N runs per engine: outside make test.
# usage: bench/run_audit.sh [BUILD_DIR]   (ADCP_BENCH_AUDIT_LEAVES, _COMMITS, _HEADERS, _SOAK)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="$root/$build/bench/bench_audit"
leaves=${ADCP_BENCH_AUDIT_LEAVES:-1000000}
commits=${ADCP_BENCH_AUDIT_COMMITS:-200}
headers=${ADCP_BENCH_AUDIT_HEADERS:-5000}
tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; }
if [ -z "${ADCP_BENCH_PG_URL:-}" ] && [ -x "$root/scripts/pg-cluster.sh" ]; then
  eval "$(ADCP_PG_FSYNC=on "$root/scripts/pg-cluster.sh" start)"
  cleanup() { "$root/scripts/pg-cluster.sh" stop "$ADCP_TEST_PG_DIR" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
  export ADCP_BENCH_PG_URL="$ADCP_TEST_PG_URL"
fi
trap cleanup EXIT
echo "== audit log: SQLite (file) =="
"$bin" "sqlite:$tmp/audit.db" "$leaves" "$commits" "$headers" | tee "$tmp/sqlite.jsonl"
echo "== audit log: PostgreSQL (loopback) =="
"$bin" "$ADCP_BENCH_PG_URL" "$leaves" "$commits" "$headers" | tee "$tmp/pg.jsonl"
python3 - "$tmp/sqlite.jsonl" "$tmp/pg.jsonl" <<'PY'
import json, sys
for f in sys.argv[1:]:
    for l in open(f):
        o = json.loads(l)
        e, m = o["engine"], o["measure"]
        if m == "commit_log":
            print(f"{e:8} commit 1,000 rows: {o['with_log_ms_median']:.2f} ms with the log, {o['without_log_ms_median']:.2f} ms "
                  f"without (median of {o['commits_each']} each): {o['added_median']*100:+.1f}% (mean {o['added_mean']*100:+.1f}%); "
                  f"median of adjacent pairs {o['added_paired_median']*100:+.1f}% wall, {o['added_cpu_paired_median']*100:+.1f}% client CPU (target <= 3%); "
                  f"a separate append (the adopt path; on PostgreSQL not part of a commit) {o['append_ms_median']:.3f} ms = {o['append_share_of_commit']*100:.2f}% of a commit; "
                  f"client CPU {o['added_cpu_median']*100:+.1f}%")
        elif m == "checkpoint":
            print(f"{e:8} checkpoint over {o['leaves']:,} leaves: {o['seconds']*1e3:.1f} ms (target <= 1000 ms); "
                  f"root matches an in-memory tree: {o['root_matches_memory_tree']}")
        elif m == "audit":
            how = "with 1 outside checkpoint" if o.get("outside_checkpoints") else "stored checkpoints only"
            print(f"{e:8} audit ({how}): {o['headers_per_s']:,.0f} headers/s wall, {o['headers_per_cpu_s']:,.0f} per client "
                  f"CPU second, {o.get('cpu_us_per_header', 0):.2f} us CPU per header client + server ({o['headers']} headers, "
                  f"{o['findings']} findings; target >= 100,000/s)")
        elif m == "inclusion_proof":
            print(f"{e:8} inclusion proof over {o['leaves']:,} leaves: {o['path_entries']} hashes = {o['path_bytes']} bytes, "
                  f"built from stored nodes in {o['build_ms']:.2f} ms, verified in {o['verify_us']:.1f} us")
        elif m == "proof_document":
            print(f"{e:8} proof document (tree of {o['tree_size']}): {o['bytes']} bytes, verified offline "
                  f"(signature included) in {o['verify_us']:.0f} us")
PY
# Kept for bench/table.sh (issue 32's summary at the end of make bench).
cp "$tmp/sqlite.jsonl" "$root/$build/bench-audit-sqlite.jsonl"
cp "$tmp/pg.jsonl" "$root/$build/bench-audit-postgres.jsonl"
if [ -n "${ADCP_BENCH_AUDIT_SOAK:-}" ]; then
  echo "== forgery property soak: ${ADCP_BENCH_AUDIT_SOAK} runs per engine =="
  ADCP_TEST_PG_URL="${ADCP_TEST_PG_URL:-$ADCP_BENCH_PG_URL}" ADCP_AUDIT_PROPERTY_RUNS="$ADCP_BENCH_AUDIT_SOAK" \
    "$root/$build/tests/audit_test_audit" 2>&1 | grep -E "property seed|caught|untampered|FAILED|OK .*property"
fi
