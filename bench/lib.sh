# shellcheck shell=bash
# Helpers shared by bench/compare.sh and bench/profile.sh: tools, a throwaway stack (PostgreSQL, Redis, engine), nginx.
# Source it after scripts/services.sh. Every wait is bounded; bench_teardown stops only what these helpers started.

BENCH_WORK=""
BENCH_PG_PORT=""
BENCH_BASE_DSN="" # the bench database, while a run uses a database of its own
BENCH_REDIS_PORT=""
BENCH_HTTP_PORT=""
BENCH_ENGINE_PID=""
BENCH_NGINX_PID=""
BENCH_NGINX_PORT=""
BENCH_HAPROXY_PID="" # HAProxy with the shipped deploy/haproxy/haproxy.cfg
BENCH_HAPROXY_PORT=""
BENCH_BILL_GATEWAY_PID="" # bench/bill_gateway.py, serving a bill
BENCH_BILL_GATEWAY_URL=""
BENCH_KEEP_WORK=0
BENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_LOAD_PID="" # a load generator running in the background, stopped by the EXIT trap
BENCH_SECRET="bench-secret-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
BENCH_WRITEBACK_RESTORE="" # "bytes N" or "ratio N": the kernel's setting bench_set_writeback replaced

bench_log() { echo "bench: $*" >&2; }
bench_die() {
  echo "bench: $*" >&2
  exit 1
}

