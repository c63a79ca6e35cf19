#!/usr/bin/env bash
# `unique` as a user measures it: an independent load generator (wrk, two threads, keep-alive
# connections, each pre-signed hmac callback once), and seatflow-bench beside it, against tables
# bulk-loaded with 200k pending payments, once without ANALYZE after the load and once with it,
# each run on a fresh database, interleaved, beside pgbench's seed-design transaction on the same
# PostgreSQL. Prints medians and ratios, and for the wrk runs where the CPU goes (per component,
# PostgreSQL's WAL, Redis's commands, the group commit). Bounded (each wrk run lasts --duration-s,
# each seatflow-bench run sends --bench-payments callbacks); everything started is stopped.
# With --bill-rows N every mode is also run beside a bill run (SPEC §13): every run's database gets
# N more paid payments (bench/bill_seed.sql) and a CHECKPOINT after its loads, and in the bill
# modes, one second before the load starts, the engine is asked for the hmac bill of them
# (POST /api/bill-runs; bench/bill_gateway.py serves it on loopback), which it reconciles in the
# background as its daily schedule would.
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
usage: bench/independent.sh [options]
  --runs N            runs per mode (no ANALYZE / ANALYZE), interleaved; medians (default 3)
  --rows N            payments bulk-loaded per run (default 200000)
  --duration-s S      length of one wrk run (default 10)
  --connections C     wrk connections (default 64)
  --pgbench-per-client N  transactions per pgbench client, 8 clients (default 2500)
  --build-dir DIR     build directory (default build); --no-build uses it as is
  --engine-bin PATH   measure this seatflow binary instead of BUILD_DIR/seatflow
  --engine NAME=PATH  measure several binaries side by side, runs interleaved (repeatable; e.g.
                      --engine before=/path/to/old/seatflow --engine after=build/seatflow)
  --tools LIST        load generators, comma-separated: wrk (independent of SeatFlow's code),
                      seatflow-bench (this tree's gateway, --no-seed on the same bulk load);
                      default wrk,seatflow-bench
  --bench-payments N  seatflow-bench: callbacks sent per run out of the loaded rows (default 40000)
  --pg-setting N=V    a setting of the bench's PostgreSQL for every run, e.g. wal_compression=lz4
                      (repeatable; pgbench runs on the same server)
  --statements        wrk runs: also the statements' execution time, WAL bytes and full-page
                      images per applied callback (pg_stat_statements, preloaded for this)
  --bill-rows N       also every mode beside a bill run of N rows against N more paid payments,
                      started in the engine just before the load (default 0: none)
  --out DIR           results (default BUILD_DIR/independent-<time>)
USAGE
}

RUNS=3
ROWS=200000
DURATION_S=10
CONNECTIONS=64
PGB_PER_CLIENT=2500
BUILD_DIR="$ROOT/build"
NO_BUILD=0
ENGINE_BIN_ARG=""
ENGINES=()
TOOLS="wrk,seatflow-bench"
BENCH_PAYMENTS=40000
OUT=""
STATEMENTS=0
BILL_ROWS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) bench_need_value "$@"; RUNS="$2"; shift ;;
    --rows) bench_need_value "$@"; ROWS="$2"; shift ;;
    --duration-s) bench_need_value "$@"; DURATION_S="$2"; shift ;;
    --connections) bench_need_value "$@"; CONNECTIONS="$2"; shift ;;
    --pgbench-per-client) bench_need_value "$@"; PGB_PER_CLIENT="$2"; shift ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    --engine-bin) bench_need_value "$@"; ENGINE_BIN_ARG="$2"; shift ;;
    --engine) bench_need_value "$@"; ENGINES+=("$2"); shift ;;
    --tools) bench_need_value "$@"; TOOLS="$2"; shift ;;
    --bench-payments) bench_need_value "$@"; BENCH_PAYMENTS="$2"; shift ;;
    --pg-setting) bench_need_value "$@"; bench_pg_setting "$2" || exit 2; shift ;;
    --statements) STATEMENTS=1 ;;
    --bill-rows) bench_need_value "$@"; BILL_ROWS="$2"; shift ;;
    --out) bench_need_value "$@"; OUT="$2"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown argument $1" ;;
  esac
  shift
