#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# scripts/services.sh's private PostgreSQL as ./run.sh, ./test.sh and the benchmarks make it: the
# WAL segment size it is created with (SEATFLOW_PG_WAL_SEGSIZE_MB, default 4 MB: docs/BENCHMARKS.md,
# "WAL segments, compression and the kernel's writeback"), a size initdb cannot take refused before
# anything is made, a cluster that exists kept at the size it was made with, and the settings the
# engine's writes are measured with (wal_level, wal_compression). Starts two throwaway clusters
# on free loopback ports; ~10 s.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=../../scripts/services.sh
source "$root/scripts/services.sh"

# shellcheck source=../support/checks.sh
source "$root/tests/support/checks.sh"

work="$(mktemp -d)"
chmod 755 "$work" # the postgres user must reach the clusters below it when this runs as root
cleanup() {
  sf_pg_stop "$work/default" || true
  sf_pg_stop "$work/one" || true
  rm -rf "$work"
}
trap cleanup EXIT

pg_show() { # PORT SETTING → the running cluster's value, e.g. 4MB for wal_segment_size
  "$SF_PG_BIN/psql" -X -At -h 127.0.0.1 -p "$1" -U postgres -d seatflow -c "SHOW $2"
}

# ---- a size initdb cannot take is refused with one line, and no cluster is made
rc=0
err="$(SEATFLOW_PG_WAL_SEGSIZE_MB=3 sf_pg_start "$work/bad" "$(sf_free_port)" 2>&1)" || rc=$?
check_eq "exit code of a size that is not a power of two" 2 "$rc"
check_eq "the refusal names the setting" 1 "$(grep -c 'SEATFLOW_PG_WAL_SEGSIZE_MB=3' <<<"$err")"
check_eq "no data directory for a refused size" no "$([ -e "$work/bad/data" ] && echo yes || echo no)"

# ---- the default: 4 MB segments
port="$(sf_free_port)"
(unset SEATFLOW_PG_WAL_SEGSIZE_MB && sf_pg_start "$work/default" "$port")
check_eq "default segment size" 4MB "$(pg_show "$port" wal_segment_size)"
check_eq "the event outbox's wal_level" logical "$(pg_show "$port" wal_level)"
check_eq "full-page images compressed" lz4 "$(pg_show "$port" wal_compression)"

# ---- the setting, and a restart that keeps the size the cluster was made with
port="$(sf_free_port)"
SEATFLOW_PG_WAL_SEGSIZE_MB=1 sf_pg_start "$work/one" "$port"
check_eq "SEATFLOW_PG_WAL_SEGSIZE_MB=1" 1MB "$(pg_show "$port" wal_segment_size)"
sf_pg_stop "$work/one"
(unset SEATFLOW_PG_WAL_SEGSIZE_MB && sf_pg_start "$work/one" "$port")
check_eq "an existing cluster keeps its size" 1MB "$(pg_show "$port" wal_segment_size)"

checks_end "the private cluster's WAL segments and settings"