# bench_need_value OPTION [VALUE ...] → dies unless the option is followed by a non-empty value.
bench_need_value() {
  if [ $# -lt 2 ] || [ -z "$2" ]; then
    bench_die "$1 needs a value"
  fi
}

# bench_need_tools → installs nginx-light, gnuplot-nox, jq, curl, pgbench and wrk when their commands are missing (root only).
bench_need_tools() {
  local missing=()
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
  command -v gnuplot >/dev/null 2>&1 || missing+=(gnuplot-nox)
  command -v jq >/dev/null 2>&1 || missing+=(jq)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v pgbench >/dev/null 2>&1 || missing+=(postgresql-client-15)
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  [ "${#missing[@]}" -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || bench_die "missing packages: ${missing[*]} (install them or run as root)"
  bench_log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null; } || bench_die "apt-get install ${missing[*]} failed"
}

# bench_make_work → a private work directory under /tmp that the postgres user can traverse.
bench_make_work() {
  BENCH_WORK="$(mktemp -d /tmp/seatflow-bench.XXXXXX)" || bench_die "mktemp failed"
  chmod 755 "$BENCH_WORK"
}

# bench_wait_http URL SECONDS → success once URL answers 200.
bench_wait_http() {
  local url="$1" limit="$2" i
  for ((i = 0; i < limit * 10; i++)); do
    if curl -fsS -m 1 -o /dev/null "$url" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# Extra settings of the bench's PostgreSQL ("-c" "name=value" pairs, bench_pg_setting), added after
# the defaults of sf_pg_start and bench_start_stores, so they win.
BENCH_PG_SETTINGS=()

# bench_pg_setting NAME=VALUE → adds a server setting (a script's --pg-setting); 1 with a message
# for anything but a lower-case name, '=', and a value without spaces.
bench_pg_setting() {
  if ! [[ "$1" =~ ^[a-z_][a-z0-9_.]*=[^[:space:]]+$ ]]; then
    echo "bench: a PostgreSQL setting is NAME=VALUE (got '$1')" >&2
    return 1
  fi
  BENCH_PG_SETTINGS+=(-c "$1")
}

# bench_start_stores → PostgreSQL (fsync and synchronous_commit on, then BENCH_PG_SETTINGS) and
# Redis on free loopback ports.
bench_start_stores() {
  BENCH_PG_PORT="$(sf_free_port)" || return 1
  sf_pg_start "$BENCH_WORK/pg" "$BENCH_PG_PORT" -c fsync=on -c synchronous_commit=on \
    "${BENCH_PG_SETTINGS[@]}" || return 1
  BENCH_REDIS_PORT="$(sf_free_port)" || return 1
  sf_redis_start "$BENCH_WORK/redis" "$BENCH_REDIS_PORT" ephemeral || return 1
  export SEATFLOW_PG_DSN="postgresql://postgres@127.0.0.1:$BENCH_PG_PORT/seatflow"
  export SEATFLOW_REDIS_URL="redis://127.0.0.1:$BENCH_REDIS_PORT"
  bench_set_writeback
  bench_prime_wal
}

# bench_writeback_setting → the kernel's background writeback threshold, e.g. "ratio 10" (10 % of
# the page cache) or "bytes 4194304".
bench_writeback_setting() {
  local bytes
  bytes="$(cat /proc/sys/vm/dirty_background_bytes 2>/dev/null)" || bytes=0
  if [ "${bytes:-0}" -gt 0 ]; then
    echo "bytes $bytes"
  else
    echo "ratio $(cat /proc/sys/vm/dirty_background_ratio 2>/dev/null)"
  fi
}

# bench_set_writeback → with BENCH_DIRTY_BACKGROUND_BYTES=N (unset: the host's setting untouched),
# vm.dirty_background_bytes is N while the bench runs and the previous setting is put back at
# teardown. The setting is the whole host's, hence opt-in. With the default 10 % of a large page
# cache, only the 30 s expiry writes back what PostgreSQL's relation extensions dirtied, ~100 MB at
# once, and the WAL fsyncs of that moment wait behind it (docs/BENCHMARKS.md, "WAL segments,
# compression and the kernel's writeback").
bench_set_writeback() {
  local bytes="${BENCH_DIRTY_BACKGROUND_BYTES:-}"
  [ -n "$bytes" ] || return 0
  if ! [[ "$bytes" =~ ^[0-9]+$ ]] || [ "$bytes" -lt 4096 ]; then
    bench_die "BENCH_DIRTY_BACKGROUND_BYTES must be a byte count of at least 4096, not '$bytes'"
  fi
  local before
  before="$(bench_writeback_setting)"
  if ! { echo "$bytes" >/proc/sys/vm/dirty_background_bytes; } 2>/dev/null; then
    bench_die "cannot set vm.dirty_background_bytes (needs root and a writable /proc/sys)"
  fi
  BENCH_WRITEBACK_RESTORE="$before"
  bench_log "vm.dirty_background_bytes=$bytes while the bench runs (was: $before)"
}

# bench_restore_writeback → the setting bench_set_writeback replaced, back.
bench_restore_writeback() {
  [ -n "$BENCH_WRITEBACK_RESTORE" ] || return 0
  local kind value
  read -r kind value <<<"$BENCH_WRITEBACK_RESTORE"
  if ! { echo "$value" >"/proc/sys/vm/dirty_background_$kind"; } 2>/dev/null; then
    bench_log "could not restore vm.dirty_background_$kind=$value"
  fi
  BENCH_WRITEBACK_RESTORE=""
}

# bench_prime_wal → with BENCH_PRIME_WAL_MB=N (default 0: nothing), N MB of WAL written and
# checkpointed away before any slot exists, so PostgreSQL recycles those segments as the next ones,
# as a cluster that has run for a while has them. A fresh cluster zero-fills and fsyncs each new
# segment (4 MB: SEATFLOW_PG_WAL_SEGSIZE_MB in scripts/services.sh) under the WAL write lock, which
# stalls the commits of that moment (docs/BENCHMARKS.md, "WAL segments, compression and the
# kernel's writeback").
bench_prime_wal() {
  local mb="${BENCH_PRIME_WAL_MB:-0}"
  [ "$mb" -gt 0 ] || return 0
  psql -X -q -At "$SEATFLOW_PG_DSN" -v ON_ERROR_STOP=1 \
    -c "SELECT count(pg_logical_emit_message(false, 'seatflow-bench-prime', repeat('x', 1048576)))
          FROM generate_series(1, $mb)" -c "SELECT pg_switch_wal()" -c "CHECKPOINT" >/dev/null || return 1
  bench_log "primed the WAL: $mb MB written and checkpointed; $(find "$BENCH_WORK/pg/data/pg_wal" -maxdepth 1 -name '0*' | wc -l) segment files to recycle"
}

# bench_start_engine BIN → `seatflow migrate`, then `seatflow serve` on a free port, ready when /healthz answers.
# Engine knobs (SEATFLOW_PG_POOL_SIZE, SEATFLOW_SCHEDULER_THREADS, ...) pass through from the caller's environment.
bench_start_engine() {
  local bin="$1"
  BENCH_HTTP_PORT="$(sf_free_port)" || return 1
  export SEATFLOW_CALLBACK_SECRETS="$BENCH_SECRET"
  export SEATFLOW_HTTP_ADDR="127.0.0.1:$BENCH_HTTP_PORT"
  export SEATFLOW_LOG_LEVEL="${SEATFLOW_LOG_LEVEL:-warn}"
  # The engine as deployed (prod: no mock gateway); the sweeper only adds idle transactions that blur
  # the per-callback commit count, so it is off unless the caller turns it on.
  export SEATFLOW_PROFILE="${SEATFLOW_PROFILE:-prod}"
  export SEATFLOW_SWEEPER="${SEATFLOW_SWEEPER:-off}"
  # The reconciler's scans would blur the measurements the same way.
  export SEATFLOW_RECONCILE_INTERVAL_MS="${SEATFLOW_RECONCILE_INTERVAL_MS:-0}"
  "$bin" migrate >"$BENCH_WORK/migrate.log" 2>&1 || {
    cat "$BENCH_WORK/migrate.log" >&2
    return 1
  }
  setsid "$bin" serve >"$BENCH_WORK/engine.log" 2>&1 &
  BENCH_ENGINE_PID=$!
  if ! bench_wait_http "http://127.0.0.1:$BENCH_HTTP_PORT/healthz" 15; then
    bench_log "the engine did not answer /healthz within 15 s; last lines of its log:"
    tail -n 20 "$BENCH_WORK/engine.log" >&2
    return 1
  fi
}

bench_stop_engine() {
  local pid="$BENCH_ENGINE_PID" i
  [ -n "$pid" ] || return 0
  BENCH_ENGINE_PID=""
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 150; i++)); do
    sf_alive "$pid" || break
    sleep 0.1
  done
  if sf_alive "$pid"; then
    bench_log "engine pid $pid did not stop in 15 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# bench_start_nginx WORKERS → nginx answering `return 200 "success"` on a free loopback port, own conf/pid/log dirs.
bench_start_nginx() {
  local workers="$1" dir="$BENCH_WORK/nginx" bin
  bin="$(command -v nginx || echo /usr/sbin/nginx)"
  BENCH_NGINX_PORT="$(sf_free_port)" || return 1
  install -d -m 777 "$dir" "$dir/tmp"
  cat >"$dir/nginx.conf" <<EOF
# Throwaway nginx for seatflow-bench: the HTTP ceiling of this machine.
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$BENCH_NGINX_PORT;
    location / { return 200 "success"; }
  }
}
EOF
  "$bin" -p "$dir/" -e "$dir/error.log" -c "$dir/nginx.conf" -g 'daemon off;' >"$dir/stdout.log" 2>&1 &
  BENCH_NGINX_PID=$!
  if ! bench_wait_http "http://127.0.0.1:$BENCH_NGINX_PORT/" 10; then
    bench_log "nginx did not answer within 10 s:"
    cat "$dir/stdout.log" "$dir/error.log" >&2 2>/dev/null || true
    return 1
  fi
}