done
for n in "$RUNS" "$ROWS" "$DURATION_S" "$CONNECTIONS" "$PGB_PER_CLIENT" "$BENCH_PAYMENTS"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || bench_die "sizes must be positive integers (got '$n')"
done
[ "$RUNS" -le 9 ] || bench_die "--runs is at most 9"
[[ "$BILL_ROWS" =~ ^[0-9]+$ ]] || bench_die "--bill-rows must be a whole number (got '$BILL_ROWS')"
# The modes of every engine and tool: after the load, tables with or without ANALYZE, each alone
# and (--bill-rows) beside a bill run (bill_MODE).
MODES=(noanalyze analyze)
[ "$BILL_ROWS" = 0 ] || MODES+=(bill_noanalyze bill_analyze)

bench_resolve_paths independent
bench_install_traps
bench_prepare
[ "${#ENGINES[@]}" -gt 0 ] || ENGINES=("this=$ENGINE_BIN")
[ "$STATEMENTS" = 0 ] || bench_enable_statements
bench_make_work
bench_start_stores || bench_die "could not start PostgreSQL/Redis"

# The bill beside the bill modes: one hmac bill of BILL_ROWS payments of BILL_RUN (ids as
# bench/bill_seed.sql makes them) for BILL_DAY, served signed by bench/bill_gateway.py.
BILL_RUN="b$(date +%s)"
BILL_DAY="$(bench_bill_day)"
BILL_TOKEN="bench-api-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
if [ "$BILL_ROWS" -gt 0 ]; then
  bench_log "writing the bill of $BILL_ROWS payments and starting its gateway"
  bench_start_bill_gateway "$BILL_ROWS" "$BILL_RUN" "$BILL_DAY" 0 || bench_die "the bill gateway did not start"
fi

# bill_seed → the bill's BILL_ROWS paid payments (and their orders and seat claims) in the run's
# database, bulk-loaded without ANALYZE.
bill_seed() {
  psql -X -q "$SEATFLOW_PG_DSN" -v ON_ERROR_STOP=1 -v run="$BILL_RUN" -v n="$BILL_ROWS" \
    -v repairs=0 -v day="$BILL_DAY" -f "$BENCH_DIR/bill_seed.sql" >/dev/null
}

# before_load BILL → with --bill-rows, a CHECKPOINT (the bulk loads' dirty pages written before the
# load, in every mode alike); with BILL 1, the bill's run started (bill_start).
before_load() {
  [ "$BILL_ROWS" = 0 ] || psql -X -q "$SEATFLOW_PG_DSN" -c CHECKPOINT || bench_die "CHECKPOINT failed"
  [ "$1" = 0 ] || bill_start
}

# bill_start → asks the serving engine for the bill's run (BILL_ID), then gives it a second to
# fetch the bill and start loading it.
bill_start() {
  BILL_ID="$(curl -fsS -m 10 -X POST -H "Authorization: Bearer $BILL_TOKEN" \
    -H 'Content-Type: application/json' -d "{\"channel\": \"hmac\", \"date\": \"$BILL_DAY\"}" \
    "http://127.0.0.1:$BENCH_HTTP_PORT/api/bill-runs" | jq -r .id)" || bench_die "POST /api/bill-runs failed"
  sleep 1
}

# bill_finish TAG → waits (at most 10 min) for the run to end and writes OUT/TAG.bill: its state,
# seconds from start to end, rows, discrepancies; the engine's log so far goes to OUT/TAG.engine.log.
bill_finish() {
  local i state=""
  for ((i = 0; i < 1200; i++)); do
    state="$(psql -X -At "$SEATFLOW_PG_DSN" -c "SELECT state FROM bill_run WHERE id = $BILL_ID")"
    [ "$state" = running ] || break
    sleep 0.5
  done
  [ "$state" = "done" ] || bench_die "the bill run ended $state; see the engine's log"
  psql -X -At -F ' ' "$SEATFLOW_PG_DSN" -c "SELECT state, round(extract(epoch FROM finished_at -
    started_at)::numeric, 1), rows, discrepancies FROM bill_run WHERE id = $BILL_ID" >"$OUT/$1.bill"
  cp "$BENCH_WORK/engine.log" "$OUT/$1.engine.log"
}

