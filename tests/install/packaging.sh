#!/bin/sh
# tests/install/packaging.sh SOURCE_DIR [--image] — the container and service
# files (docs/packaging.md).
#   (default)  the Dockerfile's structure (a lint written here: no hadolint in
#              Debian) and the systemd unit (structure, and
#              `systemd-analyze verify` where it exists); says what it checked.
#   --image    builds and runs the image (--version, non-root user, the
#              maintain default) with the first working engine: docker, then
#              podman (`ENGINE info` answering within 10 s), the build bounded
#              by $ADCP_PACKAGING_BUILD_SECONDS (default 1200). With no working
#              engine it says the image was NOT built, why, and what was checked
#              instead, and exits 77 (ctest: skipped, never a pass).
set -eu
src=$1
mode=${2:-lint}
status=0
fail() { echo "packaging test: $*" >&2; status=1; }
df=$src/Dockerfile
unit=$src/packaging/adcp-ledger-maintain.service
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adcp-pack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ---- Dockerfile: structure (always) ----
# Join continuation lines, drop comments and blank lines: one instruction per line.
sed -e 's/^[[:space:]]*#.*$//' "$df" | awk '
  { line = $0; if (sub(/\\[[:space:]]*$/, "", line)) { buf = buf line " "; next } print buf line; buf = "" }
  END { if (buf != "") { print buf; print "UNTERMINATED-CONTINUATION" } }' | grep -v '^[[:space:]]*$' >"$tmp/instr"
known='FROM RUN CMD LABEL EXPOSE ENV ADD COPY ENTRYPOINT VOLUME USER WORKDIR ARG ONBUILD STOPSIGNAL HEALTHCHECK SHELL'
while read -r kw rest; do
  case " $known " in *" $kw "*) ;; *) fail "Dockerfile: unknown instruction '$kw'" ;; esac
  [ -n "$rest" ] || fail "Dockerfile: $kw without arguments"
done <"$tmp/instr"
first=$(awk '$1 != "ARG" { print $1; exit }' "$tmp/instr")
[ "$first" = FROM ] || fail "Dockerfile: the first instruction is $first, not FROM"
awk '$1 == "FROM"' "$tmp/instr" | grep -qv 'debian:12-slim' && fail "Dockerfile: every stage must be FROM debian:12-slim"
last_from=$(grep -n '^FROM' "$tmp/instr" | tail -n 1 | cut -d: -f1)
tail -n +"$last_from" "$tmp/instr" >"$tmp/final"
user=$(awk '$1 == "USER" { u = $2 } END { print u }' "$tmp/final")
case "$user" in "" | root | 0 | 0:*) fail "Dockerfile: the final stage runs as '${user:-root}', not a non-root USER" ;; esac
grep -qx 'ENTRYPOINT \["adcp-ledger"\]' "$tmp/final" || fail 'Dockerfile: ENTRYPOINT must be ["adcp-ledger"] (exec form)'
grep -qx 'CMD \["maintain"\]' "$tmp/final" || fail 'Dockerfile: CMD must be ["maintain"] (the worker by default)'
grep -q '^ADD' "$tmp/instr" && fail "Dockerfile: use COPY, not ADD"
grep '^RUN' "$tmp/instr" | grep 'apt-get install' | grep -qv -- '--no-install-recommends' &&
  fail "Dockerfile: apt-get install without --no-install-recommends"
grep '^RUN' "$tmp/instr" | grep 'apt-get install' | grep -qv 'rm -rf /var/lib/apt/lists' &&
  fail "Dockerfile: apt lists left in a layer"