bench_stop_nginx() {
  local pid="$BENCH_NGINX_PID" i
  [ -n "$pid" ] || return 0
  BENCH_NGINX_PID=""
  kill -QUIT "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    sf_alive "$pid" || break
    sleep 0.1
  done
  if sf_alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    sleep 1
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# bench_bill_day → the bill day the bill benches reconcile: two days ago (UTC), whole in every
# zone's calendar.
bench_bill_day() {
  date -u -d '2 days ago' +%Y-%m-%d
}

# bench_start_bill_gateway ROWS RUN DAY MISMATCHES → writes the hmac bill of ROWS payments of RUN
# (ids as bench/bill_seed.sql makes them; the last MISMATCHES with another amount) to
# BENCH_WORK/bill.csv and serves it signed under BENCH_SECRET (bench/bill_gateway.py) at
# BENCH_BILL_GATEWAY_URL; bench_teardown stops it.
bench_start_bill_gateway() {
  SEATFLOW_CALLBACK_SECRETS="$BENCH_SECRET" python3 "$BENCH_ROOT/bench/bill_gateway.py" \
    --rows "$1" --run "$2" --date "$3" --mismatches "$4" --secret-env SEATFLOW_CALLBACK_SECRETS \
    --csv "$BENCH_WORK/bill.csv" --port-file "$BENCH_WORK/gateway.port" \
    >"$BENCH_WORK/gateway.log" 2>&1 &
  BENCH_BILL_GATEWAY_PID=$!
  bench_wait_for_file "$BENCH_WORK/gateway.port" "$BENCH_BILL_GATEWAY_PID" 300 || return 1
  # shellcheck disable=SC2034 # read by the scripts that source this file
  BENCH_BILL_GATEWAY_URL="http://127.0.0.1:$(cat "$BENCH_WORK/gateway.port")"
}

# bench_start_haproxy ENGINE_ADDR [ENGINE_ADDR] → HAProxy with deploy/haproxy/haproxy.cfg used as
# shipped (only its addresses from the environment) on 127.0.0.1:BENCH_HAPROXY_PORT, balancing over
# the engines at ENGINE_ADDR (host:port; one engine fills both server lines); its log in
# BENCH_WORK/haproxy.log. Fails unless it passes /readyz within 20 s with no engine taken down.
bench_start_haproxy() {
  local first="$1" second="${2:-$1}"
  command -v haproxy >/dev/null 2>&1 || { bench_log "missing haproxy (apt-get install haproxy)"; return 1; }
  BENCH_HAPROXY_PORT="$(sf_free_port)" || return 1
  SEATFLOW_HAPROXY_BIND="127.0.0.1:$BENCH_HAPROXY_PORT" SEATFLOW_ENGINE_1="$first" \
    SEATFLOW_ENGINE_2="$second" \
    setsid haproxy -db -f "$BENCH_ROOT/deploy/haproxy/haproxy.cfg" >>"$BENCH_WORK/haproxy.log" 2>&1 &
  BENCH_HAPROXY_PID=$!
  bench_wait_http "http://127.0.0.1:$BENCH_HAPROXY_PORT/readyz" 20 || {
    bench_log "HAProxy did not pass /readyz within 20 s: $(tail -n 5 "$BENCH_WORK/haproxy.log")"
    return 1
  }
  # Servers start UP; their first checks (0.5 s apart) must not have taken them down.
  sleep 2
  if grep -q ' is DOWN' "$BENCH_WORK/haproxy.log"; then
    bench_log "HAProxy took an engine down at start: $(grep ' is DOWN' "$BENCH_WORK/haproxy.log" | head -n 1)"
    return 1
  fi
}

bench_stop_haproxy() {
  [ -n "$BENCH_HAPROXY_PID" ] || return 0
  kill -TERM "$BENCH_HAPROXY_PID" 2>/dev/null || true
  wait "$BENCH_HAPROXY_PID" 2>/dev/null || true
  BENCH_HAPROXY_PID=""
}

# bench_teardown → stops whatever these helpers started and removes the work directory (unless BENCH_KEEP_WORK=1).
bench_teardown() {
  sf_kill_child
  bench_stop_haproxy
  bench_stop_engine
  bench_stop_nginx
  if [ -n "$BENCH_BILL_GATEWAY_PID" ]; then
    kill "$BENCH_BILL_GATEWAY_PID" 2>/dev/null || true
    wait "$BENCH_BILL_GATEWAY_PID" 2>/dev/null || true
    BENCH_BILL_GATEWAY_PID=""
  fi
  if [ -n "$BENCH_WORK" ]; then
    [ -n "$BENCH_REDIS_PORT" ] && sf_redis_stop "$BENCH_WORK/redis" "$BENCH_REDIS_PORT"
    [ -n "$BENCH_PG_PORT" ] && sf_pg_stop "$BENCH_WORK/pg"
    if [ "$BENCH_KEEP_WORK" = 1 ]; then
      bench_log "kept $BENCH_WORK"
    else
      rm -rf "$BENCH_WORK"
    fi
    BENCH_WORK=""
  fi
  bench_restore_writeback
}

# bench_build ROOT BUILD_DIR [TARGET...] → Release build (default targets: seatflow seatflow-bench), at most 2 jobs.
bench_build() {
  local root="$1" dir="$2"
  shift 2
  local targets=("$@")
  [ "${#targets[@]}" -gt 0 ] || targets=(seatflow seatflow-bench)
  sf_configure "$dir" "$root" -DCMAKE_BUILD_TYPE=Release >/dev/null || return 1
  sf_run_killable cmake --build "$dir" -j "${SF_JOBS:-2}" --target "${targets[@]}" || return 1
}

# bench_engine_identity BIN → one line: the binary, its `version` output and the checkout's commit.
bench_engine_identity() {
  local bin="$1" version commit
  version="$("$bin" version 2>/dev/null | head -n 1)" || version="?"
  commit="$(git -C "$(dirname "$bin")" rev-parse --short HEAD 2>/dev/null || echo "not a git checkout")"
  printf '%s (%s; commit of its directory: %s)\n' "$bin" "$version" "$commit"
}

# bench_cpu_model → the CPU model from /proc/cpuinfo.
bench_cpu_model() {
  awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo
}

# bench_resolve_paths KIND → absolute BUILD_DIR, OUT (default BUILD_DIR/KIND-<time>), ENGINE_BIN (ENGINE_BIN_ARG
# when set, else BUILD_DIR/seatflow) and BENCH_BIN, from the caller's BUILD_DIR, OUT and ENGINE_BIN_ARG.
bench_resolve_paths() {
  BUILD_DIR="$(sf_abs "$BUILD_DIR")"
  OUT="$(sf_abs "${OUT:-$BUILD_DIR/$1-$(date +%Y%m%d-%H%M%S)}")"
  ENGINE_BIN="$BUILD_DIR/seatflow"
  if [ -n "${ENGINE_BIN_ARG:-}" ]; then
    ENGINE_BIN="$(sf_abs "$ENGINE_BIN_ARG")"
  fi
  BENCH_BIN="$BUILD_DIR/bench/seatflow-bench"
}

# bench_on_exit → the EXIT trap of every bench script: stops the background load, then everything started.
bench_on_exit() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$BENCH_LOAD_PID" ]; then
    kill -TERM "$BENCH_LOAD_PID" 2>/dev/null || true
    wait "$BENCH_LOAD_PID" 2>/dev/null || true
  fi
  bench_teardown
  exit "$rc"
}

