#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/lib.sh's CPU accounting, the part of the benchmarks whose figures docs/BENCHMARKS.md quotes:
# the snapshot of /proc (against processes made to look like an engine, a PostgreSQL cluster and
# Redis, each with a known number of CPU ticks and context switches), the µs and the context
# switches per callback between two snapshots, the medians over runs, the statements' medians, the
# server settings a script adds, Redis's commands per callback, and the group commit's summary
# from an engine's /metrics. Needs no server; a few seconds.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=../../scripts/services.sh
source "$root/scripts/services.sh"
# shellcheck source=../../bench/lib.sh
source "$root/bench/lib.sh"

# shellcheck source=../support/checks.sh
source "$root/tests/support/checks.sh"

work="$(mktemp -d)"
fakes=()
set -m # each fake below is a process group of its own, so that cleanup ends its children too
cleanup() {
  local pid
  for pid in "${fakes[@]}"; do
    kill -- "-$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# ---- bench_median and bench_cpu_medians
check_eq "median of an odd count, unsorted" 7 "$(printf '9\n3\n7\n' | bench_median)"
check_eq "median of an even count is the lower one" 3 "$(printf '9\n3\n7\n1\n' | bench_median)"
printf 'engine 10.0\npg:backends 90.5\nredis 20.0\n' >"$work/run1.cpu"
printf 'engine 30.0\npg:backends 80.5\nredis 22.0\n' >"$work/run2.cpu"
printf 'engine 20.0\npg:backends 100.5\n' >"$work/run3.cpu"
check_eq "medians per component, a component missing from one run" \
  "$(printf 'engine 20.0\npg:backends 90.5\nredis 20.0')" \
  "$(bench_cpu_medians "$work/run1.cpu" "$work/run2.cpu" "$work/run3.cpu")"

# ---- bench_statement_medians: per statement by its text, each figure's median, first file's order
printf '30.5\t1200\t0.100\t100\t2600\tUPDATE a\n10.0\t0\t0.000\t100\t100\tSELECT b\n' >"$work/run1.statements"
printf '10.5\t0\t0.000\t90\t90\tSELECT b\n20.5\t1100\t0.300\t90\t2500\tUPDATE a\n' >"$work/run2.statements"
printf '90.5\t1000\t0.200\t80\t2400\tUPDATE a\n' >"$work/run3.statements"
check_eq "statement medians, a statement missing from one run" \
  "$(printf '30.5\t1100\t0.200\t90\t2500\tUPDATE a\n10.0\t0\t0.000\t90\t90\tSELECT b')" \
  "$(bench_statement_medians "$work/run1.statements" "$work/run2.statements" "$work/run3.statements")"

# ---- bench_pg_setting: NAME=VALUE pairs only, added after the defaults
BENCH_PG_SETTINGS=()
bench_pg_setting wal_compression=lz4
bench_pg_setting pg_stat_statements.max=1000
check_eq "settings become -c pairs" "-c wal_compression=lz4 -c pg_stat_statements.max=1000" \
  "${BENCH_PG_SETTINGS[*]}"
for bad in "wal_compression" "=lz4" "wal_compression=" "fsync=off -c x=y" "Wal=1"; do
  check_eq "refused: '$bad'" 1 "$(bench_pg_setting "$bad" 2>/dev/null && echo 0 || echo 1)"
done
check_eq "a refusal adds nothing" 4 "${#BENCH_PG_SETTINGS[@]}"

# ---- bench_cpu_per_callback: the roles (pg:*) are parts of postgresql, never added to the total
hz="$(getconf CLK_TCK)"
us() { # TICKS CALLBACKS → the µs per callback the function must print
  awk -v t="$1" -v n="$2" -v hz="$hz" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }'
}
printf 'engine:caf.actor 100\nengine:seatflow 50\nengine:caf.clock 7\npostgresql 1000\npg:backends 900\npg:walsender 100\nredis 40\npg_commits 500\npg_wal_bytes 1000000\npg_wal_fpi 10\n' \
  >"$work/before"
printf 'engine:caf.actor 300\nengine:seatflow 150\nengine:caf.clock 7\npostgresql 1400\npg:backends 1250\npg:walsender 150\nredis 60\npg_commits 520\npg_wal_bytes 2700000\npg_wal_fpi 260\n' \
  >"$work/after"
