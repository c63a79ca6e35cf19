#!/usr/bin/env bash
# Builds SeatFlow and serves it in the foreground. Without SEATFLOW_PG_DSN / SEATFLOW_REDIS_URL it starts a private
# PostgreSQL (var/pg, port SEATFLOW_PG_PORT, default 55432) and Redis (var/redis, port SEATFLOW_REDIS_PORT, default
# 56379) on 127.0.0.1 and stops them again when the engine stops. Ctrl-C or SIGTERM stops everything; the engine
# has SEATFLOW_STOP_TIMEOUT_S (default 30) seconds to stop before it is killed.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
# shellcheck source=scripts/services.sh
. scripts/services.sh
sf_renamed_setting SEATFLOW_STOP_TIMEOUT SEATFLOW_STOP_TIMEOUT_S
stop_timeout_s="${SEATFLOW_STOP_TIMEOUT_S:-30}"

# One run per checkout. The lock is opened without truncating, so a refused second run changes nothing;
# fd 9 stays open for the life of this script (and of the engine) and is closed for the database servers.
mkdir -p var
exec 9<>var/run.lock
if ! flock -n 9; then
  exec 9>&-
  holder="$(head -c 20 var/run.lock 2>/dev/null | tr -dc '0-9' || true)"
  if [ -n "$holder" ] && kill -0 "$holder" 2>/dev/null; then
    sf_err "another ./run.sh is already running in $(pwd) (pid $holder); stop it first (Ctrl-C in its terminal or kill -TERM $holder)"
  else
    # The run.sh that took the lock was killed outright; its engine (which inherits the lock) still runs.
    others="$(fuser var/run.lock 2>/dev/null | tr -s ' ' | sed 's/^ //' || true)"
    sf_err "var/run.lock is held by process(es) ${others:-unknown} left by an earlier ./run.sh that was killed; stop them first${others:+ (kill -TERM $others)}"
  fi
  exit 1
fi
: >var/run.lock
echo "$$" >&9

pg_dir=var/pg
redis_dir=var/redis
pg_port="${SEATFLOW_PG_PORT:-55432}"
redis_port="${SEATFLOW_REDIS_PORT:-56379}"
http_addr="${SEATFLOW_HTTP_ADDR:-127.0.0.1:8080}"
export SEATFLOW_PROFILE="${SEATFLOW_PROFILE:-dev}"

start_pg=1
start_redis=1
[ -n "${SEATFLOW_PG_DSN:-}" ] && start_pg=0
[ -n "${SEATFLOW_REDIS_URL:-}" ] && start_redis=0

started_pg=0
started_redis=0
engine_pid=""
watchdog_pid=""
stop_signal=""

