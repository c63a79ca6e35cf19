#!/usr/bin/env bash
# Profiles the engine under `unique` and `storm` load: CPU by process and by engine thread, hot symbols (perf),
# and what PostgreSQL backends wait on (pg_stat_activity samples). Starts and stops its own throwaway stack.
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
usage: bench/profile.sh [options]
  --seconds N          system-wide sampling window per scenario (default 8); an engine call-graph window of
                       4 s follows it
  --late-delay-s N     `unique-late` starts sampling this long after its load begins (default 40): payment
                       actors passivate after SEATFLOW_PASSIVATE_IDLE_MS (5 s), so this window sees it; 0 skips
  --unique-payments N  payments of the `unique` load (default 100000; it only has to outlast the windows)
  --storm-payments N   payments of the `storm` load (default 1000), with --storm-duplicates (default 200)
  --storm-duplicates N
  --connections N      seatflow-bench connections (default 64)
  --build-dir DIR      build directory (default build-bench); --no-build uses it as is
  --engine-bin PATH    profile this seatflow binary instead of BUILD_DIR/seatflow
  --out DIR            reports go here (default BUILD_DIR/profile-<time>)
  --keep               keep the throwaway servers' work directory
Needs perf (Debian package linux-perf; installed when missing).
EOF
}

WINDOW_S=8
LATE_DELAY_S=40
CALLGRAPH_S=4
UNIQUE_U=100000
STORM_U=1000
STORM_D=200
CONNECTIONS=64
BUILD_DIR="$ROOT/build-bench"
NO_BUILD=0
ENGINE_BIN_ARG=""
OUT=""

while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) bench_need_value "$@"; WINDOW_S="$2"; shift ;;
    --late-delay-s) bench_need_value "$@"; LATE_DELAY_S="$2"; shift ;;
    --unique-payments) bench_need_value "$@"; UNIQUE_U="$2"; shift ;;
    --storm-payments) bench_need_value "$@"; STORM_U="$2"; shift ;;
    --storm-duplicates) bench_need_value "$@"; STORM_D="$2"; shift ;;
    --connections) bench_need_value "$@"; CONNECTIONS="$2"; shift ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    --engine-bin) bench_need_value "$@"; ENGINE_BIN_ARG="$2"; shift ;;
    --out) bench_need_value "$@"; OUT="$2"; shift ;;
    --keep) BENCH_KEEP_WORK=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown option $1" ;;
  esac
  shift
done
for n in "$WINDOW_S" "$UNIQUE_U" "$STORM_U" "$STORM_D" "$CONNECTIONS"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || bench_die "sizes must be positive integers (got '$n')"
done
[ "$WINDOW_S" -le 120 ] || bench_die "--seconds is at most 120"
if ! [[ "$LATE_DELAY_S" =~ ^[0-9]+$ ]] || [ "$LATE_DELAY_S" -gt 600 ]; then
  bench_die "--late-delay-s is 0..600"
fi

bench_resolve_paths profile
bench_install_traps
if ! command -v perf >/dev/null 2>&1; then
  [ "$(id -u)" -eq 0 ] || bench_die "perf is missing (Debian package linux-perf)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends linux-perf >/dev/null \
    || bench_die "apt-get install linux-perf failed"
fi
bench_prepare
bench_start_stack engine
bench_log "engine pid $BENCH_ENGINE_PID on :$BENCH_HTTP_PORT; reports in $OUT"
engine_args=(--url "http://127.0.0.1:$BENCH_HTTP_PORT" --secret "$BENCH_SECRET" --engine-pid "$BENCH_ENGINE_PID"
  --connections "$CONNECTIONS" --no-progress --stats-wait-ms 0)
pg_psql=(psql -X -q -h 127.0.0.1 -p "$BENCH_PG_PORT" -U postgres -d seatflow)

"$BENCH_BIN" --scenario unique --payments 2000 --no-check "${engine_args[@]}" >"$OUT/warmup.txt" 2>&1 \
  || bench_die "warm-up failed; see $OUT/warmup.txt"

# Sum of the engine's callback counters (empty when /metrics is not reachable).
callbacks_done() {
  curl -fsS -m 2 "http://127.0.0.1:$BENCH_HTTP_PORT/metrics" 2>/dev/null \
    | awk '/^seatflow_payment_callback_total/ { s += $NF } END { if (NR) printf "%d\n", s }'
}

# Waits (up to 120 s) until the engine's callback counters move: seeding is over, the load is on.
wait_for_load() {
  local base now i
  base="$(callbacks_done)"
  for ((i = 0; i < 600; i++)); do
    sleep 0.2
    now="$(callbacks_done)"
    if [ -n "$now" ] && [ -n "$base" ] && [ "$now" -gt "$base" ]; then
      return 0
    fi
    sf_alive "$BENCH_LOAD_PID" || return 1
  done
  return 1
}

# "tid comm utime+stime" of every engine thread, in clock ticks.
thread_ticks() {
  local t
  for t in /proc/"$BENCH_ENGINE_PID"/task/*; do
    awk -v tid="${t##*/}" -v comm="$(cat "$t/comm" 2>/dev/null)" '{ sub(/^.*\) /, ""); print tid, comm, $12 + $13 }' \
      "$t/stat" 2>/dev/null || true
  done
}

