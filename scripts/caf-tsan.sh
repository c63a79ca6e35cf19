#!/usr/bin/env bash
# Builds a ThreadSanitizer-instrumented CAF 0.17.6 (libcaf_core only: SeatFlow links nothing else)
# from the Debian source tarball into DIR (default build-tsan/caf), for the TSan test suite.
# Debian's libcaf_core.so is not instrumented, so TSan cannot see CAF's mailbox hand-offs and
# reports each of them as a race; linking this build instead removes those false reports.
# Usage: scripts/caf-tsan.sh [DIR]. Prints DIR/install (the CAF_ROOT to pass to CMake) on its
# last line. Does nothing when DIR/install already holds a finished build of the same version.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

CAF_VERSION=0.17.6
CAF_TARBALL="actor-framework_${CAF_VERSION}.orig.tar.gz"
CAF_SHA256=e2bf5bd243f08bb7d8adde197cfe3e6d71314ed3378fe0692f8932f4c3b3928c
CAF_URL="${SEATFLOW_CAF_MIRROR:-http://deb.debian.org/debian}/pool/main/a/actor-framework/$CAF_TARBALL"
# The flags of the SeatFlow TSan build: instrumented, lightly optimised, line tables for reports
# (-g1: full debug info of CAF's templates costs build time and no report needs it).
# CAF appends its own optimisation flags for the build type, so they are given there too.
CAF_FLAGS="-std=c++17 -fsanitize=thread -fno-omit-frame-pointer"
CAF_OPT_FLAGS="-O1 -g1"
# libcaf_core compiles as unity units of 8 sources: CAF's headers are parsed once per unit, not once
# per file (one core: 297 s of CPU file by file, 151 s as units).
CAF_UNITY_BATCH=8

dir="$(mkdir -p "${1:-build-tsan/caf}" && cd "${1:-build-tsan/caf}" && pwd)"
stamp="$dir/install/.seatflow-caf-tsan"
want="$CAF_VERSION $CAF_FLAGS $CAF_OPT_FLAGS unity=$CAF_UNITY_BATCH"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$dir/install"
  exit 0
fi

if [ ! -f "$dir/$CAF_TARBALL" ] || ! echo "$CAF_SHA256  $dir/$CAF_TARBALL" | sha256sum -c --quiet - 2>/dev/null; then
  echo "seatflow: caf-tsan: downloading $CAF_URL" >&2
  curl -sSfL --retry 3 --max-time 300 -o "$dir/$CAF_TARBALL.part" "$CAF_URL"
  mv "$dir/$CAF_TARBALL.part" "$dir/$CAF_TARBALL"
fi
if ! echo "$CAF_SHA256  $dir/$CAF_TARBALL" | sha256sum -c --quiet -; then
  echo "seatflow: caf-tsan: $CAF_TARBALL does not match its SHA-256; refusing to build it" >&2
  exit 1
fi

rm -rf "$dir/src" "$dir/build" "$dir/install"
mkdir -p "$dir/src"
tar -xzf "$dir/$CAF_TARBALL" -C "$dir/src" --strip-components=1

echo "seatflow: caf-tsan: building libcaf_core $CAF_VERSION with $CAF_FLAGS $CAF_OPT_FLAGS" >&2
start=$SECONDS
cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="${CXX:-g++}" \
  "-DCMAKE_CXX_FLAGS=$CAF_FLAGS" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$CAF_OPT_FLAGS" \
  -DCMAKE_INSTALL_PREFIX="$dir/install" -DCMAKE_INSTALL_LIBDIR=lib \
  -DCAF_NO_IO=yes -DCAF_NO_OPENSSL=yes -DCAF_NO_OPENCL=yes -DCAF_NO_PYTHON=yes \
  -DCAF_NO_TOOLS=yes -DCAF_NO_EXAMPLES=yes -DCAF_NO_UNIT_TESTS=yes -DCAF_NO_SUMMARY=yes \
  -DCAF_NO_COMPILER_CHECK=yes -DCMAKE_UNITY_BUILD=ON "-DCMAKE_UNITY_BUILD_BATCH_SIZE=$CAF_UNITY_BATCH" \
  >"$dir/configure.log" 2>&1 ||
  { tail -n 30 "$dir/configure.log" >&2; exit 1; }
cmake --build "$dir/build" -j"${SEATFLOW_JOBS:-2}" >"$dir/build.log" 2>&1 ||
  { tail -n 40 "$dir/build.log" >&2; exit 1; }
cmake --install "$dir/build" >"$dir/install.log" 2>&1 ||
  { tail -n 20 "$dir/install.log" >&2; exit 1; }
echo "$want" >"$stamp"
echo "seatflow: caf-tsan: built in $((SECONDS - start)) s" >&2
echo "$dir/install"
