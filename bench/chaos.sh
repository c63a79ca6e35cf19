#!/usr/bin/env bash
# Chaos harness: each scenario injects faults while seatflow-bench, acting as a gateway that resends
# every callback until it is ACKed, runs a duplicate storm and a mixed run (failures, out-of-order,
# paid-after-cancel); then `seatflow reconcile --once`, the bench's exact invariant checks and
# `seatflow check` must find nothing wrong. Everything runs on loopback, every loop is bounded, and
# everything started here is stopped on exit.
#
# Usage: bench/chaos.sh [--quick] [--scenarios 1,2,...,21] [--build-dir DIR] [--no-build] [--keep]
#   1 kill -9 the engine mid-storm and restart it (20 times; --quick: 3)
#   2 restart PostgreSQL mid-storm, alternating fast and immediate shutdown (4; --quick: 2)
#   3 restart Redis mid-storm with its data lost; the engines' reconcilers rebuild the seats (3; 1)
#   4 mark_sold failing 10% of the time and pg_commit delays
#   5 two engines on different ports sharing PostgreSQL and Redis, the same storm sent to both,
#     their reconcilers running beside the traffic, mark_sold failing 5% of the time
#   6 orders created and paid through the API, several creators racing for each seat, while Redis
#     is restarted with its data lost (3 times; --quick: 2): every seat ends with exactly one live
#     order, PAID, the one that got the 201; every 409'd order left nothing; Redis agrees
#   7 PostgreSQL frozen mid-storm (SIGSTOP of the postmaster and its backends: sockets open,
#     nothing answers) for 15 s (--quick: 3 s), then thawed
#   8 Redis frozen mid-storm the same way, 15 s (--quick: 3 s)
#   9 PostgreSQL switched to read-only mid-storm (default_transaction_read_only) for 10 s
#     (--quick: 3 s), then back
#  10 PostgreSQL black-holed by the network: it runs in a network namespace of its own behind a
#     veth pair, and nftables drops its packets for 10 s (--quick: 3 s), then the rule is flushed
#  11 the same path rejecting with tcp reset for 10 s (--quick: 3 s), then flushed
#  12 two engines serving the same payments (the gateway resends through the other after a
#     timeout), engine 0 paused with SIGSTOP for 10 s (--quick: 3 s), then SIGCONT
#  13 the engine's clock 301 s ahead (libfaketime): every signed callback is stale, 401, nothing
#     applied; a control engine 290 s ahead ACKs the same load
#  14 the engine's clock 301 s behind: the same (control 290 s behind)
#  15 commits whose outcome the engine cannot know (failpoint pg_commit_unknown, 5% of the callback
#     transactions: COMMIT goes through, the connection drops): 503, the resend is a duplicate; and
#     flush_commit_unknown, 30% of the duplicate-count flushes: each duplicate still counted once
#  16 PostgreSQL failed over: a streaming standby made from a base backup, synchronous
#     (synchronous_standby_names), the engine on a two-host DSN; mid-storm the primary is frozen for
#     FREEZE_S, the standby promoted, the frozen primary killed (fenced: it never comes back), then
#     the operator's step, `seatflow migrate` on the new primary (PostgreSQL 15 does not carry
#     logical slots to a standby: it makes the event slot anew), once the engine's
#     seatflow_event_slot_state{state="missing"} is 1 (within 15 s). /readyz must answer 200 again
#     within 30 s. The witness slot is new too, so the history checker judges each payment's end
#     statuses instead of walking its events, and the stream is not compared (--events-partial);
#     every ACK durable, each callback applied once and no seat held twice hold as everywhere;
#     callbacks must have been applied on the promoted server, the relay must confirm its new
#     slot there, and every payment moved there must have the event of its status on the stream
#     (no move commits while the slot is missing: migration 11).
#     Afterwards the promoted server becomes the harness's PostgreSQL for any later scenario.
#  17 Redis with an evicting maxmemory-policy (allkeys-lru): a prod engine must refuse to start
#     (exit 2, one line naming the setting) and a dev engine must warn once and serve; then, the
#     policy back at noeviction, the storm and mixed loads run as everywhere
#  18 Redis out of memory mid-storm (maxmemory 1 under noeviction: every write refused, PING still
#     answered) for FREEZE_S, then maxmemory 0: /readyz must say 503 meanwhile, and every
#     callback is applied once after the memory is back
#  19-21 Redis Sentinel failovers (primary killed; frozen) and two engines behind HAProxy: see
#     bench/chaos_failover.sh (21 only when named in --scenarios)
#  22 the deadline race (SPEC §16, bench/deadline_race.sh on stores of its own): customers pay at
#     the mock gateway around their order's deadline while the sweeper cancels; with the close at the
#     gateway on, 0 paid_after_cancel, and in that run and the control run with the close off 0 seats
#     sold twice and `seatflow check` clean (200 customers; --quick: 40)
#   In 7-12, 16 and 18 /readyz is polled every 0.2 s during the fault (curl -m 2): the scenario fails when an
#   answer took 1 s or more or none was 503 (12: engine 0 is paused, so engine 1 is polled and must
#   stay ready); the slowest answer is logged. In 10-11 some callbacks in flight during the fault
#   must have been answered 503, and none may have been first ACKed (newly applied) while it held.
# Every storm and mixed load records its history (every request and answer) and
# `seatflow-bench --check-history` replays it against the domain model and the stores after the
# run: every ACKed callback durable, each callback id applied at most once, no other content of an
# id applied, every payment's moves legal, the event stream equal to the committed moves in
# per-payment order (a subsequence in 3, where Redis loses its data), no seat held by two live
# orders. Each oracle is printed with its verdict; a failed one is a violation. Scenario 6 keeps its
# own oracles (its orders come through the API, not from the gateway's plan).
# 10-11 need root (ip netns, nft); 13-14 need faketime (scripts/deps.sh installs both).
# Prints a table: scenario, callbacks ACKed (13-14: the control's; the skewed load is ACKed
# nowhere), faults injected (kills, restarts, failpoint hits), retries (5xx resends + transport
# errors), seats repaired (engine reconcilers + the final `reconcile --once`), violations (bench
# checks, `seatflow check`, history oracles and the scenario's own oracles; must be 0), time to
# converge (holds released → `seatflow check` done: the duplicate-count flush wait of 1.5 s,
# reconcile, the bench checks, check).
# Exits 1 when any scenario has a violation or fails to finish.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/services.sh
. "$ROOT/scripts/services.sh"
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

QUICK=0
SCENARIOS="1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22"
BUILD_DIR="$ROOT/build"
NO_BUILD=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --scenarios) SCENARIOS="$2"; shift ;;
    --build-dir) BUILD_DIR="$2"; shift ;;
    --no-build) NO_BUILD=1 ;;
    --keep) BENCH_KEEP_WORK=1 ;;
    -h | --help)
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
      exit 0
      ;;
    *) bench_die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

# Scale. The storm is rate-limited so that the faults land in the middle of it.
if [ "$QUICK" = 1 ]; then
  STORM_PAYMENTS=200 STORM_DUPLICATES=5 STORM_RATE=300 MIXED_PAYMENTS=200 MIXED_RATE=150
  KILLS=3 PG_RESTARTS=2 REDIS_RESTARTS=1 FAULT_GAP_S=1 LOAD_TIMEOUT_S=100
  RACE_SEATS=40 RACE_CREATORS=4 RACE_SPREAD_MS=3000 RACE_REDIS_RESTARTS=2
  FREEZE_S=3 READ_ONLY_S=3 NET_FAULT_S=3 PAUSE_S=3 SKEW_PAYMENTS=50
  # The quick freeze is shorter than the default call deadline (6 s): shorter deadlines make it
  # cross them, so callbacks are cut and answered 503 as in the full run.
  FREEZE_ENV=(SEATFLOW_PG_STATEMENT_TIMEOUT_MS=1000 SEATFLOW_PG_LOCK_TIMEOUT_MS=1000
    SEATFLOW_PG_CALL_TIMEOUT_MS=1500)
else
  STORM_PAYMENTS=4000 STORM_DUPLICATES=10 STORM_RATE=1000 MIXED_PAYMENTS=4000 MIXED_RATE=250
  KILLS=20 PG_RESTARTS=4 REDIS_RESTARTS=3 FAULT_GAP_S=1.5 LOAD_TIMEOUT_S=400
  RACE_SEATS=120 RACE_CREATORS=5 RACE_SPREAD_MS=8000 RACE_REDIS_RESTARTS=3
  FREEZE_S=15 READ_ONLY_S=10 NET_FAULT_S=10 PAUSE_S=10 SKEW_PAYMENTS=500
  FREEZE_ENV=()
fi
CONNECTIONS=32
# shellcheck source=bench/chaos_failover.sh
. "$ROOT/bench/chaos_failover.sh"

BIN="$BUILD_DIR/seatflow"
BENCH_BIN="$BUILD_DIR/bench/seatflow-bench"
ENGINE_PORTS=()
ENGINE_PIDS=()
ENGINE_ENV=()
ENGINE_WRAP=()  # a command the engines run under (faketime in 13-14)
HISTORY_LOSSY=0  # 1 while a scenario loses Redis data (the stream oracle is a subsequence)
HISTORY_EVENTS_PARTIAL=0  # 1 while the witness slot is made anew mid-run (16: a failover)
HISTORY_PROXY_RESENDS=0   # a balancer's resends per request (21: HAProxy's retries)
BENCH_EXTRA=()   # more seatflow-bench options of one scenario
BENCH_PIDS=()
RESULTS=()
FAILED=0
FAILURES=()     # one line per failure, printed after the table (test.sh puts them in its summary)
SCENARIO_NOW="" # the scenario running, named when the harness stops early
FINISHED=0

