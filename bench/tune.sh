#!/usr/bin/env bash
# Chooses the engine's thread settings by measurement: for every combination of CAF scheduler policy,
# scheduler threads, HTTP io threads and persistence actors (PostgreSQL connections), runs `unique` and
# `storm` on a fresh engine N times and prints the median callbacks/s and p99 of each, best first.
# One throwaway PostgreSQL (fsync and synchronous_commit on) and Redis serve every run; tears down on exit.
# The checks run 1.5 s after each load (past the 1 s duplicate flush); commit/Redis counts are not read.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=../scripts/services.sh
source "$ROOT/scripts/services.sh"
# shellcheck source=lib.sh
source "$BENCH_DIR/lib.sh"

usage() {
  cat <<'EOF'
usage: bench/tune.sh [options]
  --runs N              runs per scenario and combination; medians are reported (default 3)
  --unique N            payments in `unique` (default 5000)
  --storm-payments N    payments in `storm` (default 500)
  --storm-duplicates N  deliveries of each storm callback (default 40)
  --policies LIST       CAF scheduler policies (default "sharing stealing")
  --scheduler LIST      scheduler thread counts (default "1 2")
  --io LIST             HTTP io thread counts (default "1 2")
  --pool LIST           persistence actors / PostgreSQL connections (default "4")
  --connections N       keep-alive connections of seatflow-bench (default 64)
  --build-dir DIR       build directory (default build-bench); --no-build uses it as is
  --out DIR             results (default BUILD_DIR/tune-<time>)
EOF
}

RUNS=3
UNIQUE_U=5000
STORM_U=500
STORM_D=40
POLICIES="sharing stealing"
SCHED="1 2"
IO="1 2"
POOL="4"
CONNECTIONS=64
BUILD_DIR="$ROOT/build-bench"
NO_BUILD=0
OUT=""
RUN_TIMEOUT_S=180

while [ $# -gt 0 ]; do
  case "$1" in
    --runs) bench_need_value "$@"; RUNS="$2"; shift ;;
    --unique) bench_need_value "$@"; UNIQUE_U="$2"; shift ;;
    --storm-payments) bench_need_value "$@"; STORM_U="$2"; shift ;;
    --storm-duplicates) bench_need_value "$@"; STORM_D="$2"; shift ;;
    --policies) bench_need_value "$@"; POLICIES="$2"; shift ;;
    --scheduler) bench_need_value "$@"; SCHED="$2"; shift ;;
    --io) bench_need_value "$@"; IO="$2"; shift ;;
    --pool) bench_need_value "$@"; POOL="$2"; shift ;;
    --connections) bench_need_value "$@"; CONNECTIONS="$2"; shift ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    --out) bench_need_value "$@"; OUT="$2"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown option $1" ;;
  esac
  shift
done
for n in $RUNS $UNIQUE_U $STORM_U $STORM_D $SCHED $IO $POOL $CONNECTIONS; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || bench_die "sizes and counts must be positive integers (got '$n')"
done
for p in $POLICIES; do
  [[ "$p" == sharing || "$p" == stealing ]] || bench_die "policies are sharing or stealing (got '$p')"
done
[ "$RUNS" -le 9 ] || bench_die "--runs is at most 9"

bench_resolve_paths tune
bench_install_traps
bench_prepare

bench_start_stack stores
bench_log "PostgreSQL :$BENCH_PG_PORT, Redis :$BENCH_REDIS_PORT; results in $OUT"
bench_log "engine: $(bench_engine_identity "$ENGINE_BIN"); CPU: $(bench_cpu_model), $(nproc) cores"

run_one() { # NAME SCENARIO-ARGS... → one seatflow-bench run against a fresh engine
  local name="$1" rc=0
  shift
  bench_stop_engine
  bench_start_engine "$ENGINE_BIN" || bench_die "could not start the engine ($name)"
  sf_run_killable "$BENCH_BIN" --no-progress --connections "$CONNECTIONS" --timeout-s "$RUN_TIMEOUT_S" \
    --url "http://127.0.0.1:$BENCH_HTTP_PORT" --secret "$BENCH_SECRET" --engine-pid "$BENCH_ENGINE_PID" \
    --stats-wait-ms 1500 --json "$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] || bench_log "  $name failed (rc=$rc); see $OUT/$name.txt"
}

JQ_MEDIAN='def median: map(select(. != null)) | sort | if length == 0 then null
  elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;'

printf '[\n' >"$OUT/summary.json"
first=1
for policy in $POLICIES; do
  for sched in $SCHED; do
    for io in $IO; do
      for pool in $POOL; do
        tag="$policy-s$sched-io$io-pg$pool"
        bench_log "combination $tag: $RUNS x unique ($UNIQUE_U), $RUNS x storm ($STORM_U x $STORM_D)"
        export SEATFLOW_SCHEDULER_POLICY="$policy" SEATFLOW_SCHEDULER_THREADS="$sched"
        export SEATFLOW_HTTP_IO_THREADS="$io" SEATFLOW_PG_POOL_SIZE="$pool"
        for ((run = 1; run <= RUNS; run++)); do
          run_one "$tag-unique-$run" --scenario unique --payments "$UNIQUE_U" --shuffle-seed "$run"
          run_one "$tag-storm-$run" --scenario storm --payments "$STORM_U" --duplicates "$STORM_D" \
            --shuffle-seed "$run"
        done
        line="$(jq -s --arg tag "$tag" "$JQ_MEDIAN"'
          { combination: $tag,
            unique_cb_s: (map(select(.scenario == "unique")) | map(.callbacks_per_s) | median),
            unique_p99_ms: (map(select(.scenario == "unique")) | map(.latency_ms.p99) | median),
            storm_cb_s: (map(select(.scenario == "storm")) | map(.callbacks_per_s) | median),
            storm_p99_ms: (map(select(.scenario == "storm")) | map(.latency_ms.p99) | median),
            all_ok: (map(.ok) | all) }' "$OUT/$tag"-*.json)"
        [ "$first" = 1 ] || printf ',\n' >>"$OUT/summary.json"
        first=0
        printf '%s' "$line" >>"$OUT/summary.json"
        jq -r '"  \(.combination): unique \(.unique_cb_s | floor) cb/s (p99 \(.unique_p99_ms) ms), storm \(.storm_cb_s | floor) cb/s (p99 \(.storm_p99_ms) ms), ok=\(.all_ok)"' <<<"$line" >&2
      done
    done
  done
done
printf '\n]\n' >>"$OUT/summary.json"
bench_stop_engine

{
  echo "| combination | unique cb/s | unique p99 ms | storm cb/s | storm p99 ms | invariants |"
  echo "|---|---:|---:|---:|---:|---|"
  jq -r 'sort_by(-.unique_cb_s) | .[] |
    "| \(.combination) | \(.unique_cb_s | floor) | \(.unique_p99_ms) | \(.storm_cb_s | floor) | \(.storm_p99_ms) | \(if .all_ok then "ok" else "FAILED" end) |"' \
    "$OUT/summary.json"
} >"$OUT/summary.md"
cat "$OUT/summary.md"
echo "results: $OUT (summary.json, summary.md, one JSON + table per run)"
jq -e 'map(.all_ok) | all' "$OUT/summary.json" >/dev/null || bench_die "an invariant check failed; see $OUT"
