#!/usr/bin/env bash
# Runs the same callback load against SeatFlow, nginx (the HTTP ceiling) and pgbench (the seed design's
# transaction) on this machine, then prints medians, ratios, the CPU µs per answered request of each
# component in SeatFlow's runs and a PNG plot. Everything it starts, it stops.
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
usage: bench/compare.sh [options]
  --quick                small sizes (~2-3 minutes instead of ~6-8)
  --runs N               runs per scenario and target; medians are reported (default 3)
  --unique N             payments in `unique` and `mixed` (default 10000; quick 2000)
  --storm-payments N     payments in `storm` (default 1000; quick 200)
  --storm-duplicates N   deliveries of each storm callback (default 100; quick 20)
  --halfrate-seconds N   length of each run at half the unique rate, as payments = rate x N when
                         that is more than --unique (default 10; quick 5): a p99 of the rate, not
                         of a fresh engine's first tenth of a second
  --run-timeout-s N      deadline of each seatflow-bench / pgbench run (default 240)
  --connections N        keep-alive connections of seatflow-bench (default 64)
  --pgbench-per-client N transactions per pgbench client, 8 clients (default 2500; quick 500)
  --nginx-workers N      nginx worker processes, 1 or 2 (default 1)
  --build-dir DIR        build directory (default build-bench); --no-build uses it as is
  --engine-bin PATH      measure this seatflow binary instead of BUILD_DIR/seatflow (e.g. one built from HEAD)
  --pg-setting N=V       a setting of the throwaway PostgreSQL, e.g. wal_compression=lz4 (repeatable;
                         pgbench runs on the same server)
  --out DIR              where JSON, logs, summary and plot go (default BUILD_DIR/compare-<time>)
  --plot FILE            also copy the PNG plot to FILE (e.g. /tmp/bench.png)
  --independent          also run bench/independent.sh: wrk over pre-signed bodies on 200k rows
                         bulk-loaded without and with ANALYZE, beside pgbench (~6 more minutes)
  --keep                 keep the throwaway servers' work directory
Engine knobs pass through from the environment (SEATFLOW_PG_POOL_SIZE, SEATFLOW_SCHEDULER_THREADS,
SEATFLOW_HTTP_IO_THREADS, SEATFLOW_INFLIGHT_CALLBACKS_MAX, SEATFLOW_PAYMENT_MAILBOX_CALLBACKS_MAX, ...).
EOF
}

RUNS=""
QUICK=0
UNIQUE_U=""
STORM_U=""
STORM_D=""
CONNECTIONS=64
PGB_PER_CLIENT=""
PGB_CLIENTS=8
RUN_TIMEOUT_S=240
HALFRATE_S=""
NGINX_WORKERS=1
BUILD_DIR="$ROOT/build-bench"
NO_BUILD=0
ENGINE_BIN_ARG=""
OUT=""
PLOT_COPY=""
INDEPENDENT=0

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --runs) bench_need_value "$@"; RUNS="$2"; shift ;;
    --unique) bench_need_value "$@"; UNIQUE_U="$2"; shift ;;
    --storm-payments) bench_need_value "$@"; STORM_U="$2"; shift ;;
    --storm-duplicates) bench_need_value "$@"; STORM_D="$2"; shift ;;
    --connections) bench_need_value "$@"; CONNECTIONS="$2"; shift ;;
    --pgbench-per-client) bench_need_value "$@"; PGB_PER_CLIENT="$2"; shift ;;
    --nginx-workers) bench_need_value "$@"; NGINX_WORKERS="$2"; shift ;;
    --run-timeout-s) bench_need_value "$@"; RUN_TIMEOUT_S="$2"; shift ;;
    --halfrate-seconds) bench_need_value "$@"; HALFRATE_S="$2"; shift ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    --engine-bin) bench_need_value "$@"; ENGINE_BIN_ARG="$2"; shift ;;
    --pg-setting) bench_need_value "$@"; bench_pg_setting "$2" || exit 2; shift ;;
    --out) bench_need_value "$@"; OUT="$2"; shift ;;
    --plot) bench_need_value "$@"; PLOT_COPY="$2"; shift ;;
    --keep) BENCH_KEEP_WORK=1 ;;
    --independent) INDEPENDENT=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown option $1" ;;
  esac
  shift
done

