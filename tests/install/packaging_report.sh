#!/bin/sh
# tests/install/packaging_report.sh SOURCE_DIR — what `packaging.sh --image`
# reports (issue 33): with no working container engine it must say that the
# image was NOT built, why (per engine), and what was checked instead, and
# exit 77 (skipped), never pass silently; with an engine that answers it must
# build, run and check the image. The engines here are stand-ins on PATH
# (one whose daemon is down, one that answers), so the test never depends on
# what this machine has installed.
set -eu
src=$1
status=0
fail() { echo "packaging_report test: $*" >&2; status=1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adcp-packrep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/down" "$tmp/up"

# docker and podman whose daemon/service is not there (as on a CI machine with the client only).
for e in docker podman; do
  printf '#!/bin/sh\necho "Cannot connect to the %s daemon at unix:///var/run/%s.sock." >&2\nexit 1\n' "$e" "$e" >"$tmp/down/$e"
  chmod 755 "$tmp/down/$e"
done
rc=0
PATH="$tmp/down:$PATH" sh "$src/tests/install/packaging.sh" "$src" --image >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 77 ] || fail "no working engine: exit $rc, expected 77 (skipped)"
grep -q 'the container image was NOT built: no working container engine' "$tmp/out" || fail "no 'NOT built' line"
grep -q "docker: installed, but 'docker info' failed or did not answer within 10 s (Cannot connect" "$tmp/out" ||
  fail "the docker reason is not given"
grep -q "podman: installed, but 'podman info' failed or did not answer" "$tmp/out" || fail "the podman reason is not given"
grep -q "checked instead: the Dockerfile's structure" "$tmp/out" || fail "what was checked instead is not said"
grep -q 'systemd unit' "$tmp/out" || fail "the unit check is not named"

# A docker that answers: the image is built, run and inspected.
cat >"$tmp/up/docker" <<'STUB'
#!/bin/sh
echo "$*" >>"${0%/*}/calls"
case "$1" in
  info | build) exit 0 ;;
  run) case "$*" in *--entrypoint*) echo 1000 ;; *) echo "adcp-ledger 0.1.0" ;; esac ;;
  image) case "$2" in inspect) echo '["maintain"]' ;; esac ;;
esac
exit 0
STUB
chmod 755 "$tmp/up/docker"
rc=0
PATH="$tmp/up:$PATH" sh "$src/tests/install/packaging.sh" "$src" --image >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/out" >&2; fail "a working engine: exit $rc"; }
grep -q 'image built with docker and run' "$tmp/out" || fail "no 'image built' line"
grep -q '^build -q -t adcp-ledger-test:' "$tmp/up/calls" || fail "the image was not built"
grep -q -- '--version' "$tmp/up/calls" || fail "the image was not run"

# The default mode says what it checked.
rc=0
sh "$src/tests/install/packaging.sh" "$src" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/out" >&2; fail "lint mode: exit $rc"; }
grep -q "packaging test: ok: checked the Dockerfile's structure" "$tmp/out" || fail "lint mode does not say what it checked"
[ "$status" = 0 ] && echo "packaging_report test: ok"
exit "$status"
