# shellcheck shell=bash
# Scenarios 19-21 of bench/chaos.sh (SPEC §15), sourced by it and using its helpers: stores that
# fail over and engines behind a balancer.
#  19 Redis Sentinel: the harness's Redis as the primary, a replica and three sentinels on loopback
#     (down-after-milliseconds 1000, failover-timeout 5000); mid-storm the primary is killed
#     (REDIS_FAILOVERS times), the sentinels promote the replica, the killed server is started
#     again once they switched (it comes back empty and they make it a replica of the new primary)
#  20 the same with the primary frozen (SIGSTOP) until 2 s after the switch, then thawed (the
#     sentinels demote it)
#  In 19-20 the engines and every tool find the primary through the sentinels
#  (SEATFLOW_REDIS_SENTINELS); the relay confirms its slot only after WAIT 1, so the history
#  checker holds the stream to every committed move (not lossy). Measured per failover: the time
#  from the sentinels' switch (the first +switch-master in their logs) to the first callback newly
#  ACKed after it (its seats moved on the new primary), and the callbacks answered 5xx from the
#  fault to then. Oracles: that time within SEATFLOW_REDIS_FAILOVER_TIMEOUT_MS (10 s) and at least
#  one 5xx while the primary was away (the engine refused rather than guessed).
#  21 two engines behind HAProxy (deploy/haproxy/haproxy.cfg); the gateway talks only to HAProxy;
#     engine 0 killed (-9) and started again, later engine 1 frozen for BALANCER_FREEZE_S (10 s);
#     oracle: no callback saw more than GATEWAY_FAILURES_MAX failed exchanges (HAProxy's own
#     retries are bounded by its `retries`).

SENTINEL_MASTER=seatflow
SENTINEL_PORTS=()
SENTINEL_DOWN_AFTER_MS=1000
SENTINEL_FAILOVER_TIMEOUT_MS=5000
REDIS_REPLICA_PORT=""
SWITCH_WAIT_S=30   # the sentinels must switch within this of the fault
FOLLOW_MS_MAX=10000 # SEATFLOW_REDIS_FAILOVER_TIMEOUT_MS's default: the engine follows within it
REDIS_FAILOVERS=1
[ "$QUICK" = 1 ] || REDIS_FAILOVERS=3
# The one address run_scenario's gateway sends to (21: HAProxy) instead of the engines'.
BENCH_URL_OVERRIDE=""
HAPROXY_PORT=""
BALANCER_FAULTS=0
BALANCER_FREEZE_S=10
GATEWAY_FAILURES_MAX=20

# sentinel_cli I ARGS... → redis-cli to sentinel I (raw output).
sentinel_cli() {
  local i="$1"
  shift
  redis-cli -h 127.0.0.1 -p "${SENTINEL_PORTS[$i]}" --raw "$@" 2>/dev/null
}

# sentinel_primary_port → the primary's port as the first sentinel that answers names it.
sentinel_primary_port() {
  local i port
  for i in "${!SENTINEL_PORTS[@]}"; do
    port="$(sentinel_cli "$i" SENTINEL get-master-addr-by-name "$SENTINEL_MASTER" | sed -n 2p)"
    [ -n "$port" ] && { echo "$port"; return 0; }
  done
  return 1
}

# redis_dir_of PORT → the directory of the harness's Redis server on PORT.
redis_dir_of() {
  if [ "$1" = "$BENCH_REDIS_PORT" ]; then echo "$BENCH_WORK/redis"; else echo "$BENCH_WORK/redis-replica"; fi
}

# sentinels_ready → every sentinel sees a quorum and one linked replica (bounded: 30 s).
sentinels_ready() {
  local k i ok
  for ((k = 0; k < 300; k++)); do
    ok=1
    for i in "${!SENTINEL_PORTS[@]}"; do
      sentinel_cli "$i" SENTINEL CKQUORUM "$SENTINEL_MASTER" | grep -q '^OK 3 usable' || ok=0
      [ "$(sentinel_cli "$i" SENTINEL REPLICAS "$SENTINEL_MASTER" | tr -d '\r' |
        awk 'prev == "flags" && $0 == "slave" { n++ } { prev = $0 } END { print n + 0 }')" = 1 ] || ok=0
    done
    [ "$ok" = 1 ] && return 0
    sleep 0.1
  done
  chaos_log "the sentinels did not all see a quorum and the replica within 30 s"
  return 1
}