# Redis's commands: two XADDs per callback, a script per 28 callbacks that only the second snapshot
# saw, and the snapshots' own INFO (0.001 per callback).
printf 'redis_calls:xadd 100\nredis_usec:xadd 1000\nredis_calls:info 5\nredis_usec:info 200\n' \
  >>"$work/before"
printf 'redis_calls:xadd 2100\nredis_usec:xadd 3750\nredis_calls:info 6\nredis_usec:info 240\nredis_calls:evalsha 36\nredis_usec:evalsha 6700\n' \
  >>"$work/after"
per="$(bench_cpu_per_callback "$work/before" "$work/after" 1000 2.5)"
value() { awk -v k="$1" '$1 == k { print $2 }' <<<"$per"; }
check_eq "engine thread" "$(us 200 1000)" "$(value engine:caf.actor)"
check_eq "an idle engine thread is left out" "" "$(value engine:caf.clock)"
check_eq "engine total" "$(us 300 1000)" "$(value engine)"
check_eq "postgresql" "$(us 400 1000)" "$(value postgresql)"
check_eq "a PostgreSQL role" "$(us 350 1000)" "$(value pg:backends)"
check_eq "redis" "$(us 20 1000)" "$(value redis)"
check_eq "load generator" "2500.0" "$(value loadgen)"
check_eq "commits per callback" "0.020" "$(value pg_commits_per_callback)"
check_eq "WAL bytes per callback" "1700" "$(value pg_wal_bytes_per_callback)"
check_eq "full-page images per callback" "0.250" "$(value pg_wal_fpi_per_callback)"
check_eq "engine+postgresql+redis counts no role twice" "$(us 720 1000)" "$(value engine+postgresql+redis)"
check_eq "a Redis command's calls per callback" "2.000" "$(value redis_calls:xadd)"
check_eq "a Redis command's µs per callback" "2.75" "$(value redis_usec:xadd)"
check_eq "a command the first snapshot had not seen" "0.036 6.70" \
  "$(value redis_calls:evalsha) $(value redis_usec:evalsha)"
check_eq "a command at 0.001 calls per callback or fewer is left out" "" "$(value redis_calls:info)$(value redis_usec:info)"
# Context switches: per callback, an engine thread's below 0.01 left out but counted in the total.
printf 'switches:engine:caf.actor 1000\nswitches:engine:caf.clock 50\nswitches:pg:backends 400\nswitches:redis 10\n' \
  >>"$work/before"
printf 'switches:engine:caf.actor 2500\nswitches:engine:caf.clock 55\nswitches:engine:seatflow-pg 300\nswitches:pg:backends 1150\nswitches:redis 3010\n' \
  >>"$work/after"
per="$(bench_cpu_per_callback "$work/before" "$work/after" 1000 2.5)"
check_eq "an engine thread's switches per callback" "1.50" "$(value switches:engine:caf.actor)"
check_eq "a thread the first snapshot had not seen" "0.30" "$(value switches:engine:seatflow-pg)"
check_eq "a thread's switches below 0.01 are left out" "" "$(value switches:engine:caf.clock)"
check_eq "the engine's switches, every thread counted" "1.80" "$(value switches:engine)"
check_eq "a PostgreSQL role's switches" "0.75" "$(value switches:pg:backends)"
check_eq "Redis's switches" "3.00" "$(value switches:redis)"
check_eq "switches are not CPU" "$(us 300 1000)" "$(value engine)"

# ---- bench_parse_commandstats: INFO commandstats as redis-cli prints it (CRLF, a section header,
# a subcommand's name)
check_eq "each command's calls and µs" \
  "$(printf 'redis_calls:xadd 60000\nredis_usec:xadd 82476\nredis_calls:config|resetstat 1\nredis_usec:config|resetstat 136')" \
  "$(printf '# Commandstats\r\ncmdstat_xadd:calls=60000,usec=82476,usec_per_call=1.37,rejected_calls=0,failed_calls=0\r\ncmdstat_config|resetstat:calls=1,usec=136,usec_per_call=136.00,rejected_calls=0,failed_calls=0\r\n' |
    bench_parse_commandstats)"

