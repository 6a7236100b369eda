#!/usr/bin/env bash
# fuzz/run.sh BUILD_DIR SECONDS — runs every libFuzzer target for SECONDS each,
# one after another (see docs/fuzzing.md). Corpora grow in fuzz/corpus-<target>/
# (gitignored), seeded from fuzz/seeds/<target>/; crash artifacts and logs go to
# BUILD_DIR/fuzz/. Prints one summary line per target; exits 1 if any crashed.
# Extra libFuzzer flags: FUZZ_ARGS="-use_value_profile=1" fuzz/run.sh ...
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
seconds=$2
here=$(cd "$(dirname "$0")" && pwd)

# Target name and -max_len: JSON documents up to 64 KiB; the verify target's
# modes (gzip objects, manifests, raw ranges) need far less and run faster short.
# The newer targets read short inputs: cursors, keys, listing bodies, legacy rows,
# and the shape-plan target one row and its mutations.
targets="fuzz_json:65536 fuzz_rows_verify:16384 fuzz_scanner_diff:65536 fuzz_audit_docs:65536 fuzz_config:65536 fuzz_feed_cursor:8192 fuzz_xml_listing:65536 fuzz_object_keys:4096 fuzz_import_rows:16384 fuzz_shape_plan:16384"
# FUZZ_TARGETS="fuzz_rows_verify" runs a subset.
if [ -n "${FUZZ_TARGETS:-}" ]; then
  sel=""
  for spec in $targets; do
    case " $FUZZ_TARGETS " in *" ${spec%%:*} "*) sel="$sel $spec" ;; esac
  done
  targets=$sel
fi

failed=0
for spec in $targets; do
  t=${spec%%:*}
  max_len=${spec#*:}
  bin=$build/fuzz/$t
  if [ ! -x "$bin" ]; then
    echo "$t: not built ($bin missing; configure with -DADCP_FUZZ=ON)" >&2
    failed=1
    continue
  fi
  corpus=$here/corpus-$t
  artifacts=$build/fuzz/artifacts-$t
  log=$build/fuzz/$t.log
  mkdir -p "$corpus" "$artifacts"
  [ -d "$here/seeds/$t" ] && cp -n "$here/seeds/$t"/* "$corpus"/ 2>/dev/null

  start=$(date +%s)
  # shellcheck disable=SC2086
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$bin" -max_total_time="$seconds" -max_len="$max_len" -timeout=30 -rss_limit_mb=2560 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" ${FUZZ_ARGS:-} "$corpus" >"$log" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - start ))

  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -n 1)
  speed=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov: ' | tail -n 1)
  cov=$(printf '%s\n' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(printf '%s\n' "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  corp=$(printf '%s\n' "$last" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
  if [ "$rc" -eq 0 ]; then
    verdict="no crash"
  else
    failed=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    verdict="CRASH (exit $rc) ${artifact:+artifact $artifact; }log $log"
  fi
  echo "$t: ${execs:-?} executions in ${elapsed}s (${speed:-?}/s), cov ${cov:-?} ft ${ft:-?} corpus ${corp:-?}: $verdict"
done
exit $failed