# sentinels_setup → a replica of the harness's Redis and three sentinels watching it; every later
# client of the run finds the primary through them.
sentinels_setup() {
  local i port
  REDIS_REPLICA_PORT="$(sf_free_port)" || return 1
  sf_redis_start "$BENCH_WORK/redis-replica" "$REDIS_REPLICA_PORT" ephemeral || return 1
  sf_redis_replicate "$REDIS_REPLICA_PORT" "$BENCH_REDIS_PORT" || return 1
  SENTINEL_PORTS=()
  for i in 0 1 2; do
    port="$(sf_free_port)" || return 1
    sf_sentinel_start "$BENCH_WORK/sentinel-$i" "$port" "$SENTINEL_MASTER" "$BENCH_REDIS_PORT" \
      "$SENTINEL_DOWN_AFTER_MS" "$SENTINEL_FAILOVER_TIMEOUT_MS" || return 1
    SENTINEL_PORTS+=("$port")
  done
  sentinels_ready || return 1
  export SEATFLOW_REDIS_SENTINELS="127.0.0.1:${SENTINEL_PORTS[0]},127.0.0.1:${SENTINEL_PORTS[1]},127.0.0.1:${SENTINEL_PORTS[2]}"
  export SEATFLOW_REDIS_MASTER_NAME="$SENTINEL_MASTER"
  : >"$BENCH_WORK/redis-switch.log"
}

# sentinels_teardown → the sentinels and the replica stopped, the harness's Redis the primary again
# (holding what the run wrote: it was a linked replica of the last primary).
sentinels_teardown() {
  local i
  [ "${#SENTINEL_PORTS[@]}" -gt 0 ] || return 0
  for i in "${!SENTINEL_PORTS[@]}"; do
    sf_sentinel_stop "$BENCH_WORK/sentinel-$i"
  done
  SENTINEL_PORTS=()
  redis-cli -h 127.0.0.1 -p "$BENCH_REDIS_PORT" REPLICAOF NO ONE >/dev/null 2>&1 || true
  sf_redis_stop "$BENCH_WORK/redis-replica" "$REDIS_REPLICA_PORT"
  unset SEATFLOW_REDIS_SENTINELS SEATFLOW_REDIS_MASTER_NAME
}

# switch_ms_after START_MS → the earliest +switch-master the sentinels logged at or after START_MS
# (epoch ms); nothing when none did.
switch_ms_after() {
  local i stamp ms best=""
  for i in "${!SENTINEL_PORTS[@]}"; do
    while IFS= read -r stamp; do
      ms="$(date -d "$stamp" +%s%3N 2>/dev/null)" || continue
      [ "$ms" -ge "$1" ] || continue
      [ -z "$best" ] || [ "$ms" -lt "$best" ] && best="$ms"
    done < <(awk '/\+switch-master/ { print $2, $3, $4, $5 }' "$BENCH_WORK/sentinel-$i/sentinel.log")
  done
  echo "$best"
}

# replica_linked PORT PRIMARY_PORT → waits (30 s) until the Redis on PORT is a linked replica of
# PRIMARY_PORT.
replica_linked() {
  local k info
  for ((k = 0; k < 300; k++)); do
    info="$(redis-cli -h 127.0.0.1 -p "$1" INFO replication 2>/dev/null | tr -d '\r')" || true
    grep -qx 'master_link_status:up' <<<"$info" && grep -qx "master_port:$2" <<<"$info" && return 0
    sleep 0.1
  done
  chaos_log "Redis on port $1 did not become a linked replica of port $2 within 30 s"
  return 1
}

