#!/usr/bin/env bash
# Builds SeatFlow and runs every test suite against a throwaway PostgreSQL and Redis on free loopback ports:
# the Release build in build/, the chaos harness at small scale (bench/chaos.sh --quick, unless SEATFLOW_SKIP_CHAOS=1),
# then (unless SEATFLOW_SKIP_SANITIZERS=1) an ASan+UBSan build in build-asan/, then (unless SEATFLOW_SKIP_TSAN=1, or
# SEATFLOW_TIME_BUDGET_S leaves no room) a ThreadSanitizer build in build-tsan/ against a TSan-instrumented CAF built
# from source once (scripts/caf-tsan.sh, cached in build-tsan/caf/), then the bounded fuzz runs. Once the Release
# build is done, the later suites' builds run ahead in the background at the lowest CPU priority (nice 19), on the
# CPU the tests leave idle; each suite waits for its own build ahead, then builds again (a no-op when the build
# ahead succeeded, the errors on the console when it failed). SEATFLOW_BUILD_AHEAD=0 builds each suite only when
# its turn comes. Extra arguments go to ctest, e.g. ./test.sh -R unit. Exits non-zero when any build or suite fails.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
# shellcheck source=scripts/services.sh
. scripts/services.sh

tmp=""
ahead_pid=""
pg_port=""
redis_port=""
servers_up=0

