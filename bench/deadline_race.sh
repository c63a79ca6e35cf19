#!/usr/bin/env bash
# The deadline race (SPEC §16): customers pay at the dev mock gateway around their order's deadline
# while the sweeper cancels, once with the close at the gateway on and once with it off
# (SEATFLOW_GATEWAY_CLOSE=off, a dev-only switch). The mock plays a gateway that keeps no deadline
# of its own (SEATFLOW_MOCK_GATEWAY_DEADLINE=off, as Stripe keeps none), so only the close stands
# between a late payment and a cancelled order. When an order is cancelled a second customer books
# its seat and pays at once. Per run it reports the payments the gateway took, the paid_after_cancel
# discrepancies, seats held by two PAID orders and `seatflow check`'s verdict; with the close on
# the discrepancies and double sales must be 0 (exit 1 otherwise).
#
# --sweep-orders N adds the sweeper's pass over N expired orders bulk-loaded into PostgreSQL (no
# ANALYZE), closed at the mock: its duration and the gateway calls per second it made, which must
# stay within SEATFLOW_QUERY_RATE_PER_S (--rate) per channel.
#
# Everything runs on loopback; every wait is bounded; everything started here is stopped on exit.
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
usage: bench/deadline_race.sh [options]
  --customers N       customers per run (default 200; --quick 40)
  --timeout-ms MS     the orders' time to pay (default 3000)
  --spread-ms MS      customers pay within this of the deadline, either side (default 1500)
  --sweep-orders N    also time the sweeper's pass over N bulk-loaded expired orders (default 0)
  --rate R            SEATFLOW_QUERY_RATE_PER_S for that pass (default 200)
  --latency N         also time N sequential creates and closes through the API, at the mock
                      gateway and without one (SEATFLOW_GATEWAY_CREATE/CLOSE off), interleaved
  --quick             40 customers, no sweep pass unless asked
  --build-dir DIR     build directory (default build); --no-build uses it as is
USAGE
}

CUSTOMERS=200
TIMEOUT_MS=3000
SPREAD_MS=1500
SWEEP_ORDERS=0
RATE=200
LATENCY=0
BUILD_DIR="$ROOT/build"
NO_BUILD=0
while [ $# -gt 0 ]; do
  case "$1" in
    --customers) bench_need_value "$@"; CUSTOMERS="$2"; shift ;;
    --timeout-ms) bench_need_value "$@"; TIMEOUT_MS="$2"; shift ;;
    --spread-ms) bench_need_value "$@"; SPREAD_MS="$2"; shift ;;
    --sweep-orders) bench_need_value "$@"; SWEEP_ORDERS="$2"; shift ;;
    --rate) bench_need_value "$@"; RATE="$2"; shift ;;
    --latency) bench_need_value "$@"; LATENCY="$2"; shift ;;
    --quick) CUSTOMERS=40 ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown argument $1" ;;
  esac
  shift
done
[[ "$CUSTOMERS$TIMEOUT_MS$SPREAD_MS$SWEEP_ORDERS$RATE$LATENCY" =~ ^[0-9]+$ ]] ||
  bench_die "every option takes a whole number"
bench_need_tools
command -v python3 >/dev/null || bench_die "python3 is missing (scripts/deps.sh installs it)"
if [ "$NO_BUILD" = 0 ]; then
  bench_build "$ROOT" "$BUILD_DIR" seatflow || bench_die "build failed"
fi
ENGINE_BIN="$BUILD_DIR/seatflow"
[ -x "$ENGINE_BIN" ] || bench_die "missing $ENGINE_BIN (build first)"

bench_install_traps
bench_make_work
bench_start_stores || bench_die "could not start PostgreSQL/Redis"
SEATFLOW_API_TOKEN="bench-api-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export SEATFLOW_API_TOKEN

# The engine as a developer runs it: dev profile, the mock gateway as the hmac gateway.
start_dev_engine() {
  local close="$1" deadline="$2"
  export SEATFLOW_PROFILE=dev SEATFLOW_MOCK_GATEWAY=on SEATFLOW_MOCK_GATEWAY_AUTO=off \
    SEATFLOW_MOCK_GATEWAY_DEADLINE="$deadline" SEATFLOW_GATEWAY_CLOSE="$close" \
    SEATFLOW_SWEEPER=on SEATFLOW_SWEEP_INTERVAL_MS=200 SEATFLOW_ORDER_TIMEOUT_MS="$TIMEOUT_MS" \
    SEATFLOW_QUERY_SCHEDULE=10m SEATFLOW_QUERY_RATE_PER_S="$RATE" SEATFLOW_LOG_LEVEL=info
  bench_start_engine "$ENGINE_BIN" || bench_die "could not start the engine"
}

# sql QUERY → one value from the run's database.
sql() {
  psql -X -q -At -d "$SEATFLOW_PG_DSN" -v ON_ERROR_STOP=1 -c "$1"
}