bench_install_traps() {
  trap bench_on_exit EXIT
  trap 'exit 130' INT TERM
}

# bench_prepare → tools installed, a Release build unless NO_BUILD=1 (only seatflow-bench when ENGINE_BIN_ARG
# names another engine), both binaries present, OUT created.
bench_prepare() {
  bench_need_tools
  if [ "${NO_BUILD:-0}" = 0 ]; then
    bench_log "building Release in $BUILD_DIR"
    if [ -n "${ENGINE_BIN_ARG:-}" ]; then
      bench_build "$BENCH_ROOT" "$BUILD_DIR" seatflow-bench || bench_die "build failed"
    else
      bench_build "$BENCH_ROOT" "$BUILD_DIR" || bench_die "build failed"
    fi
  fi
  if [ ! -x "$ENGINE_BIN" ] || [ ! -x "$BENCH_BIN" ]; then
    bench_die "missing $ENGINE_BIN or $BENCH_BIN (build first)"
  fi
  mkdir -p "$OUT"
}

# bench_start_stack stores|engine → work directory, PostgreSQL and Redis, and with `engine` the engine too.
bench_start_stack() {
  bench_make_work
  bench_start_stores || bench_die "could not start PostgreSQL/Redis"
  if [ "$1" = engine ]; then
    bench_start_engine "$ENGINE_BIN" || bench_die "could not start the engine"
  fi
}

