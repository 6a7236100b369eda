#!/usr/bin/env bash
# `make run`: the main job on the embedded default, end to end, in a scratch
# folder (./demo-run/, removed and recreated each time). Generates delivery rows,
# encodes them into verified chunks (plain and gzip), verifies them, and shows
# a tampered chunk being refused; then the SQLite ledger, and object storage in
# a filesystem bucket with gzip (bindings, size rules, a swept crash, tampering).
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cli="$root/$build/adcp-ledger"
work="$root/demo-run"
rm -rf "$work"; mkdir -p "$work"; cd "$work"

say() { printf '\n== %s\n' "$*"; }

say "generating 25,000 delivery rows (unsorted keys, mixed number forms)"
awk 'BEGIN { srand(7); for (i = 0; i < 25000; i++) {
  imps = int(rand() * 250000); printf("{\"package_id\": \"pkg_%04d\", \"date\": \"2026-10-%02d\", \"impressions\": %d, \"clicks\": %d, \"spend\": \"%.2f\", \"ctr\": %.6f, \"name\": \"Rentr\\u00e9e \\ud83c\\udf92\"}\n",
    1 + i % 400, 1 + i % 28, imps, int(imps / 60), imps * 0.004, rand() / 20) } }' > rows.jsonl
awk -F'"impressions": ' '{ split($2, a, ","); s += a[1] } END { printf("[{\"name\":\"impressions\",\"value\":\"%.0f\",\"value_type\":\"integer\"}]\n", s) }' rows.jsonl > totals.json
echo "rows.jsonl: $(wc -l < rows.jsonl) rows, $(wc -c < rows.jsonl) bytes; totals: $(cat totals.json)"

say "canonical form of one row (RFC 8785)"
head -1 rows.jsonl | "$cli" canonicalize

say "encode: chunks of <= 10,000 rows / 8 MiB in 500-row segments"
"$cli" encode --revision-id rrev_demo_1 --totals totals.json --chunks-dir chunks rows.jsonl > manifest.json
python3 -c 'import json; d = json.load(open("manifest.json")); print("row_count", d["row_count"], "| chunks", len(d["manifests"]), "| row_manifest_sha256", d["row_manifest_sha256"][:16] + "…", "| revision_content_sha256", d["revision_content_sha256"][:16] + "…")' 2>/dev/null || head -c 300 manifest.json
ls -l chunks

say "verify: manifest digest, every segment and chunk digest, the revision envelope"
"$cli" verify-chunks --manifest manifest.json --chunks-dir chunks --revision-id rrev_demo_1 --totals totals.json

say "the same revision stored gzip-compressed"
"$cli" encode --revision-id rrev_demo_1 --totals totals.json --chunks-dir chunks-gz --gzip rows.jsonl > manifest-gz.json
du -b chunks chunks-gz | sed 's/^/  /'
"$cli" verify-chunks --manifest manifest-gz.json --chunks-dir chunks-gz --revision-id rrev_demo_1 --totals totals.json

say "tamper: change one byte of chunk 1 and verify again (must be refused)"
cp -r chunks tampered
printf 'X' | dd of=tampered/000001.jsonl bs=1 seek=100 conv=notrunc status=none
set +e
"$cli" verify-chunks --manifest manifest.json --chunks-dir tampered --revision-id rrev_demo_1 --totals totals.json
status=$?
set -e
echo "exit status $status (3 = integrity failure)"
[ "$status" -eq 3 ]

if "$cli" --help | grep -q '^  init'; then
  say "embedded SQLite ledger: init + migrate status"
  "$cli" --db "sqlite:$work/ledger.db" init
  "$cli" --db "sqlite:$work/ledger.db" migrate --status
fi
if "$cli" --help | grep -q '^  commit'; then
  db="sqlite:$work/ledger.db"
  [ -f "$work/ledger.db" ] || "$cli" --db "$db" init >/dev/null
  say "ledger: commit revision 1 (snapshot) of obligation ob_demo_2026_10 — creates the obligation"
  "$cli" --db "$db" commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_1 \
    --finality snapshot --period-start 2026-10-01T00:00:00Z --period-end 2026-11-01T00:00:00Z \
    --observed-at 2026-10-15T12:00:00Z --totals totals.json rows.jsonl

  say "ledger: revision 2 with 1,000 more rows (new bytes)"
  awk 'BEGIN { for (i = 0; i < 1000; i++) printf("{\"package_id\": \"pkg_late\", \"date\": \"2026-10-29\", \"impressions\": %d}\n", i) }' > late.jsonl
  cat rows.jsonl late.jsonl > rows2.jsonl
  "$cli" --db "$db" commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_2 \
    --finality snapshot --observed-at 2026-10-16T12:00:00Z rows2.jsonl | sed -n '1,3p;$p'

  say "ledger: revision 3, the same rows again — header-only (shares revision 2's chunks, nothing stored)"
  "$cli" --db "$db" commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_3 \
    --finality snapshot --observed-at 2026-10-17T12:00:00Z rows2.jsonl | sed -n '1,3p;/shared/p;$p'

  say "ledger: replaying revision 3 (same ID, same rows) writes nothing"
  "$cli" --db "$db" commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_3 \
    --finality snapshot rows2.jsonl | head -1

  say "ledger: same ID, different rows → CONTENT_CONFLICT (exit 2)"
  set +e
  head -5 rows.jsonl | "$cli" --db "$db" commit --account acct_demo --obligation ob_demo_2026_10 \
    --revision rrev_demo_3 --finality snapshot
  echo "exit status $?"
  set -e

  say "ledger: revision 4 is official (terminal)"
  "$cli" --db "$db" commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_4 \
    --finality official --totals totals.json rows2.jsonl | sed -n '1,3p;$p'
  set +e
  "$cli" --db "$db" commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_5 \
    --finality snapshot rows2.jsonl
  echo "exit status $? (nothing after the official)"
  set -e

  say "ledger: current revision and the account's periods"
  "$cli" --db "$db" current --account acct_demo --obligation ob_demo_2026_10 | head -3
  "$cli" --db "$db" list --account acct_demo

  say "ledger: a verified page — rows 9,998..10,002 (crosses a chunk boundary)"
  "$cli" --db "$db" read --account acct_demo --revision rrev_demo_4 --offset 9998 --limit 5

  say "ledger: another account cannot see it (same answer as an unknown ID)"
  set +e
  "$cli" --db "$db" read --account acct_other --revision rrev_demo_4 --limit 1
  echo "exit status $? (5 = not found)"
  set -e

  say "ledger: verify every stored revision"
  "$cli" --db "$db" verify --all