if [ "$QUICK" = 1 ]; then
  : "${RUNS:=3}" "${UNIQUE_U:=2000}" "${STORM_U:=200}" "${STORM_D:=20}" "${PGB_PER_CLIENT:=500}" "${HALFRATE_S:=5}"
else
  : "${RUNS:=3}" "${UNIQUE_U:=10000}" "${STORM_U:=1000}" "${STORM_D:=100}" "${PGB_PER_CLIENT:=2500}" "${HALFRATE_S:=10}"
fi
for n in "$RUNS" "$UNIQUE_U" "$STORM_U" "$STORM_D" "$CONNECTIONS" "$PGB_PER_CLIENT" "$NGINX_WORKERS" "$RUN_TIMEOUT_S" \
  "$HALFRATE_S"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || bench_die "sizes must be positive integers (got '$n')"
done
[ "$RUNS" -le 9 ] || bench_die "--runs is at most 9"

bench_resolve_paths compare
bench_install_traps
bench_prepare

bench_start_stack engine
bench_start_nginx "$NGINX_WORKERS" || bench_die "could not start nginx"
bench_log "engine pid $BENCH_ENGINE_PID on :$BENCH_HTTP_PORT, nginx on :$BENCH_NGINX_PORT," \
  "PostgreSQL :$BENCH_PG_PORT, Redis :$BENCH_REDIS_PORT; results in $OUT"

FAILED_RUNS=()

# run_bench NAME ARGS... → one seatflow-bench run; JSON and table in $OUT/NAME.{json,txt}, one line on stderr.
run_bench() {
  local name="$1" rc=0
  shift
  sf_run_killable "$BENCH_BIN" --no-progress --connections "$CONNECTIONS" --timeout-s "$RUN_TIMEOUT_S" \
    --json "$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>&1 || rc=$?
  report_run "$name" "$rc"
}

# report_run NAME RC → one line on stderr from $OUT/NAME.json; a failed run is remembered.
report_run() {
  local name="$1" rc="$2"
  if [ -f "$OUT/$name.json" ]; then
    jq -r --arg n "$name" --arg rc "$rc" \
      '"  \($n): \(.callbacks_per_s | floor) cb/s, p50 \(.latency_ms.p50) ms, p99 \(.latency_ms.p99) ms, ok=\(.ok) rc=\($rc)"' \
      "$OUT/$name.json" >&2
  else
    bench_log "  $name: no report (rc=$rc); see $OUT/$name.txt"
  fi
  [ "$rc" = 0 ] || FAILED_RUNS+=("$name")
}

# run_bench_cpu NAME ARGS... → run_bench for a SeatFlow target, with the CPU of the engine's threads,
# PostgreSQL, Redis and seatflow-bench itself sampled when the load starts (--started-file: the seed
# is done) and when it ends (--hold-file: before the checks), so neither the seeding nor the checks
# are counted; $OUT/NAME.cpu holds "component µs" per answered request (bench_cpu_per_callback).
# The window misses the load's first few tens of ms: the start file is polled every 10 ms and a
# snapshot (one awk pass over /proc) takes ~36 ms here.
run_bench_cpu() {
  local name="$1" rc=0 pid gen_before gen_after hz
  local started="$OUT/$name.started" hold="$OUT/$name.hold"
  shift
  rm -f "$started" "$hold"
  setsid "$BENCH_BIN" --no-progress --connections "$CONNECTIONS" --timeout-s "$RUN_TIMEOUT_S" \
    --json "$OUT/$name.json" --started-file "$started" --hold-file "$hold" "$@" >"$OUT/$name.txt" 2>&1 &
  SF_CHILD_PGID=$!
  pid=$SF_CHILD_PGID
  if bench_wait_for_file "$started" "$pid" "$RUN_TIMEOUT_S"; then
    gen_before="$(bench_proc_ticks "$pid")"
    bench_cpu_snapshot "$OUT/$name.cpu-before" no-commits
    if bench_wait_for_file "$hold" "$pid" "$RUN_TIMEOUT_S"; then
      gen_after="$(bench_proc_ticks "$pid")"
      bench_cpu_snapshot "$OUT/$name.cpu-after" no-commits
      # The engine started fresh for this run, so its group-commit histograms hold this load only.
      curl -fsS -m 5 -o "$OUT/$name.metrics" "http://127.0.0.1:$BENCH_HTTP_PORT/metrics" 2>/dev/null || true
    fi
  fi
  rm -f "$hold"
  wait "$pid" || rc=$?
  SF_CHILD_PGID=""
  rm -f "$started"
  if [ -f "$OUT/$name.json" ] && [ -f "$OUT/$name.cpu-after" ]; then
    hz="$(getconf CLK_TCK)"
    bench_cpu_per_callback "$OUT/$name.cpu-before" "$OUT/$name.cpu-after" \
      "$(jq '.acked // 0' "$OUT/$name.json")" \
      "$(awk -v a="$gen_after" -v b="$gen_before" -v hz="$hz" 'BEGIN { print (a - b) / hz }')" \
      >"$OUT/$name.cpu"
  fi
  if [ -s "$OUT/$name.metrics" ]; then
    bench_commit_summary "$OUT/$name.metrics" >"$OUT/$name.commit"
  fi
  report_run "$name" "$rc"
}

