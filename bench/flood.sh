#!/usr/bin/env bash
# The front door under a forged-notify flood (SPEC §14): wrk sends forged hmac notifies as fast as
# it goes from one source while seatflow-bench, as the gateway, sends valid callbacks at a fixed
# rate from another. wrk cannot bind a source address, so the engine trusts 127.0.0.1 as a proxy
# (SEATFLOW_TRUSTED_PROXIES) and the flood names its source in X-Forwarded-For; the gateway sends
# none and is 127.0.0.1. Reports the valid callbacks' rate and p99 alone, beside the flood with the
# buckets effectively off (every forgery verified), and beside the flood with the default buckets;
# and the engine's CPU µs per rejected request with every forgery verified (401) and with the
# source's bucket empty (429). With --behind haproxy every request goes through HAProxy with the
# shipped deploy/haproxy/haproxy.cfg (the engine trusts it as a proxy): the flood comes from
# 127.0.0.1 (its own X-Forwarded-For replaced by HAProxy) and the gateway from another host,
# 127.0.0.2 (seatflow-bench --source-address). --runs repeats each load, so a p99 beside the flood
# can be read against the spread of the p99s alone. Bounded: each load lasts about --duration-s;
# everything started is stopped. Loopback only.
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
usage: bench/flood.sh [options]
  --duration-s S         length of each load (default 10)
  --rate R               valid callbacks per second from the gateway (default 300)
  --flood-connections C  wrk connections of the flood, two threads (default 16)
  --behind none|haproxy  send through HAProxy with the shipped config (default none: direct)
  --runs N               each load N times (default 1, at most 5)
  --build-dir DIR        build directory (default build); --no-build uses it as is
  --out DIR              results (default BUILD_DIR/flood-<time>)
USAGE
}

DURATION_S=10
RATE=300
FLOOD_CONNECTIONS=16
BEHIND=none
RUNS=1
BUILD_DIR="$ROOT/build"
NO_BUILD=0
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration-s) bench_need_value "$@"; DURATION_S="$2"; shift ;;
    --rate) bench_need_value "$@"; RATE="$2"; shift ;;
    --flood-connections) bench_need_value "$@"; FLOOD_CONNECTIONS="$2"; shift ;;
    --behind) bench_need_value "$@"; BEHIND="$2"; shift ;;
    --runs) bench_need_value "$@"; RUNS="$2"; shift ;;
    --build-dir) bench_need_value "$@"; BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    --out) bench_need_value "$@"; OUT="$2"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown argument $1" ;;
  esac
  shift
done
for n in "$DURATION_S" "$RATE" "$FLOOD_CONNECTIONS" "$RUNS"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || bench_die "sizes must be positive integers (got '$n')"
done
[ "$DURATION_S" -le 120 ] || bench_die "--duration-s is at most 120"
[ "$RUNS" -le 5 ] || bench_die "--runs is at most 5"
case "$BEHIND" in none | haproxy) ;; *) bench_die "--behind is none or haproxy (got '$BEHIND')" ;; esac
[ "$FLOOD_CONNECTIONS" -le 200 ] || bench_die "--flood-connections is at most 200 (the per-source cap is 256)"

FLOOD_XFF=203.0.113.66         # what the flood writes in X-Forwarded-For
FLOOD_SOURCE="$FLOOD_XFF"      # the source the engine sees for it
GATEWAY_SOURCE=127.0.0.1       # behind HAProxy: 127.0.0.2, another host than the flood's
if [ "$BEHIND" = haproxy ]; then
  GATEWAY_SOURCE=127.0.0.2
  FLOOD_SOURCE="127.0.0.1 (HAProxy's %[src] replaces the flood's own X-Forwarded-For)"
fi
CLK_TCK="$(getconf CLK_TCK)"
bench_resolve_paths flood
bench_install_traps
# Only wrk, jq and curl are needed here (bench_prepare would also want nginx, gnuplot, pgbench).
for tool in wrk jq curl; do
  command -v "$tool" >/dev/null 2>&1 || bench_die "missing $tool (apt-get install $tool)"