# shellcheck disable=SC2317 # called from a trap
on_exit() {
  local rc=$?
  trap '' INT TERM HUP
  sf_kill_child
  if [ -n "$ahead_pid" ]; then
    kill -TERM "$ahead_pid" 2>/dev/null || true
    wait "$ahead_pid" 2>/dev/null || true
  fi
  if [ -n "$tmp" ]; then
    sf_redis_stop "$tmp/redis" "$redis_port"
    sf_pg_stop "$tmp/pg"
    rm -rf "$tmp"
  fi
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

scripts/deps.sh
# The console's browser test drives chromium through puppeteer-core (tests/browser/package-lock.json).
if [ ! -d tests/browser/node_modules/puppeteer-core ]; then
  (cd tests/browser && npm ci --no-audit --no-fund --ignore-scripts)
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/seatflow-test.XXXXXX")"
# PostgreSQL runs as user postgres and needs to reach its directory inside.
chmod 755 "$tmp"

start_servers() {
  [ "$servers_up" = 1 ] && return 0
  local attempt
  # A free port can be taken between choosing it and binding it (another test run): try a few.
  for attempt in 1 2 3; do
    pg_port="$(sf_free_port)" || return 1
    # Throwaway data: skip fsync (safe against a crashed server, only an OS crash loses data).
    sf_pg_start "$tmp/pg" "$pg_port" -c fsync=off -c full_page_writes=off && break
    pg_port=""
    sf_err "retrying PostgreSQL on another port (attempt $attempt)"
  done
  [ -n "$pg_port" ] || return 1
  for attempt in 1 2 3; do
    redis_port="$(sf_free_port)" || return 1
    sf_redis_start "$tmp/redis" "$redis_port" ephemeral && break
    redis_port=""
    sf_err "retrying Redis on another port (attempt $attempt)"
  done
  [ -n "$redis_port" ] || return 1
  export SEATFLOW_TEST_PG_DSN="postgresql://postgres@127.0.0.1:$pg_port/seatflow"
  export SEATFLOW_TEST_REDIS_URL="redis://127.0.0.1:$redis_port"
  echo "seatflow: test PostgreSQL $SEATFLOW_TEST_PG_DSN, Redis $SEATFLOW_TEST_REDIS_URL (in $tmp)"
  servers_up=1
}

summaries=()
failure_outputs=()
failed=0

# run_suite NAME BUILD_DIR ENV-ASSIGNMENTS... -- CMAKE-ARGS...   (ctest arguments come from the script's "$@")
# With no ctest arguments, `suite_exclude` (a regex, set before the call) names the tests this suite
# leaves to the Release suite; see sanitizer_exclude below.
ctest_args=("$@")
suite_exclude=""
run_suite() {
  local name="$1" build_dir="$2"
  shift 2
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    envs+=("$1")
    shift
  done
  [ $# -gt 0 ] && shift
  local started=$SECONDS
  echo "==== seatflow: $name: building $build_dir"
  if ! sf_build "$build_dir" "$@"; then
    summaries+=("$name: FAILED (build of $build_dir failed)")
    failed=1
    return 0
  fi
  if ! start_servers; then
    summaries+=("$name: FAILED (could not start the test PostgreSQL/Redis)")
    failed=1
    return 0
  fi
  local built=$SECONDS
  echo "==== seatflow: $name: ctest in $build_dir (built in $((built - started)) s)"
  local log="$tmp/ctest-$name.log" rc=0 summary args=("${ctest_args[@]}")
  if [ "${#ctest_args[@]}" -eq 0 ] && [ -n "$suite_exclude" ]; then
    args=(-E "$suite_exclude")
  fi
  sf_run_killable env "${envs[@]}" ctest --test-dir "$build_dir" --output-on-failure -j2 -O "$log" "${args[@]}" || rc=$?
  summary="$(grep -E 'tests passed|No tests were found' "$log" | tail -n 1 || true)"
  local build_s=$((built - started))
  # The Release build ran before this call (the builds ahead start after it): count it here.
  [ "$name" = release ] && build_s=$((build_s + release_build_s))
  local took flaky=""
  if [ "$rc" -ne 0 ] && retry_failed "$name" "$build_dir" "$log" "${envs[@]}"; then
    rc=0
    flaky="$(cat "$log.flaky")"
  fi
  took="build ${build_s} s, tests $((SECONDS - built)) s"
  if [ "$rc" -eq 0 ] && [ -n "$flaky" ]; then
    summaries+=("$name: passed, FLAKY: $flaky failed once and passed when run again alone (${summary:-ctest printed no summary}; $took)")
    failure_outputs+=("$(failed_outputs "$name" "$log")")
  elif [ "$rc" -eq 0 ]; then
    summaries+=("$name: passed (${summary:-ctest printed no summary}; $took)")
  else
    summaries+=("$name: FAILED, ctest exit $rc (${summary:-ctest printed no summary}; $took)")
    while IFS= read -r line; do
      summaries+=("  $line")
    done < <(failed_tests "$log" | head -n "$kFailedTestsShown")
    failure_outputs+=("$(failed_outputs "$name" "$log")")
    failed=1
  fi
}

# failed_tests LOG → ctest's list of the failed tests in LOG, a line each: "N - NAME (Failed)".
failed_tests() {
  sed -n '/^The following tests FAILED:/,$p' "$1" | grep -E '^[[:space:]]+[0-9]+ - ' |
    sed -E 's/^[[:space:]]+//'
}

# retry_failed NAME BUILD_DIR LOG ENV-ASSIGNMENTS... → writes the names of the tests that failed
# in LOG to LOG.flaky and succeeds when they all pass when run again one at a time, by name (ctest
# -R '^(…)$' -j1): a test that failed only beside another, or on a machine busier than it
# allows for, is named FLAKY in the summary with its first output, and the suite passes. Never
# when more than kRetriedTestsMax failed (that is no flake) or when a sanitizer reported anything
# (a race or an error seen once is real).
kRetriedTestsMax=3
retry_failed() {
  local name="$1" build_dir="$2" log="$3" names count
  shift 3
  names="$(failed_tests "$log" | sed -E 's/^[0-9]+ - //; s/ \(.*$//')"
  count="$(printf '%s\n' "$names" | grep -c . || true)"
  if [ "$count" -eq 0 ] || [ "$count" -gt "$kRetriedTestsMax" ] ||
    grep -qE 'ThreadSanitizer|AddressSanitizer|LeakSanitizer|runtime error:' "$log"; then
    return 1
  fi
  echo "==== seatflow: $name: $count failed; running them again one at a time"
  # By name, not --rerun-failed: ctest's numbers were seen to change between a sanitizer suite's
  # run and its retry, and --rerun-failed then ran other tests and called the failed ones FLAKY.
  local regex
  regex="^($(printf '%s\n' "$names" | sed 's/\./\\./g' | paste -sd'|' -))\$"
  sf_run_killable env "$@" ctest --test-dir "$build_dir" -R "$regex" --output-on-failure -j1 \
    -O "$log.again" || return 1
  grep -q "tests passed, 0 tests failed out of $count\$" "$log.again" || return 1
  printf '%s\n' "$names" | paste -sd, - | sed 's/,/, /g' >"$log.flaky"
}

# failed_outputs NAME LOG: the last lines each failed test printed (ctest --output-on-failure puts
# them under the test's result line), for the first kFailedTestsShown of them. They are printed
# again beside the summary at the end, so a log read from its end still shows why a test failed.
kFailedTestsShown=10
kFailedOutputLines=40
failed_outputs() {
  awk -v suite="$1" -v shown="$kFailedTestsShown" -v keep="$kFailedOutputLines" '
    function flush() {
      if (name == "") return
      print "==== seatflow: " suite ": " name " (its last " keep " lines)"
      first = n > keep ? n - keep + 1 : 1
      for (i = first; i <= n; i++) print buf[i]
      name = ""
    }
    /^[[:space:]]*Start[[:space:]]+[0-9]+: / || /^[[:space:]]*[0-9]+\/[0-9]+ Test +#/ || /^[0-9]+% tests passed/ {
      flush()
      if ($0 ~ /Test +#/ && $0 ~ /\*\*\*|Failed|Timeout|Exception|Not Run/ && $0 !~ /Passed/ && count < shown) {
        count++; name = $0; sub(/^[[:space:]]*[0-9]+\/[0-9]+ Test +#[0-9]+: /, "", name)
        sub(/ \.+.*$/, "", name); n = 0
      }
      next
    }
    name != "" { buf[++n] = $0 }
    END { flush() }
  ' "$2"
}

# The sanitizer builds' CMake arguments (the same whether built ahead or in their turn). They use
# -g1: line tables are all a report needs, and full debug info of the CAF and Beast templates
# doubles their compile time. ASan+UBSan compiles at -Og: its instrumentation made -O1 the costliest
# build of all (an actors unit 35 s of CPU at -O1, 22 s at -Og; the net unit 138 s and 73 s), and
# its tests take as long at -Og: 370 s in a clean-clone CI run beside the TSan build ahead, against
# 339-373 s at -O1 (234 s at -Og on an otherwise idle machine).
# ThreadSanitizer stays at -O1, as the CAF it links.
asan_cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1"
  "-DSEATFLOW_SANITIZE=address;undefined" -DSEATFLOW_BUILD_BENCH=OFF)
tsan_cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
  -DSEATFLOW_SANITIZE=thread -DSEATFLOW_BUILD_BENCH=OFF)