engine_args=()
# fresh_engine → restarts the engine before a measured run. The run then never meets payment actors an
# earlier run left behind (they passivate SEATFLOW_PASSIVATE_IDLE_MS, 5 s, after their last callback), the
# stopped engine's PostgreSQL backends flush their
# statistics as they exit (so xact_commit deltas stay per run), and VmHWM is that run's peak.
fresh_engine() {
  bench_stop_engine
  bench_start_engine "$ENGINE_BIN" || bench_die "could not (re)start the engine"
  engine_args=(--url "http://127.0.0.1:$BENCH_HTTP_PORT" --secret "$BENCH_SECRET" --engine-pid "$BENCH_ENGINE_PID")
}
nginx_args=(--target nginx --url "http://127.0.0.1:$BENCH_NGINX_PORT")
scenario_args() {
  case "$1" in
    unique) echo "--scenario unique --payments $UNIQUE_U" ;;
    storm) echo "--scenario storm --payments $STORM_U --duplicates $STORM_D" ;;
    mixed) echo "--scenario mixed --payments $UNIQUE_U" ;;
  esac
}

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
# Warm-ups are not measured: PostgreSQL's and Redis's caches, the page cache of the binaries, nginx workers.
bench_log "warm-up (not measured)"
fresh_engine
run_bench warmup-seatflow --scenario unique --payments 2000 --no-check --stats-wait-ms 0 "${engine_args[@]}"
run_bench warmup-nginx --scenario unique --payments 20000 "${nginx_args[@]}"

for scenario in unique storm mixed; do
  bench_log "scenario $scenario: $RUNS run(s) against SeatFlow (each on a fresh engine) and nginx, interleaved"
  read -r -a sargs <<<"$(scenario_args "$scenario")"
  for ((run = 1; run <= RUNS; run++)); do
    fresh_engine
    run_bench_cpu "seatflow-$scenario-$run" "${sargs[@]}" "${engine_args[@]}" --shuffle-seed "$run"
    run_bench "nginx-$scenario-$run" "${sargs[@]}" "${nginx_args[@]}" --shuffle-seed "$run"
  done
done

# jq: the median of an array of numbers (mean of the middle two for an even count).
JQ_MEDIAN='def median: map(select(. != null)) | sort | if length == 0 then null
  elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;'

unique_median="$(jq -s "$JQ_MEDIAN"' map(.callbacks_per_s) | median // 0' "$OUT"/seatflow-unique-*.json)"
half_rate="$(jq -n --argjson r "$unique_median" '($r / 2) | floor')"
halfrate_u="$(jq -n --argjson r "$half_rate" --argjson s "$HALFRATE_S" --argjson u "$UNIQUE_U" \
  '[$r * $s, $u] | max | floor')"
if [ "$half_rate" -gt 0 ]; then
  bench_log "p99 at half the unique max rate: $RUNS open-loop run(s) of $halfrate_u payments at $half_rate" \
    "requests/s, each on a fresh engine"
  for ((run = 1; run <= RUNS; run++)); do
    fresh_engine
    run_bench_cpu "seatflow-halfrate-$run" --scenario unique --payments "$halfrate_u" --rate "$half_rate" \
      --stats-wait-ms 0 "${engine_args[@]}" --shuffle-seed "$run"
  done
fi

# pgbench: the seed design's transaction on the same PostgreSQL, 8 clients, fresh payments each run.
bench_log "pgbench: $RUNS run(s) of $PGB_CLIENTS clients x $PGB_PER_CLIENT transactions (-M prepared)"
for ((run = 1; run <= RUNS; run++)); do
  bench_pgbench "$OUT" "$run" "$PGB_CLIENTS" "$PGB_PER_CLIENT" "$RUN_TIMEOUT_S" || FAILED_RUNS+=("pgbench-$run")
