# shellcheck shell=bash
# Helpers shared by run.sh and test.sh: free ports, a private PostgreSQL and Redis on loopback, the CMake build.
# Source it; every function returns non-zero with one "seatflow: ..." line on stderr when it fails. Waits are bounded.

SF_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SF_PG_BIN="${SF_PG_BIN:-/usr/lib/postgresql/15/bin}"

sf_err() { echo "seatflow: $*" >&2; }

# sf_renamed_setting OLD NEW → a script setting renamed to carry its unit keeps its old name: when
# OLD is set, one line on stderr in the engine's words (app/setting_names.cpp), and NEW takes OLD's
# value unless NEW is set too, in which case NEW wins and the line says so. Call it once per script.
sf_renamed_setting() {
  local old="$1" new="$2"
  [ -n "${!old:-}" ] || return 0
  if [ -n "${!new:-}" ]; then
    echo "seatflow: configuration warning: $old is the old name of $new; both are set and $new wins ($old is ignored)" >&2
    return 0
  fi
  echo "seatflow: configuration warning: $old is the old name of $new; it still works, but set $new instead" >&2
  printf -v "$new" '%s' "${!old}"
}

# sf_abs PATH → PATH made absolute (the directory part must exist).
sf_abs() {
  local p="$1"
  case "$p" in
    /*) printf '%s\n' "$p" ;;
    *) printf '%s/%s\n' "$(pwd)" "${p#./}" ;;
  esac
}

# sf_alive PID → success while PID runs (a zombie waiting to be reaped by init counts as gone).
sf_alive() {
  local stat
  kill -0 "$1" 2>/dev/null || return 1
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat:0:1}" != Z ]
}

# sf_group_alive PGID → success while a process of group PGID runs (zombies do not count).
sf_group_alive() {
  ps -eo pgid=,stat= 2>/dev/null | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
}

# sf_port_in_use PORT → success when something listens on TCP PORT (any address) or accepts on 127.0.0.1:PORT.
sf_port_in_use() {
  local port="$1"
  if command -v ss >/dev/null 2>&1; then
    [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && return 0
  fi
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
}

# sf_free_port → prints a TCP port that nothing listens on and that 127.0.0.1 can bind now.
# Picks below the kernel's ephemeral range so outgoing connections do not take it back.
sf_free_port() {
  local py port i
  py="$(command -v python3 || true)"
  if [ -n "$py" ]; then
    port="$("$py" - <<'EOF' 2>/dev/null
import random, socket
for _ in range(200):
    p = random.randint(20000, 32000)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
EOF
)" || port=""
    if [ -n "$port" ] && ! sf_port_in_use "$port"; then
      printf '%s\n' "$port"
      return 0
    fi
  fi
  for ((i = 0; i < 200; i++)); do
    port=$((20000 + RANDOM % 12000))
    if ! sf_port_in_use "$port"; then
      printf '%s\n' "$port"
      return 0
    fi
  done
  sf_err "no free TCP port found in 20000-32000"
  return 1
}

# Runs a PostgreSQL tool as the postgres user (initdb refuses root) from a directory it may enter;
# a non-root caller runs it as itself.
sf_pg_as_postgres() {
  local tool="$1"
  shift
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$SF_PG_BIN/$tool" "$@")
  else
    (cd / && "$SF_PG_BIN/$tool" "$@")
  fi
}

# sf_pg_running DIR → success when the PostgreSQL cluster in DIR/data is running.
sf_pg_running() {
  local dir
  dir="$(sf_abs "$1")"
  [ -f "$dir/data/postmaster.pid" ] || return 1
  sf_pg_as_postgres pg_ctl -D "$dir/data" status >/dev/null 2>&1
}

# sf_pg_start DIR PORT [-c name=value ...] → a PostgreSQL 15 cluster in DIR/data on 127.0.0.1:PORT
# with its socket in DIR and log in DIR/log, and a database "seatflow". Extra arguments go to postgres.
sf_pg_start() {
  if [ $# -lt 2 ]; then
    sf_err "usage: sf_pg_start DIR PORT [-c name=value ...]"
    return 2
  fi
  local dir port log
  dir="$(sf_abs "$1")"
  port="$2"
  shift 2
  log="$dir/log"

  if [ ! -x "$SF_PG_BIN/pg_ctl" ]; then
    sf_err "PostgreSQL binaries not found in $SF_PG_BIN (run scripts/deps.sh)"
    return 1
  fi
  if [ "$(id -u)" -eq 0 ]; then
    if ! install -d -o postgres -g postgres -m 700 "$dir"; then
      sf_err "cannot create $dir for PostgreSQL"
      return 1
    fi
    if ! runuser -u postgres -- test -w "$dir" -a -x "$dir"; then
      sf_err "user postgres cannot write $dir (a parent directory is not searchable by others)"
      return 1
    fi
  elif ! install -d -m 700 "$dir"; then
    sf_err "cannot create $dir for PostgreSQL"
    return 1
  fi

  if sf_pg_running "$dir"; then
    sf_err "a PostgreSQL is already running in $dir/data; stop it first (sf_pg_stop $dir)"
    return 1
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    if [ -e "$dir/data" ]; then
      # A half-made data directory from an interrupted initdb: start over.
      rm -rf "$dir/data"
    fi
    # WAL segments of SEATFLOW_PG_WAL_SEGSIZE_MB (default 4, PostgreSQL's own is 16): a backend
    # crossing into a segment no checkpoint has recycled yet zero-fills and fsyncs it under the WAL
    # write lock, and every commit of that moment waits. 16 MB stalled them 40-150 ms on this
    # machine kind, which decided the half-rate p99 (docs/BENCHMARKS.md, "WAL segments, compression
    # and the kernel's writeback"). Fixed at initdb: an existing cluster keeps the size it was made
    # with.
    local segsize="${SEATFLOW_PG_WAL_SEGSIZE_MB:-4}"
    case "$segsize" in
      1 | 2 | 4 | 8 | 16 | 32 | 64 | 128 | 256 | 512 | 1024) ;;
      *)
        sf_err "SEATFLOW_PG_WAL_SEGSIZE_MB=$segsize: a power of two from 1 to 1024 (MB)"
        return 2
        ;;
    esac
    if ! sf_pg_as_postgres initdb -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
      --wal-segsize="$segsize" >"$dir/initdb.log" 2>&1; then
      sf_err "initdb failed in $dir/data:"
      tail -n 20 "$dir/initdb.log" >&2
      return 1
    fi
  fi

  # Settings for a development box; the caller's -c options come later and win.
  local opts="-p $port -k $dir -c listen_addresses=127.0.0.1"
  opts+=" -c fsync=on -c synchronous_commit=on -c max_connections=200 -c shared_buffers=256MB"
  # The payment-event outbox is read from the WAL through a logical replication slot
  # (docs/ARCHITECTURE.md, "Payment events"); max_slot_wal_keep_size=-1 keeps every WAL segment
  # the slot still needs, so no event is ever dropped.
  opts+=" -c wal_level=logical -c max_replication_slots=20 -c max_wal_senders=10"
  opts+=" -c max_slot_wal_keep_size=-1"
  # Full-page images, compressed: ~55 % of the WAL a callback writes on a freshly checkpointed
  # 200k-payment load is page images; lz4 takes the WAL from ~3.7 to ~2.2 kB per callback at no
  # measured CPU or latency cost (docs/BENCHMARKS.md, "WAL segments, compression and the kernel's
  # writeback").
  opts+=" -c wal_compression=lz4"
  if [ $# -gt 0 ]; then
    opts+=" $*"
  fi
  if ! sf_pg_as_postgres pg_ctl -D "$dir/data" -l "$log" -w -t 60 -o "$opts" start >/dev/null 2>&1; then
    sf_err "PostgreSQL failed to start on 127.0.0.1:$port (data $dir/data); last lines of $log:"
    tail -n 20 "$log" >&2 2>/dev/null || true
    return 1
  fi

  local psql=("$SF_PG_BIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1)
  local have
  if ! have="$(PGCONNECT_TIMEOUT=10 "${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = 'seatflow'" 2>&1)"; then
    sf_err "PostgreSQL started on 127.0.0.1:$port but does not answer: $have"
    return 1
  fi
  if [ "$have" != "1" ]; then
    local out
    if ! out="$(PGCONNECT_TIMEOUT=10 "${psql[@]}" -c "CREATE DATABASE seatflow" 2>&1)"; then
      sf_err "cannot create database seatflow on 127.0.0.1:$port: $out"
      return 1
    fi
  fi
  return 0
}

# sf_pg_stop DIR → fast shutdown of the cluster in DIR/data; quiet and successful when it is not running.
sf_pg_stop() {
  local dir pid
  dir="$(sf_abs "$1")"
  [ -f "$dir/data/postmaster.pid" ] || return 0
  sf_pg_running "$dir" || return 0
  if sf_pg_as_postgres pg_ctl -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1; then
    return 0
  fi
  sf_err "PostgreSQL in $dir did not stop in 30 s; stopping it immediately"
  sf_pg_as_postgres pg_ctl -D "$dir/data" -m immediate -w -t 10 stop >/dev/null 2>&1 && return 0
  pid="$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)"
  if [[ "$pid" =~ ^[0-9]+$ ]]; then
    kill -KILL "$pid" 2>/dev/null || true
  fi
  return 0
}

# sf_redis_pid DIR → prints the pid of the redis-server started in DIR when it is still alive.
sf_redis_pid() {
  local dir pid
  dir="$(sf_abs "$1")"
  [ -f "$dir/redis.pid" ] || return 1
  pid="$(head -n 1 "$dir/redis.pid" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  sf_alive "$pid" || return 1
  grep -q 'redis-server' "/proc/$pid/cmdline" 2>/dev/null || return 1
  printf '%s\n' "$pid"
}

# sf_redis_start DIR PORT [ephemeral|persist] → redis-server on 127.0.0.1:PORT with pid, log and data in DIR.
# ephemeral (default, for tests) keeps nothing on disk; persist keeps an append-only file in DIR.
sf_redis_start() {
  if [ $# -lt 2 ]; then
    sf_err "usage: sf_redis_start DIR PORT [ephemeral|persist]"
    return 2
  fi
  local dir port mode wait_s
  dir="$(sf_abs "$1")"
  port="$2"
  mode="${3:-ephemeral}"
  wait_s="${SF_REDIS_WAIT:-10}"

  if ! install -d -m 700 "$dir"; then
    sf_err "cannot create $dir for Redis"
    return 1
  fi
  local persistence=(--save '' --appendonly no)
  if [ "$mode" = persist ]; then
    persistence=(--save '' --appendonly yes --appendfsync everysec)
    wait_s="${SF_REDIS_WAIT:-60}"
  fi
  rm -f "$dir/redis.pid"
  local log_from=1
  if [ -f "$dir/redis.log" ]; then
    log_from=$(($(stat -c %s "$dir/redis.log") + 1))
  fi
  if ! redis-server --port "$port" --bind 127.0.0.1 --protected-mode yes --dir "$dir" \
    "${persistence[@]}" --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
    >/dev/null 2>&1; then
    sf_err "redis-server failed to start on 127.0.0.1:$port; last lines of $dir/redis.log:"
    tail -n 20 "$dir/redis.log" >&2 2>/dev/null || true
    return 1
  fi

  local deadline=$((SECONDS + wait_s)) pid reply
  while [ "$SECONDS" -lt "$deadline" ]; do
    # A server that cannot start (port taken, bad option) says so in its log and exits: do not wait for it.
    if tail -c "+$log_from" "$dir/redis.log" 2>/dev/null | grep -qE 'aborting|Failed listening|FATAL|Fatal error' \
      && ! sf_redis_pid "$dir" >/dev/null; then
      break
    fi
    pid="$(sf_redis_pid "$dir" || true)"
    reply="$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null || true)"
    if [ -n "$pid" ] && [ "$reply" = PONG ]; then
      # Make sure the PONG came from our server, not from another one on that port.
      if redis-cli -h 127.0.0.1 -p "$port" info server 2>/dev/null | tr -d '\r' | grep -qx "process_id:$pid"; then
        return 0
      fi
    fi
    sleep 0.1
  done
  sf_err "Redis did not come up on 127.0.0.1:$port (waited up to ${wait_s} s); last lines of $dir/redis.log:"
  tail -n 20 "$dir/redis.log" >&2 2>/dev/null || true
  sf_redis_stop "$dir" "$port"
  return 1
}

# sf_redis_stop DIR PORT → graceful shutdown of the redis-server started in DIR; quiet when it is not running.
# It signals the pid from DIR/redis.pid, so it never stops another Redis that happens to use PORT.
sf_redis_stop() {
  local dir pid i
  dir="$(sf_abs "$1")"
  pid="$(sf_redis_pid "$dir" || true)"
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do
    sf_alive "$pid" || return 0
    sleep 0.1
  done
  sf_err "Redis (pid $pid, port ${2:-?}) did not stop in 15 s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$dir/redis.pid"
  return 0
}

# sf_redis_replicate PORT PRIMARY_PORT → the Redis on 127.0.0.1:PORT made a replica of the one on PRIMARY_PORT,
# linked (master_link_status:up) within 30 s.
sf_redis_replicate() {
  local i
  redis-cli -h 127.0.0.1 -p "$1" REPLICAOF 127.0.0.1 "$2" >/dev/null 2>&1 ||
    { sf_err "REPLICAOF refused by Redis on port $1"; return 1; }
  for ((i = 0; i < 300; i++)); do
    redis-cli -h 127.0.0.1 -p "$1" INFO replication 2>/dev/null | tr -d '\r' |
      grep -qx 'master_link_status:up' && return 0
    sleep 0.1
  done
  sf_err "Redis on port $1 did not link to its primary on port $2 within 30 s"
  return 1
}

# sf_sentinel_start DIR PORT NAME PRIMARY_PORT [DOWN_AFTER_MS [FAILOVER_TIMEOUT_MS]] → redis-sentinel on
# 127.0.0.1:PORT (config, pid and log in DIR; the config must stay writable: sentinels rewrite it)
# watching the primary on 127.0.0.1:PRIMARY_PORT as NAME with quorum 2; answers PING within 10 s.
sf_sentinel_start() {
  local dir port="$2" name="$3" primary="$4" down="${5:-5000}" failover="${6:-60000}" i
  dir="$(sf_abs "$1")"
  install -d -m 700 "$dir" || { sf_err "cannot create $dir for redis-sentinel"; return 1; }
  cat >"$dir/sentinel.conf" <<CONF
port $port
bind 127.0.0.1
daemonize yes
pidfile $dir/sentinel.pid
logfile $dir/sentinel.log
dir $dir
sentinel monitor $name 127.0.0.1 $primary 2
sentinel down-after-milliseconds $name $down
sentinel failover-timeout $name $failover
sentinel parallel-syncs $name 1
CONF
  redis-sentinel "$dir/sentinel.conf" >/dev/null 2>&1 || { sf_err "redis-sentinel failed to start on port $port"; return 1; }
  for ((i = 0; i < 100; i++)); do
    [ "$(redis-cli -h 127.0.0.1 -p "$port" PING 2>/dev/null)" = PONG ] && return 0
    sleep 0.1
  done
  sf_err "redis-sentinel did not answer on port $port within 10 s; last lines of $dir/sentinel.log:"
  tail -n 20 "$dir/sentinel.log" >&2 2>/dev/null || true
  return 1
}

# sf_sentinel_stop DIR → stops the redis-sentinel started in DIR (by its pid file); quiet when none runs.
sf_sentinel_stop() {
  local dir pid i
  dir="$(sf_abs "$1")"
  pid="$(head -n 1 "$dir/sentinel.pid" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] && sf_alive "$pid" || return 0
  grep -q 'sentinel' "/proc/$pid/cmdline" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    sf_alive "$pid" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# sf_run_killable CMD... → runs CMD in a process group (and session) of its own and waits for it, so that a trap
# in the calling script runs at once on SIGINT/SIGTERM and can end the whole command tree with sf_kill_child.
SF_CHILD_PGID=""
sf_run_killable() {
  local rc=0
  setsid "$@" &
  SF_CHILD_PGID=$!
  wait "$SF_CHILD_PGID" || rc=$?
  SF_CHILD_PGID=""
  return "$rc"
}

# sf_kill_child → ends the command tree started by sf_run_killable, if one is running (TERM, then KILL after 10 s).
sf_kill_child() {
  local pgid="$SF_CHILD_PGID" i
  [ -n "$pgid" ] || return 0
  SF_CHILD_PGID=""
  kill -TERM -- "-$pgid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    sf_group_alive "$pgid" || break
    sleep 0.1
  done
  kill -KILL -- "-$pgid" 2>/dev/null || true
  wait "$pgid" 2>/dev/null || true
  return 0
}

# sf_build BUILD_DIR [extra cmake args...] → configure (Release unless overridden: a later -DCMAKE_BUILD_TYPE wins)
# and build with SF_JOBS (default 2) jobs. Scripts that trap signals should call sf_kill_child on exit.
sf_build() {
  if [ $# -lt 1 ]; then
    sf_err "usage: sf_build BUILD_DIR [cmake args...]"
    return 2
  fi
  local build_dir="$1"
  shift
  sf_configure "$build_dir" "$SF_ROOT" -DCMAKE_BUILD_TYPE=Release "$@" || return 1
  sf_run_killable cmake --build "$build_dir" -j "${SF_JOBS:-2}" || return 1
}

# sf_configure BUILD_DIR SOURCE_DIR [cmake args...] → configures with Ninja when it is installed
# (scripts/deps.sh installs it): Ninja compiles a library's sources as soon as their own inputs
# exist, where Make first waits for every library it links to be archived, which on 2 cores left
# one core idle behind each layer's largest unit. A directory configured by another generator is
# configured afresh (CMake refuses to switch generators in place).
sf_configure() {
  local build_dir="$1" source_dir="$2" generator="Unix Makefiles" had=""
  shift 2
  if command -v ninja >/dev/null 2>&1; then
    generator="Ninja"
  fi
  if [ -f "$build_dir/CMakeCache.txt" ]; then
    had="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build_dir/CMakeCache.txt")"
    if [ -n "$had" ] && [ "$had" != "$generator" ]; then
      sf_err "$build_dir was configured for $had: configuring it afresh for $generator"
      rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
    fi
  fi
  sf_run_killable cmake -S "$source_dir" -B "$build_dir" -G "$generator" "$@"
}