done
if [ "$NO_BUILD" = 0 ]; then
  bench_build "$ROOT" "$BUILD_DIR" || bench_die "build failed"
fi
if [ ! -x "$ENGINE_BIN" ] || [ ! -x "$BENCH_BIN" ]; then
  bench_die "missing $ENGINE_BIN or $BENCH_BIN (build first)"
fi
mkdir -p "$OUT"
bench_make_work
bench_start_stores || bench_die "could not start PostgreSQL/Redis"
export SEATFLOW_TRUSTED_PROXIES=127.0.0.1/32

TARGET_PORT="" # the engine's port, or HAProxy's in front of it

# start → the engine (its environment from the caller), and HAProxy in front of it when asked.
start() {
  bench_start_engine "$ENGINE_BIN" || bench_die "could not start the engine"
  TARGET_PORT="$BENCH_HTTP_PORT"
  if [ "$BEHIND" = haproxy ]; then
    bench_start_haproxy "127.0.0.1:$BENCH_HTTP_PORT" || bench_die "could not start HAProxy"
    TARGET_PORT="$BENCH_HAPROXY_PORT"
  fi
}

stop() {
  bench_stop_haproxy
  bench_stop_engine
}

# flood TAG SECONDS → wrk's forged notifies for SECONDS; OUT/TAG.flood.txt holds its counts.
flood() {
  wrk -t2 -c"$FLOOD_CONNECTIONS" -d"${2}s" --timeout 10s -s "$BENCH_DIR/flood.lua" \
    "http://127.0.0.1:$TARGET_PORT" -- "$FLOOD_XFF" >"$OUT/$1.flood.txt" 2>&1
}

# engine_ticks → the engine's user+system CPU so far, in clock ticks.
engine_ticks() { bench_proc_ticks "$BENCH_ENGINE_PID"; }

# flood_alone TAG → the flood on its own: OUT/TAG.cpu holds "answers 401s 429s engine_us_per_answer".
flood_alone() {
  local tag="$1" before after
  before="$(engine_ticks)"
  flood "$tag" "$DURATION_S" || bench_die "wrk failed; see $OUT/$tag.flood.txt"
  after="$(engine_ticks)"
  awk -v b="$before" -v a="$after" -v hz="$CLK_TCK" '
    /^answered_401/ { u = $2 } /^answered_429/ { l = $2 } /^other_answers/ { o = $2 }
    END { n = u + l + o; printf "%d %d %d %.1f\n", n, u, l, (a - b) * 1e6 / hz / n }' \
    "$OUT/$tag.flood.txt" >"$OUT/$tag.cpu"
  bench_log "$tag: $(cat "$OUT/$tag.cpu") (answers, 401s, 429s, engine µs per answer)"
}

# valid TAG [flood] → RATE valid callbacks/s for DURATION_S from the gateway, beside the flood
# when asked; OUT/TAG.result holds "callbacks_per_s p99_ms acked unacked".
valid() {
  local tag="$1" payments=$((RATE * DURATION_S)) prefix
  prefix="$("$BENCH_BIN" --scenario unique --payments "$payments" --pg-dsn "$SEATFLOW_PG_DSN" \
    --redis-url "$SEATFLOW_REDIS_URL" --secret "$BENCH_SECRET" --seed-only 2>"$OUT/$tag.seed.txt")" ||
    bench_die "seeding failed; see $OUT/$tag.seed.txt"
  if [ "${2:-}" = flood ]; then
    flood "$tag" $((DURATION_S + 4)) &
    BENCH_LOAD_PID=$!
    sleep 1 # the flood is at full speed (and its bucket empty) before the gateway starts
  fi
  "$BENCH_BIN" --scenario unique --payments "$payments" --no-seed --run-prefix "$prefix" \
    --rate "$RATE" --connections 16 --url "http://127.0.0.1:$TARGET_PORT" \
    --source-address "$GATEWAY_SOURCE" \
    --pg-dsn "$SEATFLOW_PG_DSN" --redis-url "$SEATFLOW_REDIS_URL" --secret "$BENCH_SECRET" \
    --timeout-s $((DURATION_S * 3 + 30)) --no-progress --json "$OUT/$tag.json" >"$OUT/$tag.txt" 2>&1 ||
    bench_die "seatflow-bench failed; see $OUT/$tag.txt"
  if [ -n "$BENCH_LOAD_PID" ]; then
    wait "$BENCH_LOAD_PID" || bench_die "wrk failed; see $OUT/$tag.flood.txt"
    BENCH_LOAD_PID=""
  fi
  jq -r '"\(.callbacks_per_s | floor) \(.latency_ms.p99) \(.acked // 0) \(.unacked // 0)"' \
    "$OUT/$tag.json" >"$OUT/$tag.result"
  bench_log "$tag: $(cat "$OUT/$tag.result") (callbacks/s, p99 ms, acked, unacked)"
}

