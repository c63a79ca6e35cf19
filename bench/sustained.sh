#!/usr/bin/env bash
# Sustained open-loop `unique` load on a fresh stack with a one-second timeline (ACKs/s, live payment actors,
# in-flight callbacks, CPU of the busiest engine thread) and a PNG of it: shows what happens once
# payment actors start to passivate (SEATFLOW_PASSIVATE_IDLE_MS, 5 s). Starts and stops its own stack.
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
usage: bench/sustained.sh [options]
  --rate N         requests/s, open loop (default 900)
  --payments N     payments, one callback each (default 80000: ~90 s at 900/s)
  --timeout-s N    deadline of the load (default 600)
  --build-dir DIR  build directory (default build-bench); --no-build uses it as is
  --engine-bin PATH  measure this seatflow binary instead of BUILD_DIR/seatflow
  --out DIR        results (default BUILD_DIR/sustained-<time>)
  --plot FILE      also copy the PNG to FILE
  --keep           keep the throwaway servers' work directory
EOF
}

RATE=900
PAYMENTS=80000
TIMEOUT_S=600
BUILD_DIR="$ROOT/build-bench"
NO_BUILD=0
ENGINE_BIN_ARG=""
OUT=""
PLOT_COPY=""

while [ $# -gt 0 ]; do
  case "$1" in
    --rate) bench_need_value "$@"; RATE="$2"; shift ;;
    --payments) bench_need_value "$@"; PAYMENTS="$2"; shift ;;
    --timeout-s) bench_need_value "$@"; TIMEOUT_S="$2"; shift ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    --engine-bin) bench_need_value "$@"; ENGINE_BIN_ARG="$2"; shift ;;
    --out) bench_need_value "$@"; OUT="$2"; shift ;;
    --plot) bench_need_value "$@"; PLOT_COPY="$2"; shift ;;
    --keep) BENCH_KEEP_WORK=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown option $1" ;;
  esac
  shift
done
for n in "$RATE" "$PAYMENTS" "$TIMEOUT_S"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || bench_die "sizes must be positive integers (got '$n')"
done

bench_resolve_paths sustained
bench_install_traps
bench_prepare
bench_start_stack engine
args=(--url "http://127.0.0.1:$BENCH_HTTP_PORT" --secret "$BENCH_SECRET" --engine-pid "$BENCH_ENGINE_PID" --no-progress)
"$BENCH_BIN" --scenario unique --payments 2000 --no-check "${args[@]}" >"$OUT/warmup.txt" 2>&1 \
  || bench_die "warm-up failed; see $OUT/warmup.txt"

bench_log "open loop at $RATE/s for $PAYMENTS payments (engine pid $BENCH_ENGINE_PID); sampling every second"
"$BENCH_BIN" --scenario unique --payments "$PAYMENTS" --rate "$RATE" --timeout-s "$TIMEOUT_S" "${args[@]}" \
  --json "$OUT/load.json" >"$OUT/load.txt" 2>&1 &
BENCH_LOAD_PID=$!

# Busiest engine thread: "comm ticks" summed per thread name is not enough (the CAF pool shares a name),
# so keep per-tid ticks and report the largest delta.
tid_ticks() {
  local t
  for t in /proc/"$BENCH_ENGINE_PID"/task/*; do
    awk -v tid="${t##*/}" '{ sub(/^.*\) /, ""); print tid, $12 + $13 }' "$t/stat" 2>/dev/null || true
  done
}
gauge() { # NAME → value of a gauge in /metrics ("" when absent)
  curl -fsS -m 1 "http://127.0.0.1:$BENCH_HTTP_PORT/metrics" 2>/dev/null | awk -v n="$1" '$1 == n { print $2; exit }'
}
hz="$(getconf CLK_TCK)"
echo "# second live_payment_actors inflight_callbacks busiest_engine_thread_cpu_pct" >"$OUT/timeline.dat"
prev="$(tid_ticks)"
prev_ns="$(date +%s%N)"
second=0
while sf_alive "$BENCH_LOAD_PID" && [ "$second" -lt "$TIMEOUT_S" ]; do
  sleep 1
  second=$((second + 1))
  now="$(tid_ticks)"
  now_ns="$(date +%s%N)"
  # CPU over the real interval between two samples (sleep 1 plus the sampling itself).
  busiest="$(join <(sort <<<"$prev") <(sort <<<"$now") 2>/dev/null | awk -v hz="$hz" -v ns=$((now_ns - prev_ns)) \
    '{ d = $3 - $2; if (d > m) m = d } END { printf "%.0f", 100 * m / hz / (ns / 1e9) }')" || busiest=0
  prev="$now"
  prev_ns="$now_ns"
  echo "$second $(gauge seatflow_payment_actors || true) $(gauge seatflow_inflight_callbacks || true) $busiest" \
    >>"$OUT/timeline.dat"
done
wait "$BENCH_LOAD_PID" || true
BENCH_LOAD_PID=""

jq -r '.acks_per_second | to_entries[] | "\(.key) \(.value)"' "$OUT/load.json" >"$OUT/acks.dat"
gnuplot -e "ackfile='$OUT/acks.dat'; timefile='$OUT/timeline.dat'; outfile='$OUT/sustained.png'; rate=$RATE; \
  plottitle='SeatFlow, open loop at $RATE/s: ACKs per second, live payment actors, busiest engine thread'" \
  "$BENCH_DIR/plot_timeline.gp" 2>"$OUT/gnuplot.log" || bench_log "gnuplot failed; see $OUT/gnuplot.log"
if [ -n "$PLOT_COPY" ] && [ -f "$OUT/sustained.png" ]; then
  mkdir -p "$(dirname "$PLOT_COPY")"
  cp "$OUT/sustained.png" "$PLOT_COPY"
fi
grep -E 'callbacks/s|latency|status counts|result' "$OUT/load.txt" || true
echo "results: $OUT (load.json, timeline.dat, sustained.png)"
