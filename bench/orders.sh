#!/usr/bin/env bash
# Order-creation rate through the API (POST /api/orders, one free seat each), measured with wrk for
# one or more engine binaries side by side on one throwaway stack, runs interleaved (A B A B ...),
# medians printed. Used to measure what the seat claims of SPEC §9 cost an order. Bounded: each run
# lasts --duration-s; everything started here is stopped on exit.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=../scripts/services.sh
source "$ROOT/scripts/services.sh"
# shellcheck source=lib.sh
source "$BENCH_DIR/lib.sh"

usage() {
  cat <<'USAGE'
usage: bench/orders.sh [options] [--engine NAME=BIN ...]
  --engine NAME=BIN   an engine binary to measure (repeatable; default: this=BUILD_DIR/seatflow)
  --runs N            runs per engine, interleaved; medians reported (default 3)
  --duration-s S      length of one wrk run (default 10)
  --connections C     wrk connections, 2 threads (default 32)
  --build-dir DIR     build directory (default build); --no-build uses it as is
USAGE
}

RUNS=3
DURATION_S=10
CONNECTIONS=32
BUILD_DIR="$ROOT/build"
NO_BUILD=0
ENGINES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --engine) bench_need_value "$@"; ENGINES+=("$2"); shift ;;
    --runs) bench_need_value "$@"; RUNS="$2"; shift ;;
    --duration-s) bench_need_value "$@"; DURATION_S="$2"; shift ;;
    --connections) bench_need_value "$@"; CONNECTIONS="$2"; shift ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown argument $1" ;;
  esac
  shift
done
[[ "$RUNS$DURATION_S$CONNECTIONS" =~ ^[0-9]+$ ]] || bench_die "--runs, --duration-s and --connections take whole numbers"
bench_need_tools
if [ "$NO_BUILD" = 0 ]; then
  bench_build "$ROOT" "$BUILD_DIR" seatflow || bench_die "build failed"
fi
[ "${#ENGINES[@]}" -gt 0 ] || ENGINES=("this=$BUILD_DIR/seatflow")

bench_install_traps
bench_make_work
bench_start_stores || bench_die "could not start PostgreSQL/Redis"
SEATFLOW_API_TOKEN="bench-api-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export SEATFLOW_API_TOKEN

declare -A RATES
for ((run = 1; run <= RUNS; run++)); do
  for spec in "${ENGINES[@]}"; do
    name="${spec%%=*}"
    bin="$(sf_abs "${spec#*=}")"
    [ -x "$bin" ] || bench_die "$bin is not an executable"
    bench_start_engine "$bin" || bench_die "could not start $bin"
    out="$BENCH_WORK/wrk-$name-$run.txt"
    wrk -t2 -c"$CONNECTIONS" -d"${DURATION_S}s" --timeout 5s -s "$BENCH_DIR/orders.lua" \
      "http://127.0.0.1:$BENCH_HTTP_PORT" -- "$SEATFLOW_API_TOKEN" "r$run$name" >"$out" 2>&1
    bench_stop_engine
    created="$(awk '/^orders_created/ { print $2 }' "$out")"
    other="$(awk '/^other_answers/ { print $2 }' "$out")"
    us="$(awk '/^duration_us/ { print $2 }' "$out")"
    p99="$(awk '/^latency_p99_us/ { print $2 }' "$out")"
    if [ -z "$created" ] || [ -z "$us" ]; then
      bench_die "wrk printed no result: $(tail -n 5 "$out")"
    fi
    rate="$(awk -v c="$created" -v us="$us" 'BEGIN { printf "%.0f", c / (us / 1e6) }')"
    echo "run $run $name: $rate orders/s (created $created, other answers $other, p99 $((p99 / 1000)) ms)"
    RATES[$name]+="$rate "
  done
done

echo
printf '%-12s %14s   %s\n' engine median_orders/s runs
for spec in "${ENGINES[@]}"; do
  name="${spec%%=*}"
  median="$(tr ' ' '\n' <<<"${RATES[$name]}" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
  printf '%-12s %14s   %s\n' "$name" "$median" "${RATES[$name]}"
done
