#!/usr/bin/env bash
# `storm` as a user measures it: an independent load generator (wrk, two threads, keep-alive
# connections) sends the same pre-signed hmac callbacks of --payments payments over and over for
# --duration-s, against SeatFlow and against nginx answering `return 200` (the HTTP ceiling of
# this machine), with the same wrk script, interleaved, fresh engine and database per run. Prints
# medians, the ratio, PostgreSQL commits and Redis commands per duplicate, and CPU µs per request.
# Bounded: each wrk run lasts --duration-s; everything started is stopped.
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
usage: bench/storm.sh [options]
  --runs N            runs per target, interleaved; medians (default 3)
  --payments N        distinct callbacks the storm repeats (default 1000)
  --duration-s S      length of one wrk run (default 8)
  --connections C     wrk connections (default 64)
  --nginx-workers N   nginx worker processes (default 1)
  --build-dir DIR     build directory (default build); --no-build uses it as is
  --engine NAME=PATH  measure several binaries side by side, runs interleaved (repeatable; default
                      this=BUILD_DIR/seatflow)
  --out DIR           results (default BUILD_DIR/storm-<time>)
  --perf              also sample each engine's first run with perf (call graphs): OUT/NAME.perf.txt
USAGE
}

RUNS=3
PAYMENTS=1000
DURATION_S=8
CONNECTIONS=64
NGINX_WORKERS=1
BUILD_DIR="$ROOT/build"
NO_BUILD=0
ENGINES=()
OUT=""
PERF=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) bench_need_value "$@"; RUNS="$2"; shift ;;
    --payments) bench_need_value "$@"; PAYMENTS="$2"; shift ;;
    --duration-s) bench_need_value "$@"; DURATION_S="$2"; shift ;;
    --connections) bench_need_value "$@"; CONNECTIONS="$2"; shift ;;
    --nginx-workers) bench_need_value "$@"; NGINX_WORKERS="$2"; shift ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    --engine) bench_need_value "$@"; ENGINES+=("$2"); shift ;;
    --out) bench_need_value "$@"; OUT="$2"; shift ;;
    --perf) PERF=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown argument $1" ;;
  esac
  shift
done
for n in "$RUNS" "$PAYMENTS" "$DURATION_S" "$CONNECTIONS" "$NGINX_WORKERS"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || bench_die "sizes must be positive integers (got '$n')"
done
[ "$RUNS" -le 9 ] || bench_die "--runs is at most 9"
[ "$DURATION_S" -le 120 ] || bench_die "--duration-s is at most 120"

bench_resolve_paths storm
bench_install_traps
bench_prepare
[ "${#ENGINES[@]}" -gt 0 ] || ENGINES=("this=$ENGINE_BIN")
bench_make_work
bench_start_stores || bench_die "could not start PostgreSQL/Redis"
redis_commands() {
  redis-cli -h 127.0.0.1 -p "$BENCH_REDIS_PORT" INFO stats | tr -d '\r' |
    awk -F: '$1 == "total_commands_processed" { print $2 }'
}

# run_wrk TAG URL BODIES → wrk over URL cycling through BODIES; OUT/TAG.txt holds its output,
# OUT/TAG.wrkcpu its user+sys seconds.
run_wrk() {
  local tag="$1" url="$2" bodies="$3" TIMEFORMAT='%U %S' cpu
  cpu="$({ time wrk -t2 -c"$CONNECTIONS" -d"${DURATION_S}s" --timeout 10s -s "$BENCH_DIR/unique.lua" \
    "$url" -- "$bodies" 2 >"$OUT/$tag.txt" 2>&1; } 2>&1)" || bench_die "wrk failed; see $OUT/$tag.txt"
  awk '{ print $1 + $2 }' <<<"$cpu" >"$OUT/$tag.wrkcpu"
}