# redis_failover kill|freeze → the primary the sentinels name killed or frozen; once they switched,
# started again (kill) or thawed 2 s later (freeze), then waited for as a linked replica.
redis_failover() {
  local mode="$1" port dir pid start new="" k switch
  port="$(sentinel_primary_port)" || { chaos_log "no sentinel names a primary"; return 1; }
  dir="$(redis_dir_of "$port")"
  pid="$(head -n 1 "$dir/redis.pid")" || return 1
  start="$(now_ms)"
  if [ "$mode" = kill ]; then kill -KILL "$pid"; else kill -STOP "$pid"; fi
  for ((k = 0; k < SWITCH_WAIT_S * 10; k++)); do
    new="$(sentinel_primary_port)" || new=""
    [ -n "$new" ] && [ "$new" != "$port" ] && break
    sleep 0.1
  done
  if [ -z "$new" ] || [ "$new" = "$port" ]; then
    [ "$mode" = freeze ] && kill -CONT "$pid"
    chaos_log "the sentinels did not switch within ${SWITCH_WAIT_S} s of the fault"
    return 1
  fi
  # A sentinel may answer the new primary a moment before its log line is written.
  for ((k = 0; k < 30; k++)); do
    switch="$(switch_ms_after "$start")"
    [ -z "$switch" ] || break
    sleep 0.1
  done
  chaos_log "redis $mode: primary $port away at $start, sentinels switched to $new at ${switch:-?} ($((${switch:-$start} - start)) ms)"
  echo "$start ${switch:-0}" >>"$BENCH_WORK/redis-switch.log"
  if [ "$mode" = kill ]; then
    sf_redis_start "$dir" "$port" ephemeral || return 1
    # Brought back as its operator would: a replica of the primary the sentinels now name (the
    # sentinels' own +convert-to-slave of a returning old primary came after 10 s in some runs and
    # after more than 30 s in one).
    redis-cli -h 127.0.0.1 -p "$port" REPLICAOF 127.0.0.1 "$new" >/dev/null || return 1
  else
    sleep 2
    kill -CONT "$pid"
  fi
  replica_linked "$port" "$new"
}
fault_redis_failover_kill() { redis_failover kill; }
fault_redis_failover_freeze() { redis_failover freeze; }

# follow_verdict TAG → for each failover of the run: the time from the switch to the first callback
# newly ACKed after it (sent after the fault), and the 5xx answers from the fault to then; one
# violation per failover past FOLLOW_MS_MAX, or with no 5xx, or with no ACK after the switch.
follow_verdict() {
  local start switch line bad=0 part follow n5
  while read -r start switch; do
    line="$(for part in storm mixed; do
      jq -r 'select(.t == "x") | "\(.cb) \(.sent_ms) \(.answer_ms) \(.http)"' "$BENCH_WORK/$1-$part.history"
    done | awk -v s="$start" -v w="$switch" '
      $4 == 200 && (!($1 in first) || $3 < first[$1]) { first[$1] = $3; sent[$1] = $2 }
      $4 >= 500 && $3 >= s { late[NR] = $3 }
      END {
        f = 0
        for (cb in first) if (first[cb] >= w && sent[cb] >= s && (f == 0 || first[cb] < f)) f = first[cb]
        n = 0
        for (i in late) if (f == 0 || late[i] <= f) n++
        printf "%d %d", (f == 0 ? -1 : f - w), n }')"
    read -r follow n5 <<<"$line"
    chaos_log "oracle: switch to first new ACK ${follow} ms (max ${FOLLOW_MS_MAX}), ${n5} answers 5xx from the fault to then"
    echo "$follow $n5" >>"$BENCH_WORK/follow-all.log"
    if [ "$follow" -lt 0 ] || [ "$follow" -gt "$FOLLOW_MS_MAX" ] || [ "$n5" -eq 0 ]; then
      bad=$((bad + 1))
    fi
  done <"$BENCH_WORK/redis-switch.log"
  : >"$BENCH_WORK/redis-switch.log"
  echo "$bad"
}

# follow_summary → the median and worst switch-to-first-ACK time over every failover measured.
follow_summary() {
  [ -s "$BENCH_WORK/follow-all.log" ] || return 0
  chaos_log "redis failovers: $(wc -l <"$BENCH_WORK/follow-all.log") measured; switch to first new ACK median $(awk '{ print $1 }' "$BENCH_WORK/follow-all.log" | bench_median) ms, worst $(awk '{ print $1 }' "$BENCH_WORK/follow-all.log" | sort -n | tail -n 1) ms; 5xx per failover median $(awk '{ print $2 }' "$BENCH_WORK/follow-all.log" | bench_median)"
}