run_fuzz=0
if [ "${SEATFLOW_SKIP_FUZZ:-0}" != 1 ] && [ "${#ctest_args[@]}" -eq 0 ]; then
  run_fuzz=1
fi

# build_ahead: the later suites' builds, one after the other, in a background subshell at nice 19.
# Each step leaves $tmp/ahead-NAME.done behind (whatever its result; the seconds it took), its
# output in $tmp/ahead-NAME.log. A TERM ends the running step's whole command tree.
build_ahead() {
  trap 'sf_kill_child; exit 143' TERM
  trap - EXIT INT HUP
  renice -n 19 -p "$BASHPID" >/dev/null 2>&1 || true
  local started caf_root
  if [ "${SEATFLOW_SKIP_SANITIZERS:-0}" != 1 ]; then
    started=$SECONDS
    sf_build build-asan "${asan_cmake_args[@]}" >"$tmp/ahead-asan.log" 2>&1 || true
    echo "$((SECONDS - started))" >"$tmp/ahead-asan.done"
  fi
  if [ "${SEATFLOW_SKIP_TSAN:-0}" != 1 ]; then
    started=$SECONDS
    if sf_run_killable scripts/caf-tsan.sh build-tsan/caf >"$tmp/ahead-caf.out" 2>"$tmp/ahead-caf.log"; then
      caf_root="$(tail -n 1 "$tmp/ahead-caf.out")"
      sf_build build-tsan "${tsan_cmake_args[@]}" "-DCAF_ROOT=$caf_root" >"$tmp/ahead-tsan.log" 2>&1 || true
    fi
    echo "$((SECONDS - started))" >"$tmp/ahead-tsan.done"
  fi
  if [ "$run_fuzz" = 1 ]; then
    started=$SECONDS
    sf_run_killable scripts/fuzz.sh --build >"$tmp/ahead-fuzz.log" 2>&1 || true
    echo "$((SECONDS - started))" >"$tmp/ahead-fuzz.done"
  fi
}