CHAOS_LAST="" # the last line chaos_log wrote from this shell (a failed fault's reason)
chaos_log() {
  CHAOS_LAST="$*"
  echo "chaos: $*" >&2
}

# chaos_fail WHY → marks the run failed and keeps WHY for the closing lines.
chaos_fail() {
  FAILED=1
  FAILURES+=("$*")
  chaos_log "$*"
}

# Stops the engines and benches started here, then the stores (bench_teardown).
chaos_teardown() {
  local pid
  for pid in "${BENCH_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${BENCH_PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  BENCH_PIDS=()
  engines_stop
  [ -n "$BENCH_WORK" ] && failover_teardown
  [ -n "$BENCH_WORK" ] && sf_pg_stop "$BENCH_WORK/pg2"
  bench_teardown
  netns_teardown
}
# The closing lines of a run that stopped early (bench_die, a signal): what failed and where.
chaos_exit() {
  local rc=$?
  if [ "$FINISHED" != 1 ] && [ "$rc" -ne 0 ]; then
    FAILURES+=("stopped early (exit $rc)${SCENARIO_NOW:+ in scenario $SCENARIO_NOW}")
    local why
    for why in "${FAILURES[@]}"; do
      echo "chaos: failed: $why"
    done
  fi
  chaos_teardown
}
trap chaos_exit EXIT
trap 'exit 130' INT TERM

# engine_start I → `seatflow serve` number I on its port (kept across restarts), healthy within 20 s.
engine_start() {
  local i="$1"
  env "${ENGINE_ENV[@]}" SEATFLOW_HTTP_ADDR="127.0.0.1:${ENGINE_PORTS[$i]}" \
    setsid "${ENGINE_WRAP[@]}" "$BIN" serve >>"$BENCH_WORK/engine-$i.log" 2>&1 &
  ENGINE_PIDS[i]=$!
  if ! bench_wait_http "http://127.0.0.1:${ENGINE_PORTS[$i]}/healthz" 20; then
    chaos_log "engine $i did not become healthy; last lines of its log:"
    tail -n 20 "$BENCH_WORK/engine-$i.log" >&2
    return 1
  fi
}

engine_kill9() {
  local i="$1" pid="${ENGINE_PIDS[$1]:-}"
  [ -n "$pid" ] || return 0
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  ENGINE_PIDS[i]=""
}

engine_stop() {
  local i="$1" pid="${ENGINE_PIDS[$1]:-}" k
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((k = 0; k < 150; k++)); do
    sf_alive "$pid" || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  ENGINE_PIDS[i]=""
}

engines_stop() {
  local i
  for i in "${!ENGINE_PIDS[@]}"; do
    engine_stop "$i"
  done
}

# failpoint_hits → the sum of seatflow_failpoint_hits_total over the running engines.
failpoint_hits() {
  local i total=0 n
  for i in "${!ENGINE_PIDS[@]}"; do
    [ -n "${ENGINE_PIDS[$i]}" ] || continue
    n="$(curl -fsS -m 5 "http://127.0.0.1:${ENGINE_PORTS[$i]}/metrics" 2>/dev/null |
      awk '/^seatflow_failpoint_hits_total/ { s += $2 } END { printf "%d", s }')" || n=0
    total=$((total + ${n:-0}))
  done
  echo "$total"
}

# engine_repairs → the sum of seatflow_reconcile_repairs_total over the running engines.
engine_repairs() {
  local i total=0 n
  for i in "${!ENGINE_PIDS[@]}"; do
    [ -n "${ENGINE_PIDS[$i]}" ] || continue
    n="$(curl -fsS -m 5 "http://127.0.0.1:${ENGINE_PORTS[$i]}/metrics" 2>/dev/null |
      awk '/^seatflow_reconcile_repairs_total/ { s += $2 } END { printf "%d", s }')" || n=0
    total=$((total + ${n:-0}))
  done
  echo "$total"
}

# reconcile_repairs FROM_LINE → seats repaired by the `reconcile --once` runs logged after FROM_LINE.
reconcile_repairs() {
  tail -n "+$(($1 + 1))" "$BENCH_WORK/reconcile.log" 2>/dev/null |
    sed -n 's/^reconcile: .*seats_sold=\([0-9]*\) seats_released=\([0-9]*\) seats_relocked=\([0-9]*\) seat_conflicts=\([0-9]*\).*/\1 \2 \3 \4/p' |
    awk '{ s += $1 + $2 + $3 + $4 } END { printf "%d", s }'
}

# json_num FILE KEY → the first integer value of "KEY" in FILE (0 when absent).
json_num() {
  local v
  v="$(grep -m 1 -o "\"$2\": [0-9]*" "$1" 2>/dev/null | awk '{ print $2 }')" || true
  echo "${v:-0}"
}

pg_restart() {
  local mode="$1"
  sf_pg_as_postgres pg_ctl -D "$BENCH_WORK/pg/data" -m "$mode" -w -t 30 stop >/dev/null 2>&1 || true
  sleep 0.3
  sf_pg_start "$BENCH_WORK/pg" "$BENCH_PG_PORT" -c fsync=on -c synchronous_commit=on
}

redis_restart_lost() {
  sf_redis_stop "$BENCH_WORK/redis" "$BENCH_REDIS_PORT"
  sleep 0.3
  sf_redis_start "$BENCH_WORK/redis" "$BENCH_REDIS_PORT" ephemeral
}

# loads_running → true while a bench of this scenario is still sending (its hold file not yet made).
loads_running() {
  local name
  for name in storm mixed; do
    if [ ! -e "$BENCH_WORK/hold-$name" ] && sf_alive "${BENCH_PID[$name]}"; then
      return 0
    fi
  done
  return 1
}

declare -A BENCH_PID

# history_check TAG PART → replays the history of load PART against the domain model and the stores
# (seatflow-bench --check-history), logs each oracle with its verdict, prints how many failed.
history_check() {
  local file="$BENCH_WORK/$1-$2.history" out n lossy=()
  [ "$HISTORY_LOSSY" = 1 ] && lossy=(--stream-lossy)
  [ "$HISTORY_EVENTS_PARTIAL" = 1 ] && lossy+=(--events-partial)
  [ "$HISTORY_PROXY_RESENDS" = 0 ] || lossy+=(--proxy-resends "$HISTORY_PROXY_RESENDS")
  out="$("$BENCH_BIN" --check-history "$file" "${lossy[@]}" 2>&1)" || true
  printf '%s\n' "$out" >"$BENCH_WORK/$1-$2-history.log"
  chaos_log "history check of the $2 load:"
  local line
  while IFS= read -r line; do
    echo "chaos:   $line"
  done <<<"$out" >&2
  n="$(sed -n 's/^history: .* violations=\([0-9]*\).*/\1/p' <<<"$out" | tail -n 1)"
  echo "${n:-1}"
}