# bench_admin_psql ARGS... → psql as postgres on the bench PostgreSQL's `postgres` database.
bench_admin_psql() {
  psql -X -q -h 127.0.0.1 -p "$BENCH_PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}

# bench_enter_run_database DB → creates DB on the bench PostgreSQL and points SEATFLOW_PG_DSN at it,
# with an event slot of its own (slot names are per server; engines without one ignore it).
bench_enter_run_database() {
  BENCH_BASE_DSN="${BENCH_BASE_DSN:-$SEATFLOW_PG_DSN}"
  bench_admin_psql -c "CREATE DATABASE $1"
  export SEATFLOW_PG_DSN="${BENCH_BASE_DSN%/*}/$1"
  export SEATFLOW_EVENT_SLOT="${1}_events"
}

# bench_leave_run_database DB → drops DB and its event slot (a database holding a logical slot
# cannot be dropped; its engine has stopped, so the slot is no longer active), and points
# SEATFLOW_PG_DSN back at the bench database.
bench_leave_run_database() {
  bench_admin_psql -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
    WHERE database = '$1' AND NOT active" >/dev/null
  bench_admin_psql -c "DROP DATABASE $1 WITH (FORCE)"
  export SEATFLOW_PG_DSN="$BENCH_BASE_DSN"
  unset SEATFLOW_EVENT_SLOT
}

# bench_median → the median of the numbers on stdin, one per line (the lower one of an even count).
bench_median() {
  sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# bench_cpu_medians FILE... → "component median" lines over several runs' bench_cpu_per_callback
# files, one per component, by name.
bench_cpu_medians() {
  local part
  cat "$@" | awk '{ print $1 }' | sort -u | while read -r part; do
    echo "$part $(cat "$@" | awk -v p="$part" '$1 == p { print $2 }' | bench_median)"
  done
}

# bench_commit_summary METRICS_FILE [BEFORE_FILE] → "name value" lines from an engine's /metrics
# text about its group commit since it started, or since BEFORE_FILE (an earlier scrape of the same
# engine) when given: the transactions, their mean callbacks and duration (ms), the share of them
# over 25 ms (%), and a callback's mean wait in the batcher's queue (ms); nothing for what the
# engine has not observed.
bench_commit_summary() {
  awk -v before="${2:-}" '
    { s = (before != "" && FILENAME == before) ? -1 : 1 }
    $1 == "seatflow_commit_batch_callbacks_count" { batches += s * $2 }
    $1 == "seatflow_commit_batch_callbacks_sum" { callbacks += s * $2 }
    $1 == "seatflow_commit_batch_duration_seconds_count" { done += s * $2 }
    $1 == "seatflow_commit_batch_duration_seconds_sum" { seconds += s * $2 }
    $1 == "seatflow_commit_batch_duration_seconds_bucket{le=\"0.025\"}" { quick += s * $2 }
    $1 == "seatflow_commit_queue_wait_seconds_count" { waits += s * $2 }
    $1 == "seatflow_commit_queue_wait_seconds_sum" { waited += s * $2 }
    END {
      if (batches > 0) {
        printf "transactions %d\n", batches
        printf "callbacks_per_transaction %.1f\n", callbacks / batches
      }
      if (done > 0) {
        printf "transaction_ms %.2f\n", seconds * 1000 / done
        printf "transactions_over_25ms_pct %.2f\n", (done - quick) * 100 / done
      }
      if (waits > 0) printf "queue_wait_ms %.2f\n", waited * 1000 / waits
    }' ${2:+"$2"} "$1"
}

# bench_pgbench OUT RUN CLIENTS PER_CLIENT TIMEOUT_S → one pgbench run of the seed design's
# transaction (bench/pgbench_callback.sql, -M prepared) on the bench PostgreSQL's `seatflow`
# database, fresh payments each run; writes OUT/pgbench-RUN.{txt,json}; fails when pgbench failed
# or not every payment moved.
# An optional sixth argument names the transaction script (default bench/pgbench_callback.sql).
bench_pgbench() {
  local out="$1" run="$2" clients="$3" per_client="$4" timeout_s="$5"
  local script="${6:-$BENCH_ROOT/bench/pgbench_callback.sql}"
  local pg_psql=(psql -X -q -h 127.0.0.1 -p "$BENCH_PG_PORT" -U postgres -d seatflow -v ON_ERROR_STOP=1)
  local total=$((clients * per_client)) tag moved tps
  tag="g$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
  "${pg_psql[@]}" -v run="$tag" -v n="$total" -f "$BENCH_ROOT/bench/pgbench_seed.sql" >"$out/pgbench-$run.seed.log" 2>&1 || {
    bench_log "pgbench seeding failed; see $out/pgbench-$run.seed.log"
    return 1
  }
  mkdir -p "$out/pgbench-$run.log.d"
  (cd "$out/pgbench-$run.log.d" && sf_run_killable timeout "$timeout_s" pgbench -n -h 127.0.0.1 -p "$BENCH_PG_PORT" -U postgres \
    -M prepared -c "$clients" -j 2 -t "$per_client" -l -D k=0 -D per_client="$per_client" -D run="$tag" \
    -f "$script" seatflow) >"$out/pgbench-$run.txt" 2>&1 || {
    bench_log "pgbench failed; see $out/pgbench-$run.txt"
    return 1
  }
  moved="$("${pg_psql[@]}" -tAc "SELECT count(*) FROM payment_order WHERE payment_no LIKE 'P$tag-%' AND status = 1")"
  tps="$(awk '/^tps = / { print $3; exit }' "$out/pgbench-$run.txt")"
  # Per-transaction latencies (µs, 3rd column of pgbench -l) → percentiles in ms.
  cat "$out/pgbench-$run.log.d"/pgbench_log.* | awk '{ print $3 }' | sort -n | awk -v tps="$tps" -v moved="$moved" \
    -v want="$total" '{ v[NR] = $1 } END {
      split("50 95 99", q, " ");
      printf "{\"tps\": %s, \"payments_moved\": %d, \"transactions\": %d", tps, moved, want;
      for (i = 1; i <= 3; i++) { r = int(q[i] / 100 * NR + 0.999999); if (r < 1) r = 1; printf ", \"p%s\": %.3f", q[i], v[r] / 1000 }
      printf ", \"max\": %.3f}\n", v[NR] / 1000 }' >"$out/pgbench-$run.json"
  rm -rf "$out/pgbench-$run.log.d"
  jq -r --arg n "pgbench-$run" '"  \($n): \(.tps | floor) tps, p50 \(.p50) ms, p99 \(.p99) ms, moved \(.payments_moved)"' \
    "$out/pgbench-$run.json" >&2
  [ "$moved" = "$total" ] || {
    bench_log "pgbench-$run moved $moved of $total payments"
    return 1
  }
}

# bench_proc_ticks PID [children] → utime+stime of one process in ticks (plus cutime+cstime, its
# reaped children's, with "children"); nothing when it is gone. comm may hold spaces: the fields
# are counted after the closing parenthesis.
bench_proc_ticks() {
  awk -v children="${2:-}" '{ sub(/^.*\) /, ""); print $12 + $13 + (children != "" ? $14 + $15 : 0) }' \
    "/proc/$1/stat" 2>/dev/null || true
}

# bench_parse_commandstats → "redis_calls:CMD N" and "redis_usec:CMD N" lines from the text of
# Redis's INFO commandstats on stdin: each command's calls and µs so far. Redis counts the commands a
# script runs under their own names as well as inside the script's time.
bench_parse_commandstats() {
  awk -F '[:,=]' '/^cmdstat_/ {
    sub(/\r$/, "")
    name = substr($1, 9)
    for (i = 2; i < NF; i += 2) v[$i] = $(i + 1)
    printf "redis_calls:%s %s\nredis_usec:%s %s\n", name, v["calls"], name, v["usec"]
  }'
}