# pg_stat_activity of the engine's backends, sampled every 50 ms for the window: what they wait on.
sample_pg_waits() {
  local samples=$((WINDOW_S * 20)) i
  for ((i = 0; i < samples; i++)); do
    echo "SELECT state, coalesce(wait_event_type, 'CPU'), coalesce(wait_event, '-') FROM pg_stat_activity
          WHERE datname = 'seatflow' AND backend_type = 'client backend' AND pid <> pg_backend_pid();"
    echo "SELECT pg_sleep(0.05);"
  done | PGCONNECT_TIMEOUT=5 "${pg_psql[@]}" -At -F ' | ' 2>/dev/null | grep -v '^$' || true
}

# profile_scenario NAME DELAY_S SEATFLOW-BENCH-ARGS... → sample DELAY_S after the load begins.
profile_scenario() {
  local name="$1" delay="$2"
  shift 2
  local deadline=$((delay + WINDOW_S + CALLGRAPH_S + 20))
  bench_log "$name: load for up to ${deadline} s after seeding; sampling ${WINDOW_S} s + ${CALLGRAPH_S} s"
  "$BENCH_BIN" "$@" --no-check --timeout-s "$deadline" "${engine_args[@]}" >"$OUT/$name-load.txt" 2>&1 &
  BENCH_LOAD_PID=$!
  wait_for_load || bench_die "the $name load did not start; see $OUT/$name-load.txt"
  sleep $((delay + 1))
  thread_ticks >"$OUT/$name-threads.before"
  local stat_before stat_after
  stat_before="$(head -n 1 /proc/stat)"
  sample_pg_waits >"$OUT/$name-pgwait.samples" &
  local sampler=$!
  perf record -q -e cpu-clock -a -F 499 -o "$OUT/$name-system.perf.data" -- sleep "$WINDOW_S" >/dev/null 2>&1 \
    || bench_log "perf record -a failed"
  stat_after="$(head -n 1 /proc/stat)"
  thread_ticks >"$OUT/$name-threads.after"
  wait "$sampler" || true
  perf record -q -e cpu-clock -F 199 --call-graph dwarf,16384 -p "$BENCH_ENGINE_PID" \
    -o "$OUT/$name-engine.perf.data" -- sleep "$CALLGRAPH_S" >/dev/null 2>&1 || bench_log "perf record -p failed"
  wait "$BENCH_LOAD_PID" || true
  BENCH_LOAD_PID=""
  report_scenario "$name" "$stat_before" "$stat_after"
}

report_scenario() {
  local name="$1" before="$2" after="$3" ticks
  ticks="$(getconf CLK_TCK)"
  {
    echo "== $name: machine CPU over the window (all cores; 100% = every core busy)"
    printf '%s\n%s\n' "$before" "$after" | awk '{ idle[NR] = $5 + $6; t = 0; for (i = 2; i <= NF; i++) t += $i; tot[NR] = t }
      END { d = tot[2] - tot[1]; printf "busy %.1f%%  (idle+iowait %.1f%%)\n", 100 * (d - (idle[2] - idle[1])) / d, 100 * (idle[2] - idle[1]) / d }'
    echo
    echo "== $name: CPU by process (perf samples, system-wide)"
    perf report -i "$OUT/$name-system.perf.data" --stdio --no-children --sort comm 2>/dev/null \
      | grep -vE '^#|^$' | head -n 12
    echo
    echo "== $name: engine threads (% of one core over the window)"
    join <(sort "$OUT/$name-threads.before") <(sort "$OUT/$name-threads.after") 2>/dev/null \
      | awk -v hz="$ticks" -v s="$WINDOW_S" '{ printf "%-8s %-16s %5.1f%%\n", $1, $2, 100 * ($5 - $3) / hz / s }' \
      | sort -k3 -rn || true
    echo
    echo "== $name: engine hot symbols (self time, system-wide samples of the engine process)"
    perf report -i "$OUT/$name-system.perf.data" --stdio --no-children --pid "$BENCH_ENGINE_PID" --sort dso,sym \
      2>/dev/null | grep -vE '^#|^$' | cut -c1-200 | head -n 30 || true
    echo
    echo "== $name: engine call graph, top inclusive entries (dwarf unwinding)"
    perf report -i "$OUT/$name-engine.perf.data" --stdio --children --sort sym -g none --percent-limit 3 \
      2>/dev/null | grep -vE '^#|^$' | cut -c1-200 | head -n 45 || true
    echo
    echo "== $name: PostgreSQL hot symbols (self time)"
    perf report -i "$OUT/$name-system.perf.data" --stdio --no-children --comm postgres --sort dso,sym \
      2>/dev/null | grep -vE '^#|^$' | head -n 15 || true
    echo
    echo "== $name: what the engine's PostgreSQL backends were doing (pg_stat_activity, 50 ms samples)"
    echo "   state | wait_event_type | wait_event"
    sort "$OUT/$name-pgwait.samples" | uniq -c | sort -rn | head -n 12 || true
    echo
    echo "== $name: the load"
    grep -E 'callbacks/s|latency|status counts' "$OUT/$name-load.txt" || true
  } >"$OUT/$name-report.txt"
  cat "$OUT/$name-report.txt"
}

profile_scenario unique 0 --scenario unique --payments "$UNIQUE_U"
profile_scenario storm 0 --scenario storm --payments "$STORM_U" --duplicates "$STORM_D"
if [ "$LATE_DELAY_S" -gt 0 ]; then
  profile_scenario unique-late "$LATE_DELAY_S" --scenario unique --payments "$((UNIQUE_U * 2))"
fi
echo "reports: $OUT/*-report.txt (perf data alongside)"
