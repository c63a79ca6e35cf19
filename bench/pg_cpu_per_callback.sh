#!/usr/bin/env bash
# bench/pg_cpu_per_callback.sh ENGINE BENCH TAG [PAYMENTS] → PostgreSQL CPU (every postgres process:
# utime+stime from /proc, the postmaster's reaped children included) per applied callback of a
# `unique` load of PAYMENTS (default 30000) against ENGINE on fresh private stores, the relay's work
# until every event is on the stream included. EXTRA_ENV="NAME=value ..." goes to the engine.
# CPU, not throughput: meant for a machine that other work loads. Work files in /tmp/sf-pgcpu-TAG.
set -euo pipefail
ENGINE="$1"; BENCH="$2"; TAG="$3"; N="${4:-30000}"
cd "$(dirname "$0")/.." && . scripts/services.sh
W=/tmp/sf-pgcpu-$TAG; rm -rf "$W"; mkdir -p "$W"; chmod 755 "$W"
PGP=$(sf_free_port); RP=$(sf_free_port)
sf_pg_start "$W/pg" "$PGP" >/dev/null
sf_redis_start "$W/redis" "$RP" ephemeral >/dev/null
export SEATFLOW_PG_DSN=postgresql://postgres@127.0.0.1:$PGP/seatflow SEATFLOW_REDIS_URL=redis://127.0.0.1:$RP
export SEATFLOW_PROFILE=prod SEATFLOW_CALLBACK_SECRETS=measure-secret-0123456789abcdef SEATFLOW_LOG_LEVEL=warn
HP=$(sf_free_port)
"$ENGINE" migrate >"$W/migrate.log" 2>&1
read -r -a extra_env <<<"${EXTRA_ENV:-}"
env "${extra_env[@]}" SEATFLOW_HTTP_ADDR="127.0.0.1:$HP" "$ENGINE" serve >"$W/engine.log" 2>&1 &
EP=$!
for i in $(seq 100); do curl -sf "http://127.0.0.1:$HP/readyz" >/dev/null && break; sleep 0.2; done
B=("$BENCH" --scenario unique --payments "$N" --connections 64 --rate 0 --url "http://127.0.0.1:$HP"
   --pg-dsn "$SEATFLOW_PG_DSN" --redis-url "$SEATFLOW_REDIS_URL" --secret "$SEATFLOW_CALLBACK_SECRETS" --no-progress)
prefix=$("${B[@]}" --seed-only 2>&1 | tail -n 1 | grep -o '[A-Za-z0-9]*$')
echo "prefix=$prefix" >"$W/info"
sleep 3
PM=$(head -1 "$W/pg/data/postmaster.pid")
cpu() { # total ticks: postmaster self + reaped children + every live child
  local t=0 pid f
  read -r -a f <<<"$(cut -d')' -f2- "/proc/$PM/stat")"; t=$((f[11]+f[12]+f[13]+f[14]))
  for pid in $(pgrep -P "$PM"); do
    read -r -a f <<<"$(cut -d')' -f2- "/proc/$pid/stat" 2>/dev/null)"
    [ "${#f[@]}" -gt 12 ] || continue
    t=$((t+f[11]+f[12]))
  done
  echo $t
}
c0=$(cpu)
"${B[@]}" --no-seed --run-prefix "$prefix" --no-check --json "$W/bench.json" >"$W/bench.log" 2>&1 || true
# the relay's work belongs to the callbacks: wait until every event is out
for i in $(seq 300); do
  n=$(redis-cli -p "$RP" XLEN seatflow:events)
  [ "$n" -ge $((2*N)) ] && break; sleep 0.2
done
sleep 1
c1=$(cpu)
applied=$(grep -o '"200": *[0-9]*' "$W/bench.json" | head -1 | grep -o '[0-9]*$' || true)
hz=$(getconf CLK_TCK)
echo "$TAG ticks=$((c1-c0)) hz=$hz stream=$n applied=${applied:-?} us_per_callback=$(( (c1-c0)*1000000/hz/N ))"
kill -TERM $EP; wait $EP || true
sf_pg_stop "$W/pg"; sf_redis_stop "$W/redis" "$RP"