# run_mode ENGINE TOOL MODE RUN → seeds a fresh database (MODE analyze: then VACUUM ANALYZE;
# noanalyze: not), serves it with a fresh ENGINE (NAME=PATH), and drives it with TOOL;
# OUT/NAME-TOOL-MODE-RUN.txt holds the tool's output, OUT/NAME-TOOL-MODE-RUN.result the figures
# (applied/s acked other applied p99_ms).
run_mode() {
  local name="${1%%=*}" bin
  bin="$(sf_abs "${1#*=}")"
  local tool="$2"
  shift 2
  local mode="$1" run="$2" db="sf_${1}_$2" vacuum=() bodies="$BENCH_WORK/bodies-$1-$2.txt"
  local tag="$name-$tool-$mode-$run" bill=0 before
  bench_enter_run_database "$db"
  [ "${mode#bill_}" = noanalyze ] && vacuum=(--no-vacuum)
  if [ "${mode#bill_}" != "$mode" ]; then
    bill=1
    export SEATFLOW_HMAC_GATEWAY_URL="$BENCH_BILL_GATEWAY_URL" SEATFLOW_API_TOKEN="$BILL_TOKEN"
  fi
  bench_start_engine "$bin" || bench_die "could not start the engine"
  unset SEATFLOW_HMAC_GATEWAY_URL SEATFLOW_API_TOKEN
  # With --bill-rows every mode holds the bill's payments, the alone modes too: only the run differs.
  [ "$BILL_ROWS" = 0 ] || bill_seed || bench_die "seeding the bill's payments failed"
  if [ "$tool" = seatflow-bench ]; then
    local prefix
    prefix="$("$BENCH_BIN" --scenario unique --payments "$ROWS" --pg-dsn "$SEATFLOW_PG_DSN" \
      --redis-url "$SEATFLOW_REDIS_URL" --secret "$BENCH_SECRET" "${vacuum[@]}" --seed-only \
      2>"$OUT/$tag.seed.txt")" || bench_die "seeding failed; see $OUT/$tag.seed.txt"
    before_load "$bill"
    "$BENCH_BIN" --scenario unique --payments "$BENCH_PAYMENTS" --no-seed --run-prefix "$prefix" \
      --connections "$CONNECTIONS" --url "http://127.0.0.1:$BENCH_HTTP_PORT" \
      --pg-dsn "$SEATFLOW_PG_DSN" --redis-url "$SEATFLOW_REDIS_URL" --secret "$BENCH_SECRET" \
      --engine-pid "$BENCH_ENGINE_PID" --shuffle-seed "$run" --no-progress --no-check \
      --json "$OUT/$tag.json" >"$OUT/$tag.txt" 2>&1 || bench_die "seatflow-bench failed; see $OUT/$tag.txt"
    [ "$bill" = 0 ] || bill_finish "$tag"
    bench_stop_engine
    jq -r '"\(.callbacks_per_s | floor) \(.acked // 0) 0 \(.acked // 0) \(.latency_ms.p99 | floor)"' \
      "$OUT/$tag.json" >"$OUT/$tag.result"
    bench_log "$tag: $(cut -d' ' -f1 "$OUT/$tag.result") callbacks/s (seatflow-bench)"
    bench_leave_run_database "$db"
    return 0
  fi
  "$BENCH_BIN" --scenario unique --payments "$ROWS" --pg-dsn "$SEATFLOW_PG_DSN" \
    --redis-url "$SEATFLOW_REDIS_URL" --secret "$BENCH_SECRET" --shuffle-seed "$run" \
    "${vacuum[@]}" --write-bodies "$bodies" >"$OUT/$tag.seed.txt" 2>&1 ||
    bench_die "seeding failed; see $OUT/$tag.seed.txt"
  [ "$STATEMENTS" = 0 ] || bench_statements_reset "$SEATFLOW_PG_DSN" || bench_die "pg_stat_statements failed"
  # Applied: payments moved to SUCCESS by the load (the bill's payments are SUCCESS already).
  before="$(psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT count(*) FROM payment_order WHERE status = 1")"
  before_load "$bill"
  bench_cpu_snapshot "$OUT/$tag.cpu-before"
  local TIMEFORMAT='%U %S' wrk_cpu
  # bash's `time` prints wrk's own user and system seconds on the group's stderr.
  wrk_cpu="$({ time wrk -t2 -c"$CONNECTIONS" -d"${DURATION_S}s" --timeout 10s -s "$BENCH_DIR/unique.lua" \
    "http://127.0.0.1:$BENCH_HTTP_PORT" -- "$bodies" 2 >"$OUT/$tag.txt" 2>&1; } 2>&1)" ||
    bench_die "wrk failed; see $OUT/$tag.txt"
  bench_cpu_snapshot "$OUT/$tag.cpu-after"
  [ "$bill" = 0 ] || bill_finish "$tag"
  # The engine started fresh for this run (the seed goes straight to the stores), so its
  # group-commit histograms hold wrk's load only.
  if curl -fsS -m 5 -o "$OUT/$tag.metrics" "http://127.0.0.1:$BENCH_HTTP_PORT/metrics" 2>/dev/null; then
    bench_commit_summary "$OUT/$tag.metrics" >"$OUT/$tag.commit"
  fi
  bench_stop_engine
  rm -f "$bodies"
  local acked other wrapped us p99
  acked="$(awk '/^acked/ { print $2 }' "$OUT/$tag.txt")"
  other="$(awk '/^other_answers/ { print $2 }' "$OUT/$tag.txt")"
  wrapped="$(awk '/^wrapped/ { print $2 }' "$OUT/$tag.txt")"
  us="$(awk '/^duration_us/ { print $2 }' "$OUT/$tag.txt")"
  p99="$(awk '/^latency_p99_us/ { print $2 }' "$OUT/$tag.txt")"
  if [ -z "$acked" ] || [ -z "$us" ]; then
    bench_die "wrk printed no result; see $OUT/$tag.txt"
  fi
  [ "$wrapped" = 0 ] || bench_log "$tag: wrk sent some bodies twice (raise --rows)"
  local applied
  applied="$(psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT count(*) - $before FROM payment_order WHERE status = 1")"
  local rate
  rate="$(awk -v a="$applied" -v us="$us" 'BEGIN { printf "%.0f", a / (us / 1e6) }')"
  echo "$rate $acked $other $applied $((p99 / 1000))" >"$OUT/$tag.result"
  bench_cpu_per_callback "$OUT/$tag.cpu-before" "$OUT/$tag.cpu-after" "$applied" \
    "$(awk '{ print $1 + $2 }' <<<"$wrk_cpu")" >"$OUT/$tag.cpu"
  if [ "$STATEMENTS" = 1 ] && [ "$applied" -gt 0 ]; then
    bench_statements "$SEATFLOW_PG_DSN" "$applied" >"$OUT/$tag.statements" || bench_die "pg_stat_statements failed"
  fi
  bench_log "$name $mode run $run: $rate applied/s (acked $acked, other answers $other, applied $applied, p99 $((p99 / 1000)) ms)"
  bench_leave_run_database "$db"
}

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
for ((run = 1; run <= RUNS; run++)); do
  for engine in "${ENGINES[@]}"; do
    for tool in ${TOOLS//,/ }; do
      case "$tool" in wrk | seatflow-bench) ;; *) bench_die "unknown tool $tool" ;; esac
      for mode in "${MODES[@]}"; do
        run_mode "$engine" "$tool" "$mode" "$run"
      done
    done
  done