# window_5xx TAG → the exchanges of both loads around the fault windows (fault-window.log:
# "start_ms end_ms" lines) as "<5xx of requests in flight during it> <200 for requests sent inside>
# <transport errors of requests sent inside> <first ACKs>", the last counting callback ids whose
# first 200 was both sent and answered inside a window: a callback newly applied while the fault
# held.
window_5xx() {
  local part
  for part in storm mixed; do
    jq -r 'select(.t == "x") | "\(.cb) \(.sent_ms) \(.answer_ms) \(.http)"' \
      "$BENCH_WORK/$1-$part.history"
  done | awk -v windows="$BENCH_WORK/fault-window.log" '
    BEGIN { while ((getline line < windows) > 0) { split(line, w, " "); n++; s[n] = w[1]; e[n] = w[2] } }
    $4 == 200 && (!($1 in first) || $3 < first[$1]) { first[$1] = $3; first_sent[$1] = $2 }
    $4 >= 500 { for (i = 1; i <= n; i++) if ($2 <= e[i] && $3 >= s[i]) { f++; break } }
    { for (i = 1; i <= n; i++) if ($2 >= s[i] && $2 <= e[i]) {
        if ($4 == 200) ok++; else if ($4 == 0) t++; break } }
    END {
      for (cb in first) for (i = 1; i <= n; i++)
        if (first_sent[cb] >= s[i] && first[cb] <= e[i]) { fresh++; break }
      printf "%d %d %d %d", f, ok, t, fresh }'
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run_scenario NAME LENIENT FAULT_FN MAX_FAULTS [VERDICT_FN] → one row of the table. VERDICT_FN TAG,
# when given, runs after the loads and prints its number of violations.
run_scenario() {
  local name="$1" lenient="$2" fault_fn="$3" max_faults="$4" verdict_fn="${5:-}"
  local tag="s${name%% *}"  # file names: s1-storm.json, ...
  local urls="" i faults=0 t0 t1 check_out violations=0 acked=0 retries=0 rc
  for i in "${!ENGINE_PORTS[@]}"; do
    urls+="${urls:+,}http://127.0.0.1:${ENGINE_PORTS[$i]}"
  done
  [ -n "$BENCH_URL_OVERRIDE" ] && urls="$BENCH_URL_OVERRIDE"
  chaos_log "scenario $name: storm ${STORM_PAYMENTS}x${STORM_DUPLICATES} + mixed $MIXED_PAYMENTS on $urls"
  # --stats-wait-ms: duplicates answered from an engine's memory reach duplicate_count within its
  # flush interval (SEATFLOW_DUPLICATE_FLUSH_MS, 1 s).
  local common=(--gateway --url "$urls" --connections "$CONNECTIONS" --max-attempts 100000
    --retry-delay-ms 20 --max-backoff-ms 500 --timeout-s "$LOAD_TIMEOUT_S" --stats-wait-ms 1500
    --no-vacuum --no-progress --secret "$BENCH_SECRET" "${BENCH_EXTRA[@]}"
    --before-check "$BIN reconcile --once >>$BENCH_WORK/reconcile.log 2>&1")
  [ "$lenient" = 1 ] && common+=(--lenient-duplicate-count)
  rm -f "$BENCH_WORK/hold-storm" "$BENCH_WORK/hold-mixed" "$BENCH_WORK/fault-window.log" \
    "$BENCH_WORK/started-storm" "$BENCH_WORK/started-mixed"
  local log_lines
  log_lines="$(wc -l <"$BENCH_WORK/reconcile.log")"
  "$BENCH_BIN" "${common[@]}" --scenario storm --payments "$STORM_PAYMENTS" \
    --duplicates "$STORM_DUPLICATES" --rate "$STORM_RATE" --hold-file "$BENCH_WORK/hold-storm" \
    --started-file "$BENCH_WORK/started-storm" \
    --history "$BENCH_WORK/$tag-storm.history" --json "$BENCH_WORK/$tag-storm.json" >"$BENCH_WORK/$tag-storm.log" 2>&1 &
  BENCH_PID[storm]=$!
  "$BENCH_BIN" "${common[@]}" --scenario mixed --payments "$MIXED_PAYMENTS" --rate "$MIXED_RATE" \
    --hold-file "$BENCH_WORK/hold-mixed" --started-file "$BENCH_WORK/started-mixed" \
    --history "$BENCH_WORK/$tag-mixed.history" \
    --json "$BENCH_WORK/$tag-mixed.json" >"$BENCH_WORK/$tag-mixed.log" 2>&1 &
  BENCH_PID[mixed]=$!
  BENCH_PIDS=("${BENCH_PID[storm]}" "${BENCH_PID[mixed]}")

  # Faults while the loads run, from 1 s after both began sending (each first waits until the
  # event slot decoded its seed, which a relay still recovering from the previous scenario can
  # stretch); bounded by their count and by the loads' own deadline.
  for ((i = 0; i < LOAD_TIMEOUT_S * 10; i++)); do
    [ -e "$BENCH_WORK/started-storm" ] && [ -e "$BENCH_WORK/started-mixed" ] && break
    loads_running || break
    sleep 0.1
  done
  sleep 1
  while [ "$faults" -lt "$max_faults" ] && loads_running; do
    if ! "$fault_fn"; then
      chaos_fail "scenario $name: fault injection failed: $CHAOS_LAST"
      break
    fi
    faults=$((faults + 1))
    sleep "$FAULT_GAP_S"
  done
  # Wait (bounded by the loads' deadline) until both loads are done, then let them check.
  for ((i = 0; i < LOAD_TIMEOUT_S * 10; i++)); do
    loads_running || break
    sleep 0.1
  done
  [ "$fault_fn" = fault_none ] && faults="$(failpoint_hits)"
  local repairs
  repairs="$(engine_repairs)"
  t0="$(date +%s.%N)"
  rm -f "$BENCH_WORK/hold-storm" "$BENCH_WORK/hold-mixed"
  rc=0
  wait "${BENCH_PID[storm]}" || rc=1
  wait "${BENCH_PID[mixed]}" || rc=1
  BENCH_PIDS=()
  check_out="$("$BIN" check 2>&1)" || true
  t1="$(date +%s.%N)"
  printf '%s\n' "$check_out" >"$BENCH_WORK/$tag-check.log"
  violations="$(sed -n 's/^check: .* violations=\([0-9]*\).*/\1/p' <<<"$check_out" | tail -n 1)"
  local why=()  # which checks found the violations, for the closing lines
  if [ -z "$violations" ]; then
    chaos_log "scenario $name: seatflow check did not run: $check_out"
    violations=1
  fi
  [ "$violations" -eq 0 ] || why+=("seatflow check $violations")
  local part n
  for part in storm mixed; do
    local json="$BENCH_WORK/$tag-$part.json"
    acked=$((acked + $(json_num "$json" acked)))
    retries=$((retries + $(json_num "$json" retries_total)))
    n="$(json_num "$json" checks_failed)"
    [ "$n" -eq 0 ] || why+=("$part bench checks $n")
    violations=$((violations + n))
    n="$(history_check "$tag" "$part")"
    [ "$n" -eq 0 ] || why+=("$part history $n: $(grep -E '^ *FAIL ' "$BENCH_WORK/$tag-$part-history.log" |
      head -n 2 | cut -c1-160 | tr -s ' \n' ' ')")
    violations=$((violations + n))
  done
  if [ -n "$verdict_fn" ]; then
    n="$("$verdict_fn" "$tag")"
    [ "$n" -eq 0 ] || why+=("$verdict_fn $n")
    violations=$((violations + n))
  fi
  if [ "$rc" -ne 0 ] && [ "$violations" -eq 0 ]; then
    violations=1  # a bench that did not finish (unACKed deliveries, an error) counts as one
    why+=("a load did not finish: $(tail -n 1 "$BENCH_WORK/$tag-storm.log" "$BENCH_WORK/$tag-mixed.log" \
      2>/dev/null | grep -v -e '^==>' -e '^$' | tr '\n' ' ')")
  fi
  if [ "$violations" -ne 0 ]; then
    local joined
    printf -v joined '%s; ' "${why[@]}"
    chaos_fail "scenario $name: $violations violation(s) (${joined%; })"
    chaos_log "scenario $name: bench logs and check output:"
    tail -n 25 "$BENCH_WORK/$tag-storm.log" "$BENCH_WORK/$tag-mixed.log" >&2 || true
    head -n 20 "$BENCH_WORK/$tag-check.log" >&2 || true
  fi
  repairs=$((repairs + $(reconcile_repairs "$log_lines")))
  RESULTS+=("$(printf '%-28s %10s %8s %9s %8s %11s %10.1f' "$name" "$acked" "$faults" "$retries" \
    "$repairs" "$violations" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")")
}

fault_none() { return 0; }
fault_kill9() {
  engine_kill9 0
  engine_start 0
}
PG_FAULTS=0
fault_pg() {
  local mode=fast
  [ $((PG_FAULTS % 2)) -eq 1 ] && mode=immediate
  PG_FAULTS=$((PG_FAULTS + 1))
  pg_restart "$mode"
}
fault_redis() { redis_restart_lost; }

# ---- Scenarios 7-9: frozen stores and a read-only switch; /readyz must keep answering ----------
# pg_pids → the postmaster and every process it forked.
pg_pids() {
  local postmaster
  postmaster="$(head -n 1 "$BENCH_WORK/pg/data/postmaster.pid" 2>/dev/null)" || return 1
  echo "$postmaster"
  pgrep -P "$postmaster" || true
}

# readyz_watch SECONDS → polls /readyz of engine ${READYZ_ENGINE:-0} every 0.2 s for SECONDS, one "code time_s" line
# per answer appended to readyz.log (000 and the curl time when no answer came within 2 s).
readyz_watch() {
  local end k line
  end=$(($(date +%s) + $1))
  for ((k = 0; k < $1 * 10 && $(date +%s) < end; k++)); do
    line="$(curl -s -m 2 -o /dev/null -w '%{http_code} %{time_total}' \
      "http://127.0.0.1:${ENGINE_PORTS[${READYZ_ENGINE:-0}]}/readyz" 2>/dev/null)" || true
    echo "${line:-000 2}" >>"$BENCH_WORK/readyz.log"
    sleep 0.2
  done
}

# readyz_verdict → fails (and says why) unless every answer came within 1 s and one was 503.
readyz_verdict() {
  local log="$BENCH_WORK/readyz.log" slowest
  slowest="$(awk '{ if ($2 > m) m = $2 } END { printf "%.3f", m }' "$log")"
  chaos_log "readyz during the fault: $(wc -l <"$log") answers, $(grep -c '^503' "$log" || true) x 503, slowest ${slowest} s"
  awk '$1 == "000" || $2 >= 1 { bad = 1 } END { exit bad }' "$log" ||
    { chaos_log "a /readyz answer took 1 s or more"; return 1; }
  grep -q '^503' "$log" || { chaos_log "/readyz never answered 503 during the fault"; return 1; }
}

# signal_stores SIGNAL PID... → sends SIGNAL to each process (those gone since are skipped).
signal_stores() {
  local sig="$1" pid
  shift
  for pid in "$@"; do
    kill "-$sig" "$pid" 2>/dev/null || true
  done
}

fault_pg_freeze() {
  local pids
  : >"$BENCH_WORK/readyz.log"
  mapfile -t pids < <(pg_pids) || return 1
  signal_stores STOP "${pids[@]}"
  readyz_watch "$FREEZE_S"
  # The postmaster forks nothing while stopped, so the same list thaws everything.
  signal_stores CONT "${pids[@]}"
  readyz_verdict
}

fault_redis_freeze() {
  local pid
  : >"$BENCH_WORK/readyz.log"
  pid="$(cat "$BENCH_WORK/redis/redis.pid")" || return 1
  signal_stores STOP "$pid"
  readyz_watch "$FREEZE_S"
  signal_stores CONT "$pid"
  readyz_verdict
}

# pg_read_only on|off → default_transaction_read_only for every new transaction, reloaded.
pg_read_only() {
  psql -X -q -At "postgresql://postgres@127.0.0.1:$BENCH_PG_PORT/postgres" \
    -c "ALTER SYSTEM SET default_transaction_read_only = $1" -c "SELECT pg_reload_conf()" >/dev/null
}

fault_pg_read_only() {
  : >"$BENCH_WORK/readyz.log"
  pg_read_only on || return 1
  readyz_watch "$READ_ONLY_S"
  pg_read_only off || return 1
  readyz_verdict
}

# ---- Scenarios 17-18: a Redis that lies about durability (SPEC §14) ---------------------------
# redis_config NAME VALUE → CONFIG SET on the harness's Redis (its own server: nothing else uses it).
redis_config() {
  local reply
  reply="$(redis-cli -h 127.0.0.1 -p "$BENCH_REDIS_PORT" CONFIG SET "$1" "$2" 2>&1)" || true
  [ "$reply" = OK ] || { chaos_log "CONFIG SET $1 $2 failed: $reply"; return 1; }
}

# policy_oracles → the number of violations of scenario 17's start-up oracles, the policy set to
# allkeys-lru meanwhile and back to noeviction whatever happened. A prod engine must exit 2 within
# 20 s with exactly one `event=startup_refused setting=maxmemory-policy` line; a dev engine must
# serve and warn once (event=redis_evicting_policy).
policy_oracles() {
  local prod_log="$BENCH_WORK/s17-prod.log" dev_log="$BENCH_WORK/s17-dev.log" pid port k rc=0 n=0
  redis_config maxmemory-policy allkeys-lru || { echo 1; return; }
  port="$(sf_free_port)"
  SEATFLOW_LOG_LEVEL=info SEATFLOW_SWEEPER=off SEATFLOW_RECONCILE_INTERVAL_MS=0 \
    SEATFLOW_HTTP_ADDR="127.0.0.1:$port" "$BIN" serve >"$prod_log" 2>&1 &
  pid=$!
  for ((k = 0; k < 200; k++)); do
    sf_alive "$pid" || break
    sleep 0.1
  done
  sf_alive "$pid" && { chaos_log "the prod engine still runs on an evicting Redis"; n=$((n + 1)); }
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || rc=$?
  local refused
  refused="$(grep -c 'event=startup_refused setting=maxmemory-policy value="allkeys-lru"' "$prod_log" || true)"
  chaos_log "oracle: prod refuses an evicting Redis: exit $rc, $refused refusal line(s)"
  { [ "$rc" = 2 ] && [ "$refused" = 1 ]; } || n=$((n + 1))
  port="$(sf_free_port)"
  SEATFLOW_PROFILE=dev SEATFLOW_MOCK_GATEWAY=off SEATFLOW_LOG_LEVEL=info SEATFLOW_SWEEPER=off \
    SEATFLOW_RECONCILE_INTERVAL_MS=0 \
    SEATFLOW_HTTP_ADDR="127.0.0.1:$port" "$BIN" serve >"$dev_log" 2>&1 &
  pid=$!
  local served=no warned
  bench_wait_http "http://127.0.0.1:$port/healthz" 20 && served=yes
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  warned="$(grep -c 'event=redis_evicting_policy setting=maxmemory-policy' "$dev_log" || true)"
  chaos_log "oracle: dev warns and serves: served $served, $warned warning line(s)"
  { [ "$served" = yes ] && [ "$warned" = 1 ]; } || n=$((n + 1))
  redis_config maxmemory-policy noeviction || n=$((n + 1))
  echo "$n"
}
POLICY_VIOLATIONS=0
policy_verdict() { echo "$POLICY_VIOLATIONS"; }

fault_redis_oom() {
  : >"$BENCH_WORK/readyz.log"
  redis_config maxmemory 1 || return 1
  readyz_watch "$FREEZE_S"
  redis_config maxmemory 0 || return 1
  readyz_verdict
}

# ---- Scenarios 10-11: PostgreSQL behind a veth pair in a network namespace, nftables faults ----
NETNS=""
NETNS_HOST_IF=""
PG_NS_ADDR=""

# netns_setup → a network namespace with a veth pair: 10.217.N.1 on the host, 10.217.N.2 inside.
netns_setup() {
  [ -n "$NETNS" ] && return 0
  command -v nft >/dev/null 2>&1 || { chaos_log "nft is missing (scripts/deps.sh)"; return 1; }
  [ "$(id -u)" -eq 0 ] || { chaos_log "scenarios 10-11 need root (ip netns, nft)"; return 1; }
  local n=$((($$ % 250) + 1)) ns_if="sfc$$n" k
  # A /30 no other interface of the host uses (another run of this harness, say).
  for ((k = 0; k < 250; k++)); do
    ip -o addr show | grep -q " 10\.217\.$n\." || break
    n=$((n % 250 + 1))
  done
  NETNS="seatflow-chaos-$$"
  NETNS_HOST_IF="sfc$$h"
  PG_NS_ADDR="10.217.$n.2"
  ip netns add "$NETNS" &&
    ip link add "$NETNS_HOST_IF" type veth peer name "$ns_if" &&
    ip link set "$ns_if" netns "$NETNS" &&
    ip addr add "10.217.$n.1/30" dev "$NETNS_HOST_IF" &&
    ip link set "$NETNS_HOST_IF" up &&
    ip netns exec "$NETNS" ip addr add "$PG_NS_ADDR/30" dev "$ns_if" &&
    ip netns exec "$NETNS" ip link set "$ns_if" up &&
    ip netns exec "$NETNS" ip link set lo up
}

# netns_teardown → the namespace (its nftables tables and its veth end go with it) and the host end.
netns_teardown() {
  [ -n "$NETNS" ] || return 0
  ip netns del "$NETNS" 2>/dev/null || true
  ip link del "$NETNS_HOST_IF" 2>/dev/null || true
  NETNS=""
}

# pg_ctl_in NS ARGS... → pg_ctl as the postgres user inside network namespace NS.
pg_ctl_in() {
  local ns="$1"
  shift
  (cd / && ip netns exec "$ns" runuser -u postgres -- "$SF_PG_BIN/pg_ctl" "$@")
}

# pg_into_netns → PostgreSQL restarted inside the namespace, listening on its veth address only; every
# client of this run (engines, benches, checks) reaches it through the veth pair.
pg_into_netns() {
  netns_setup || return 1
  local data="$BENCH_WORK/pg/data"
  sf_pg_stop "$BENCH_WORK/pg"
  grep -q "${PG_NS_ADDR%.*}.0/30" "$data/pg_hba.conf" ||
    echo "host all all ${PG_NS_ADDR%.*}.0/30 trust" >>"$data/pg_hba.conf"
  pg_ctl_in "$NETNS" -D "$data" -l "$BENCH_WORK/pg/log" -w -t 60 -o "-p $BENCH_PG_PORT \
    -k $BENCH_WORK/pg -c listen_addresses=$PG_NS_ADDR -c fsync=on -c synchronous_commit=on \
    -c max_connections=200 -c shared_buffers=256MB -c wal_level=logical -c max_replication_slots=20 \
    -c max_wal_senders=10 -c max_slot_wal_keep_size=-1" start >/dev/null || return 1
  export SEATFLOW_PG_DSN="postgresql://postgres@$PG_NS_ADDR:$BENCH_PG_PORT/seatflow"
}

# pg_out_of_netns → PostgreSQL back on the host's loopback as bench_start_stores left it.
pg_out_of_netns() {
  nft_clear
  sf_pg_stop "$BENCH_WORK/pg"
  sf_pg_start "$BENCH_WORK/pg" "$BENCH_PG_PORT" -c fsync=on -c synchronous_commit=on || return 1
  export SEATFLOW_PG_DSN="postgresql://postgres@127.0.0.1:$BENCH_PG_PORT/seatflow"
}

# nft_fault drop|reset → inside the namespace, PostgreSQL's packets dropped both ways, or every
# packet to it answered with a tcp reset.
nft_fault() {
  local verdict="drop"
  [ "$1" = reset ] && verdict="reject with tcp reset"
  ip netns exec "$NETNS" nft -f - <<EOF
table inet seatflow_chaos {
  chain input { type filter hook input priority 0; policy accept; tcp dport $BENCH_PG_PORT $verdict; }
  chain output { type filter hook output priority 0; policy accept; tcp sport $BENCH_PG_PORT drop; }
}
EOF
}

# nft_clear → the fault's table deleted (nothing when there is none).
nft_clear() {
  [ -n "$NETNS" ] || return 0
  ip netns exec "$NETNS" nft delete table inet seatflow_chaos 2>/dev/null || true
}

# net_fault drop|reset → the fault for NET_FAULT_S while /readyz is polled, then cleared.
net_fault() {
  : >"$BENCH_WORK/readyz.log"
  local start
  nft_fault "$1" || return 1
  start="$(now_ms)"
  readyz_watch "$NET_FAULT_S"
  echo "$start $(now_ms)" >>"$BENCH_WORK/fault-window.log"
  nft_clear
  relay_back_after_fault
  readyz_verdict
}

# relay_back_after_fault → logs how long after the fault the event slot confirmed the WAL written
# until its end, and the relay streams the engines took back from their own lost connections
# (seatflow_event_streams_taken_back_total). Information, not a verdict.
relay_back_after_fault() {
  local lsn cleared confirmed taken=0 i n
  cleared="$(now_ms)"
  lsn="$(psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT pg_current_wal_lsn()")" || return 0
  confirmed="$(slot_confirmed_past "$lsn")"
  for i in "${!ENGINE_PIDS[@]}"; do
    n="$(curl -fsS -m 5 "http://127.0.0.1:${ENGINE_PORTS[$i]}/metrics" 2>/dev/null |
      awk '/^seatflow_event_streams_taken_back_total/ { printf "%d", $2 }')" || n=0
    taken=$((taken + ${n:-0}))
  done
  if [ -n "$confirmed" ]; then
    chaos_log "relay: the event slot confirmed the fault's WAL $(($(now_ms) - cleared)) ms after it ended; streams taken back so far: $taken"
  else
    chaos_log "relay: the event slot did not confirm the fault's WAL within ${RELAY_CONFIRM_S} s; streams taken back so far: $taken"
  fi
}
fault_pg_blackhole() { net_fault drop; }
fault_pg_reset() { net_fault reset; }