done
# The second baseline: SPEC §6's work with its two event writes, one transaction per callback.
bench_log "pgbench with events: $RUNS run(s) of bench/pgbench_callback_events.sql"
for ((run = 1; run <= RUNS; run++)); do
  bench_pgbench "$OUT" "events-$run" "$PGB_CLIENTS" "$PGB_PER_CLIENT" "$RUN_TIMEOUT_S" \
    "$BENCH_DIR/pgbench_callback_events.sql" || FAILED_RUNS+=("pgbench-events-$run")
done

# Summary: medians per scenario and target, ratios, machine, sizes.
summary_for() { # GLOB → median figures of the runs matching GLOB
  # shellcheck disable=SC2086
  jq -s "$JQ_MEDIAN"' {
    runs: length, ok_runs: (map(select(.ok)) | length),
    callbacks_per_s: (map(.callbacks_per_s) | median),
    p50: (map(.latency_ms.p50) | median), p95: (map(.latency_ms.p95) | median),
    p99: (map(.latency_ms.p99) | median), max: (map(.latency_ms.max) | median),
    status_503: (map(.status_counts["503"] // 0) | median),
    commits_per_callback: (map(.pg.commits_per_callback) | median),
    xids_per_callback: (map(.pg.xids_per_callback) | median),
    commits_per_duplicate: (map(.pg.commits_per_duplicate) | median),
    redis_requests_per_callback: (map(.redis.requests_per_callback) | median),
    redis_requests_per_duplicate: (map(.redis.requests_per_duplicate) | median),
    redis_calls_per_callback: (map(.redis.calls_per_callback) | median),
    rss_peak_mb: (map(.engine.vm_hwm_mb) | max)
  }' $1
}
run_medians() { # GLOB → {"name": median, ...} over the runs' files of "name value" lines
  local files
  # shellcheck disable=SC2086
  files="$(ls $1 2>/dev/null || true)"
  if [ -z "$files" ]; then
    echo null
    return
  fi
  # shellcheck disable=SC2086
  bench_cpu_medians $files | jq -Rn '[inputs | split(" ") | {(.[0]): (.[1] | tonumber)}] | add'
}
{
  echo "{"
  printf '"machine": {"nproc": %s, "cpu": %s, "kernel": %s, "loadavg_before": "%s", "loadavg_after": "%s", "dirty_background": "%s"},\n' \
    "$(nproc)" "$(bench_cpu_model | jq -Rs 'rtrimstr("\n")')" "$(uname -r | jq -Rs 'rtrimstr("\n")')" \
    "$LOAD_BEFORE" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(bench_writeback_setting)"
  printf '"sizes": {"runs": %s, "unique_payments": %s, "storm_payments": %s, "storm_duplicates": %s, "connections": %s, "pgbench_clients": %s, "pgbench_per_client": %s, "nginx_workers": %s, "half_rate": %s, "halfrate_payments": %s},\n' \
    "$RUNS" "$UNIQUE_U" "$STORM_U" "$STORM_D" "$CONNECTIONS" "$PGB_CLIENTS" "$PGB_PER_CLIENT" "$NGINX_WORKERS" "$half_rate" \
    "$halfrate_u"
  printf '"engine": %s,\n' "$(bench_engine_identity "$ENGINE_BIN" | jq -Rs 'rtrimstr("\n")')"
  printf '"engine_env": %s,\n' "$(env | grep -E '^SEATFLOW_' | grep -vE '^SEATFLOW_(CALLBACK_SECRETS|PG_DSN|REDIS_URL)=' | sort | jq -Rs 'split("\n") | map(select(length > 0))')"
  for scenario in unique storm mixed; do
    printf '"%s": {"seatflow": %s, "nginx": %s},\n' "$scenario" \
      "$(summary_for "$OUT/seatflow-$scenario-*.json")" "$(summary_for "$OUT/nginx-$scenario-*.json")"
  done
  if [ "$half_rate" -gt 0 ]; then
    printf '"halfrate": %s,\n' "$(summary_for "$OUT/seatflow-halfrate-*.json")"
  fi
  printf '"cpu_us": {"unique": %s, "storm": %s, "mixed": %s, "halfrate": %s},\n' \
    "$(run_medians "$OUT/seatflow-unique-*.cpu")" "$(run_medians "$OUT/seatflow-storm-*.cpu")" \
    "$(run_medians "$OUT/seatflow-mixed-*.cpu")" "$(run_medians "$OUT/seatflow-halfrate-*.cpu")"
  printf '"commit": {"unique": %s, "storm": %s, "mixed": %s, "halfrate": %s},\n' \
    "$(run_medians "$OUT/seatflow-unique-*.commit")" "$(run_medians "$OUT/seatflow-storm-*.commit")" \
    "$(run_medians "$OUT/seatflow-mixed-*.commit")" "$(run_medians "$OUT/seatflow-halfrate-*.commit")"
  printf '"pgbench": %s,\n' "$(jq -s "$JQ_MEDIAN"' {runs: length, tps: (map(.tps) | median),
    p50: (map(.p50) | median), p95: (map(.p95) | median), p99: (map(.p99) | median), max: (map(.max) | median)}' \
    "$OUT"/pgbench-[0-9]*.json)"
  printf '"pgbench_events": %s\n' "$(jq -s "$JQ_MEDIAN"' {runs: length, tps: (map(.tps) | median),
    p50: (map(.p50) | median), p95: (map(.p95) | median), p99: (map(.p99) | median), max: (map(.max) | median)}' \
    "$OUT"/pgbench-events-*.json)"
  echo "}"
} | jq '. + {ratios: {
    unique_vs_pgbench: (.unique.seatflow.callbacks_per_s / .pgbench.tps),
    unique_vs_pgbench_events: (.unique.seatflow.callbacks_per_s / .pgbench_events.tps),
    unique_vs_nginx: (.unique.seatflow.callbacks_per_s / .unique.nginx.callbacks_per_s),
    storm_vs_nginx: (.storm.seatflow.callbacks_per_s / .storm.nginx.callbacks_per_s),
    mixed_vs_nginx: (.mixed.seatflow.callbacks_per_s / .mixed.nginx.callbacks_per_s)}}' >"$OUT/summary.json"

