#!/usr/bin/env bash
# The bill reconciliation target (SPEC §13, issue 46): an hmac bill of ROWS rows against ROWS
# payments bulk-loaded without ANALYZE, reconciled by `seatflow reconcile-bill` (elapsed time and
# peak RSS from /usr/bin/time), side by side in the same run with a plain COPY of the same CSV into
# a PostgreSQL temporary table (the floor: what loading the bill alone costs). The bill repairs
# REPAIRS pending payments through the pipeline and finds MISMATCHES amount mismatches; every other
# row matches; with --unknown every row names a payment nobody here knows (unknown_payment, each
# recorded as a discrepancy and linked to it), the payments seeded on another day. Starts and stops
# its own PostgreSQL, Redis and bill gateway; loopback only.
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
usage: bench/bill.sh [options]
  --rows N         bill rows and payments (default 1000000)
  --repairs N      pending payments the bill repairs through the pipeline (default 1000)
  --mismatches N   rows whose amount differs from the payment's (default 100)
  --unknown        every bill row an unknown payment (its payments seeded a week earlier, none
                   in the bill); --repairs and --mismatches are 0
  --runs N         reconcile runs (each a new run of the same bill: the first applies, the rest
                   re-check; default 2)
  --load-s S       then callbacks with wrk for S seconds against an engine on the same database,
                   alone and beside one more run of the bill (default 10; 0 skips)
  --load-rows N    payments seeded for each wrk phase (default 200000)
  --rate R         then a gateway's pace: seatflow-bench at R callbacks/s for --load-s seconds,
                   alone and beside one more run of the bill (default 1000; 0 skips)
  --work-share P   SEATFLOW_BILL_WORK_SHARE_PCT of every run (default: the engine's, 50)
  --build-dir DIR  build directory (default build-bench); --no-build uses it as is
  --out DIR        results (default BUILD_DIR/bill-<time>)
  --keep           keep the throwaway servers' work directory
USAGE
}

ROWS=1000000
REPAIRS=1000
MISMATCHES=100
RUNS=2
UNKNOWN=0
LOAD_S=10
LOAD_ROWS=200000
RATE=1000
BUILD_DIR="$ROOT/build-bench"
NO_BUILD=0
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) bench_need_value "$@"; ROWS="$2"; shift ;;
    --repairs) bench_need_value "$@"; REPAIRS="$2"; shift ;;
    --mismatches) bench_need_value "$@"; MISMATCHES="$2"; shift ;;
    --runs) bench_need_value "$@"; RUNS="$2"; shift ;;
    --unknown) UNKNOWN=1 ;;
    --load-s) bench_need_value "$@"; LOAD_S="$2"; shift ;;
    --load-rows) bench_need_value "$@"; LOAD_ROWS="$2"; shift ;;
    --rate) bench_need_value "$@"; RATE="$2"; shift ;;
    --work-share) bench_need_value "$@"; export SEATFLOW_BILL_WORK_SHARE_PCT="$2"; shift ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    --out) bench_need_value "$@"; OUT="$2"; shift ;;
    --keep) export BENCH_KEEP_WORK=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown option $1" ;;
  esac
  shift
done
for n in "$ROWS" "$RUNS" "$LOAD_ROWS"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || bench_die "counts must be positive integers"
done
for n in "$REPAIRS" "$MISMATCHES" "$LOAD_S" "$RATE"; do
  [[ "$n" =~ ^[0-9]+$ ]] || bench_die "counts must be integers"
done
[ $((REPAIRS + MISMATCHES)) -le "$ROWS" ] || bench_die "--repairs plus --mismatches exceed --rows"
[ "$UNKNOWN" = 0 ] || { REPAIRS=0; MISMATCHES=0; }

bench_resolve_paths bill
command -v /usr/bin/time >/dev/null || bench_die "/usr/bin/time is missing (apt-get install time)"
bench_need_tools
if [ "$NO_BUILD" = 0 ]; then
  bench_log "building Release in $BUILD_DIR"
  bench_build "$ROOT" "$BUILD_DIR" seatflow seatflow-bench || bench_die "build failed"
