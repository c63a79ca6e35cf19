#!/usr/bin/env bash
# Scale checks of issue 6: `unique` rate on small tables vs after prefilling N rows (default 10M), and
# optionally the engine's peak RSS after a run of 1,000,000 distinct payments. Starts and stops its own stack.
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
usage: bench/scale.sh [options]
  --payments N     payments of each measured `unique` run (default 10000)
  --runs N         measured runs before and after the prefill; medians (default 3)
  --prefill N      completed payments/orders/log rows COPYed between the two series (default 10000000; 0 skips)
  --big N          then, on a restarted engine, one `unique` run of N payments for peak RSS (default 0 = skip;
                   the issue's figure is 1000000)
  --big-timeout-s N  deadline of the big run (default 7200)
  --connections N  seatflow-bench connections (default 64)
  --build-dir DIR  build directory (default build-bench); --no-build uses it as is
  --engine-bin PATH  measure this seatflow binary instead of BUILD_DIR/seatflow
  --out DIR        results (default BUILD_DIR/scale-<time>)
  --keep           keep the throwaway servers' work directory
EOF
}

PAYMENTS=10000
RUNS=3
PREFILL=10000000
BIG=0
BIG_TIMEOUT_S=7200
CONNECTIONS=64
BUILD_DIR="$ROOT/build-bench"
NO_BUILD=0
ENGINE_BIN_ARG=""
OUT=""

while [ $# -gt 0 ]; do
  case "$1" in
    --payments) bench_need_value "$@"; PAYMENTS="$2"; shift ;;
    --runs) bench_need_value "$@"; RUNS="$2"; shift ;;
    --prefill) bench_need_value "$@"; PREFILL="$2"; shift ;;
    --big) bench_need_value "$@"; BIG="$2"; shift ;;
    --big-timeout-s) bench_need_value "$@"; BIG_TIMEOUT_S="$2"; shift ;;
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
for n in "$PAYMENTS" "$RUNS" "$CONNECTIONS" "$BIG_TIMEOUT_S"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || bench_die "sizes must be positive integers (got '$n')"
done
for n in "$PREFILL" "$BIG"; do
  [[ "$n" =~ ^[0-9]+$ ]] || bench_die "sizes must be integers (got '$n')"
done
[ "$RUNS" -le 9 ] || bench_die "--runs is at most 9"

bench_resolve_paths scale
bench_install_traps
bench_prepare
bench_start_stack engine
bench_log "engine pid $BENCH_ENGINE_PID on :$BENCH_HTTP_PORT; results in $OUT"

FAILED=()
# run_bench NAME ARGS... → one seatflow-bench run against the engine; JSON and table in $OUT, and
# $OUT/NAME.commit: the group commit of the run, from the engine's /metrics before and after it.
run_bench() {
  local name="$1" rc=0 metrics="http://127.0.0.1:$BENCH_HTTP_PORT/metrics"
  shift
  curl -fsS -m 5 -o "$OUT/$name.metrics-before" "$metrics" 2>/dev/null || true
  sf_run_killable "$BENCH_BIN" --no-progress --connections "$CONNECTIONS" --url "http://127.0.0.1:$BENCH_HTTP_PORT" \
    --secret "$BENCH_SECRET" --engine-pid "$BENCH_ENGINE_PID" --json "$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>&1 \
    || rc=$?
  if [ -s "$OUT/$name.metrics-before" ] && curl -fsS -m 5 -o "$OUT/$name.metrics" "$metrics" 2>/dev/null; then
    bench_commit_summary "$OUT/$name.metrics" "$OUT/$name.metrics-before" >"$OUT/$name.commit"
  fi
  if [ -f "$OUT/$name.json" ]; then
    jq -r --arg n "$name" --arg commit "$(awk '{ printf " %s=%s", $1, $2 }' "$OUT/$name.commit" 2>/dev/null)" \
      '"  \($n): \(.callbacks_per_s | floor) cb/s, p99 \(.latency_ms.p99) ms, RSS peak \(.engine.vm_hwm_mb // 0 | floor) MB, ok=\(.ok);\($commit)"' \
      "$OUT/$name.json" >&2
  fi
  [ "$rc" = 0 ] || FAILED+=("$name")
}
# commit_medians PREFIX → the medians of the runs' group commit as a JSON object ({} when none).
commit_medians() {
  local files=()
  for f in "$OUT/$1"-*.commit; do
    [ -s "$f" ] && files+=("$f")
  done
  if [ "${#files[@]}" -eq 0 ]; then
    echo '{}'
    return
  fi
  bench_cpu_medians "${files[@]}" | jq -Rn '[inputs | split(" ") | {(.[0]): (.[1] | tonumber)}] | add'
}
JQ_MEDIAN='def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
  else (.[length / 2 - 1] + .[length / 2]) / 2 end;'