# bench_cpu_snapshot FILE [no-commits] → the CPU ticks used so far (utime+stime, /proc/PID/stat
# fields 14-15) of the engine's threads grouped by thread name (engine:<name>), of the whole
# PostgreSQL cluster (the postmaster, its live children, and its reaped children through
# cutime+cstime) with its parts by process role (pg:<role>, not added again: the backends serving
# queries, the walsender decoding the event slot, the WAL writer, and the rest: checkpointer,
# background writer, autovacuum, the exited children the postmaster reaped), and of Redis, one
# "component ticks" line each; then, unless "no-commits", one psql call for the cluster's commits
# (pg_commits), the WAL written so far (pg_wal_bytes: the insert position in bytes, exact) and the
# full-page images in it (pg_wal_fpi: pg_stat_wal, which a backend updates when it goes idle, at
# most ~1 s late), and one redis-cli call for Redis's commands (bench_parse_commandstats).
# Ticks are 1/CLK_TCK s. Beside each tick line, "switches:<component> N": the context switches
# so far (voluntary and not, /proc/…/status) of the same threads and processes (the cluster's live
# ones only: a reaped child's switches are not kept), which count how often they went to sleep and
# were woken. The ticks are read by one awk process (a few ms), so that a snapshot taken as a load
# starts or ends does not move the window it marks.
bench_cpu_snapshot() {
  local file="$1" pm rpid tasks=() procs=()
  pm="$(head -n 1 "$BENCH_WORK/pg/data/postmaster.pid" 2>/dev/null || true)"
  rpid="$(cat "$BENCH_WORK/redis/redis.pid" 2>/dev/null || true)"
  if [ -n "$BENCH_ENGINE_PID" ]; then
    tasks=(/proc/"$BENCH_ENGINE_PID"/task/*/stat)
  fi
  if [ -n "$pm" ]; then
    procs=(/proc/[0-9]*/stat)
  fi
  # shellcheck disable=SC2016
  awk -v ntasks="${#tasks[@]}" -v pm="$pm" -v rpid="$rpid" '
    # Reads one stat file: sets comm, ppid and ticks (utime+stime; plus cutime+cstime when
    # `children`); 0 when the process is gone.
    function read_stat(path, children,   line, f, open_at, close_at) {
      if ((getline line < path) <= 0) { close(path); return 0 }
      close(path)
      open_at = index(line, "(")
      close_at = open_at
      while (match(substr(line, close_at + 1), /\) /)) { close_at += RSTART }
      comm = substr(line, open_at + 1, close_at - open_at - 1)
      split(substr(line, close_at + 2), f, " ")
      ppid = f[2]
      ticks = f[12] + f[13] + (children ? f[14] + f[15] : 0)
      return 1
    }
    # The context switches of the thread or process whose stat file is `path` (its status file).
    function switches_of(path,   line, w, n) {
      sub(/stat$/, "status", path)
      n = 0
      while ((getline line < path) > 0) {
        if (line ~ /^(nonvoluntary|voluntary)_ctxt_switches:/) { split(line, w, /[ \t]+/); n += w[2] }
      }
      close(path)
      return n
    }
    # A backend sets its title ("postgres: walsender …", "postgres: user db host idle") as one
    # string in its command line.
    function role_of(pid,   path, title, w, n) {
      path = "/proc/" pid "/cmdline"
      title = ""
      getline title < path
      close(path)
      n = split(title, w, " ")
      if (w[2] == "walsender") return "walsender"
      if (w[2] == "walwriter") return "walwriter"
      if (n >= 4 && w[2] !~ /^(checkpointer|background|autovacuum|logical|archiver|stats)/) return "backends"
      return "other"
    }
    BEGIN {
      for (i = 1; i <= ntasks; i++) {
        if (!read_stat(ARGV[i], 0)) continue
        name = comm
        sub(/[-.:]?[0-9]+$/, "", name)
        threads[name] += ticks
        woken[name] += switches_of(ARGV[i])
      }
      for (name in threads) printf "engine:%s %d\nswitches:engine:%s %d\n", name, threads[name], name, woken[name]
      if (pm != "") {
        if (read_stat("/proc/" pm "/stat", 1)) {
          total += ticks
          roles["other"] += ticks
          role_switches["other"] += switches_of("/proc/" pm "/stat")
        }
        for (i = ntasks + 1; i < ARGC; i++) {
          if (!read_stat(ARGV[i], 0) || ppid != pm) continue
          pid = ARGV[i]
          gsub(/[^0-9]/, "", pid)
          total += ticks
          role = role_of(pid)
          roles[role] += ticks
          role_switches[role] += switches_of(ARGV[i])
        }
        printf "postgresql %d\n", total
        for (r in roles) printf "pg:%s %d\nswitches:pg:%s %d\n", r, roles[r], r, role_switches[r]
      }
      if (rpid != "" && read_stat("/proc/" rpid "/stat", 0)) {
        printf "redis %d\nswitches:redis %d\n", ticks, switches_of("/proc/" rpid "/stat")
      }
    }' "${tasks[@]}" "${procs[@]}" >"$file" 2>/dev/null || true
  if [ "${2:-}" != no-commits ] && [ -n "$BENCH_PG_PORT" ]; then
    psql -X -q -At -h 127.0.0.1 -p "$BENCH_PG_PORT" -U postgres -d postgres \
      -c "SELECT 'pg_commits ' || sum(xact_commit) FROM pg_stat_database
          UNION ALL SELECT 'pg_wal_bytes ' || (pg_current_wal_lsn() - '0/0')
          UNION ALL SELECT 'pg_wal_fpi ' || wal_fpi FROM pg_stat_wal" >>"$file" 2>/dev/null || true
  fi
  if [ "${2:-}" != no-commits ] && [ -n "$BENCH_REDIS_PORT" ]; then
    redis-cli -h 127.0.0.1 -p "$BENCH_REDIS_PORT" INFO commandstats 2>/dev/null |
      bench_parse_commandstats >>"$file" || true
  fi
}