# ---- bench_commit_summary: the group commit from an engine's /metrics text (prometheus-cpp's
# number formats, one transaction still without its outcome, a series of another family between)
cat >"$work/metrics" <<'METRICS'
# TYPE seatflow_commit_batch_callbacks histogram
seatflow_commit_batch_callbacks_count 4
seatflow_commit_batch_callbacks_sum 30
seatflow_commit_batch_callbacks_bucket{le="8"} 3
seatflow_commit_batch_duration_seconds_count 3
seatflow_commit_batch_duration_seconds_sum 0.09
seatflow_commit_batch_duration_seconds_bucket{le="0.01"} 1
seatflow_commit_batch_duration_seconds_bucket{le="0.025"} 2
seatflow_payment_callback_duration_seconds_count{channel="hmac"} 99
seatflow_commit_queue_wait_seconds_count 30
seatflow_commit_queue_wait_seconds_sum 1.2e-02
METRICS
check_eq "the group commit's summary" \
  "$(printf 'transactions 4\ncallbacks_per_transaction 7.5\ntransaction_ms 30.00\ntransactions_over_25ms_pct 33.33\nqueue_wait_ms 0.40')" \
  "$(bench_commit_summary "$work/metrics")"
printf 'seatflow_payment_callback_total{channel="hmac",result="applied"} 0\n' >"$work/metrics"
check_eq "nothing from an engine that committed nothing" "" "$(bench_commit_summary "$work/metrics")"
# Since an earlier scrape of the same engine: the differences (2 more transactions of 20 callbacks,
# 0.05 s, one of them over 25 ms; 20 more waits of 0.01 s in all).
cat >"$work/metrics-before" <<'METRICS'
seatflow_commit_batch_callbacks_count 2
seatflow_commit_batch_callbacks_sum 10
seatflow_commit_batch_duration_seconds_count 1
seatflow_commit_batch_duration_seconds_sum 0.04
seatflow_commit_batch_duration_seconds_bucket{le="0.025"} 1
seatflow_commit_queue_wait_seconds_count 10
seatflow_commit_queue_wait_seconds_sum 2e-03
METRICS
cat >"$work/metrics-after" <<'METRICS'
seatflow_commit_batch_callbacks_count 4
seatflow_commit_batch_callbacks_sum 30
seatflow_commit_batch_duration_seconds_count 3
seatflow_commit_batch_duration_seconds_sum 0.09
seatflow_commit_batch_duration_seconds_bucket{le="0.025"} 2
seatflow_commit_queue_wait_seconds_count 30
seatflow_commit_queue_wait_seconds_sum 1.2e-02
METRICS
check_eq "the group commit between two scrapes" \
  "$(printf 'transactions 2\ncallbacks_per_transaction 10.0\ntransaction_ms 25.00\ntransactions_over_25ms_pct 50.00\nqueue_wait_ms 0.50')" \
  "$(bench_commit_summary "$work/metrics-after" "$work/metrics-before")"
cp "$work/metrics-after" "$work/metrics-again"
check_eq "nothing between two equal scrapes" "" \
  "$(bench_commit_summary "$work/metrics-again" "$work/metrics-after")"

# ---- bench_cpu_snapshot against processes that look like the stack
# spin_to TICKS MARKER → busy until this shell has used TICKS ticks of CPU, then writes MARKER.
# shellcheck disable=SC2016 # a script for the fakes to run, expanded there
spin_to='want=$1; marker=$2
while :; do
  read -r -a f </proc/$$/stat
  [ $((f[13] + f[14])) -ge "$want" ] && break
done
: >"$marker"
sleep 60 & wait'
# stat_of PID|PID/task/TID → that stat file's fields after the command name, one word each (field
# 4, the parent, first): read here independently of the library. A thread's counts are read from
# its task's file, as the library does: the process's own file rounds them differently.
stat_of() {
  local line
  line="$(<"/proc/$1/stat")"
  echo "${line##*) }"
}
switches_of() { # PID|PID/task/TID → voluntary + involuntary context switches (its status file)
  awk '/^(nonvoluntary|voluntary)_ctxt_switches:/ { n += $2 } END { print n + 0 }' "/proc/$1/status"
}
ticks_of() { # PID|PID/task/TID [children] → utime+stime (+ cutime+cstime)
  local f
  read -r -a f <<<"$(stat_of "$1")"
  echo $((f[11] + f[12] + (${2:-0} ? f[13] + f[14] : 0)))
}
# The "postmaster": its children carry PostgreSQL's process titles as their command line.
bash -c '
  spin_to=$1 work=$2
  (exec -a "postgres: postgres seatflow 127.0.0.1(40000) idle" bash -c "$spin_to" _ 3 "$work/backend.done") &
  (exec -a "postgres: walsender postgres 127.0.0.1(40001) START_REPLICATION" bash -c "$spin_to" _ 2 "$work/walsender.done") &
  (exec -a "postgres: walwriter " bash -c "$spin_to" _ 1 "$work/walwriter.done") &
  (exec -a "postgres: checkpointer " sleep 60) &
  wait' _ "$spin_to" "$work" &