# rate_of TAG → "answers_per_s acked other p99_ms" from wrk's output.
rate_of() {
  awk '/^acked/ { a = $2 } /^other_answers/ { o = $2 } /^duration_us/ { us = $2 }
    /^latency_p99_us/ { p = $2 }
    END { printf "%.0f %d %d %.2f\n", (a + o) / (us / 1e6), a, o, p / 1000 }' "$OUT/$1.txt"
}

# run_engine NAME=PATH RUN → a fresh database and engine; PAYMENTS callbacks signed, then wrk
# repeats them for DURATION_S. OUT/NAME-RUN.result: rate acked other p99 commits/dup redis/dup.
run_engine() {
  local name="${1%%=*}" bin run="$2" db="sf_storm_$2" bodies="$BENCH_WORK/bodies-$2.txt"
  bin="$(sf_abs "${1#*=}")"
  local tag="$name-$run"
  bench_enter_run_database "$db"
  bench_start_engine "$bin" || bench_die "could not start the engine"
  "$BENCH_BIN" --scenario unique --payments "$PAYMENTS" --pg-dsn "$SEATFLOW_PG_DSN" \
    --redis-url "$SEATFLOW_REDIS_URL" --secret "$BENCH_SECRET" --shuffle-seed "$run" \
    --write-bodies "$bodies" >"$OUT/$tag.seed.txt" 2>&1 || bench_die "seeding failed; see $OUT/$tag.seed.txt"
  local commits_before redis_before
  commits_before="$(bench_admin_psql -At -c "SELECT sum(xact_commit) FROM pg_stat_database")"
  redis_before="$(redis_commands)"
  bench_cpu_snapshot "$OUT/$tag.cpu-before"
  local perf_pid=""
  if [ "$PERF" = 1 ] && [ "$run" = 1 ]; then
    perf record -q -g -o "$OUT/$name.perf.data" -p "$BENCH_ENGINE_PID" -- sleep "$DURATION_S" \
      >/dev/null 2>&1 &
    perf_pid=$!
  fi
  run_wrk "$tag" "http://127.0.0.1:$BENCH_HTTP_PORT" "$bodies"
  bench_cpu_snapshot "$OUT/$tag.cpu-after"
  if [ -n "$perf_pid" ]; then
    wait "$perf_pid" || true
    perf report -i "$OUT/$name.perf.data" --no-children --percent-limit 0.5 --stdio -g none \
      >"$OUT/$name.perf.txt" 2>/dev/null || true
  fi
  # The counters are read after the duplicate flush had its interval to run (as compare.sh does).
  sleep 1.5
  local commits redis
  commits="$(bench_admin_psql -At -c "SELECT sum(xact_commit) FROM pg_stat_database")"
  redis="$(redis_commands)"
  bench_stop_engine
  cp "$BENCH_WORK/engine.log" "$OUT/$tag.engine.log" 2>/dev/null || true
  cp "$BENCH_WORK/pg/log" "$OUT/postgresql.log" 2>/dev/null || true
  local applied
  applied="$(psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT count(*) FROM payment_order WHERE status = 1")"
  read -r rate acked other p99 <<<"$(rate_of "$tag")"
  [ "$applied" = "$PAYMENTS" ] || bench_die "$tag: $applied of $PAYMENTS payments applied"
  # A first delivery may be answered 503 (overload, a commit past its deadline): wrk sends the same
  # body again later, as a gateway would, so it is counted, not fatal; every payment must be applied.
  local dups=$((acked - PAYMENTS))
  awk -v r="$rate" -v a="$acked" -v o="$other" -v p="$p99" -v c="$((commits - commits_before))" \
    -v x="$((redis - redis_before))" -v d="$dups" \
    'BEGIN { printf "%s %s %s %s %.4f %.4f\n", r, a, o, p, c / d, x / d }' >"$OUT/$tag.result"
  bench_cpu_per_callback "$OUT/$tag.cpu-before" "$OUT/$tag.cpu-after" "$acked" \
    "$(cat "$OUT/$tag.wrkcpu")" >"$OUT/$tag.cpu"
  bench_log "$name run $run: $rate answers/s (acked $acked, other $other, p99 $p99 ms; per duplicate: PG commits $(cut -d' ' -f5 "$OUT/$tag.result"), Redis commands $(cut -d' ' -f6 "$OUT/$tag.result"))"
  bench_leave_run_database "$db"
}