run_sentinel_scenario() {
  local name="$1" fault="$2"
  sentinels_setup || bench_die "could not start the replica and the sentinels"
  setup_engines 1 SEATFLOW_RECONCILE_INTERVAL_MS=500 || bench_die "engine start failed"
  run_scenario "$name" 0 "$fault" "$REDIS_FAILOVERS" follow_verdict
  engines_stop
  sentinels_teardown
}

# ---- Scenario 21: engines behind HAProxy -------------------------------------------------------
haproxy_start() {
  bench_start_haproxy "127.0.0.1:${ENGINE_PORTS[0]}" "127.0.0.1:${ENGINE_PORTS[1]}" || return 1
  HAPROXY_PORT="$BENCH_HAPROXY_PORT"
}

haproxy_stop() {
  bench_stop_haproxy
  # The one address run_scenario's gateway sends to (21: HAProxy) instead of the engines'.
  BENCH_URL_OVERRIDE=""
}

# fault_behind_balancer → first engine 0 killed and started again; then engine 1 frozen.
fault_behind_balancer() {
  BALANCER_FAULTS=$((BALANCER_FAULTS + 1))
  if [ "$BALANCER_FAULTS" = 1 ]; then
    chaos_log "behind haproxy: engine 0 killed and started again"
    engine_kill9 0
    engine_start 0
    return
  fi
  chaos_log "behind haproxy: engine 1 frozen ${BALANCER_FREEZE_S} s"
  kill -STOP "${ENGINE_PIDS[1]}" || return 1
  sleep "$BALANCER_FREEZE_S"
  kill -CONT "${ENGINE_PIDS[1]}"
}

# balancer_verdict TAG → one violation when some callback saw more than GATEWAY_FAILURES_MAX failed
# exchanges (5xx or no answer) at the gateway.
balancer_verdict() {
  local worst part
  worst="$(for part in storm mixed; do
    jq -r 'select(.t == "x" and .http != 200) | "\(.cb) \(.http)"' "$BENCH_WORK/$1-$part.history"
  done | awk '$2 == 0 || $2 >= 500 { n[$1]++ } END { m = 0; for (c in n) if (n[c] > m) m = n[c]; print m }')"
  chaos_log "oracle: the most failed exchanges one callback saw through haproxy: $worst (max $GATEWAY_FAILURES_MAX)"
  [ "$worst" -le "$GATEWAY_FAILURES_MAX" ] && echo 0 || echo 1
}

run_balancer_scenario() {
  local name="$1"
  setup_engines 2 SEATFLOW_RECONCILE_INTERVAL_MS=500 || bench_die "engine start failed"
  haproxy_start || bench_die "haproxy start failed"
  BENCH_URL_OVERRIDE="http://127.0.0.1:$HAPROXY_PORT"
  BALANCER_FAULTS=0
  # HAProxy may send a request up to 3 times more (`retries 3` on the notify route): after a
  # response timeout the frozen engine still holds the first copy and applies (counts) it once
  # thawed. An engine killed loses the duplicate counts it had not flushed: lenient.
  local extra=("${BENCH_EXTRA[@]}")
  BENCH_EXTRA+=(--proxy-resends 3)
  # shellcheck disable=SC2034 # read by chaos.sh's history_check
  HISTORY_PROXY_RESENDS=3
  run_scenario "$name" 1 fault_behind_balancer 2 balancer_verdict
  # shellcheck disable=SC2034 # read by chaos.sh's history_check
  HISTORY_PROXY_RESENDS=0
  BENCH_EXTRA=("${extra[@]}")
  # shellcheck disable=SC2034 # read by chaos.sh's run_scenario
  BENCH_URL_OVERRIDE=""
  haproxy_stop
  engines_stop
}

# failover_teardown → whatever scenarios 19-21 left running (the harness's exit trap).
failover_teardown() {
  haproxy_stop
  sentinels_teardown
}