# wait_ahead NAME: waits until the build ahead of NAME is done (at once when none runs).
wait_ahead() {
  local name="$1" waited=$SECONDS
  [ -n "$ahead_pid" ] || return 0
  while [ ! -f "$tmp/ahead-$name.done" ] && kill -0 "$ahead_pid" 2>/dev/null; do
    sleep 1
  done
  if [ -f "$tmp/ahead-$name.done" ]; then
    echo "==== seatflow: $name: built ahead in $(cat "$tmp/ahead-$name.done") s (waited $((SECONDS - waited)) s)"
  fi
}

# The Release build first, on both cores; then the builds ahead start beside its tests.
echo "==== seatflow: release: building build"
release_built=1
release_build_started=$SECONDS
sf_build build || release_built=0
release_build_s=$((SECONDS - release_build_started))
if [ "$release_built" = 1 ] && [ "${SEATFLOW_BUILD_AHEAD:-1}" != 0 ]; then
  build_ahead &
  ahead_pid=$!
fi
run_suite release build --

# The chaos harness at small scale on the release build: its own PostgreSQL, Redis and engines.
if [ "${SEATFLOW_SKIP_CHAOS:-0}" != 1 ] && [ "${#ctest_args[@]}" -eq 0 ]; then
  echo "==== seatflow: chaos: bench/chaos.sh --quick"
  chaos_started=$SECONDS
  # Its output is kept as well: the scenarios that failed and why go into the summary below.
  # shellcheck disable=SC2016 # expanded by the inner bash
  if sf_run_killable bash -c 'set -o pipefail; bench/chaos.sh "$@" 2>&1 | tee "$0"' \
    "$tmp/chaos.log" --quick --no-build --build-dir "$PWD/build"; then
    summaries+=("chaos: passed (bench/chaos.sh --quick: $(grep -o '^chaos: scenario [0-9]* ' "$tmp/chaos.log" | sort -u | wc -l) scenarios, 0 violations; $((SECONDS - chaos_started)) s)")
  else
    summaries+=("chaos: FAILED (bench/chaos.sh --quick; its table and logs are above)")
    while IFS= read -r line; do
      summaries+=("  ${line#chaos: }")
    done < <(grep -E '^(chaos: failed: |bench: )' "$tmp/chaos.log" | cut -c1-400)
    failed=1
  fi
else
  summaries+=("chaos: skipped")
fi
# Tests the sanitizer suites leave to the Release suite (only when the whole suite runs; named
# with -R, they run in every build). StatementPlanTest bulk-loads tables and reads PostgreSQL's
# plans of our SQL text: no engine code runs, the plans are the same in any build, and they cost
# ~37 s of each suite. The lint gates (lint.*) and the benchmarks' CPU accounting (bench.*) read
# the source tree, not the build, and scripts.* tests the private PostgreSQL of scripts/services.sh;
# deploy.PostgresqlDropIn* tests a PostgreSQL configuration file (the engine only runs migrate).
# The JSON reader's agreement with nlohmann over 160 000 mutations runs on one thread, so TSan can
# find nothing in it (~25 s); ASan+UBSan keeps it, and fuzz_* cover the reader.
sanitizer_exclude='^integration\.StatementPlanTest\.|^lint\.|^bench\.|^scripts\.|^deploy\.PostgresqlDropIn'
tsan_exclude="$sanitizer_exclude|^unit\.JsonMembers\.AgreesWithNlohmannOnSeedsAndTheirMutations\$"
if [ "${SEATFLOW_SKIP_SANITIZERS:-0}" != 1 ]; then
  wait_ahead asan
  suite_exclude="$sanitizer_exclude"
  run_suite asan+ubsan build-asan \
    "ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}" \
    "LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}" \
    "UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    -- "${asan_cmake_args[@]}"
