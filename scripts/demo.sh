#!/usr/bin/env bash
# `make run`: the main job on the embedded default, end to end, in a scratch
# folder (./demo-run/, removed and recreated each time). Every section always
# runs, in this order (no probing of the tool's help: a skipped section would
# leave the next one without its input): rows and their canonical chunks,
# the SQLite ledger (commit, replay, header-only repeat, verified page reads,
# verify), an object binding with gzip, the change feed with a consumer, a
# signed checkpoint and an audit catching an edited header, a maintenance pass.
# Any unexpected exit status stops the demo with status 1.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cli="$root/$build/adcp-ledger"
work="$root/demo-run"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
db="sqlite:$work/ledger.db"
started=$(date +%s)
section=0

say() { section=$((section + 1)); printf '\n== %d. %s\n' "$section" "$*"; }
# expect STATUS CMD…: run CMD (output shown), fail the demo unless it exits STATUS.
expect() {
  local want=$1 got=0; shift
  "$@" || got=$?
  echo "exit status $got"
  [ "$got" -eq "$want" ] || { echo "demo: expected exit status $want, got $got" >&2; exit 1; }
}
L() { "$cli" --db "$db" "$@"; }

say "generating 25,000 delivery rows (unsorted keys, mixed number forms)"
awk 'BEGIN { srand(7); for (i = 0; i < 25000; i++) {
  imps = int(rand() * 250000); printf("{\"package_id\": \"pkg_%04d\", \"date\": \"2026-10-%02d\", \"impressions\": %d, \"clicks\": %d, \"spend\": \"%.2f\", \"ctr\": %.6f, \"name\": \"Rentr\\u00e9e \\ud83c\\udf92\"}\n",
    1 + i % 400, 1 + i % 28, imps, int(imps / 60), imps * 0.004, rand() / 20) } }' > rows.jsonl
awk -F'"impressions": ' '{ split($2, a, ","); s += a[1] } END { printf("[{\"name\":\"impressions\",\"value\":\"%.0f\",\"value_type\":\"integer\"}]\n", s) }' rows.jsonl > totals.json
awk 'BEGIN { for (i = 0; i < 1000; i++) printf("{\"package_id\": \"pkg_late\", \"date\": \"2026-10-29\", \"impressions\": %d}\n", i) }' > late.jsonl
cat rows.jsonl late.jsonl > rows2.jsonl
echo "rows.jsonl: $(wc -l < rows.jsonl) rows, $(wc -c < rows.jsonl) bytes; rows2.jsonl: $(wc -l < rows2.jsonl) rows; totals: $(cat totals.json)"

say "canonical form of one row (RFC 8785)"
head -1 rows.jsonl | "$cli" canonicalize

say "encode into chunks of <= 10,000 rows / 8 MiB in 500-row segments, plain and gzip; verify both"
"$cli" encode --revision-id rrev_demo_1 --totals totals.json --chunks-dir chunks rows.jsonl > manifest.json
"$cli" encode --revision-id rrev_demo_1 --totals totals.json --chunks-dir chunks-gz --gzip rows.jsonl > manifest-gz.json
python3 -c 'import json; d = json.load(open("manifest.json")); print("row_count", d["row_count"], "| chunks", len(d["manifests"]), "| row_manifest_sha256", d["row_manifest_sha256"][:16] + "…")'
du -b chunks chunks-gz | sed 's/^/  /'
"$cli" verify-chunks --manifest manifest.json --chunks-dir chunks --revision-id rrev_demo_1 --totals totals.json
"$cli" verify-chunks --manifest manifest-gz.json --chunks-dir chunks-gz --revision-id rrev_demo_1 --totals totals.json

say "a chunk file with one byte changed is refused (3 = integrity failure)"
cp -r chunks tampered
printf 'X' | dd of=tampered/000001.jsonl bs=1 seek=100 conv=notrunc status=none
expect 3 "$cli" verify-chunks --manifest manifest.json --chunks-dir tampered --revision-id rrev_demo_1 --totals totals.json

say "embedded SQLite ledger: init, schema status"
L init
L migrate --status

say "commit revision 1 (snapshot) of obligation ob_demo_2026_10 (creates the obligation)"
L commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_1 \
  --finality snapshot --period-start 2026-10-01T00:00:00Z --period-end 2026-11-01T00:00:00Z \
  --observed-at 2026-10-15T12:00:00Z --totals totals.json rows.jsonl | sed -n '1,3p;$p'

say "revision 2 with 1,000 more rows (new bytes)"
L commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_2 \
  --finality snapshot --observed-at 2026-10-16T12:00:00Z rows2.jsonl | sed -n '1,3p;$p'

say "revision 3, the same rows again: header-only (shares revision 2's chunks, nothing stored)"
L commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_3 \
  --finality snapshot --observed-at 2026-10-17T12:00:00Z rows2.jsonl | sed -n '1,3p;/shared/p;$p'