# bench_enable_statements → the server settings that make pg_stat_statements count the statements
# of a run (utility statements such as BEGIN and COMMIT left out); before bench_start_stores.
bench_enable_statements() {
  bench_pg_setting shared_preload_libraries=pg_stat_statements &&
    bench_pg_setting pg_stat_statements.max=1000 &&
    bench_pg_setting pg_stat_statements.track_utility=off
}

# bench_statements_reset DSN → pg_stat_statements created in DSN's database and its counters zeroed.
bench_statements_reset() {
  psql -X -q -At "$1" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
    -c "SELECT pg_stat_statements_reset()" >/dev/null
}

# bench_statements DSN CALLBACKS → the statements of the most execution time since the reset, one
# tab-separated line each: execution µs per callback, WAL bytes per callback, full-page images per
# callback, calls, rows, and the statement's first 100 characters (whitespace squeezed).
bench_statements() {
  local n="$2"
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || return 1
  psql -X -q -At -F $'\t' "$1" -c "SELECT round((total_exec_time * 1000 / $n)::numeric, 1),
      round(wal_bytes / $n), round(wal_fpi::numeric / $n, 3), calls, rows,
      left(regexp_replace(query, '\s+', ' ', 'g'), 100)
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time DESC LIMIT 8"
}

# bench_statement_medians FILE... → bench_statements lines merged over runs: for each statement
# (by its text), the median of each figure, in the order of the first file.
bench_statement_medians() {
  awk -F '\t' '
    function median(list,   v, n, i, j, t) {
      n = split(list, v, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      return v[int((n + 1) / 2)]
    }
    NF >= 6 {
      if (!($6 in seen)) { seen[$6] = 1; order[++count] = $6 }
      for (k = 1; k <= 5; k++) values[$6, k] = values[$6, k] " " $k
    }
    END {
      for (i = 1; i <= count; i++) {
        q = order[i]
        printf "%s\t%s\t%s\t%s\t%s\t%s\n", median(values[q, 1]), median(values[q, 2]),
          median(values[q, 3]), median(values[q, 4]), median(values[q, 5]), q
      }
    }' "$@"
}

# bench_wait_for_file FILE PID TIMEOUT_S → 0 once FILE exists; 1 when PID has exited or TIMEOUT_S
# passed first. Polls every 10 ms.
bench_wait_for_file() {
  local file="$1" pid="$2" i
  for ((i = 0; i < $3 * 100; i++)); do
    [ -e "$file" ] && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}

# bench_cpu_per_callback BEFORE AFTER CALLBACKS [LOADGEN_SECONDS] → "component us" lines: CPU
# microseconds per callback of each component between two snapshots, the engine's total, the
# load generator's (its user+sys seconds, when given) and engine+postgresql+redis, and the
# PostgreSQL commits per callback (pg_stat_database, every database: the engine's own included),
# the WAL bytes and full-page images per callback, and each Redis command's calls and µs inside
# Redis per callback (redis_calls:CMD, redis_usec:CMD; commands at 0.001 calls per callback or
# fewer, such as the snapshots' own INFO, left out), when the snapshots have them; and the context
# switches per callback (switches:<component>, 2 decimals; an engine thread's at 0.01 or more
# only; switches:engine, the engine's threads together), when the snapshots have them.
bench_cpu_per_callback() {
  local hz
  hz="$(getconf CLK_TCK)"
  awk -v n="$3" -v hz="$hz" -v gen="${4:-}" '
    FNR == NR { before[$1] = $2; next }
    $1 == "pg_commits" { printf "pg_commits_per_callback %.3f\n", ($2 - before[$1]) / n; next }
    $1 == "pg_wal_bytes" { printf "pg_wal_bytes_per_callback %.0f\n", ($2 - before[$1]) / n; next }
    $1 == "pg_wal_fpi" { printf "pg_wal_fpi_per_callback %.3f\n", ($2 - before[$1]) / n; next }
    $1 ~ /^redis_calls:/ { c = $1; sub(/^redis_calls:/, "", c); calls[c] = $2 - before[$1]; next }
    $1 ~ /^redis_usec:/ { c = $1; sub(/^redis_usec:/, "", c); usec[c] = $2 - before[$1]; next }
    $1 ~ /^switches:/ { w = ($2 - before[$1]) / n
      if ($1 ~ /^switches:engine:/) { woken += w; if (w < 0.01) next }
      printf "%s %.2f\n", $1, w; next }
    { d = $2 - before[$1]; us = d * 1e6 / hz / n
      if ($1 ~ /^engine:/) { engine += us; if (us >= 0.5) printf "%s %.1f\n", $1, us }
      else if ($1 ~ /^pg:/) printf "%s %.1f\n", $1, us
      else { printf "%s %.1f\n", $1, us; stores += us } }
    END { for (c in calls) if (calls[c] / n > 0.001) {
            printf "redis_calls:%s %.3f\nredis_usec:%s %.2f\n", c, calls[c] / n, c, usec[c] / n
          }
          printf "engine %.1f\n", engine
          if (woken != "") printf "switches:engine %.2f\n", woken
          if (gen != "") printf "loadgen %.1f\n", gen * 1e6 / n
          printf "engine+postgresql+redis %.1f\n", engine + stores }' "$1" "$2"
}
