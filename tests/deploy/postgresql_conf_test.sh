#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The shipped PostgreSQL drop-in (deploy/postgresql/seatflow.conf) on a real server: a cluster
# started without it is refused by `seatflow migrate` (wal_level), the same cluster with the file
# included applies every setting of it without an error, and `seatflow migrate` then builds the
# schema. Usage: postgresql_conf_test.sh SEATFLOW_BINARY. One throwaway cluster; ~10 s.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 SEATFLOW_BINARY" >&2; exit 2; }
seatflow="$1"
root="$(cd "$(dirname "$0")/../.." && pwd)"
conf="$root/deploy/postgresql/seatflow.conf"
# shellcheck source=../../scripts/services.sh
source "$root/scripts/services.sh"
# shellcheck source=../support/checks.sh
source "$root/tests/support/checks.sh"

work="$(mktemp -d)"
chmod 755 "$work" # the postgres user must reach the cluster below it when this runs as root
cleanup() {
  sf_pg_stop "$work/pg" || true
  rm -rf "$work"
}
trap cleanup EXIT

port="$(sf_free_port)"
sf_pg_start "$work/pg" "$port" # makes the cluster and its "seatflow" database
sf_pg_stop "$work/pg"
# start_plain → the cluster with nothing on its command line but where to listen, so that only its
# configuration files decide.
start_plain() {
  sf_pg_as_postgres pg_ctl -D "$work/pg/data" -l "$work/pg/log" -w -t 60 \
    -o "-p $port -k $work/pg -c listen_addresses=127.0.0.1" start >/dev/null
}
psql_at() { "$SF_PG_BIN/psql" -X -At -h 127.0.0.1 -p "$port" -U postgres -d seatflow -c "$1"; }
dsn="postgresql://postgres@127.0.0.1:$port/seatflow"

# ---- without the drop-in: PostgreSQL's own wal_level, refused
start_plain
check_eq "wal_level without the drop-in" replica "$(psql_at "SHOW wal_level")"
rc=0
out="$(env -i PATH="$PATH" SEATFLOW_PG_DSN="$dsn" "$seatflow" migrate 2>&1)" || rc=$?
check_eq "migrate's exit code on the plain server" 1 "$rc"
check_eq "the refusal names wal_level" 1 "$(grep -c 'event=startup_refused setting=wal_level' <<<"$out")"
sf_pg_stop "$work/pg"

# ---- with it: every setting of the file applied, none in error, and the engine accepts the server
# A copy in the data directory, which the postgres user can read wherever this tree is.
install -m 644 "$conf" "$work/pg/data/seatflow.conf"
echo "include 'seatflow.conf'" >>"$work/pg/data/postgresql.conf"
start_plain
settings=0
while IFS= read -r line || [ -n "$line" ]; do
  [[ "$line" =~ ^[[:space:]]*(#.*)?$ ]] && continue
  if ! [[ "$line" =~ ^([a-z_]+)[[:space:]]*=[[:space:]]*([^[:space:]#]+)[[:space:]]*$ ]]; then
    check_eq "a 'name = value' line" "" "$line"
    continue
  fi
  check_eq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "$(psql_at "SHOW ${BASH_REMATCH[1]}")"
  settings=$((settings + 1))
done <"$conf"
check_eq "settings in the file" 1 "$([ "$settings" -ge 5 ] && echo 1 || echo 0)"
check_eq "lines PostgreSQL did not apply" 0 \
  "$(psql_at "SELECT count(*) FROM pg_file_settings WHERE sourcefile = '$work/pg/data/seatflow.conf' AND (error IS NOT NULL OR NOT applied)")"
rc=0
out="$(env -i PATH="$PATH" SEATFLOW_PG_DSN="$dsn" "$seatflow" migrate 2>&1)" || rc=$?
check_eq "migrate on the server with the drop-in" 0 "$rc"
check_eq "the schema is there" 1 "$(psql_at "SELECT count(*) FROM pg_tables WHERE tablename = 'payment_order'")"

checks_end "deploy/postgresql/seatflow.conf on a real server"