else
  summaries+=("asan+ubsan: skipped (SEATFLOW_SKIP_SANITIZERS=1)")
fi

# TSan needs every library that synchronises threads instrumented: CAF comes from
# scripts/caf-tsan.sh (found through CAF_ROOT, loaded through the binaries' RPATH). Its build is
# the costliest (on 2 cores: CAF once, about 2 min of CPU, cached in build-tsan/caf/; then the
# build itself), so for local runs with SEATFLOW_TIME_BUDGET_S set (.ci/run unsets it) it runs
# only when the time used so far plus SEATFLOW_TSAN_COST_S leaves it room.
tsan_cost=${SEATFLOW_TSAN_COST_S:-600}
if [ -f build-tsan/caf/install/.seatflow-caf-tsan ]; then
  tsan_cost=${SEATFLOW_TSAN_COST_S:-420}
fi
if [ "${SEATFLOW_SKIP_TSAN:-0}" = 1 ]; then
  summaries+=("tsan: skipped (SEATFLOW_SKIP_TSAN=1)")
elif [ -n "${SEATFLOW_TIME_BUDGET_S:-}" ] && ! [[ "$SEATFLOW_TIME_BUDGET_S$tsan_cost" =~ ^[0-9]+$ ]]; then
  summaries+=("tsan: FAILED (SEATFLOW_TIME_BUDGET_S and SEATFLOW_TSAN_COST_S must be whole seconds)")
  failed=1
elif [ -n "${SEATFLOW_TIME_BUDGET_S:-}" ] && [ $((SECONDS + tsan_cost)) -gt "$SEATFLOW_TIME_BUDGET_S" ]; then
  summaries+=("tsan: SKIPPED for time (${SECONDS} s used + ~${tsan_cost} s > SEATFLOW_TIME_BUDGET_S=$SEATFLOW_TIME_BUDGET_S)")
else
  wait_ahead tsan
  echo "==== seatflow: tsan: TSan-instrumented CAF in build-tsan/caf"
  if caf_root="$(scripts/caf-tsan.sh build-tsan/caf | tail -n 1)"; then
    suite_exclude="$tsan_exclude"
    run_suite tsan build-tsan \
      "TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp}" \
      -- "${tsan_cmake_args[@]}" "-DCAF_ROOT=$caf_root"
  else
    summaries+=("tsan: FAILED (the TSan build of CAF failed; see build-tsan/caf/*.log)")
    failed=1
  fi
fi

# The bounded fuzz runs last: they keep both cores busy, so no build ahead runs beside them.
if [ "$run_fuzz" = 1 ]; then
  wait_ahead fuzz
  echo "==== seatflow: fuzz: ${SEATFLOW_FUZZ_SECONDS:-15} s per target"
  fuzz_started=$SECONDS
  if scripts/fuzz.sh "${SEATFLOW_FUZZ_SECONDS:-15}"; then
    summaries+=("fuzz: passed ($(scripts/fuzz.sh --list | wc -l) targets x ${SEATFLOW_FUZZ_SECONDS:-15} s, no crash; build and runs $((SECONDS - fuzz_started)) s)")
  else
    summaries+=("fuzz: FAILED (see build-fuzz/*.log, build-fuzz/artifacts/)")
    failed=1
  fi
else
  summaries+=("fuzz: skipped")
fi

# CI (.ci/run) sets SEATFLOW_REQUIRE_ALL_SUITES=1: a suite that was skipped fails the run.
if [ "${SEATFLOW_REQUIRE_ALL_SUITES:-0}" = 1 ] && [ "${#ctest_args[@]}" -eq 0 ]; then
  for s in "${summaries[@]}"; do
    case "$s" in
      *skipped* | *SKIPPED*)
        summaries+=("required: FAILED (SEATFLOW_REQUIRE_ALL_SUITES=1 and a suite was skipped)")
        failed=1
        break
        ;;
    esac
  done
fi

for output in "${failure_outputs[@]}"; do
  [ -n "$output" ] && printf '%s\n' "$output"
done
echo "==== seatflow: test summary ($SECONDS s in all)"
for s in "${summaries[@]}"; do
  echo "seatflow: $s"
done
exit "$failed"