# net_verdict TAG → a violation unless callbacks in flight during the fault were answered 503, and one
# when a callback was first ACKed (newly applied) entirely inside the fault.
net_verdict() {
  local f ok t fresh n=0
  read -r f ok t fresh <<<"$(window_5xx "$1")"
  chaos_log "oracle: callbacks in flight during the fault answered 503, none newly applied while it held"
  chaos_log "  $f requests in flight during the fault answered 5xx; of those sent inside it $ok answered 200 ($fresh of them first ACKs answered inside it), $t transport errors"
  [ "$f" -gt 0 ] || { chaos_log "no callback in flight during the fault was answered 503"; n=$((n + 1)); }
  [ "$fresh" -eq 0 ] || { chaos_log "$fresh callbacks were newly ACKed while PostgreSQL was unreachable"; n=$((n + 1)); }
  echo "$n"
}

# ---- Scenario 12: engine 0 paused while engine 1 serves the same payments ---------------------
fault_engine_pause() {
  local pid="${ENGINE_PIDS[0]}" start
  : >"$BENCH_WORK/readyz.log"
  start="$(now_ms)"
  kill -STOP "$pid" || return 1
  READYZ_ENGINE=1 readyz_watch "$PAUSE_S"
  kill -CONT "$pid" || return 1
  echo "$start $(now_ms)" >>"$BENCH_WORK/fault-window.log"
  # Engine 1 stays ready: another engine's pause is no reason to leave the pool.
  chaos_log "engine 1's /readyz while engine 0 was paused: $(wc -l <"$BENCH_WORK/readyz.log") answers, $(grep -c '^200' "$BENCH_WORK/readyz.log" || true) x 200"
  awk '$1 != "200" || $2 >= 1 { bad = 1 } END { exit bad }' "$BENCH_WORK/readyz.log" ||
    { chaos_log "engine 1's /readyz was not 200 within 1 s while engine 0 was paused"; return 1; }
}

