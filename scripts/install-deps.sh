#!/usr/bin/env bash
# Installs the Debian packages the build, tests, fuzzers and benchmarks need,
# only when something is missing. Idempotent and non-interactive.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang libclang-rt-14-dev
      libssl-dev libpq-dev libsqlite3-dev libcurl4-openssl-dev libdeflate-dev libcmocka-dev
      libmicrohttpd-dev
      postgresql nodejs python3
      ceph-mon ceph-osd radosgw curl openssl) # radosgw: the real S3 of the tests (scripts/radosgw.sh, which uses curl; ~32 s); openssl: the TLS test CA
pkgs+=(libisal-dev) # ISA-L igzip: the gzip writer of object commits (src/rows/gzip.c)
pkgs+=(clang-format) # make format / make format-check (scripts/format-check.sh)
pkgs+=(zsh) # the generated zsh completion is syntax-checked (tests/install/manual.sh)
pkgs+=(prometheus) # promtool lints the worker's metrics text (tests/worker, tests/worker/test_worker_cli.c)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# nodejs/python3 may come from outside Debian's packages on this image; a working binary is enough.
filtered=()
for p in "${missing[@]}"; do
  case "$p" in
    nodejs) command -v node >/dev/null 2>&1 || filtered+=("$p") ;;
    python3) command -v python3 >/dev/null 2>&1 || filtered+=("$p") ;;
    *) filtered+=("$p") ;;
  esac
done
# npm installs Azurite for the Azure tests (scripts/azurite.sh); some nodejs builds ship it.
command -v npm >/dev/null 2>&1 || filtered+=(npm)
[ ${#filtered[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${filtered[*]}" >&2
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${filtered[@]}" >/dev/null
