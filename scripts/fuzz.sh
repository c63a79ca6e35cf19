#!/usr/bin/env bash
# Builds the libFuzzer targets of the channel parsers and of the HTTP request path (fuzz/, clang-14,
# ASan+UBSan) into build-fuzz/ and runs each for a bounded time.
# Usage: scripts/fuzz.sh [seconds-per-target] [target...] (default 15 s, every target);
#        scripts/fuzz.sh --list prints the targets, one a line (test.sh counts them);
#        scripts/fuzz.sh --build only installs what is missing and builds (test.sh builds ahead).
# Installs clang-14 and libclang-rt-14-dev when missing (as root, like scripts/deps.sh). Exits
# non-zero when a build fails or a target finds a crash, leak, sanitizer error or timeout; the
# reproducer is written to build-fuzz/artifacts/. New inputs collect in build-fuzz/corpus/<target>/;
# the committed seeds in fuzz/corpus/<target>/ are only read.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

# The one list of targets (fuzz/CMakeLists.txt builds the same names).
all_targets=(fuzz_hmac fuzz_alipay fuzz_wechat fuzz_stripe fuzz_standard fuzz_query fuzz_http fuzz_bill)
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${all_targets[@]}"
  exit 0
fi

build_only=0
if [ "${1:-}" = "--build" ]; then
  build_only=1
  shift
fi

seconds="${1:-15}"
if ! [[ "$seconds" =~ ^[1-9][0-9]{0,4}$ ]]; then
  echo "seatflow: fuzz: seconds-per-target must be a whole number from 1 to 99999" >&2
  exit 2
fi

FUZZ_PACKAGES=(clang-14 libclang-rt-14-dev cmake libssl-dev nlohmann-json3-dev libboost-dev zlib1g-dev)
missing=()
for pkg in "${FUZZ_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "seatflow: fuzz: missing packages: ${missing[*]}; run as root or install them with apt-get" >&2
    exit 1
  fi
  echo "seatflow: fuzz: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build="build-fuzz"
echo "==== seatflow: fuzz: building $build"
cmake -S fuzz -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2
[ "$build_only" = 1 ] && exit 0

targets=("${all_targets[@]}")
if [ "$#" -gt 1 ]; then
  targets=("${@:2}")
  for target in "${targets[@]}"; do
    if ! printf '%s\n' "${all_targets[@]}" | grep -qx -- "$target"; then
      echo "seatflow: fuzz: unknown target '$target' (scripts/fuzz.sh --list)" >&2
      exit 2
    fi
  done
fi
mkdir -p "$build/artifacts"
# Two targets at a time, one worker each (the machine has 2 cores): the same time per target in
# about half the wall time.
fuzz_jobs_max=2

# run_target TARGET: one bounded run; its exit code goes to $build/TARGET.rc.
run_target() {
  local target="$1" rc=0
  mkdir -p "$build/corpus/$target"
  # Every input bounded in size and time; leaks are errors.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 -dict="fuzz/dict/$target.dict" -artifact_prefix="$build/artifacts/$target-" \
    "$build/corpus/$target" "fuzz/corpus/$target" >"$build/$target.log" 2>&1 || rc=$?
  echo "$rc" >"$build/$target.rc"
}

pids=()
# shellcheck disable=SC2317 # called from a trap
stop_targets() {
  [ "${#pids[@]}" -gt 0 ] && kill "${pids[@]}" 2>/dev/null
  wait
}
trap stop_targets EXIT
for target in "${targets[@]}"; do
  rm -f "$build/$target.rc"
  while [ "$(jobs -pr | wc -l)" -ge "$fuzz_jobs_max" ]; do
    wait -n || true
  done
  echo "==== seatflow: fuzz: $target for ${seconds}s"
  run_target "$target" &
  pids+=("$!")
done
wait
pids=()

failed=0
summaries=()
for target in "${targets[@]}"; do
  log="$build/$target.log"
  rc="$(cat "$build/$target.rc" 2>/dev/null || echo 'none')"
  execs="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' | tail -n 1 || true)"
  cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 || true)"
  if [ "$rc" = 0 ]; then
    summaries+=("$target: passed (${execs:-?} runs, ${cov:-cov: ?})")
  else
    tail -n 40 "$log" >&2
    summaries+=("$target: FAILED, exit $rc (${execs:-?} runs; see $log and $build/artifacts/)")
    failed=1
  fi
done

echo "==== seatflow: fuzz summary"
for s in "${summaries[@]}"; do
  echo "seatflow: fuzz: $s"
done
exit "$failed"
