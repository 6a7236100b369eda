#!/usr/bin/env bash
# Legacy import benchmark (bench/bench_import.c): import-legacy throughput
# (rows/s, MB/s) from a 1,000,000-row py-inline legacy table into SQLite and
# PostgreSQL, beside plain commit of the same rows in the same run.
# Target: import >= 50% of commit throughput.
# usage: bench/run_import.sh [BUILD_DIR]   (ADCP_BENCH_IMPORT_ROWS, ADCP_BENCH_IMPORT_PER_REVISION)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="$root/$build/bench/bench_import"
rows=${ADCP_BENCH_IMPORT_ROWS:-1000000}
per=${ADCP_BENCH_IMPORT_PER_REVISION:-1000}
tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; }
if [ -z "${ADCP_BENCH_PG_URL:-}" ] && [ -x "$root/scripts/pg-cluster.sh" ]; then
  eval "$(ADCP_PG_FSYNC=on "$root/scripts/pg-cluster.sh" start)"
  cleanup() { "$root/scripts/pg-cluster.sh" stop "$ADCP_TEST_PG_DIR" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
  export ADCP_BENCH_PG_URL="$ADCP_TEST_PG_URL"
fi
trap cleanup EXIT
echo "== legacy import: SQLite (file) =="
"$bin" "sqlite:$tmp/import.db" "$rows" "$per" | tee "$tmp/sqlite.jsonl"
echo "== legacy import: PostgreSQL (loopback) =="
# A fresh database on the cluster for the legacy table and the ledger.
db="bench_import_$$"
psql "$ADCP_BENCH_PG_URL" -qc "CREATE DATABASE $db" >/dev/null
pgurl="${ADCP_BENCH_PG_URL%/*}/$db"
"$bin" "$pgurl" "$rows" "$per" | tee "$tmp/pg.jsonl"
psql "$ADCP_BENCH_PG_URL" -qc "DROP DATABASE $db WITH (FORCE)" >/dev/null || true
python3 - "$tmp/sqlite.jsonl" "$tmp/pg.jsonl" <<'PY'
import json, sys
bad = False
for f in sys.argv[1:]:
    for l in open(f):
        o = json.loads(l)
        if o["measure"] == "import_py_inline":
            ok = o["ratio_to_commit"] >= 0.5
            bad |= not ok
            print(f"{o['engine']:8} import {o['rows_per_s']:9.0f} rows/s {o['mb_per_s']:6.1f} MB/s = "
                  f"{o['ratio_to_commit']*100:.0f}% of plain commit (target >= 50%) {'ok' if ok else 'MISSED'}")
# 3 = ran, but a target was missed (bench/run.sh tells it from a failure)
sys.exit(3 if bad else 0)
PY