fi
[ -x "$ENGINE_BIN" ] || bench_die "missing $ENGINE_BIN (build first)"
[ "$LOAD_S" = 0 ] || [ -x "$BENCH_BIN" ] || bench_die "missing $BENCH_BIN (build first)"
mkdir -p "$OUT"
bench_install_traps

bench_start_stack stores
export SEATFLOW_CALLBACK_SECRETS="$BENCH_SECRET" SEATFLOW_LOG_LEVEL=warn SEATFLOW_PROFILE=prod
"$ENGINE_BIN" migrate >"$BENCH_WORK/migrate.log" 2>&1 || { cat "$BENCH_WORK/migrate.log" >&2; exit 1; }

RUN_ID="b$(date +%s)"
# A bill day in the past (the Asia/Shanghai calendar day of 02:00 UTC).
DAY="$(bench_bill_day)"
# The payments' day and the bill's payment numbers: the bill's own, or (--unknown) a week earlier
# and numbers of another run, so every row is unknown and no payment of the day is missing.
SEED_DAY="$DAY"
BILL_RUN_ID="$RUN_ID"
if [ "$UNKNOWN" = 1 ]; then
  SEED_DAY="$(date -u -d "$DAY - 7 days" +%Y-%m-%d)"
  BILL_RUN_ID="${RUN_ID}u"
fi
PSQL=(psql -X -q -h 127.0.0.1 -p "$BENCH_PG_PORT" -U postgres -d seatflow -v ON_ERROR_STOP=1)

bench_log "seeding $ROWS orders and payments ($REPAIRS pending) without ANALYZE"
seed_start=$(date +%s%N)
"${PSQL[@]}" -v run="$RUN_ID" -v n="$ROWS" -v repairs="$REPAIRS" -v day="$SEED_DAY" \
  -f "$BENCH_DIR/bill_seed.sql"
# The pending orders' seats are locked in Redis, as the orders API leaves them.
for ((i = 0; i < REPAIRS; i++)); do
  for s in 0 1; do
    printf 'HSET seatflow:seats:{S%s-%d} R%dS%d 1:O%s-%d\n' "$RUN_ID" $((i / 1000)) $((i % 1000)) "$s" "$RUN_ID" "$i"
  done
done | redis-cli -p "$BENCH_REDIS_PORT" >/dev/null
bench_log "seeded in $((($(date +%s%N) - seed_start) / 1000000)) ms"

bench_log "writing the bill and starting its gateway"
bench_start_bill_gateway "$ROWS" "$BILL_RUN_ID" "$DAY" "$MISMATCHES" || bench_die "the bill gateway did not start"
export SEATFLOW_HMAC_GATEWAY_URL="$BENCH_BILL_GATEWAY_URL"
BILL_BYTES="$(stat -c %s "$BENCH_WORK/bill.csv")"

bench_log "the floor: COPY of the same CSV into a temporary table"
floor_ms="$("${PSQL[@]}" <<SQL | awk '/^Time:/ { print $2 }' | tail -n 1
CREATE TEMP TABLE bill_floor (trade_no text, payment_no text, type text, amount_cents bigint,
                              completed_at timestamptz);
\timing on
\copy bill_floor FROM '$BENCH_WORK/bill.csv' WITH (FORMAT csv, HEADER true)
SQL
)"

{
  echo "# bench/bill.sh --rows $ROWS --repairs $REPAIRS --mismatches $MISMATCHES --runs $RUNS --work-share ${SEATFLOW_BILL_WORK_SHARE_PCT:-50}$([ "$UNKNOWN" = 0 ] || echo ' --unknown')"
  echo "# $(bench_engine_identity "$ENGINE_BIN")"
  echo "# cpu: $(bench_cpu_model) x $(nproc); bill: $BILL_BYTES bytes; day $DAY"
  printf 'what\telapsed_s\tpeak_rss_mb\texit\tline\n'
  printf 'copy_floor\t%s\t-\t0\tCOPY %s rows into a temporary table\n' \
    "$(awk -v ms="$floor_ms" 'BEGIN { printf "%.2f", ms / 1000 }')" "$ROWS"
} >"$OUT/bill.tsv"