FAILED=0
ROWS=()
race() {
  local close="$1" db="race_close_$1"
  bench_enter_run_database "$db"
  start_dev_engine "$close" off
  local counts
  counts="$(python3 "$BENCH_DIR/deadline_race.py" --base "http://127.0.0.1:$BENCH_HTTP_PORT" \
    --token "$SEATFLOW_API_TOKEN" --run "r$close" --customers "$CUSTOMERS" \
    --timeout-ms "$TIMEOUT_MS" --spread-ms "$SPREAD_MS")" || bench_die "the customers' driver failed"
  local paid_after_cancel twice conflicts taken check=ok
  paid_after_cancel="$(sql "SELECT count(*) FROM payment_discrepancy WHERE kind = 'paid_after_cancel'")"
  conflicts="$(sql "SELECT count(*) FROM payment_discrepancy WHERE kind = 'seat_conflict'")"
  twice="$(sql "SELECT count(*) FROM (SELECT o.show_id, s FROM order_info o, unnest(o.seat_ids) s
    WHERE o.status = 1 GROUP BY 1, 2 HAVING count(*) > 1) t")"
  taken="$(python3 -c 'import json,sys; c=json.loads(sys.argv[1]); print(c.get("paid_at_gateway",0)+c.get("second_paid_at_gateway",0))' "$counts")"
  # Both runs share one Redis: each checks its own shows' seats.
  "$ENGINE_BIN" check --scope-prefix "r$close-" >"$BENCH_WORK/check-$close.log" 2>&1 || check=FAILED
  bench_stop_engine
  cp "$BENCH_WORK/engine.log" "$BENCH_WORK/engine-$close.log"
  bench_leave_run_database "$db"
  ROWS+=("$(printf '%-10s %9s %12s %18s %14s %12s %8s' "close $close" "$CUSTOMERS" "$taken" \
    "$paid_after_cancel" "$conflicts" "$twice" "$check")")
  echo "deadline race, close $close: $counts" >&2
  # With the close on nothing may be paid after its cancel; in either run no seat is sold twice and
  # the stores agree.
  if [ "$close" = on ] && [ "$paid_after_cancel" != 0 ]; then
    FAILED=1
  fi
  if [ "$twice" != 0 ] || [ "$check" != ok ]; then
    FAILED=1
  fi
}

# The sweeper's pass over SWEEP_ORDERS expired orders, each with a pending hmac payment, loaded in
# one statement the way users bulk-load (no ANALYZE afterwards).
sweep_pass() {
  local db=race_sweep started elapsed peak=0 last=0 now total i
  bench_enter_run_database "$db"
  "$ENGINE_BIN" migrate >/dev/null 2>&1 || bench_die "migrate failed"
  sql "INSERT INTO order_info (order_no, user_id, show_id, seat_ids, amount_cents, status, expires_at)
    SELECT 'sw-o' || g, 'u', 'sweep-show', ARRAY['S' || g], 5000, 0, now() - interval '1 s'
    FROM generate_series(1, $SWEEP_ORDERS) g;
    INSERT INTO payment_order (payment_no, order_no, channel, amount_cents, status)
    SELECT 'sw-' || g, 'sw-o' || g, 'hmac', 5000, 0 FROM generate_series(1, $SWEEP_ORDERS) g" >/dev/null
  started=$(date +%s.%N)
  start_dev_engine on on
  local metrics="http://127.0.0.1:$BENCH_HTTP_PORT/metrics"
  # Bounded: the pass needs about 2 * N / RATE seconds; give it three times that and 60 s more.
  local limit=$((2 * SWEEP_ORDERS * 3 / RATE + 60))
  for ((i = 0; i < limit; i++)); do
    sleep 1
    now="$(curl -fsS -m 2 "$metrics" | awk '/^seatflow_(gateway_close|payment_query)_total\{channel="hmac"/ { s += $2 } END { print s + 0 }')"
    peak=$(awk -v a="$peak" -v b="$((now - last))" 'BEGIN { print (b > a ? b : a) }')
    last=$now
    [ "$(sql "SELECT count(*) FROM order_info WHERE order_no LIKE 'sw-o%' AND status = 0")" = 0 ] && break
  done
  elapsed=$(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  total="$(sql "SELECT count(*) FROM order_info WHERE order_no LIKE 'sw-o%' AND status = 2")"
  bench_stop_engine
  bench_leave_run_database "$db"
  echo "sweep pass: $total of $SWEEP_ORDERS expired orders closed at the mock and cancelled in ${elapsed} s; $last gateway calls (queries and closes), at most $peak in one second (SEATFLOW_QUERY_RATE_PER_S=$RATE)"
  [ "$total" = "$SWEEP_ORDERS" ] || FAILED=1
  # A one-second sample may straddle two refills of the bucket: the bound is the rate plus its burst.
  [ "$peak" -le $((2 * RATE)) ] || FAILED=1
}

# latency_pass MODE → one line: the API's create and close times with the gateway (on) or without.
latency_pass() {
  local mode="$1" db="race_latency_$1_$2"
  bench_enter_run_database "$db"
  if [ "$mode" = on ]; then
    start_dev_engine on on
  else
    SEATFLOW_GATEWAY_CREATE=off start_dev_engine off on
  fi
  echo "api latency, gateway $mode (run $2): $(python3 "$BENCH_DIR/deadline_race.py" \
    --base "http://127.0.0.1:$BENCH_HTTP_PORT" --token "$SEATFLOW_API_TOKEN" --run "l$mode$2" \
    --latency "$LATENCY")"
  bench_stop_engine
  unset SEATFLOW_GATEWAY_CREATE
  bench_leave_run_database "$db"
}

race on
race off
echo
echo "seatflow deadline race: $CUSTOMERS customers per run paying within ${SPREAD_MS} ms of a ${TIMEOUT_MS} ms deadline at a mock gateway that keeps no deadline"
printf '%-10s %9s %12s %18s %14s %12s %8s\n' run customers paid_at_gw paid_after_cancel seat_conflict sold_twice check
for row in "${ROWS[@]}"; do
  echo "$row"
done
if [ "$SWEEP_ORDERS" -gt 0 ]; then
  sweep_pass
fi
if [ "$LATENCY" -gt 0 ]; then
  for run in 1 2; do
    latency_pass on "$run"
    latency_pass off "$run"
  done
fi
if [ "$FAILED" != 0 ]; then
  echo "deadline race: FAILED (logs in $BENCH_WORK)"
  BENCH_KEEP_WORK=1
  exit 1
fi
echo "deadline race: passed"
