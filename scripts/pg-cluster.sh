#!/usr/bin/env bash
# Throwaway PostgreSQL cluster for tests.
#   pg-cluster.sh start      -> initdb (trust auth) + start on a free loopback port;
#                               prints `export ADCP_TEST_PG_URL=... ADCP_TEST_PG_DIR=...`
#   pg-cluster.sh stop DIR   -> stop that cluster and remove DIR
# Runs the server as the postgres user (initdb refuses root). Everything lives in
# one temp dir (data, log) so stop removes every trace. The server listens on
# loopback TCP only (no unix socket: long TMPDIR paths exceed the socket path
# limit); pg_ctl -w and pg_isready check readiness over TCP / postmaster.pid.
# fsync is off unless ADCP_PG_FSYNC=on (benchmarks set it; tests need no durability).
set -euo pipefail

find_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  # Ask the kernel for an unused loopback port.
  python3 - <<'PY' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

start() {
  local bin dir port i
  bin=$(find_bindir) || { echo "pg-cluster: no PostgreSQL server binaries found (install postgresql)" >&2; exit 1; }
  local base=${TMPDIR:-/tmp}
  # The postgres user must be able to enter the parent directory.
  if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$base" 2>/dev/null; then base=/tmp; fi
  dir=$(mktemp -d "$base/adcp-pg-XXXXXX")
  chmod 700 "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
    || { echo "pg-cluster: initdb failed, see $dir/initdb.log" >&2; cat "$dir/initdb.log" >&2; exit 1; }
  for i in 1 2 3 4 5; do
    port=$(free_port)
    if as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
         -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='' -c fsync=${ADCP_PG_FSYNC:-off} -c max_connections=100" start >/dev/null 2>&1; then
      break
    fi
    port=""
  done
  [ -n "$port" ] || { echo "pg-cluster: server did not start, see $dir/server.log" >&2; cat "$dir/server.log" >&2 || true; exit 1; }
  for i in $(seq 1 100); do
    "$bin/pg_isready" -h 127.0.0.1 -p "$port" -q && break
    sleep 0.1
  done
  echo "export ADCP_TEST_PG_URL=postgresql://postgres@127.0.0.1:$port/postgres"
  echo "export ADCP_TEST_PG_DIR=$dir"
}

stop() {
  local dir=${1:-} bin
  [ -n "$dir" ] && [ -d "$dir" ] || { echo "usage: pg-cluster.sh stop DIR" >&2; exit 2; }
  case "$dir" in */adcp-pg-*) ;; *) echo "pg-cluster: refusing to remove $dir" >&2; exit 2 ;; esac
  bin=$(find_bindir) || true
  if [ -n "${bin:-}" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) shift; stop "$@" ;;
  *) echo "usage: pg-cluster.sh start | stop DIR" >&2; exit 2 ;;
esac