say "replaying revision 3 (same ID, same rows) writes nothing"
L commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_3 --finality snapshot rows2.jsonl | head -1

say "same ID, different rows: CONTENT_CONFLICT (exit 2)"
head -5 rows.jsonl > five.jsonl
expect 2 L commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_3 --finality snapshot five.jsonl

say "revision 4 is official (terminal); nothing may follow it (exit 2)"
L commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_4 \
  --finality official --totals totals.json rows2.jsonl | sed -n '1,3p;$p'
expect 2 L commit --account acct_demo --obligation ob_demo_2026_10 --revision rrev_demo_5 --finality snapshot rows2.jsonl

say "current revision and the account's periods"
L current --account acct_demo --obligation ob_demo_2026_10 | head -3
L list --account acct_demo

say "a verified page: rows 9,998..10,002 (crosses a chunk boundary)"
L read --account acct_demo --revision rrev_demo_4 --offset 9998 --limit 5

say "another account cannot see it (same answer as an unknown ID: exit 5)"
expect 5 L read --account acct_other --revision rrev_demo_4 --limit 1

say "verify every stored revision"
L verify --all --quiet

say "object storage: a filesystem bucket with gzip, selected by size; audit keys (configuration file)"
openssl genpkey -algorithm ed25519 -out signing.pem 2>/dev/null
openssl pkey -in signing.pem -pubout -out signing.pub.pem
pub=$(grep -v -- ----- signing.pub.pem | tr -d '\n')
cat > adcp-ledger.json <<JSON
{"deployment_namespace": "default",
 "bindings": [{"id": "fs_gzip", "kind": "object", "provider": "filesystem", "location": {"root": "demo"},
               "root_dir": "./bucket", "prefix": "rows", "compression": "gzip"}],
 "rules": [{"binding": "fs_gzip", "min_canonical_bytes": 262144}],
 "default": "postgres",
 "audit": {"signing_key_file": "signing.pem", "public_keys": ["$pub"], "checkpoint_binding": "fs_gzip"}}
JSON
cat adcp-ledger.json
export ADCP_LEDGER_CONFIG="$work/adcp-ledger.json"
L binding add fs_gzip
L binding list

say "commit 26,000 rows to a new obligation: above 256 KiB, so the rule picks fs_gzip"
L commit --account acct_demo --obligation ob_demo_2026_11 --revision rrev_obj_1 \
  --finality snapshot --period-start 2026-11-01T00:00:00Z --period-end 2026-12-01T00:00:00Z rows2.jsonl | sed -n '1,3p;$p'
echo "objects in the bucket:"; find bucket -type f -name '*.jsonl*' | sort | sed 's/^/  /'

say "a small revision stays in the database (rule: postgres below 256 KiB)"
head -20 rows.jsonl | L commit --account acct_demo --obligation ob_demo_small \
  --revision rrev_small --finality snapshot --period-start 2026-11-01T00:00:00Z --period-end 2026-12-01T00:00:00Z | tail -1

say "verified page read through the provider (gzip: physical digest, capped inflate, segments)"
L read --account acct_demo --revision rrev_obj_1 --offset 9998 --limit 3

say "the change feed: a registered consumer reads two changes, then shows its lag"
L consumer register demo_consumer
L changes --consumer demo_consumer --limit 2
L consumer list

say "a signed checkpoint of the account's audit log"
L checkpoint --account acct_demo | cut -c1-160
echo "published: $(find bucket -path '*_checkpoints*' -type f | wc -l) checkpoint object(s)"

say "an edited header (the observed_at of revision 1) is caught by audit (exit 3)"
python3 - "$work/ledger.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("DROP TRIGGER adcp_reporting_revisions_immutable")  # a database editor would do this first
c.execute("UPDATE adcp_reporting_revisions SET observed_at = '2026-10-01T00:00:00.000000Z' WHERE revision_id = 'rrev_demo_1'")
c.commit()
PY
expect 3 L audit --account acct_demo

say "a tampered object is refused on read (same size and times: exit 3)"
obj=$(find bucket -type f -name '000001.jsonl.gz' | sort | head -1)
python3 - "$obj" <<'PY'
import os, sys
p = sys.argv[1]; st = os.stat(p)
with open(p, "r+b") as f:
    f.seek(50); b = f.read(1); f.seek(50); f.write(bytes([b[0] ^ 1]))
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # the pinned version still matches
PY
expect 3 L read --account acct_demo --revision rrev_obj_1 --offset 10000 --limit 1

say "one maintenance pass (intent sweep, change pruning, checkpoints of grown logs, …)"
L maintain --once
unset ADCP_LEDGER_CONFIG

echo
echo "== done: $section sections in $(( $(date +%s) - started )) s, everything above ran in $work"