run_bench warmup --scenario unique --payments 2000 --no-check
for ((run = 1; run <= RUNS; run++)); do
  run_bench "small-$run" --scenario unique --payments "$PAYMENTS" --shuffle-seed "$run"
done
LOAD_SMALL="$(cut -d' ' -f1-3 /proc/loadavg)"
rows_before="$(psql -X -At -h 127.0.0.1 -p "$BENCH_PG_PORT" -U postgres -d seatflow -c 'SELECT count(*) FROM payment_order')"

if [ "$PREFILL" -gt 0 ]; then
  bench_log "prefilling $PREFILL completed payments (COPY), then VACUUM ANALYZE"
  start=$SECONDS
  sf_run_killable "$BENCH_BIN" --seed-only --payments 1 --prefill "$PREFILL" --url "http://127.0.0.1:$BENCH_HTTP_PORT" \
    --secret "$BENCH_SECRET" >"$OUT/prefill.txt" 2>&1 || bench_die "prefill failed; see $OUT/prefill.txt"
  PREFILL_S=$((SECONDS - start))
  for ((run = 1; run <= RUNS; run++)); do
    run_bench "big-table-$run" --scenario unique --payments "$PAYMENTS" --shuffle-seed "$run"
  done
fi
LOAD_BIG="$(cut -d' ' -f1-3 /proc/loadavg)"
rows_after="$(psql -X -At -h 127.0.0.1 -p "$BENCH_PG_PORT" -U postgres -d seatflow -c 'SELECT count(*) FROM payment_order')"

if [ "$BIG" -gt 0 ]; then
  bench_log "restarting the engine for a fresh peak RSS, then one unique run of $BIG payments"
  bench_stop_engine
  bench_start_engine "$ENGINE_BIN" || bench_die "could not restart the engine"
  run_bench "rss-$BIG" --scenario unique --payments "$BIG" --timeout-s "$BIG_TIMEOUT_S"
fi

{
  printf '{"payments": %s, "runs": %s, "prefill": %s, "prefill_seconds": %s, "payment_rows_before_prefill": %s, "payment_rows_after": %s,\n' \
    "$PAYMENTS" "$RUNS" "$PREFILL" "${PREFILL_S:-0}" "$rows_before" "$rows_after"
  printf '"loadavg_after_small": "%s", "loadavg_after_big_table": "%s",\n' "$LOAD_SMALL" "$LOAD_BIG"
  printf '"small": %s' "$(jq -s --argjson commit "$(commit_medians small)" "$JQ_MEDIAN"' {callbacks_per_s: (map(.callbacks_per_s) | median), p99: (map(.latency_ms.p99) | median), commit: $commit}' "$OUT"/small-*.json)"
  if [ "$PREFILL" -gt 0 ]; then
    printf ',\n"big_table": %s' "$(jq -s --argjson commit "$(commit_medians big-table)" "$JQ_MEDIAN"' {callbacks_per_s: (map(.callbacks_per_s) | median), p99: (map(.latency_ms.p99) | median), commit: $commit}' "$OUT"/big-table-*.json)"
  fi
  if [ "$BIG" -gt 0 ] && [ -f "$OUT/rss-$BIG.json" ]; then
    printf ',\n"rss_run": %s' "$(jq '{payments, callbacks_per_s, elapsed_s, ok, unacked, latency_ms, engine, status_counts}' "$OUT/rss-$BIG.json")"
  fi
  echo "}"
} | jq 'if .big_table then . + {big_vs_small: (.big_table.callbacks_per_s / .small.callbacks_per_s)} else . end' \
  >"$OUT/summary.json"
cat "$OUT/summary.json"
if [ "${#FAILED[@]}" -gt 0 ]; then
  bench_log "FAILED: ${FAILED[*]}"
  exit 1
fi