postmaster=$!
fakes+=("$postmaster")
# A process with a backend's title that is not the cluster's: it must not be counted.
(exec -a "postgres: postgres seatflow 127.0.0.1(40002) idle" bash -c "$spin_to" _ 4 "$work/stranger.done") &
fakes+=($!)
# The "engine": one thread, named the way the engine names its threads (the number is dropped).
bash -c 'printf seatflow-io-7 >/proc/$$/comm; script=$1; shift; eval "$script"' _ "$spin_to" 2 "$work/engine.done" &
engine=$!
fakes+=("$engine")
sleep 60 &
redis=$!
fakes+=("$redis")
set +m # the groups stay; the shell no longer reports each fake's end
for marker in backend walsender walwriter stranger engine; do
  for ((i = 0; i < 1000; i++)); do
    [ -e "$work/$marker.done" ] && break
    sleep 0.01
  done
  [ -e "$work/$marker.done" ] || {
    echo "FAIL: the fake $marker did not finish spinning in 10 s"
    exit 1
  }
done

BENCH_WORK="$work"
BENCH_ENGINE_PID="$engine"
mkdir -p "$work/pg/data" "$work/redis"
echo "$postmaster" >"$work/pg/data/postmaster.pid"
echo "$redis" >"$work/redis/redis.pid"
# expected → the snapshot's lines as this test reads /proc itself, sorted.
expected() {
  local stat child title f role
  local -A ticks=([backends]=0 [walsender]=0 [walwriter]=0 [other]=0) switches=()
  for stat in /proc/[0-9]*/stat; do
    child="${stat#/proc/}"
    child="${child%/stat}"
    read -r -a f <<<"$(stat_of "$child" 2>/dev/null)" || continue
    [ "${f[1]:-}" = "$postmaster" ] || continue
    title="$(tr '\0' ' ' <"/proc/$child/cmdline")"
    case "$title" in
      "postgres: walsender"*) role=walsender ;;
      "postgres: walwriter"*) role=walwriter ;;
      "postgres: postgres seatflow"*) role=backends ;;
      *) role=other ;;
    esac
    ticks[$role]=$((ticks[$role] + $(ticks_of "$child")))
    switches[$role]=$((${switches[$role]:-0} + $(switches_of "$child")))
  done
  ticks[other]=$((ticks[other] + $(ticks_of "$postmaster" 1)))
  switches[other]=$((${switches[other]:-0} + $(switches_of "$postmaster")))
  {
    printf '%s\n' "engine:seatflow-io $(ticks_of "$engine/task/$engine")" \
      "switches:engine:seatflow-io $(switches_of "$engine/task/$engine")" \
      "postgresql $((ticks[backends] + ticks[walsender] + ticks[walwriter] + ticks[other]))" \
      "redis $(ticks_of "$redis")" "switches:redis $(switches_of "$redis")"
    for role in backends walsender walwriter other; do
      printf '%s\n' "pg:$role ${ticks[$role]}" "switches:pg:$role ${switches[$role]}"
    done
  } | sort
}
# The fakes sleep now, but a tick may still land on the few instructions after a marker: compare
# a snapshot only with what this test read both before and after it.
for ((attempt = 1; attempt <= 5; attempt++)); do
  want="$(expected)"
  bench_cpu_snapshot "$work/snapshot" no-commits
  [ "$(expected)" = "$want" ] && break
done
check_eq "the snapshot: engine thread by name, the cluster's processes by role, Redis" \
  "$want" "$(sort "$work/snapshot")"
check_eq "the spinners were measured" 1 \
  "$(awk '$1 == "pg:backends" && $2 >= 3 { n++ } $1 == "pg:walsender" && $2 >= 2 { n++ } END { print n == 2 }' \
    <<<"$want")"

checks_end "bench/lib.sh's CPU snapshot, per-callback µs, medians, statements, settings, commit summary"