fi
if "$cli" --help | grep -q '^  binding'; then
  db="sqlite:$work/ledger.db"
  say "object storage: a filesystem bucket with gzip, selected by size (config file)"
  cat > objects.json <<'JSON'
{"deployment_namespace": "default",
 "bindings": [{"id": "fs_gzip", "kind": "object", "provider": "filesystem", "location": {"root": "demo"},
               "root_dir": "./bucket", "prefix": "rows", "compression": "gzip"}],
 "rules": [{"binding": "fs_gzip", "min_canonical_bytes": 262144}],
 "default": "postgres"}
JSON
  cat objects.json
  export ADCP_LEDGER_CONFIG="$work/objects.json"
  "$cli" --db "$db" binding add fs_gzip
  "$cli" --db "$db" binding list

  say "object storage: commit 26,000 rows — above 256 KiB, so the rule picks fs_gzip"
  "$cli" --db "$db" commit --account acct_demo --obligation ob_demo_2026_11 --revision rrev_obj_1 \
    --finality snapshot --period-start 2026-11-01T00:00:00Z --period-end 2026-12-01T00:00:00Z rows2.jsonl | sed -n '1,3p;$p'
  echo "objects in the bucket:"; find bucket -type f -name '*.jsonl*' | sed 's/^/  /'

  say "object storage: a small revision stays in the database (rule: postgres below 256 KiB)"
  head -20 rows.jsonl | "$cli" --db "$db" commit --account acct_demo --obligation ob_demo_small \
    --revision rrev_small --finality snapshot --period-start 2026-11-01T00:00:00Z --period-end 2026-12-01T00:00:00Z | tail -1

  say "object storage: verified page read through the provider (gzip: physical digest, capped inflate, segments)"
  "$cli" --db "$db" read --account acct_demo --revision rrev_obj_1 --offset 9998 --limit 3

  say "object storage: a crashed upload (killed before the header) is swept after its intent expires"
  # The pause hook exists only in the test build of the tool (docs/cli.md).
  ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD=30000 "$cli-testhooks" --db "$db" commit --account acct_demo \
    --obligation ob_demo_2026_12 --revision rrev_obj_crash --finality snapshot --period-start 2026-12-01T00:00:00Z \
    --period-end 2027-01-01T00:00:00Z rows2.jsonl >/dev/null 2>crash.err &
  pid=$!
  for _ in $(seq 100); do grep -q uploaded crash.err 2>/dev/null && break; sleep 0.1; done
  echo "uploads done, killing the writer before its commit (kill -9)"
  kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  echo "objects now: $(find bucket -type f -name '*.jsonl*' | wc -l); header: $("$cli" --db "$db" show --account acct_demo --revision rrev_obj_crash >/dev/null 2>&1 && echo present || echo absent)"
  "$cli" --db "$db" intents list
  "$cli" --db "$db" sweep
  echo "(not expired yet; pretending the lease and intent expired:)"
  python3 - "$work/ledger.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z'")
c.commit()
PY
  "$cli" --db "$db" sweep
  echo "objects now: $(find bucket -type f -name '*.jsonl*' | wc -l)"

  say "object storage: tamper with an object — the read is refused"
  obj=$(find bucket -type f -name '000001.jsonl.gz' | head -1)
  python3 - "$obj" <<'PY'
import os, sys
p = sys.argv[1]; st = os.stat(p)
with open(p, "r+b") as f:
    f.seek(50); b = f.read(1); f.seek(50); f.write(bytes([b[0] ^ 1]))
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and times: the pinned version still matches
PY
  set +e
  "$cli" --db "$db" read --account acct_demo --revision rrev_obj_1 --offset 10000 --limit 1
  echo "exit status $? (3 = integrity failure)"
  set -e
  unset ADCP_LEDGER_CONFIG
fi
say "done: everything above ran in $work"