# Markdown table (pasted into docs/BENCHMARKS.md) and the plot's data.
jq -r '
  def f(d): if . == null then "–" else (. * pow(10; d) | round) / pow(10; d) | tostring end;
  "| scenario | target | callbacks/s | p50 ms | p95 ms | p99 ms | max ms | PG commits/cb | Redis req/cb | Redis calls/cb | peak RSS MB |",
  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  (["unique", "storm", "mixed"][] as $s | (["seatflow", "nginx"][] as $t | .[$s][$t] as $r |
    "| \($s) | \($t) | \($r.callbacks_per_s | f(0)) | \($r.p50 | f(2)) | \($r.p95 | f(2)) | \($r.p99 | f(2)) | \($r.max | f(2)) | \($r.commits_per_callback | f(3)) | \($r.redis_requests_per_callback | f(3)) | \($r.redis_calls_per_callback | f(3)) | \($r.rss_peak_mb | f(1)) |")),
  "| unique @ \(.sizes.half_rate)/s (half max, \(.sizes.halfrate_payments) payments) | seatflow | \(.halfrate.callbacks_per_s | f(0)) | \(.halfrate.p50 | f(2)) | \(.halfrate.p95 | f(2)) | \(.halfrate.p99 | f(2)) | \(.halfrate.max | f(2)) | – | – | – | \(.halfrate.rss_peak_mb | f(1)) |",
  "| seed transaction | pgbench -c 8 | \(.pgbench.tps | f(0)) | \(.pgbench.p50 | f(2)) | \(.pgbench.p95 | f(2)) | \(.pgbench.p99 | f(2)) | \(.pgbench.max | f(2)) | 1 | 0 | 0 | – |",
  "| seed transaction + 2 events | pgbench -c 8 | \(.pgbench_events.tps | f(0)) | \(.pgbench_events.p50 | f(2)) | \(.pgbench_events.p95 | f(2)) | \(.pgbench_events.p99 | f(2)) | \(.pgbench_events.max | f(2)) | 1 | 0 | 0 | – |",
  "",
  "ratios: unique/pgbench \(.ratios.unique_vs_pgbench | f(3)), unique/pgbench with events \(.ratios.unique_vs_pgbench_events | f(3)), unique/nginx \(.ratios.unique_vs_nginx | f(4)), storm/nginx \(.ratios.storm_vs_nginx | f(4)), mixed/nginx \(.ratios.mixed_vs_nginx | f(4))",
  "storm per duplicate: PG commits \(.storm.seatflow.commits_per_duplicate | f(4)), Redis requests \(.storm.seatflow.redis_requests_per_duplicate | f(4))",
  "",
  "CPU µs per answered request (medians over the load windows): engine threads by name, PostgreSQL (whole cluster, by role), Redis, seatflow-bench (loadgen)",
  (["unique", "storm", "mixed", "halfrate"][] as $s | .cpu_us[$s] | select(. != null) |
    "\($s): " + (to_entries | map(select(.key | startswith("switches:") | not) | "\(.key)=\(.value)") | join(" "))),
  "",
  "Context switches per answered request (medians; /proc/…/status, voluntary and not): engine threads by name (0.01 or more), their total, PostgreSQL by role, Redis",
  (["unique", "storm", "mixed", "halfrate"][] as $s | .cpu_us[$s] | select(. != null) |
    "\($s): " + (to_entries | map(select(.key | startswith("switches:")) | "\(.key | ltrimstr("switches:"))=\(.value)") | join(" "))),
  "",
  "Group commit (medians over the runs; the fresh engine'"'"'s /metrics as the load ends): transactions, callbacks per transaction, mean transaction ms, % of transactions over 25 ms, a callback'"'"'s mean queue wait ms",
  (["unique", "storm", "mixed", "halfrate"][] as $s | .commit[$s] | select(. != null) |
    "\($s): " + (to_entries | map("\(.key)=\(.value)") | join(" ")))
