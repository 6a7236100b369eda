#!/usr/bin/env bash
# Runs the whole suite from a build directory: starts a throwaway PostgreSQL
# cluster on loopback (scripts/pg-cluster.sh), runs ctest, tears it down.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/pg-cluster.sh" ]; then
  # A failed start must stop the run (`eval "$(…)"` alone would swallow it).
  out=$("$here/pg-cluster.sh" start) || { echo "test.sh: could not start the PostgreSQL test cluster" >&2; exit 1; }
  eval "$out"
  trap '"$here/pg-cluster.sh" stop "$ADCP_TEST_PG_DIR" >/dev/null 2>&1 || true' EXIT
fi
# Ceph radosgw (a real S3, scripts/radosgw.sh) for the S3 provider tests;
# ADCP_TEST_RADOSGW=0 skips it (the S3 tests then run against the fake only).
if [ "${ADCP_TEST_RADOSGW:-1}" != 0 ] && [ -x "$here/radosgw.sh" ]; then
  rgw=$("$here/radosgw.sh" start </dev/null) || { echo "test.sh: could not start radosgw" >&2; exit 1; }
  eval "$rgw"
  trap '"$here/radosgw.sh" stop "$ADCP_TEST_RGW_DIR" >/dev/null 2>&1 || true; "$here/pg-cluster.sh" stop "${ADCP_TEST_PG_DIR:-}" >/dev/null 2>&1 || true' EXIT
fi
# Azurite (a real Azure Blob API without versioning, scripts/azurite.sh) for the
# Azure provider tests; ADCP_TEST_AZURITE=0 skips it (the fake only). Its stop
# joins the EXIT trap set above.
if [ "${ADCP_TEST_AZURITE:-1}" != 0 ] && [ -x "$here/azurite.sh" ]; then
  az=$("$here/azurite.sh" start </dev/null) || { echo "test.sh: could not start Azurite" >&2; exit 1; }
  eval "$az"
  prev_trap=$(trap -p EXIT) # "trap -- 'CMD' EXIT", or nothing
  eval "set -- $prev_trap"
  trap '"$here/azurite.sh" stop "$ADCP_TEST_AZURITE_DIR" >/dev/null 2>&1 || true; '"${3:-}" EXIT
fi
cd "$build"
# ADCP_TEST_LABEL=fast (make test-fast): only the tests with that ctest label;
# ADCP_TEST_REGEX=RE: only the tests whose names match RE (ctest -R). Other
# arguments after BUILD are not read.
ctest --output-on-failure -j "${ADCP_TEST_JOBS:-2}" ${ADCP_TEST_LABEL:+-L "$ADCP_TEST_LABEL"} \
  ${ADCP_TEST_REGEX:+-R "$ADCP_TEST_REGEX"}
