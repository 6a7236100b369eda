#!/bin/sh
# tests/install/service.sh SOURCE_DIR CLI — the systemd unit's contract that
# can be checked without booting systemd (docs/packaging.md, issue 33):
#   - the database URL alone suffices: `maintain --once` run with exactly the
#     unit's Environment= lines, its WorkingDirectory-like state directory and
#     no configuration file at the system location exits 0 (and `config check`
#     says source none); once the file is there it is the one read (system);
#   - ProtectSystem=strict: the unit and docs/packaging.md carry the same
#     ReadWritePaths= line for a filesystem binding's root_dir, and the unit
#     with that line enabled passes `systemd-analyze verify` (where it exists).
# CLI is the test-hooks build, whose system configuration path can be moved
# to a scratch directory (ADCP_LEDGER_TEST_SYSTEM_CONFIG).
set -eu
src=$1 cli=$2
status=0
fail() { echo "service test: $*" >&2; status=1; }
unit=$src/packaging/adcp-ledger-maintain.service
doc=$src/docs/packaging.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adcp-svc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/state" "$tmp/home" "$tmp/etc/adcp-ledger" "$tmp/objects"

# The unit's own environment (Environment= lines; the optional EnvironmentFile
# stands for the operator's ADCP_DATABASE_URL).
unit_env=$(sed -n 's/^Environment=//p' "$unit" | tr '\n' ' ')
run() {
  (cd "$tmp/state" && env -i PATH="$PATH" HOME="$tmp/home" ADCP_LEDGER_TEST_SYSTEM_CONFIG="$tmp/etc/adcp-ledger/config" \
    $unit_env ADCP_DATABASE_URL="sqlite:$tmp/state/ledger.db" "$cli" "$@")
}
run init >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "init with the unit's environment"; }
if run maintain --once >"$tmp/out" 2>&1; then :; else
  cat "$tmp/out" >&2
  fail "maintain --once with the unit's environment and no configuration file: exit $? (the database URL alone must suffice)"
fi
run config check --json >"$tmp/out" 2>&1 || true
grep -q '"source":"none"' "$tmp/out" || { cat "$tmp/out" >&2; fail "no configuration file: config check does not say source none"; }
# With the file in place, the service reads it.
printf '{"bindings": [{"id": "fs1", "kind": "object", "provider": "filesystem", "location": {"root": "ledger"}, "root_dir": "%s", "prefix": "rows"}]}\n' \
  "$tmp/objects" >"$tmp/etc/adcp-ledger/config"
run config check --json >"$tmp/out" 2>&1 || true
grep -q '"source":"system"' "$tmp/out" || { cat "$tmp/out" >&2; fail "the system configuration file is not the one read"; }
run maintain --once >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "maintain --once with the system configuration"; }

# ReadWritePaths= for a filesystem binding: the same line in the unit (commented
# out, an example) and in the documented drop-in.
line=$(sed -n 's/^#\(ReadWritePaths=.*\)$/\1/p' "$unit")
[ -n "$line" ] || fail "unit: no '#ReadWritePaths=' example for a filesystem binding's root_dir"
grep -q '^ProtectSystem=strict$' "$unit" || fail "unit: ProtectSystem=strict is gone (then update this test and the docs)"
if [ -n "$line" ]; then
  grep -qxF "$line" "$doc" || fail "docs/packaging.md does not carry the unit's line '$line'"
  if command -v systemd-analyze >/dev/null 2>&1; then
    printf '#!/bin/sh\nexit 0\n' >"$tmp/adcp-ledger"
    chmod 755 "$tmp/adcp-ledger"
    sed -e "s#^ExecStart=[^ ]*#ExecStart=$tmp/adcp-ledger#" -e "s/^#\(ReadWritePaths=.*\)$/\1/" "$unit" \
      >"$tmp/adcp-ledger-maintain.service"
    if ! systemd-analyze verify --man=no "$tmp/adcp-ledger-maintain.service" >"$tmp/verify.log" 2>&1 ||
      grep 'adcp-ledger-maintain.service' "$tmp/verify.log" >&2; then
      cat "$tmp/verify.log" >&2
      fail "systemd-analyze verify refused the unit with '$line' enabled"
    fi
  else
    echo "service test: systemd-analyze not installed; the ReadWritePaths= line was checked as text only"
  fi
fi
[ "$status" = 0 ] && echo "service test: ok: maintain runs on the unit's environment without a configuration file; ReadWritePaths= documented and valid"
exit "$status"