' "$OUT/summary.json" >"$OUT/summary.md"

jq -r '
  (["unique", "storm", "mixed"][] as $s | (["seatflow", "nginx"][] as $t | .[$s][$t] as $r |
    "\"\($s)\\n\($t)\" \($r.callbacks_per_s) \($r.p50) \($r.p95) \($r.p99)")),
  "\"unique\\nhalf rate\" \(.halfrate.callbacks_per_s // 0) \(.halfrate.p50 // 0) \(.halfrate.p95 // 0) \(.halfrate.p99 // 0)",
  "\"seed txn\\npgbench\" \(.pgbench.tps) \(.pgbench.p50) \(.pgbench.p95) \(.pgbench.p99)"
' "$OUT/summary.json" >"$OUT/plot.dat"
title="SeatFlow $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "") vs nginx vs pgbench — $(nproc) cores, $(bench_cpu_model), medians of $RUNS"
if gnuplot -e "datafile='$OUT/plot.dat'; outfile='$OUT/compare.png'; plottitle='$title'" "$BENCH_DIR/plot.gp" \
  2>"$OUT/gnuplot.log"; then
  if [ -n "$PLOT_COPY" ]; then
    mkdir -p "$(dirname "$PLOT_COPY")"
    cp "$OUT/compare.png" "$PLOT_COPY"
  fi
else
  bench_log "gnuplot failed; see $OUT/gnuplot.log"
fi

if [ "$INDEPENDENT" = 1 ]; then
  bench_log "independent gateway: bench/independent.sh (its own stack)"
  settings=()
  for ((i = 1; i < ${#BENCH_PG_SETTINGS[@]}; i += 2)); do
    settings+=(--pg-setting "${BENCH_PG_SETTINGS[i]}")
  done
  "$BENCH_DIR/independent.sh" --no-build --build-dir "$BUILD_DIR" --engine-bin "$ENGINE_BIN" \
    --runs "$RUNS" "${settings[@]}" --out "$OUT/independent" || FAILED_RUNS+=("independent")
fi

if [ "${#BENCH_PG_SETTINGS[@]}" -gt 0 ]; then
  echo "PostgreSQL settings added: ${BENCH_PG_SETTINGS[*]}" >>"$OUT/summary.md"
fi
echo
cat "$OUT/summary.md"
[ "$INDEPENDENT" = 1 ] && [ -f "$OUT/independent/summary.md" ] && { echo; cat "$OUT/independent/summary.md"; }
echo
echo "results: $OUT (summary.json, summary.md, compare.png, one JSON + table per run)"
if [ "${#FAILED_RUNS[@]}" -gt 0 ]; then
  bench_log "FAILED: ${FAILED_RUNS[*]}"
  exit 1
fi