grep -Eq '^ENV .*(PASSWORD|SECRET|postgres(ql)?://[^ ]*@)' "$tmp/instr" && fail "Dockerfile: a secret in ENV"
# Every COPY source from the build context exists (the build would fail on it).
grep '^COPY' "$tmp/instr" | grep -v -- '--from=' | while read -r _ args; do
  set -- $args
  while [ $# -gt 1 ]; do
    [ -e "$src/$1" ] || { echo "packaging test: Dockerfile: COPY source $1 does not exist" >&2; echo x >>"$tmp/copyfail"; }
    shift
  done
done
[ ! -e "$tmp/copyfail" ] || status=1
grep -q UNTERMINATED "$tmp/instr" && fail "Dockerfile: a line continuation runs off the end"

# What the default mode checks, for the message of an image not built.
checked="the Dockerfile's structure (known instructions, every stage FROM debian:12-slim, a non-root final USER, exec-form ENTRYPOINT/CMD, COPY sources that exist, no ADD, apt-get hygiene, no secret in ENV) and the systemd unit (install/packaging)"

# ---- the image: built and run with a working engine (--image) ----
if [ "$mode" = --image ]; then
  engine="" why=""
  for e in docker podman; do
    if ! command -v "$e" >/dev/null 2>&1; then
      why="$why; $e: not installed"
    elif ! timeout 10 "$e" info >"$tmp/info.log" 2>&1; then
      why="$why; $e: installed, but '$e info' failed or did not answer within 10 s ($(grep -m1 -iE 'cannot|error|denied' "$tmp/info.log" | cut -c1-120))"
    else
      engine=$e
      break
    fi
  done
  if [ -z "$engine" ]; then
    echo "packaging test: the container image was NOT built: no working container engine${why}."
    echo "packaging test: checked instead: $checked."
    exit 77
  fi
  [ "$status" = 0 ] || exit "$status"
  tag=adcp-ledger-test:$$
  secs=${ADCP_PACKAGING_BUILD_SECONDS:-1200}
  echo "packaging test: building the image with $engine (at most $secs s)"
  if timeout "$secs" "$engine" build -q -t "$tag" "$src" >"$tmp/build.log" 2>&1; then
    "$engine" run --rm "$tag" --version | grep -q '^adcp-ledger ' || fail "image: --version"
    [ "$("$engine" run --rm --entrypoint id "$tag" -u)" != 0 ] || fail "image: runs as root"
    [ "$("$engine" image inspect -f '{{json .Config.Cmd}}' "$tag")" = '["maintain"]' ] || fail "image: default command"
    "$engine" image rm -f "$tag" >/dev/null 2>&1 || true
    [ "$status" = 0 ] && echo "packaging test: image built with $engine and run: --version, non-root user, default command maintain"
  else
    tail -n 50 "$tmp/build.log" >&2
    fail "$engine build failed or took more than $secs s"
  fi
  exit "$status"
fi

# ---- systemd unit ----
for want in '^\[Unit\]$' '^\[Service\]$' '^\[Install\]$' '^ExecStart=/[^ ]*/adcp-ledger maintain$' \
            '^User=[a-z]' '^WantedBy=multi-user.target$' '^NoNewPrivileges=yes$' '^Restart=on-failure$'; do
  grep -Eq "$want" "$unit" || fail "unit: no line matching $want"
done
grep -Eq '^User=(root|0)$' "$unit" && fail "unit: runs as root"
grep -Eq '^Environment=.*(PASSWORD|postgres(ql)?://[^ ]*@)' "$unit" && fail "unit: a secret in Environment="
if command -v systemd-analyze >/dev/null 2>&1; then
  # verify checks that ExecStart's binary exists: point it at a stand-in,
  # everything else is the shipped unit.
  printf '#!/bin/sh\nexit 0\n' >"$tmp/adcp-ledger"
  chmod 755 "$tmp/adcp-ledger"
  sed "s#^ExecStart=[^ ]*#ExecStart=$tmp/adcp-ledger#" "$unit" >"$tmp/adcp-ledger-maintain.service"
  # --man=no: the pages are installed with the CLI, not necessarily on this machine.
  if ! systemd-analyze verify --man=no "$tmp/adcp-ledger-maintain.service" >"$tmp/verify.log" 2>&1; then
    cat "$tmp/verify.log" >&2
    fail "systemd-analyze verify refused the unit"
  elif grep 'adcp-ledger-maintain.service' "$tmp/verify.log" >&2; then
    fail "systemd-analyze verify: warnings about the unit"
  else
    echo "packaging test: systemd-analyze verify ok"
  fi
else
  echo "packaging test: systemd-analyze not installed; unit checked structurally only"
fi
if [ "$status" = 0 ]; then
  echo "packaging test: ok: checked $checked; the image itself is built by install/packaging_image"
fi
exit "$status"