# shellcheck disable=SC2317 # called from a trap
on_exit() {
  local rc=$?
  trap '' INT TERM HUP
  sf_kill_child
  if [ -n "$engine_pid" ] && kill -0 "$engine_pid" 2>/dev/null; then
    kill -TERM "$engine_pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do
      sf_alive "$engine_pid" || break
      sleep 0.1
    done
    kill -KILL "$engine_pid" 2>/dev/null || true
    wait "$engine_pid" 2>/dev/null || true
  fi
  if [ -n "$watchdog_pid" ]; then
    kill -TERM "$watchdog_pid" 2>/dev/null || true
    wait "$watchdog_pid" 2>/dev/null || true
  fi
  if [ "$started_redis" = 1 ]; then
    sf_redis_stop "$redis_dir" "$redis_port"
    echo "seatflow: stopped Redis (127.0.0.1:$redis_port)" >&2
  fi
  if [ "$started_pg" = 1 ]; then
    sf_pg_stop "$pg_dir"
    echo "seatflow: stopped PostgreSQL (127.0.0.1:$pg_port)" >&2
  fi
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Only this script starts servers under var/, and it holds the lock: a server still running there was left behind
# by a run that was killed outright. Stop it so its port and data directory are free again.
if sf_pg_running "$pg_dir"; then
  sf_err "stopping a PostgreSQL left running in $pg_dir by an earlier run"
  sf_pg_stop "$pg_dir"
fi
if sf_redis_pid "$redis_dir" >/dev/null; then
  sf_err "stopping a Redis left running in $redis_dir by an earlier run"
  sf_redis_stop "$redis_dir" "$redis_port"
fi

check_port() { # PORT WHAT HOW-TO-CHANGE
  if ! [[ "$1" =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then
    sf_err "invalid port '$1' for $2; $3"
    exit 1
  fi
  if sf_port_in_use "$1"; then
    sf_err "port $1 ($2) is already in use by another program; $3"
    exit 1
  fi
}
if [ "$start_pg" = 1 ]; then
  check_port "$pg_port" PostgreSQL "choose another with SEATFLOW_PG_PORT=<port> ./run.sh"
fi
if [ "$start_redis" = 1 ]; then
  check_port "$redis_port" Redis "choose another with SEATFLOW_REDIS_PORT=<port> ./run.sh"
fi
http_port="${http_addr##*:}"
if [ "$http_port" != 0 ]; then
  check_port "$http_port" "HTTP, SEATFLOW_HTTP_ADDR=$http_addr" "choose another with SEATFLOW_HTTP_ADDR=127.0.0.1:<port> ./run.sh"
fi

scripts/deps.sh
sf_build build
bin=build/seatflow

if [ "$start_pg" = 1 ]; then
  started_pg=1
  sf_pg_start "$pg_dir" "$pg_port" 9>&-
  export SEATFLOW_PG_DSN="postgresql://postgres@127.0.0.1:$pg_port/seatflow"
  pg_desc="private, $pg_dir on 127.0.0.1:$pg_port"
else
  pg_desc="from SEATFLOW_PG_DSN"
fi
if [ "$start_redis" = 1 ]; then
  started_redis=1
  sf_redis_start "$redis_dir" "$redis_port" persist 9>&-
  export SEATFLOW_REDIS_URL="redis://127.0.0.1:$redis_port"
  redis_desc="private, $redis_dir on 127.0.0.1:$redis_port"
else
  redis_desc="from SEATFLOW_REDIS_URL"
fi

"$bin" migrate

# The engine runs as a child in its own session, so a terminal Ctrl-C reaches it once: forwarded from here.
# shellcheck disable=SC2317 # called from a trap
forward() {
  stop_signal="$1"
  if [ -n "$engine_pid" ] && kill -0 "$engine_pid" 2>/dev/null; then
    kill -s "$1" "$engine_pid" 2>/dev/null || true
    if [ -z "$watchdog_pid" ]; then
      # Bounded stop: kill the engine if it has not exited in SEATFLOW_STOP_TIMEOUT_S seconds.
      (
        trap 'kill "$s" 2>/dev/null; exit 0' TERM
        sleep "$stop_timeout_s" &
        s=$!
        wait "$s"
        echo "seatflow: the engine did not stop in $stop_timeout_s s; killing it" >&2
        kill -KILL "$engine_pid" 2>/dev/null || true
      ) &
      watchdog_pid=$!
    fi
  fi
}
trap 'forward INT' INT
trap 'forward TERM' TERM
trap 'forward TERM' HUP

setsid "$bin" serve &
engine_pid=$!
echo "seatflow: serving on http://$http_addr (profile $SEATFLOW_PROFILE; PostgreSQL $pg_desc; Redis $redis_desc); stop with Ctrl-C or kill -TERM $$" >&2

rc=0
while :; do
  rc=0
  wait "$engine_pid" || rc=$?
  # wait also returns when a trapped signal arrives; loop until the engine itself has exited.
  kill -0 "$engine_pid" 2>/dev/null || break
done
engine_pid=""
if [ -n "$stop_signal" ]; then
  case "$rc" in
    0 | 130 | 143) rc=0 ;;
  esac
  echo "seatflow: engine stopped (SIG$stop_signal)" >&2
else
  echo "seatflow: engine exited with status $rc" >&2
fi
exit "$rc"