# load_phases FILE → the run's load as it logged it (elapsed, working time of each phase).
load_phases() {
  grep -o 'event=bill_run_loaded.*' "$1" | tail -n 1 | sed 's/^event=bill_run_loaded run_id=[0-9]* //'
}

for ((r = 1; r <= RUNS; r++)); do
  bench_log "reconcile run $r of $RUNS"
  set +e
  /usr/bin/time -f '%e %M' -o "$BENCH_WORK/time.$r" \
    env SEATFLOW_LOG_LEVEL=info "$ENGINE_BIN" reconcile-bill --channel hmac --date "$DAY" >"$BENCH_WORK/run.$r" 2>"$BENCH_WORK/run.$r.err"
  code=$?
  set -e
  # time(1) writes "Command exited with non-zero status N" first when the exit is not 0.
  read -r elapsed rss_kb < <(tail -n 1 "$BENCH_WORK/time.$r")
  printf 'reconcile_%d\t%s\t%d\t%d\t%s; %s\n' "$r" "$elapsed" $((rss_kb / 1024)) "$code" \
    "$(tr -d '\n' <"$BENCH_WORK/run.$r")" "$(load_phases "$BENCH_WORK/run.$r.err")" >>"$OUT/bill.tsv"
  [ "$code" -le 1 ] || { cat "$BENCH_WORK/run.$r.err" >&2; bench_die "reconcile-bill exited $code"; }
done
"${PSQL[@]}" -At -c "SELECT count(*) FILTER (WHERE status = 1), count(*) FILTER (WHERE status = 0)
  FROM payment_order WHERE payment_no LIKE 'P${RUN_ID}-%'" | tr '|' ' ' | {
  read -r paid pending
  echo "# after: $paid payments SUCCESS, $pending PENDING (expected $ROWS and 0)" >>"$OUT/bill.tsv"
}

# load_phase NAME RUN → wrk's unique callbacks for LOAD_S seconds on the serving engine (a fresh
# seatflow-bench seed of LOAD_ROWS payments); with NAME `during`, one more reconcile run of the
# bill goes on in the background from just before wrk starts. Appends a line to bill.tsv.
load_phase() {
  local name="$1" run="$2" bodies="$BENCH_WORK/bodies-$1.txt" before after bill_pid="" bill_code=0
  "$BENCH_BIN" --scenario unique --payments "$LOAD_ROWS" --pg-dsn "$SEATFLOW_PG_DSN" \
    --redis-url "$SEATFLOW_REDIS_URL" --secret "$BENCH_SECRET" --shuffle-seed "$run" --no-vacuum \
    --write-bodies "$bodies" >"$OUT/load-$name.seed.txt" 2>&1 || bench_die "seeding failed; see $OUT/load-$name.seed.txt"
  before="$("${PSQL[@]}" -At -c "SELECT count(*) FROM payment_order WHERE status = 1")"
  if [ "$name" = during ]; then
    start_bill_beside
    bill_pid="$BILL_PID"
  fi
  wrk -t2 -c64 -d"${LOAD_S}s" --timeout 10s -s "$BENCH_DIR/unique.lua" \
    "http://127.0.0.1:$BENCH_HTTP_PORT" -- "$bodies" 2 >"$OUT/load-$name.txt" 2>&1 || bench_die "wrk failed"
  [ -z "$bill_pid" ] || wait "$bill_pid" || bill_code=$?
  after="$("${PSQL[@]}" -At -c "SELECT count(*) FROM payment_order WHERE status = 1")"
  local us p99 rate line="-"
  us="$(awk '/^duration_us/ { print $2 }' "$OUT/load-$name.txt")"
  p99="$(awk '/^latency_p99_us/ { print $2 }' "$OUT/load-$name.txt")"
  rate="$(awk -v a=$((after - before)) -v us="$us" 'BEGIN { printf "%.0f", a / (us / 1e6) }')"
  if [ -n "$bill_pid" ]; then
    line="bill run beside it: $(tail -n 1 "$BENCH_WORK/time.during" | awk '{ print $1 " s" }'), exit $bill_code; $(load_phases "$BENCH_WORK/run.during")"
  fi
  printf 'callbacks_%s\t%s\t-\t0\t%s applied/s, p99 %s ms; %s\n' "$name" "$LOAD_S" "$rate" \
    "$(awk -v us="$p99" 'BEGIN { printf "%.1f", us / 1000 }')" "$line" >>"$OUT/bill.tsv"
  rm -f "$bodies"
}

