#!/usr/bin/env bash
# The shipped HAProxy configuration (deploy/haproxy/haproxy.cfg): `haproxy -c` accepts it with the
# addresses from the environment and with its defaults; both backends health-check /readyz; only
# the notify backend (callbacks are idempotent by id) retries a 503 or a response timeout, the API
# backend only a request that never reached an engine; the frontend replaces X-Forwarded-For with
# the client address it saw and drops Forwarded. Skipped (exit 77) when haproxy is absent.
set -euo pipefail
conf="$(cd "$(dirname "$0")" && pwd)/../../deploy/haproxy/haproxy.cfg"
if ! command -v haproxy >/dev/null 2>&1; then
  echo "SKIP: haproxy is not installed (scripts/deps.sh installs Debian's haproxy)"
  exit 77
fi
SEATFLOW_HAPROXY_BIND=127.0.0.1:18080 SEATFLOW_ENGINE_1=127.0.0.1:18081 \
  SEATFLOW_ENGINE_2=127.0.0.1:18082 haproxy -c -q -f "$conf" ||
  { echo "FAIL: haproxy -c refused $conf with the addresses set"; exit 1; }
haproxy -c -q -f "$conf" || { echo "FAIL: haproxy -c refused $conf with its defaults"; exit 1; }

# backend_line NAME PATTERN → the first line of backend NAME (or defaults) matching PATTERN.
backend_line() {
  awk -v name="$1" -v pattern="$2" '
    /^[a-z]/ { section = $1 " " $2 }
    section == "backend " name && $0 ~ pattern { print; exit }' "$conf"
}
failed=0
grep -Eq '^ +http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host ' "$conf" ||
  { echo "FAIL: no HTTP/1.1 /readyz health check with a Host header"; failed=1; }
notify="$(backend_line seatflow_notify 'retry-on')"
[[ "$notify" == *" 503"* && "$notify" == *response-timeout* ]] ||
  { echo "FAIL: the notify backend does not retry 503 and response timeouts: '$notify'"; failed=1; }
api="$(backend_line seatflow_api 'retry-on')"
[[ "$api" =~ ^\ +retry-on\ conn-failure$ ]] ||
  { echo "FAIL: the API backend must retry only conn-failure: '$api'"; failed=1; }
# The engines see the client's address, and only the one HAProxy writes (SPEC §14).
frontend_line() {
  awk -v pattern="$1" '/^[a-z]/ { section = $1 }
    section == "frontend" && $0 !~ /^ *#/ && $0 ~ pattern { print }' "$conf"
}
[ "$(frontend_line 'X-Forwarded-For')" = '    http-request set-header X-Forwarded-For %[src]' ] ||
  { echo "FAIL: the frontend must replace X-Forwarded-For with %[src]"; failed=1; }
! grep -Eq '^ +option +forwardfor' "$conf" ||
  { echo "FAIL: option forwardfor appends to a client's own X-Forwarded-For"; failed=1; }
[ -n "$(frontend_line 'del-header Forwarded')" ] ||
  { echo "FAIL: the frontend must drop a client's Forwarded header"; failed=1; }
[ "$failed" -eq 0 ] || exit 1
echo "6 passed, 0 failed: haproxy -c accepts $(basename "$conf"); notify retries are the safe ones; the engines see the client's own address"