# ---- Scenarios 13-14: the engine's clock skewed by faketime ----------------------------------
# run_skew_scenario NAME OFFSET → an engine whose wall clock is OFFSET seconds (e.g. +301) off, by
# libfaketime preloaded, receives signed
# callbacks of fresh payments, signed with the real time; every answer must be 401 (stale), no log
# row written, no payment moved, and the history checker finds nothing wrong. Then a control: the
# same load against an engine 290 s off is ACKed in full.
run_skew_scenario() {
  local name="$1" offset="$2" tag="s${1%% *}" t0 t1 violations=0 prefix
  local libs=(/usr/lib/*/faketime/libfaketimeMT.so.1) lib
  lib="${libs[0]}"
  [ -e "$lib" ] || { chaos_log "libfaketime is missing (scripts/deps.sh installs faketime)"; return 1; }
  # Only the wall clock moves: the engine's steady timers and deadlines keep real time.
  ENGINE_WRAP=(env "LD_PRELOAD=$lib" "FAKETIME=$offset" FAKETIME_DONT_FAKE_MONOTONIC=1)
  local skew_lines_before
  skew_lines_before="$(grep -c 'event=clock_skew' "$BENCH_WORK/engine-0.log" 2>/dev/null || true)"
  setup_engines 1 || { ENGINE_WRAP=(); return 1; }
  chaos_log "scenario $name: $SKEW_PAYMENTS fresh payments; now $(date -u +%T), the engine's clock $("${ENGINE_WRAP[@]}" date -u +%T)"
  ENGINE_WRAP=()
  t0="$(date +%s.%N)"
  "$BENCH_BIN" --gateway --url "http://127.0.0.1:${ENGINE_PORTS[0]}" --connections 8 \
    --scenario unique --payments "$SKEW_PAYMENTS" --max-attempts 3 --timeout-s 60 \
    --stats-wait-ms 0 --no-vacuum --no-progress --no-check --secret "$BENCH_SECRET" \
    --history "$BENCH_WORK/$tag-skew.history" --json "$BENCH_WORK/$tag.json" \
    >"$BENCH_WORK/$tag.log" 2>&1 || true  # nothing is ACKed, so the bench reports failure
  prefix="$(head -n 1 "$BENCH_WORK/$tag-skew.history" | jq -r .prefix)"
  local answers not_401 rows moved payments
  answers="$(jq -r 'select(.t == "x") | .http' "$BENCH_WORK/$tag-skew.history" | sort | uniq -c |
    awk '{ printf "%s%s x %s", (NR > 1 ? ", " : ""), $1, $2 }')"
  not_401="$(jq -r 'select(.t == "x" and .http != 401) | .cb' "$BENCH_WORK/$tag-skew.history" | wc -l)"
  local psql=(psql -X -q -At "$SEATFLOW_PG_DSN")
  payments="$("${psql[@]}" -c "SELECT count(*) FROM payment_order WHERE payment_no LIKE 'P$prefix-%'")"
  rows="$("${psql[@]}" -c "SELECT count(*) FROM payment_callback_log WHERE payment_no LIKE 'P$prefix-%'")"
  moved="$("${psql[@]}" -c "SELECT count(*) FROM payment_order p JOIN order_info o USING (order_no)
    WHERE p.payment_no LIKE 'P$prefix-%' AND (p.status <> 0 OR o.status <> 0)")"
  chaos_log "oracle: every answer 401 (stale), no log row, no payment moved"
  chaos_log "  answers: ${answers:-none}; not 401: $not_401; log rows: $rows; moved: $moved of $payments"
  { [ "$not_401" = 0 ] && [ -n "$answers" ]; } || violations=$((violations + 1))
  [ "$rows" = 0 ] || violations=$((violations + 1))
  { [ "$moved" = 0 ] && [ "$payments" = "$SKEW_PAYMENTS" ]; } || violations=$((violations + 1))
  violations=$((violations + $(history_check "$tag" skew)))
  # A wrong clock is visible (SPEC §14): every 401 counted as stale, none as a forgery, and the
  # throttled clock_skew line written (once a minute at most: once or twice in this run).
  local metrics stale forged skew_lines
  metrics="$(curl -fsS -m 5 "http://127.0.0.1:${ENGINE_PORTS[0]}/metrics" 2>/dev/null)" || true
  stale="$(awk '/^seatflow_payment_callback_total\{.*result="stale"/ { s += $2 } END { printf "%d", s }' <<<"$metrics")"
  forged="$(awk '/^seatflow_payment_callback_total\{.*result="rejected_signature"/ { s += $2 } END { printf "%d", s }' <<<"$metrics")"
  skew_lines=$(($(grep -c 'event=clock_skew' "$BENCH_WORK/engine-0.log" || true) - skew_lines_before))
  chaos_log "oracle: the 401s counted stale ($stale), none rejected_signature ($forged), clock_skew logged $skew_lines time(s)"
  { [ "$stale" -gt 0 ] && [ "$forged" = 0 ] && [ "$skew_lines" -ge 1 ] && [ "$skew_lines" -le 2 ]; } ||
    violations=$((violations + 1))
  # Control: an engine 290 s off the same way (inside the window) ACKs every callback, so the 401s
  # above come from the freshness window and not from the preloaded clock breaking the engine.
  local control="${offset:0:1}290" control_rc=0
  ENGINE_WRAP=(env "LD_PRELOAD=$lib" "FAKETIME=$control" FAKETIME_DONT_FAKE_MONOTONIC=1)
  setup_engines 1 || { ENGINE_WRAP=(); return 1; }
  ENGINE_WRAP=()
  "$BENCH_BIN" --gateway --url "http://127.0.0.1:${ENGINE_PORTS[0]}" --connections 8 \
    --scenario unique --payments "$SKEW_PAYMENTS" --max-attempts 100 --timeout-s 60 \
    --stats-wait-ms 1500 --no-vacuum --no-progress --secret "$BENCH_SECRET" \
    --history "$BENCH_WORK/$tag-control.history" --json "$BENCH_WORK/$tag-control.json" \
    >"$BENCH_WORK/$tag-control.log" 2>&1 || control_rc=1
  chaos_log "control: the engine's clock $control s off (inside the window): $(json_num "$BENCH_WORK/$tag-control.json" acked) of $SKEW_PAYMENTS ACKed, bench checks $([ "$control_rc" = 0 ] && echo passed || echo FAILED)"
  [ "$control_rc" = 0 ] || violations=$((violations + 1))
  violations=$((violations + $(history_check "$tag" control)))
  t1="$(date +%s.%N)"
  if [ "$violations" -ne 0 ]; then
    chaos_fail "scenario $name: $violations violation(s) (401 oracle, history and control, logged above)"
    tail -n 20 "$BENCH_WORK/$tag.log" "$BENCH_WORK/engine-0.log" >&2 || true
  fi
  RESULTS+=("$(printf '%-28s %10s %8s %9s %8s %11s %10.1f' "$name" \
    "$(json_num "$BENCH_WORK/$tag-control.json" acked)" 1 \
    "$(json_num "$BENCH_WORK/$tag.json" retries_total)" 0 "$violations" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")")
}

# ---- Scenario 16: PostgreSQL failed over to a synchronous standby -----------------------------
STANDBY_NAME="seatflow_chaos_standby"
STANDBY_PORT=""
STANDBY_READY_S=30  # how long the engine may take to be ready again on the promoted server
PROMOTED_AT=""      # the promoted server's clock once it took over (for failover_verdict)
SLOT_REMADE_S=15    # how long the engine's relay may take to make its slot anew after promotion
REMADE_LSN=""       # the promoted server's WAL position once the engine's event slot was made
RELAY_CONFIRM_S=15  # how long the relay may take to confirm its new slot past REMADE_LSN

# witness_slot_create → the history checker's witness slot on the writable server of SEATFLOW_PG_DSN.
witness_slot_create() {
  psql -X -q -At "$SEATFLOW_PG_DSN" -v ON_ERROR_STOP=1 \
    -c "SELECT 1 FROM pg_create_logical_replication_slot('seatflow_chaos_witness', 'pgoutput')" \
    >/dev/null
}

# standby_start → a streaming standby of the harness's PostgreSQL in $BENCH_WORK/pg2 (a base backup
# taken now), made the primary's synchronous standby: a commit is acknowledged once the standby
# has flushed it, so a promotion loses no acknowledged commit.
standby_start() {
  local dir="$BENCH_WORK/pg2" k state=""
  STANDBY_PORT="$(sf_free_port)" || return 1
  sf_pg_stop "$dir"
  rm -rf "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    install -d -o postgres -g postgres -m 700 "$dir" || return 1
  else
    install -d -m 700 "$dir" || return 1
  fi
  # The primary's ALTER SYSTEM below comes after the backup: the standby, once promoted, must not
  # wait for a synchronous standby of its own.
  sf_pg_as_postgres pg_basebackup -h 127.0.0.1 -p "$BENCH_PG_PORT" -U postgres -D "$dir/data" \
    -X stream -R -c fast >"$BENCH_WORK/basebackup.log" 2>&1 ||
    { chaos_log "pg_basebackup failed: $(tail -n 3 "$BENCH_WORK/basebackup.log")"; return 1; }
  echo "primary_conninfo = 'host=127.0.0.1 port=$BENCH_PG_PORT user=postgres application_name=$STANDBY_NAME'" \
    >>"$dir/data/postgresql.auto.conf"
  sf_pg_start "$dir" "$STANDBY_PORT" -c fsync=on -c synchronous_commit=on || return 1
  bench_admin_psql -At -c "ALTER SYSTEM SET synchronous_standby_names = '\"$STANDBY_NAME\"'" \
    -c "SELECT pg_reload_conf()" >/dev/null || return 1
  for ((k = 0; k < 300; k++)); do
    state="$(bench_admin_psql -At -c "SELECT sync_state FROM pg_stat_replication
      WHERE application_name = '$STANDBY_NAME'" 2>/dev/null)" || true
    [ "$state" = sync ] && return 0
    sleep 0.1
  done
  chaos_log "the standby did not become synchronous within 30 s (sync_state '$state')"
  return 1
}

# fault_pg_failover → the primary frozen for FREEZE_S (/readyz polled), the standby promoted, the
# frozen primary killed; no operator step: the engine's relay makes its event slot anew on the
# promoted server (seatflow_event_slots_created_total, the alert SeatFlowEventSlotRemade), then the
# witness slot is made anew and /readyz polled until it answers 200 (within STANDBY_READY_S).
fault_pg_failover() {
  local pids k start promoted ready=ready
  : >"$BENCH_WORK/readyz.log"
  mapfile -t pids < <(pg_pids) || return 1
  start="$(now_ms)"
  signal_stores STOP "${pids[@]}"
  readyz_watch "$FREEZE_S"
  sf_pg_as_postgres pg_ctl -D "$BENCH_WORK/pg2/data" -w -t 60 promote >/dev/null ||
    { signal_stores CONT "${pids[@]}"; chaos_log "pg_ctl promote failed"; return 1; }
  # Fenced: the old primary never answers again (a stopped process dies of SIGKILL).
  signal_stores KILL "${pids[@]}"
  promoted="$(now_ms)"
  PROMOTED_AT="$(psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT now()")" || return 1
  # No operator step: the engine's relay finds its slot missing on the promoted server and makes
  # it anew (the counter the alert SeatFlowEventSlotRemade fires on).
  local metrics
  for ((k = 0; k < SLOT_REMADE_S * 5; k++)); do
    # Read whole first: grep -q leaving early would fail the pipe under pipefail.
    metrics="$(curl -s -m 2 "http://127.0.0.1:${ENGINE_PORTS[0]}/metrics" 2>/dev/null)" || true
    grep -q '^seatflow_event_slots_created_total 1$' <<<"$metrics" && break
    sleep 0.2
  done
  [ "$k" -lt $((SLOT_REMADE_S * 5)) ] ||
    { chaos_log "seatflow_event_slots_created_total was not 1 within ${SLOT_REMADE_S} s of the promotion"; return 1; }
  chaos_log "failover: the engine made its event slot anew $(($(now_ms) - promoted)) ms after the promotion"
  REMADE_LSN="$(psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT pg_current_wal_lsn()")" || return 1
  witness_slot_create || { chaos_log "could not make the witness slot on the promoted server"; return 1; }
  bench_wait_http "http://127.0.0.1:${ENGINE_PORTS[0]}/readyz" "$STANDBY_READY_S" || ready="not ready"
  echo "$start $(now_ms)" >>"$BENCH_WORK/fault-window.log"
  chaos_log "failover: primary frozen ${FREEZE_S} s, standby promoted; $ready $(($(now_ms) - promoted)) ms after the promotion"
  [ "$ready" = ready ] || { chaos_log "/readyz did not answer 200 within ${STANDBY_READY_S} s of the promotion"; return 1; }
  readyz_verdict
}

# slot_confirmed_past LSN → the engine's slot's confirmed position once it is at or past LSN
# (polled for up to RELAY_CONFIRM_S); nothing when it did not get there.
slot_confirmed_past() {
  local k confirmed=""
  for ((k = 0; k < RELAY_CONFIRM_S * 5; k++)); do
    confirmed="$(psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT COALESCE(confirmed_flush_lsn::text, '')
      FROM pg_replication_slots WHERE slot_name = 'seatflow_events'
        AND confirmed_flush_lsn >= '$1'::pg_lsn")" || confirmed=""
    [ -n "$confirmed" ] && break
    sleep 0.2
  done
  echo "$confirmed"
}

# failover_verdict TAG → a violation unless callbacks were applied on the promoted server (the
# loads were still running when it took over, so the engine must have moved to it), and one unless
# the engine's relay confirmed its new slot there past the position at which it was made (it
# streams from the promoted server), and one unless every payment moved there has its event.
failover_verdict() {
  local n bad=0 confirmed=""
  n="$(psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT count(*) FROM payment_callback_log
    WHERE received_at > '$PROMOTED_AT'")" || n=0
  chaos_log "oracle: callbacks applied on the promoted server: $n (must be more than 0)"
  [ "${n:-0}" -gt 0 ] || bad=$((bad + 1))
  confirmed="$(slot_confirmed_past "$REMADE_LSN")"
  chaos_log "oracle: the relay confirmed its new slot past $REMADE_LSN: ${confirmed:-no, not within ${RELAY_CONFIRM_S} s}"
  [ -n "$confirmed" ] || bad=$((bad + 1))
  # No move on the promoted server without its event (migration 11 refuses moves while the slot is
  # missing): once the relay has confirmed the slot to the WAL's end, every payment that moved
  # there (updated_at after the promotion) has the event of its status on the stream.
  local end moved published missing
  end="$(psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT pg_current_wal_lsn()")" || end=""
  confirmed="$(slot_confirmed_past "${end:-0/0}")"
  moved="$BENCH_WORK/$1-moved-after-promotion"
  published="$BENCH_WORK/$1-published-payment-events"
  psql -X -q -At "$SEATFLOW_PG_DSN" -c "SELECT CASE status WHEN 1 THEN 'payment.succeeded:'
      WHEN 2 THEN 'payment.failed:' WHEN 3 THEN 'payment.closed:' ELSE 'payment.refunded:' END
      || payment_no FROM payment_order WHERE status <> 0 AND updated_at > '$PROMOTED_AT'" |
    sort -u >"$moved" || : >"$moved"
  redis-cli -p "$BENCH_REDIS_PORT" --raw XRANGE seatflow:events - + 2>/dev/null |
    grep -E '^payment\.(succeeded|failed|closed|refunded):' | sort -u >"$published" || true
  missing="$(comm -23 "$moved" "$published" | wc -l)"
  chaos_log "oracle: payments moved on the promoted server with their event on the stream: $(($(wc -l <"$moved") - missing)) of $(wc -l <"$moved") (relay at ${confirmed:-not at $end})"
  if [ -z "$confirmed" ] || [ "$missing" -ne 0 ] || [ ! -s "$moved" ]; then
    bad=$((bad + 1))
  fi
  echo "$bad"
}

# pg_after_failover → the promoted server moved into $BENCH_WORK/pg and restarted on the harness's
# port as a plain primary, so later scenarios (their faults address $BENCH_WORK/pg) find it there.
pg_after_failover() {
  sf_pg_stop "$BENCH_WORK/pg2"
  sf_pg_stop "$BENCH_WORK/pg"
  rm -rf "$BENCH_WORK/pg/data"
  mv "$BENCH_WORK/pg2/data" "$BENCH_WORK/pg/data" || return 1
  rm -f "$BENCH_WORK/pg/data/postmaster.pid"
  sf_pg_start "$BENCH_WORK/pg" "$BENCH_PG_PORT" -c fsync=on -c synchronous_commit=on || return 1
  export SEATFLOW_PG_DSN="postgresql://postgres@127.0.0.1:$BENCH_PG_PORT/seatflow"
}

# ---- Scenario 6: orders through the API racing for seats while Redis loses its data ----------
RACE_TOKEN="chaos-api-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
RACE_ATTEMPTS_MAX=200  # per creator and per payment/callback step: bounded even if the engine stalls

# race_post PATH BODY OUT → the HTTP status of POST PATH (000 on a transport error), body in OUT.
race_post() {
  curl -s -m 5 -o "$3" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $RACE_TOKEN" --data "$2" "$RACE_URL$1" 2>/dev/null || true
}

# race_pay ORDER → creates the order's payment and delivers its signed success callback until the
# engine ACKs it (a gateway's retries); fails after RACE_ATTEMPTS_MAX tries of a step.
race_pay() {
  local order="$1" payment="pay-$1" out code k ts sign body
  out="$(mktemp "$BENCH_WORK/race.XXXXXX")"
  for ((k = 0; k < RACE_ATTEMPTS_MAX; k++)); do
    code="$(race_post /api/payments "{\"orderNo\":\"$order\",\"channel\":\"hmac\",\"paymentNo\":\"$payment\"}" "$out")"
    # 409 after a 5xx whose payment did commit: the order already has this payment.
    [ "$code" = 201 ] || { [ "$code" = 409 ] && grep -q "$payment" "$out"; } && break
    sleep 0.05
  done
  [ "$k" -lt "$RACE_ATTEMPTS_MAX" ] || { rm -f "$out"; return 1; }
  for ((k = 0; k < RACE_ATTEMPTS_MAX; k++)); do
    ts="$(($(date +%s%N) / 1000000))"
    sign="$(printf '%s\n%s\n%s\n%s' "cb-$order" "$payment" 1 "$ts" |
      openssl dgst -sha256 -hmac "$BENCH_SECRET" -r | cut -d' ' -f1)"
    body="{\"callbackId\":\"cb-$order\",\"paymentNo\":\"$payment\",\"status\":1,\"timestamp\":$ts,\"sign\":\"$sign\"}"
    code="$(curl -s -m 5 -o "$out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      --data "$body" "$RACE_URL/api/payment/notify/hmac" 2>/dev/null || true)"
    [ "$code" = 200 ] && break
    sleep 0.05
  done
  rm -f "$out"
  [ "$k" -lt "$RACE_ATTEMPTS_MAX" ]
}

# race_creator SEAT K → after a random delay, creates orders for SEAT (a fresh orderNo per try) until
# one is answered 201 (then pays it) or 409; logs "orderNo status" per try to race-attempts.log.
race_creator() {
  local seat="$1" k="$2" attempt order code out
  out="$(mktemp "$BENCH_WORK/race.XXXXXX")"
  sleep "$(awk -v r="$RANDOM" -v s="$RACE_SPREAD_MS" 'BEGIN { printf "%.3f", (r % s) / 1000 }')"
  for ((attempt = 1; attempt <= RACE_ATTEMPTS_MAX; attempt++)); do
    order="race-$seat-$k-$attempt"
    code="$(race_post /api/orders "{\"orderNo\":\"$order\",\"userId\":\"u$k\",\"showId\":\"race-show\",\"seatIds\":[\"$seat\"],\"amountCents\":5000}" "$out")"
    echo "$order $code" >>"$BENCH_WORK/race-attempts.log"
    case "$code" in
      201) rm -f "$out"; race_pay "$order" || echo "$order unpaid" >>"$BENCH_WORK/race-attempts.log"; return 0 ;;
      409) rm -f "$out"; return 0 ;;
    esac
    sleep 0.05
  done
  rm -f "$out"
  echo "$order gave-up" >>"$BENCH_WORK/race-attempts.log"
}
export -f race_post race_pay race_creator
export RACE_TOKEN RACE_ATTEMPTS_MAX BENCH_SECRET BENCH_WORK RACE_SPREAD_MS

# race_violations → one line per broken expectation of scenario 6's end state; prints nothing when
# it holds. Run after `seatflow reconcile --once`.
race_violations() {
  local psql=(psql -X -q -At "$SEATFLOW_PG_DSN")
  local attempts="$BENCH_WORK/race-attempts.log"
  awk '$2 == "unpaid" || $2 == "gave-up" { print "creator did not finish: " $0 }' "$attempts"
  # Every seat: exactly one live order, and it is PAID.
  "${psql[@]}" -c "SELECT 'seat ' || seat || ': ' || count(*) || ' live orders, ' ||
      count(*) FILTER (WHERE status = 1) || ' paid'
    FROM (SELECT unnest(seat_ids) AS seat, status FROM order_info
          WHERE show_id = 'race-show' AND status IN (0, 1)) s
    GROUP BY seat HAVING count(*) <> 1 OR count(*) FILTER (WHERE status = 1) <> 1"
  local seats
  seats="$("${psql[@]}" -c "SELECT count(DISTINCT seat) FROM (SELECT unnest(seat_ids) AS seat
    FROM order_info WHERE show_id = 'race-show' AND status = 1) s")"
  [ "$seats" = "$RACE_SEATS" ] || echo "$seats of $RACE_SEATS seats are sold"
  # The live order of each seat is the one answered 201; a 409'd order left no row.
  local created refused
  created="$(awk '$2 == 201 { print $1 }' "$attempts" | sort | paste -sd, -)"
  refused="$(awk '$2 == 409 { print $1 }' "$attempts" | sort | paste -sd, -)"
  "${psql[@]}" -c "SELECT 'order ' || order_no || ' is live but was not answered 201'
    FROM order_info WHERE show_id = 'race-show' AND status IN (0, 1)
      AND order_no <> ALL (string_to_array('$created', ','))"
  "${psql[@]}" -c "SELECT 'order ' || order_no || ' was answered 409 but exists'
    FROM order_info WHERE order_no = ANY (string_to_array('$refused', ','))"
  # Redis agrees with the claims after the reconcile.
  local seat value holder
  while IFS='|' read -r seat holder; do
    value="$(redis-cli -p "$BENCH_REDIS_PORT" HGET 'seatflow:seats:{race-show}' "$seat")"
    [ "$value" = "2:$holder" ] || echo "seat $seat is '$value' in Redis, expected '2:$holder'"
  done < <("${psql[@]}" -c "SELECT c.seat_id, c.order_no FROM seat_claim c
    WHERE c.show_id = 'race-show' ORDER BY c.seat_id")
}

run_race_scenario() {
  local name="$1" faults=0 i t0 t1 pids=() violations check_out retries
  RACE_URL="http://127.0.0.1:${ENGINE_PORTS[0]}"
  export RACE_URL
  : >"$BENCH_WORK/race-attempts.log"
  chaos_log "scenario $name: $RACE_SEATS seats x $RACE_CREATORS creators over ${RACE_SPREAD_MS} ms"
  local seat k
  for ((i = 0; i < RACE_SEATS; i++)); do
    for ((k = 0; k < RACE_CREATORS; k++)); do
      bash -c 'race_creator "$@"' _ "S$i" "$k" &
      pids+=("$!")
    done
  done
  BENCH_PIDS=("${pids[@]}")
  local gap
  gap="$(awk -v s="$RACE_SPREAD_MS" -v n="$RACE_REDIS_RESTARTS" 'BEGIN { printf "%.3f", s / 1000 / (n + 1) }')"
  for ((i = 0; i < RACE_REDIS_RESTARTS; i++)); do
    sleep "$gap"
    redis_restart_lost || { chaos_fail "scenario $name: Redis restart failed"; break; }
    faults=$((faults + 1))
  done
  for seat in "${pids[@]}"; do
    wait "$seat" || true
  done
  BENCH_PIDS=()
  local repairs
  repairs="$(engine_repairs)"
  t0="$(date +%s.%N)"
  local log_lines
  log_lines="$(wc -l <"$BENCH_WORK/reconcile.log")"
  "$BIN" reconcile --once >>"$BENCH_WORK/reconcile.log" 2>&1 || true
  violations="$(race_violations)"
  check_out="$("$BIN" check 2>&1)" || true
  t1="$(date +%s.%N)"
  printf '%s\n' "$violations" >"$BENCH_WORK/s6-violations.log"
  printf '%s\n' "$check_out" >"$BENCH_WORK/s6-check.log"
  local n_check
  n_check="$(sed -n 's/^check: .* violations=\([0-9]*\).*/\1/p' <<<"$check_out" | tail -n 1)"
  [ -n "$n_check" ] || { chaos_log "scenario $name: seatflow check did not run: $check_out"; n_check=1; }
  local n=$(( $(grep -c . <<<"$violations" || true) + n_check ))
  if [ "$n" -ne 0 ]; then
    chaos_fail "scenario $name: $n violation(s): $(head -n 2 "$BENCH_WORK/s6-violations.log" | tr '\n' ' ')"
    head -n 20 "$BENCH_WORK/s6-violations.log" "$BENCH_WORK/s6-check.log" >&2 || true
  fi
  retries="$(awk '$2 != 201 && $2 != 409' "$BENCH_WORK/race-attempts.log" | wc -l)"
  repairs=$((repairs + $(reconcile_repairs "$log_lines")))
  chaos_log "scenario $name: $(awk '$2 == 201' "$BENCH_WORK/race-attempts.log" | wc -l) orders created, $(awk '$2 == 409' "$BENCH_WORK/race-attempts.log" | wc -l) refused 409"
  RESULTS+=("$(printf '%-28s %10s %8s %9s %8s %11s %10.1f' "$name" \
    "$(awk '$2 == 201' "$BENCH_WORK/race-attempts.log" | wc -l)" "$faults" "$retries" "$repairs" "$n" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")")
}

# setup_engines N ENV... → N engines on fresh ports with the base environment plus ENV.
setup_engines() {
  local n="$1" i
  shift
  engines_stop
  ENGINE_PORTS=()
  ENGINE_PIDS=()
  ENGINE_ENV=(SEATFLOW_PROFILE=prod "SEATFLOW_CALLBACK_SECRETS=$BENCH_SECRET" SEATFLOW_LOG_LEVEL=warn
    SEATFLOW_SWEEPER=off SEATFLOW_RECONCILE_INTERVAL_MS=0 "$@")
  for ((i = 0; i < n; i++)); do
    ENGINE_PORTS[i]="$(sf_free_port)"
    engine_start "$i" || return 1
  done
}

if [ "$NO_BUILD" != 1 ]; then
  chaos_log "building seatflow and seatflow-bench in $BUILD_DIR"
  bench_build "$ROOT" "$BUILD_DIR" seatflow seatflow-bench || bench_die "build failed"
fi
if [ ! -x "$BIN" ] || [ ! -x "$BENCH_BIN" ]; then
  bench_die "$BIN or $BENCH_BIN is missing (build first)"
fi
command -v curl >/dev/null 2>&1 || bench_die "curl is required"

bench_make_work
bench_start_stores || bench_die "could not start PostgreSQL/Redis"
export SEATFLOW_PROFILE=prod SEATFLOW_CALLBACK_SECRETS="$BENCH_SECRET" SEATFLOW_LOG_LEVEL=warn
: >"$BENCH_WORK/reconcile.log"
"$BIN" migrate >"$BENCH_WORK/migrate.log" 2>&1 || bench_die "migrate failed: $(cat "$BENCH_WORK/migrate.log")"
# The history checker's witness of every committed event: a second slot on the event messages that
# nothing confirms, so its peek is every event the moves committed, in commit order, whatever the
# relay did with its own slot (bench/load/history_db.cpp).
witness_slot_create || bench_die "could not create the witness slot seatflow_chaos_witness"
started="$(date +%s)"

# run_deadline_race → scenario 22's row: bench/deadline_race.sh's verdict, its paid_after_cancel with
# the close on as the violations (its control run's count in the faults column).
run_deadline_race() {
  local log="$BENCH_WORK/deadline_race.log" size=() on off
  [ "$QUICK" = 1 ] && size=(--quick)
  local started=$SECONDS
  chaos_log "scenario 22 deadline race: bench/deadline_race.sh ${size[*]}"
  if ! "$ROOT/bench/deadline_race.sh" --no-build --build-dir "$BUILD_DIR" "${size[@]}" >"$log" 2>&1; then
    chaos_fail "scenario 22 deadline race: failed: $(grep -E '^(close|deadline race|bench:)' "$log" | tr '\n' ' ' | cut -c1-300)"
  fi
  on="$(awk '$1 == "close" && $2 == "on" { print $5 }' "$log")"
  off="$(awk '$1 == "close" && $2 == "off" { print $5 }' "$log")"
  RESULTS+=("$(printf '%-28s %10s %8s %9s %8s %11s %10.1f' "22 deadline race" "-" "${off:-?}" 0 0 \
    "${on:-?}" "$((SECONDS - started))")")
}

for s in ${SCENARIOS//,/ }; do
  SCENARIO_NOW="$s"
  case "$s" in
    1)
      setup_engines 1 || bench_die "engine start failed"
      run_scenario "1 kill -9 engine" 1 fault_kill9 "$KILLS"
      ;;
    2)
      setup_engines 1 || bench_die "engine start failed"
      run_scenario "2 restart postgresql" 0 fault_pg "$PG_RESTARTS"
      ;;
    3)
      setup_engines 1 SEATFLOW_RECONCILE_INTERVAL_MS=500 || bench_die "engine start failed"
      HISTORY_LOSSY=1
      run_scenario "3 restart redis, data lost" 0 fault_redis "$REDIS_RESTARTS"
      HISTORY_LOSSY=0
      ;;
    4)
      # Failpoints are refused in the prod profile: dev, without the mock gateway.
      setup_engines 1 SEATFLOW_PROFILE=dev SEATFLOW_MOCK_GATEWAY=off \
        "SEATFLOW_FAILPOINTS=mark_sold=error@0.1,pg_commit=delay:30ms@0.05" ||
        bench_die "engine start failed"
      run_scenario "4 mark_sold 10%, pg_commit" 0 fault_none 0
      ;;
    5)
      setup_engines 2 SEATFLOW_PROFILE=dev SEATFLOW_MOCK_GATEWAY=off \
        SEATFLOW_RECONCILE_INTERVAL_MS=300 "SEATFLOW_FAILPOINTS=mark_sold=error@0.05" ||
        bench_die "engine start failed"
      run_scenario "5 two engines, one storm" 0 fault_none 0
      ;;
    6)
      setup_engines 1 SEATFLOW_RECONCILE_INTERVAL_MS=500 "SEATFLOW_API_TOKEN=$RACE_TOKEN" ||
        bench_die "engine start failed"
      run_race_scenario "6 api orders, redis lost"
      ;;
    7)
      setup_engines 1 "${FREEZE_ENV[@]}" || bench_die "engine start failed"
      run_scenario "7 postgresql frozen ${FREEZE_S}s" 0 fault_pg_freeze 1
      ;;
    8)
      setup_engines 1 || bench_die "engine start failed"
      run_scenario "8 redis frozen ${FREEZE_S}s" 0 fault_redis_freeze 1
      ;;
    9)
      setup_engines 1 || bench_die "engine start failed"
      run_scenario "9 postgresql read-only ${READ_ONLY_S}s" 0 fault_pg_read_only 1
      ;;
    10 | 11)
      if [ "$(id -u)" -ne 0 ]; then
        chaos_log "scenario $s skipped: it needs root (ip netns, nft)"
        RESULTS+=("$(printf '%-28s %s' "$s pg network fault" "skipped (needs root)")")
        continue
      fi
      pg_into_netns || bench_die "could not move PostgreSQL into a network namespace"
      setup_engines 1 "${FREEZE_ENV[@]}" || bench_die "engine start failed"
      if [ "$s" = 10 ]; then
        run_scenario "10 pg black-holed ${NET_FAULT_S}s" 0 fault_pg_blackhole 1 net_verdict
      else
        run_scenario "11 pg tcp reset ${NET_FAULT_S}s" 0 fault_pg_reset 1 net_verdict
      fi
      engines_stop
      pg_out_of_netns || bench_die "could not move PostgreSQL back to the host"
      ;;
    12)
      # The gateway gives up on a request after 2 s and resends through the other engine.
      BENCH_EXTRA=(--request-timeout-ms 2000)
      setup_engines 2 || bench_die "engine start failed"
      run_scenario "12 engine paused ${PAUSE_S}s" 0 fault_engine_pause 1
      BENCH_EXTRA=()
      ;;
    13) run_skew_scenario "13 engine clock +301s" +301 || bench_die "scenario 13 could not run" ;;
    14) run_skew_scenario "14 engine clock -301s" -301 || bench_die "scenario 14 could not run" ;;
    15)
      setup_engines 1 SEATFLOW_PROFILE=dev SEATFLOW_MOCK_GATEWAY=off \
        "SEATFLOW_FAILPOINTS=pg_commit_unknown=error@0.05,flush_commit_unknown=error@0.3" ||
        bench_die "engine start failed"
      run_scenario "15 commit outcome unknown" 0 fault_none 0
      ;;
    16)
      standby_start || bench_die "could not start a synchronous standby"
      # Every client of the run (engine, psql, the benches' checks) reaches the writable host.
      export SEATFLOW_PG_DSN="postgresql://postgres@127.0.0.1:$BENCH_PG_PORT,127.0.0.1:$STANDBY_PORT/seatflow?target_session_attrs=read-write"
      setup_engines 1 "${FREEZE_ENV[@]}" || bench_die "engine start failed"
      HISTORY_EVENTS_PARTIAL=1
      run_scenario "16 pg failed over" 0 fault_pg_failover 1 failover_verdict
      HISTORY_EVENTS_PARTIAL=0
      engines_stop
      pg_after_failover || bench_die "could not restart the promoted server as the harness's PostgreSQL"
      ;;
    17)
      POLICY_VIOLATIONS="$(policy_oracles)"
      setup_engines 1 || bench_die "engine start failed"
      run_scenario "17 redis evicting: refused" 0 fault_none 0 policy_verdict
      ;;
    18)
      setup_engines 1 || bench_die "engine start failed"
      run_scenario "18 redis out of memory ${FREEZE_S}s" 0 fault_redis_oom 1
      ;;
    19) run_sentinel_scenario "19 redis primary killed" fault_redis_failover_kill ;;
    20) run_sentinel_scenario "20 redis primary frozen" fault_redis_failover_freeze ;;
    21) run_balancer_scenario "21 engines behind haproxy" ;;
    22) run_deadline_race ;;
    *) bench_die "unknown scenario $s" ;;
  esac
  engines_stop
done

echo
echo "seatflow chaos ($([ "$QUICK" = 1 ] && echo quick || echo full)): storm ${STORM_PAYMENTS} payments x ${STORM_DUPLICATES} deliveries + mixed ${MIXED_PAYMENTS} payments per scenario"
printf '%-28s %10s %8s %9s %8s %11s %10s\n' scenario callbacks faults retries repairs violations \
  converge_s
for row in "${RESULTS[@]}"; do
  echo "$row"
done
echo "total time: $(($(date +%s) - started)) s"
follow_summary
FINISHED=1
if [ "$FAILED" -ne 0 ]; then
  for why in "${FAILURES[@]}"; do
    echo "chaos: failed: $why"
  done
  echo "chaos: FAILED (logs in $BENCH_WORK; rerun with --keep to keep them)"
  BENCH_KEEP_WORK=1
  exit 1
fi
echo "chaos: passed, 0 violations"