# run_nginx RUN → the same wrk script and bodies against nginx.
run_nginx() {
  local run="$1" bodies="$BENCH_WORK/nginx-bodies.txt"
  [ -f "$bodies" ] || "$BENCH_BIN" --scenario unique --payments "$PAYMENTS" --no-seed \
    --secret "$BENCH_SECRET" --write-bodies "$bodies" >"$OUT/nginx-seed.txt" 2>&1 ||
    bench_die "writing bodies failed; see $OUT/nginx-seed.txt"
  bench_cpu_snapshot "$OUT/nginx-$run.cpu-before"
  run_wrk "nginx-$run" "http://127.0.0.1:$BENCH_NGINX_PORT" "$bodies"
  read -r rate acked other p99 <<<"$(rate_of "nginx-$run")"
  echo "$rate $acked $other $p99 0 0" >"$OUT/nginx-$run.result"
  bench_log "nginx run $run: $rate answers/s (p99 $p99 ms)"
}

bench_start_nginx "$NGINX_WORKERS" || bench_die "could not start nginx"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
for ((run = 1; run <= RUNS; run++)); do
  for engine in "${ENGINES[@]}"; do
    run_engine "$engine" "$run"
  done
  run_nginx "$run"
done

col_median() { cat "$OUT/$1"-[0-9]*.result | awk -v c="$2" '{ print $c }' | bench_median; }
nginx_rate="$(col_median nginx 1)"
{
  echo "machine: $(nproc) cores, $(bench_cpu_model); load before $LOAD_BEFORE, after $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "storm: $PAYMENTS hmac callbacks repeated by wrk -t2 -c$CONNECTIONS -d${DURATION_S}s (bench/unique.lua); nginx $NGINX_WORKERS worker(s) answering return 200; medians of $RUNS"
  echo
  echo "| target | answers/s (runs) | p99 ms | not 200 | vs nginx | PG commits / duplicate | Redis commands / duplicate |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  for engine in "${ENGINES[@]}"; do
    name="${engine%%=*}"
    m="$(col_median "$name" 1)"
    echo "| $name | $m ($(awk '{ printf "%s ", $1 }' "$OUT/$name"-[0-9]*.result)) | $(col_median "$name" 4) | $(col_median "$name" 3) | $(awk -v a="$m" -v b="$nginx_rate" 'BEGIN { printf "%.2f", a / b }') | $(col_median "$name" 5) | $(col_median "$name" 6) |"
  done
  echo "| nginx | $nginx_rate ($(awk '{ printf "%s ", $1 }' "$OUT"/nginx-[0-9]*.result)) | $(col_median nginx 4) | $(col_median nginx 3) | 1 | – | – |"
  echo
  echo "CPU µs per answer (medians): engine threads by name, PostgreSQL, Redis, wrk"
  for engine in "${ENGINES[@]}"; do
    name="${engine%%=*}"
    printf '%s:' "$name"
    bench_cpu_medians "$OUT/$name"-[0-9]*.cpu | awk '$1 !~ /^(redis_|switches:)/ { printf " %s=%s", $1, $2 }'
    echo
  done
  echo "Context switches per answer (medians; /proc/…/status): engine threads by name (0.01 or more), their total, PostgreSQL's processes by role, Redis"
  for engine in "${ENGINES[@]}"; do
    name="${engine%%=*}"
    printf '%s:' "$name"
    # shellcheck disable=SC2016 # an awk program
    bench_cpu_medians "$OUT/$name"-[0-9]*.cpu |
      awk '$1 ~ /^switches:/ { c = $1; sub(/^switches:/, "", c); printf " %s=%s", c, $2 }'
    echo
  done
} | tee "$OUT/summary.md"
echo "results: $OUT"
