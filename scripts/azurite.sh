#!/usr/bin/env bash
# Throwaway Azurite (a real Azure Blob API, WITHOUT blob versioning) for tests.
#   azurite.sh install    -> npm-installs azurite@3.35.0 into a cache directory
#                            outside the repository (once; ~15 s with an empty cache)
#   azurite.sh start      -> the blob service in memory on a free loopback port, an
#                            account with a random key and a container; prints
#                            `export ADCP_TEST_AZURITE_ENDPOINT=... ADCP_TEST_AZURITE_DIR=...`
#   azurite.sh stop DIR   -> stops that server by its PID file and removes DIR
# Cache: $ADCP_AZURITE_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/adcp-azurite.
# Known trap (docs/providers.md): Azurite ignores ?versionid= (a versioned
# DELETE removes the CURRENT blob), so the tests never send one to it.
set -euo pipefail

VERSION=3.35.0
CACHE=${ADCP_AZURITE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/adcp-azurite}
MAIN=$CACHE/node_modules/azurite/dist/src/blob/main.js

install() {
  if [ -f "$MAIN" ] && grep -q "\"version\": \"$VERSION\"" "$CACHE/node_modules/azurite/package.json" 2>/dev/null; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || { echo "azurite: npm is missing (install nodejs/npm)" >&2; return 1; }
  mkdir -p "$CACHE"
  echo "azurite: installing azurite@$VERSION into $CACHE" >&2
  (cd "$CACHE" && npm install --no-audit --no-fund --loglevel=error "azurite@$VERSION" >/dev/null) ||
    { echo "azurite: npm install failed" >&2; return 1; }
}

free_port() {
  python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

start() {
  install
  local dir port acct key i
  dir=$(mktemp -d "${TMPDIR:-/tmp}/adcp-azurite-XXXXXX")
  port=$(free_port)
  acct=adcpacct
  key=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
  printf '%s\n' "$key" >"$dir/key"
  # The account and its key reach Azurite through its environment, never its command line.
  AZURITE_ACCOUNTS="$acct:$key" setsid node "$MAIN" --blobHost 127.0.0.1 --blobPort "$port" --inMemoryPersistence \
    --skipApiVersionCheck --disableTelemetry --silent </dev/null >"$dir/azurite.log" 2>&1 &
  echo $! >"$dir/pid"
  for i in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.05; done
  curl -s -o /dev/null "http://127.0.0.1:$port/" || { echo "azurite: did not start" >&2; stop "$dir"; exit 1; }
  # Create the test container with a Shared Key request (node's crypto signs it).
  ADCP_AZ_KEY="$key" node - "$port" "$acct" adcp-test <<'JS' || { echo "azurite: could not create the container" >&2; stop "$dir"; exit 1; }
const http = require('http'), crypto = require('crypto');
const [port, acct, container] = process.argv.slice(2);
const date = new Date().toUTCString(), ver = '2021-08-06';
const sts = `PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:${date}\nx-ms-version:${ver}\n/${acct}/${acct}/${container}\nrestype:container`;
const sig = crypto.createHmac('sha256', Buffer.from(process.env.ADCP_AZ_KEY, 'base64')).update(sts, 'utf8').digest('base64');
const req = http.request({ host: '127.0.0.1', port, method: 'PUT', path: `/${acct}/${container}?restype=container`,
  headers: { 'x-ms-date': date, 'x-ms-version': ver, 'Content-Length': 0, Authorization: `SharedKey ${acct}:${sig}` } },
  (res) => { res.resume(); process.exit(res.statusCode === 201 ? 0 : 1); });
req.on('error', () => process.exit(1));
req.end();
JS
  echo "export ADCP_TEST_AZURITE_DIR='$dir' ADCP_TEST_AZURITE_ENDPOINT='http://127.0.0.1:$port/$acct'" \
       "ADCP_TEST_AZURITE_ACCOUNT=$acct ADCP_TEST_AZURITE_CONTAINER=adcp-test ADCP_TEST_AZURITE_KEY='$key'"
}

stop() {
  local dir=${1:?usage: azurite.sh stop DIR} p i
  case "$dir" in */adcp-azurite-*) ;; *) echo "azurite: refusing to remove $dir" >&2; exit 1 ;; esac
  if [ -f "$dir/pid" ]; then
    p=$(cat "$dir/pid")
    kill "$p" 2>/dev/null || true
    for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true # in memory only: nothing to flush
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop "${2:-}" ;;
  *) echo "usage: azurite.sh install | start | stop DIR" >&2; exit 1 ;;
esac