done
"$(sf_abs "${ENGINES[-1]#*=}")" migrate >"$OUT/migrate.log" 2>&1 || bench_die "migrate failed; see $OUT/migrate.log"
for ((run = 1; run <= RUNS; run++)); do
  bench_pgbench "$OUT" "$run" 8 "$PGB_PER_CLIENT" 240 || bench_die "pgbench failed"
  bench_pgbench "$OUT" "events-$run" 8 "$PGB_PER_CLIENT" 240 "$BENCH_DIR/pgbench_callback_events.sql" ||
    bench_die "pgbench (with events) failed"
done

pg="$(jq -s 'map(.tps) | sort | .[(length - 1) / 2 | floor]' "$OUT"/pgbench-[0-9]*.json)"
pg_events="$(jq -s 'map(.tps) | sort | .[(length - 1) / 2 | floor]' "$OUT"/pgbench-events-*.json)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# wrk_cpu_lines AWK → for each engine and mode, "NAME MODE:" and the medians of its wrk runs' .cpu
# files (bench_cpu_medians) as the awk program AWK prints them, one line each.
wrk_cpu_lines() {
  local engine name mode
  for engine in "${ENGINES[@]}"; do
    name="${engine%%=*}"
    for mode in "${MODES[@]}"; do
      printf '%s %s:' "$name" "$mode"
      bench_cpu_medians "$OUT/$name-wrk-$mode"-*.cpu | awk "$1"
      echo
    done
  done
}
{
  echo "machine: $(nproc) cores, $(bench_cpu_model); load before $LOAD_BEFORE, after $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$ROWS payments bulk-loaded per run; wrk -t2 -c$CONNECTIONS -d${DURATION_S}s (each body once); seatflow-bench --connections $CONNECTIONS, $BENCH_PAYMENTS of the rows; medians of $RUNS"
  echo
  echo "| engine | tool | load | applied callbacks/s (runs) | p99 ms | vs pgbench |"
  echo "|---|---|---|---:|---:|---:|"
  for engine in "${ENGINES[@]}"; do
    name="${engine%%=*}"
    commit="$(bench_engine_identity "$(sf_abs "${engine#*=}")" | sed -n 's/.*commit of its directory: \([0-9a-f]*\).*/\1/p')"
    for tool in ${TOOLS//,/ }; do
      for mode in "${MODES[@]}"; do
        label="no ANALYZE after the load"
        [ "${mode#bill_}" = analyze ] && label="VACUUM ANALYZE after the load"
        [ "${mode#bill_}" = "$mode" ] || label="$label, beside a bill run of $BILL_ROWS rows"
        m="$(cat "$OUT/$name-$tool-$mode"-*.result | awk '{ print $1 }' | bench_median)"
        p99="$(cat "$OUT/$name-$tool-$mode"-*.result | awk '{ print $5 }' | bench_median)"
        echo "| $name ($commit) | $tool | $label | $m ($(awk '{ printf "%s ", $1 }' "$OUT/$name-$tool-$mode"-*.result)) | $p99 | $(ratio "$m" "$pg") |"
      done
    done
  done
  echo "| pgbench | – | seed transaction, 8 clients | $pg tps | – | 1 |"
  echo "| pgbench | – | seed transaction + the moves' 2 events, 8 clients | $pg_events tps | – | $(ratio "$pg_events" "$pg") |"
  echo
  # CPU microseconds per applied callback (wrk runs; medians over the runs of each component).
  if [[ ",$TOOLS," == *,wrk,* ]]; then
    echo "CPU µs per applied callback (wrk runs, medians): engine threads by name, PostgreSQL (whole cluster), Redis, wrk"
    echo
    # shellcheck disable=SC2016 # an awk program
    wrk_cpu_lines '$1 !~ /^(redis_|switches:)/ { printf " %s=%s", $1, $2 }'
    echo
    echo "Context switches per applied callback (wrk runs, medians; /proc/…/status, voluntary and not): how often each part went to sleep and was woken; engine threads by name (0.01 or more), their total, PostgreSQL's processes by role, Redis"
    echo
    # shellcheck disable=SC2016 # an awk program
    wrk_cpu_lines '$1 ~ /^switches:/ { c = $1; sub(/^switches:/, "", c); printf " %s=%s", c, $2 }'
    echo
    echo "Redis commands (wrk runs, medians; INFO commandstats): calls and µs inside Redis per applied callback, by command (a script's own commands also count within the script's µs)"
    echo
    # shellcheck disable=SC2016 # an awk program
    wrk_cpu_lines '
      $1 ~ /^redis_calls:/ { c = $1; sub(/^redis_calls:/, "", c); order[++n] = c; calls[c] = $2 }
      $1 ~ /^redis_usec:/ { c = $1; sub(/^redis_usec:/, "", c); usec[c] = $2 }
      END {
        for (i = 1; i <= n; i++) { c = order[i]; printf " %s=%s calls %s us;", c, calls[c], usec[c] }
      }'
    echo
    echo "Group commit (wrk runs, medians; the fresh engine's /metrics as the load ends): transactions, callbacks per transaction, mean transaction ms, % of transactions over 25 ms, a callback's mean queue wait ms"
    echo
    for engine in "${ENGINES[@]}"; do
      name="${engine%%=*}"
      for mode in "${MODES[@]}"; do
        commits=()
        for f in "$OUT/$name-wrk-$mode"-*.commit; do
          [ -s "$f" ] && commits+=("$f")
        done
        printf '%s %s:' "$name" "$mode"
        if [ "${#commits[@]}" -gt 0 ]; then
          bench_cpu_medians "${commits[@]}" | awk '{ printf " %s=%s", $1, $2 }'
        else
          printf ' (no /metrics read)'
        fi
        echo
      done
    done
    echo
  fi
  if [ "$STATEMENTS" = 1 ] && [[ ",$TOOLS," == *,wrk,* ]]; then
    echo "Statements (wrk runs, medians; pg_stat_statements): execution µs, WAL bytes and full-page images per applied callback, calls, rows"
    echo
    for engine in "${ENGINES[@]}"; do
      name="${engine%%=*}"
      for mode in "${MODES[@]}"; do
        echo "$name $mode:"
        bench_statement_medians "$OUT/$name-wrk-$mode"-*.statements | awk -F '\t' \
          '{ printf "  %8s us %6s B %6s fpi %7s calls %8s rows  %s\n", $1, $2, $3, $4, $5, $6 }'
      done
    done
    echo
  fi
  if [ "${#BENCH_PG_SETTINGS[@]}" -gt 0 ]; then
    echo "PostgreSQL settings added: ${BENCH_PG_SETTINGS[*]}"
  fi
  for engine in "${ENGINES[@]}"; do
    name="${engine%%=*}"
    for tool in ${TOOLS//,/ }; do
      na="$(cat "$OUT/$name-$tool-noanalyze"-*.result | awk '{ print $1 }' | bench_median)"
      an="$(cat "$OUT/$name-$tool-analyze"-*.result | awk '{ print $1 }' | bench_median)"
      echo "$name, $tool: no-ANALYZE / ANALYZE = $(ratio "$na" "$an")"
      [ "$BILL_ROWS" -gt 0 ] || continue
      for mode in noanalyze analyze; do
        alone="$(cat "$OUT/$name-$tool-$mode"-*.result | awk '{ print $1 }' | bench_median)"
        beside="$(cat "$OUT/$name-$tool-bill_$mode"-*.result | awk '{ print $1 }' | bench_median)"
        echo "$name, $tool, $mode: beside a bill run / alone = $(ratio "$beside" "$alone"); the runs (state, seconds, rows, discrepancies): $(cat "$OUT/$name-$tool-bill_$mode"-*.bill | paste -sd';' -)"
      done
    done
  done
} | tee "$OUT/summary.md"
echo "results: $OUT"
