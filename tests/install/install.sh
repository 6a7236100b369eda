#!/bin/sh
# tests/install/install.sh SOURCE_DIR BUILD_DIR VERSION CC [CFLAGS] — installs the
# build into a temporary prefix (cmake --install --prefix, DESTDIR, and
# `make install PREFIX=... DESTDIR=...`), checks the installed files, then builds
# examples/installed out of tree against the prefix twice — with pkg-config and
# with find_package(adcp-ledger) — and runs the programs (shared and static).
set -eu
src=$1 build=$2 version=$3 cc=$4 cflags=${5:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adcp-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
so=$(find "$prefix" -name 'libadcp-ledger.so.0' | head -n 1)
[ -n "$so" ] || fail "no libadcp-ledger.so.0 under the prefix"
libdir=$(dirname "$so")
for f in bin/adcp-ledger include/adcp/core.h include/adcp/ledger.h include/adcp/storage.h \
         share/man/man1/adcp-ledger.1 share/man/man1/adcp-ledger-commit.1 \
         share/man/man5/adcp-ledger.conf.5 share/man/man3/adcp-ledger.3 \
         share/doc/adcp-ledger/docs/config.md share/doc/adcp-ledger/README.md \
         share/bash-completion/completions/adcp-ledger share/zsh/site-functions/_adcp-ledger; do
  [ -e "$prefix/$f" ] || fail "missing $f"
done
for f in libadcp-ledger.a libadcp-ledger.so "libadcp-ledger.so.$version" pkgconfig/adcp-ledger.pc \
         cmake/adcp-ledger/adcp-ledger-config.cmake cmake/adcp-ledger/adcp-ledger-targets.cmake; do
  [ -e "$libdir/$f" ] || fail "missing $libdir/$f"
done
[ -x "$prefix/bin/adcp-ledger" ] || fail "bin/adcp-ledger is not executable"
# Every docs/NAME.md a man page names is installed under share/doc/adcp-ledger/docs/.
for ref in $(cat "$prefix"/share/man/man*/* | sed 's/\\-/-/g' | grep -o 'docs/[a-z0-9-]*\.md' | sort -u); do
  [ -f "$prefix/share/doc/adcp-ledger/$ref" ] || fail "a man page names $ref, which is not installed"
done
[ ! -e "$prefix/bin/adcp-ledger-testhooks" ] || fail "the test-hooks binary was installed"
"$prefix/bin/adcp-ledger" --version | grep -qx "adcp-ledger $version" || fail "installed --version"
ls "$prefix/include/adcp" | grep -v '\.h$' && fail "non-header files under include/adcp"

# DESTDIR: everything lands under it, nothing at the prefix itself.
DESTDIR=$tmp/dest cmake --install "$build" --prefix /opt/adcp-ledger-test >/dev/null
[ -x "$tmp/dest/opt/adcp-ledger-test/bin/adcp-ledger" ] || fail "DESTDIR install: no bin/adcp-ledger"
[ ! -e /opt/adcp-ledger-test ] || fail "DESTDIR install wrote outside DESTDIR"
# make install PREFIX=... DESTDIR=... (-o build: the build is done already)
make -s -C "$src" -o build install BUILD="$build" PREFIX=/usr/adcp-mk DESTDIR="$tmp/mkdest" >/dev/null
[ -x "$tmp/mkdest/usr/adcp-mk/bin/adcp-ledger" ] || fail "make install PREFIX DESTDIR: no bin/adcp-ledger"
[ -n "$(find "$tmp/mkdest/usr/adcp-mk" -name adcp-ledger.pc)" ] || fail "make install: no adcp-ledger.pc"

check_run() { # PROGRAM LABEL
  out=$("$1") || fail "$2: the example failed"
  printf '%s\n' "$out" | grep -qx "library $version" || fail "$2: wrong library line: $out"
  printf '%s\n' "$out" | grep -qx 'canonical {"a":\[true,"x"\],"b":1.5}' || fail "$2: wrong canonical line: $out"
  printf '%s\n' "$out" | grep -q '^storage sqlite::memory: migrations [1-9]' || fail "$2: storage did not open: $out"
}

# pkg-config (relocatable .pc: prefix follows the file)
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --modversion adcp-ledger)" = "$version" ] || fail "pkg-config --modversion"
pkg-config --static --libs adcp-ledger >/dev/null || fail "pkg-config --static: a private requirement is missing"
# shellcheck disable=SC2046,SC2086
$cc $cflags -o "$tmp/example-pc" "$src/examples/installed/example.c" $(pkg-config --cflags --libs adcp-ledger) \
  -Wl,-rpath,"$libdir" || fail "pkg-config build failed"
ldd "$tmp/example-pc" | grep -q "$libdir/libadcp-ledger.so.0" || fail "pkg-config build does not use the installed shared library"
check_run "$tmp/example-pc" pkg-config

# CMake package: adcp::ledger (shared) and adcp::ledger_static
cmake -S "$src/examples/installed" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS="$cflags" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; fail "cmake configure of the example"; }
cmake --build "$tmp/cmake-build" >"$tmp/cmake-build.log" 2>&1 || { cat "$tmp/cmake-build.log" >&2; fail "cmake build of the example"; }
ldd "$tmp/cmake-build/example" | grep -q "$libdir/libadcp-ledger.so.0" || fail "CMake build does not use the installed shared library"
ldd "$tmp/cmake-build/example_static" | grep -q libadcp-ledger && fail "example_static links the shared library"
check_run "$tmp/cmake-build/example" "find_package adcp::ledger"
check_run "$tmp/cmake-build/example_static" "find_package adcp::ledger_static"
echo "install test: ok ($prefix)"