for ((run = 1; run <= RUNS; run++)); do
  # The buckets effectively off: every forgery is verified.
  SEATFLOW_UNVERIFIED_TOKENS_PER_S=1000000 SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX=1000000 \
    SEATFLOW_UNVERIFIED_PER_PROXY_TOKENS_PER_S=1000000 \
    SEATFLOW_UNVERIFIED_PER_PROXY_BURST_TOKENS_MAX=1000000 start
  flood_alone "verified.$run"
  valid "unlimited.$run" flood
  stop
  # The default buckets (20/s, burst 100; a proxy's 200/s, burst 1 000).
  start
  valid "alone.$run"
  flood_alone "limited.$run"
  valid "limited.$run" flood
  stop
done
cp "$BENCH_WORK/engine.log" "$OUT/engine.log" 2>/dev/null || true
cp "$BENCH_WORK/haproxy.log" "$OUT/haproxy.log" 2>/dev/null || true

{
  echo "machine: $(nproc) cores, $(bench_cpu_model); load $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "$BEHIND" = haproxy ]; then
    echo "path: HAProxy $(haproxy -v | head -n 1 | awk '{print $3}') with deploy/haproxy/haproxy.cfg as shipped, in front of one engine"
  fi
  echo "gateway: seatflow-bench unique at $RATE callbacks/s for ${DURATION_S} s (16 connections, from $GATEWAY_SOURCE)"
  echo "flood: wrk -t2 -c$FLOOD_CONNECTIONS bench/flood.lua, forged hmac notifies with X-Forwarded-For $FLOOD_XFF; its source: $FLOOD_SOURCE; SEATFLOW_TRUSTED_PROXIES=127.0.0.1/32"
  echo "runs: $RUNS of each load"
  echo
  echo "| valid callbacks | run | callbacks/s | p99 ms | acked | unacked | 429s |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  for tag in alone unlimited limited; do
    case "$tag" in
      alone) label="alone (default buckets)" ;;
      unlimited) label="beside the flood, buckets off (every forgery verified)" ;;
      limited) label="beside the flood, default buckets" ;;
    esac
    for ((run = 1; run <= RUNS; run++)); do
      read -r rate p99 acked unacked <"$OUT/$tag.$run.result"
      echo "| $label | $run | $rate | $p99 | $acked | $unacked | $(jq -r '.status_counts."429" // 0' "$OUT/$tag.$run.json") |"
    done
  done
  echo
  echo "| flood alone | run | answers | 401 | 429 | engine CPU µs per answer |"
  echo "|---|---:|---:|---:|---:|---:|"
  for ((run = 1; run <= RUNS; run++)); do
    read -r n u l us <"$OUT/verified.$run.cpu"
    echo "| buckets off (every forgery verified) | $run | $n | $u | $l | $us |"
  done
  for ((run = 1; run <= RUNS; run++)); do
    read -r n u l us <"$OUT/limited.$run.cpu"
    echo "| default buckets (empty after the first 100) | $run | $n | $u | $l | $us |"
  done
} | tee "$OUT/summary.md"
echo "results: $OUT"
