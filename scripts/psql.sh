#!/usr/bin/env bash
# Opens psql on $SEATFLOW_PG_DSN, or on the private PostgreSQL that ./run.sh starts (port SEATFLOW_PG_PORT, default
# 55432). Extra arguments go to psql, e.g. scripts/psql.sh -c 'select count(*) from seats'.
set -euo pipefail
dsn="${SEATFLOW_PG_DSN:-postgresql://postgres@127.0.0.1:${SEATFLOW_PG_PORT:-55432}/seatflow}"
psql_bin="${SF_PG_BIN:-/usr/lib/postgresql/15/bin}/psql"
[ -x "$psql_bin" ] || psql_bin="psql"
exec "$psql_bin" "$dsn" "$@"