# start_bill_beside → one more reconcile run of the bill in the background (BILL_PID), timed.
start_bill_beside() {
  /usr/bin/time -f '%e %M' -o "$BENCH_WORK/time.during" env SEATFLOW_LOG_LEVEL=info "$ENGINE_BIN" reconcile-bill \
    --channel hmac --date "$DAY" >"$BENCH_WORK/run.during" 2>&1 &
  BILL_PID=$!
  sleep 1 # the run has fetched its bill and is loading it
}

# paced_phase NAME RUN → seatflow-bench's unique callbacks at RATE/s for LOAD_S seconds (a
# gateway's pace, not a saturating load); NAME `during`: beside one more reconcile run.
paced_phase() {
  local name="$1" tag="paced-$1" payments=$((RATE * LOAD_S)) prefix bill_code=0 line="-"
  prefix="$("$BENCH_BIN" --scenario unique --payments "$payments" --pg-dsn "$SEATFLOW_PG_DSN" \
    --redis-url "$SEATFLOW_REDIS_URL" --secret "$BENCH_SECRET" --seed-only --no-vacuum \
    2>"$OUT/$tag.seed.txt")" || bench_die "seeding failed; see $OUT/$tag.seed.txt"
  BILL_PID=""
  [ "$name" != during ] || start_bill_beside
  "$BENCH_BIN" --scenario unique --payments "$payments" --no-seed --run-prefix "$prefix" \
    --rate "$RATE" --connections 16 --url "http://127.0.0.1:$BENCH_HTTP_PORT" \
    --pg-dsn "$SEATFLOW_PG_DSN" --redis-url "$SEATFLOW_REDIS_URL" --secret "$BENCH_SECRET" \
    --timeout-s $((LOAD_S * 3 + 30)) --no-progress --no-check --json "$OUT/$tag.json" \
    >"$OUT/$tag.txt" 2>&1 || bench_die "seatflow-bench failed; see $OUT/$tag.txt"
  if [ -n "$BILL_PID" ]; then
    wait "$BILL_PID" || bill_code=$?
    line="bill run beside it: $(tail -n 1 "$BENCH_WORK/time.during" | awk '{ print $1 " s" }'), exit $bill_code; $(load_phases "$BENCH_WORK/run.during")"
  fi
  printf 'paced_%s\t%s\t-\t0\t%s\n' "$name" "$LOAD_S" \
    "$(jq -r '"\(.callbacks_per_s | floor) callbacks/s of \(.acked // 0) acked, p99 \(.latency_ms.p99) ms, by second \([.latency_by_second[].p99 | . * 10 | round / 10] | map(tostring) | join(" "))"' "$OUT/$tag.json"); $line" \
    >>"$OUT/bill.tsv"
}

if [ "$LOAD_S" -gt 0 ]; then
  bench_log "callbacks alone and beside a bill run, ${LOAD_S} s each"
  bench_start_engine "$ENGINE_BIN" || bench_die "could not start the engine"
  load_phase alone 1
  load_phase during 2
  if [ "$RATE" -gt 0 ]; then
    paced_phase alone 3
    paced_phase during 4
  fi
  bench_stop_engine
fi
cat "$OUT/bill.tsv"
