#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# A real Prometheus (Debian's `prometheus`) scrapes a real engine: the target must be up with no
# scrape error (the exposition parses) and every exposed sample stored, and the callback counter
# and latency histogram must be visible through Prometheus's query API with the value the engine
# counted (one rejected signature sent here); every series the shipped alerts and dashboard use must
# be one the engine exposes.
# Usage: prometheus_scrape_test.sh SEATFLOW_BINARY; needs SEATFLOW_TEST_PG_DSN and
# SEATFLOW_TEST_REDIS_URL (./test.sh sets them). Loopback only; every wait is bounded.
set -euo pipefail
bin="$1"
: "${SEATFLOW_TEST_PG_DSN:?set by ./test.sh}" "${SEATFLOW_TEST_REDIS_URL:?set by ./test.sh}"
command -v prometheus >/dev/null || { echo "FAIL: prometheus is not installed (scripts/deps.sh)"; exit 1; }
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../scripts/services.sh
. "$here/../../scripts/services.sh"
work="$(mktemp -d)"
engine_pid="" prom_pid=""
cleanup() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
  [ -n "$engine_pid" ] && kill "$engine_pid" 2>/dev/null && wait "$engine_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- engine log"; tail -n 20 "$work/engine.log" 2>/dev/null || true
  echo "--- prometheus log"; tail -n 20 "$work/prometheus.log" 2>/dev/null || true
  exit 1
}

engine_port="$(sf_free_port)"
SEATFLOW_PROFILE=dev SEATFLOW_HTTP_ADDR="127.0.0.1:$engine_port" SEATFLOW_PG_DSN="$SEATFLOW_TEST_PG_DSN" \
  SEATFLOW_REDIS_URL="$SEATFLOW_TEST_REDIS_URL" SEATFLOW_CALLBACK_SECRETS="scrape-test-secret" \
  SEATFLOW_SWEEPER=off SEATFLOW_EVENT_RELAY=off SEATFLOW_RETENTION=off SEATFLOW_RECONCILE_INTERVAL_MS=0 \
  SEATFLOW_LOG_LEVEL=warn "$bin" serve >"$work/engine.log" 2>&1 &
engine_pid=$!
for ((i = 0; i < 100; i++)); do
  curl -fsS -m 1 -o /dev/null "http://127.0.0.1:$engine_port/healthz" 2>/dev/null && break
  sleep 0.1
done
curl -fsS -m 1 -o /dev/null "http://127.0.0.1:$engine_port/healthz" || fail "the engine did not become healthy"
# One forged callback: answered 401 and counted as rejected_signature, nothing else.
code="$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
  --data '{"callbackId":"scrape-1","paymentNo":"p-scrape","status":1,"timestamp":1,"sign":"00"}' \
  "http://127.0.0.1:$engine_port/api/payment/notify/hmac")"
[ "$code" = 401 ] || fail "the forged callback was answered $code, not 401"

# The shipped scrape configuration, pointed at this engine, scraping every second.
prom_port="$(sf_free_port)"
sed -e "s/127.0.0.1:8080/127.0.0.1:$engine_port/" -e 's/scrape_interval: 15s/scrape_interval: 1s/' \
  -e 's/scrape_timeout: 5s/scrape_timeout: 1s/' "$here/../../deploy/prometheus/prometheus.yml" \
  >"$work/prometheus.yml"
cp "$here/../../deploy/prometheus/alerts.yml" "$work/alerts.yml"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
prom_pid=$!
api="http://127.0.0.1:$prom_port/api/v1"
health="" error=""
for ((i = 0; i < 300; i++)); do
  targets="$(curl -fsS -m 2 "$api/targets" 2>/dev/null || true)"
  health="$(jq -r '.data.activeTargets[0].health // ""' <<<"${targets:-{\}}" 2>/dev/null || true)"
  error="$(jq -r '.data.activeTargets[0].lastError // ""' <<<"${targets:-{\}}" 2>/dev/null || true)"
  [ "$health" = up ] && break
  sleep 0.1
done
[ "$health" = up ] || fail "the target is '$health' after 30 s (last error: $error)"
[ -z "$error" ] || fail "the scrape reported an error: $error"
value=""
for ((i = 0; i < 100; i++)); do
  value="$(curl -fsS -m 2 --get "$api/query" \
    --data-urlencode 'query=seatflow_payment_callback_total{channel="hmac",result="rejected_signature"}' |
    jq -r '.data.result[0].value[1] // ""')"
  [ "$value" = 1 ] && break
  sleep 0.1
done
[ "$value" = 1 ] || fail "Prometheus shows the rejected_signature counter as '$value', not 1"
# Every sample the engine exposes was parsed and stored: Prometheus's own count of the last scrape
# equals the engine's sample lines, and its `up` series reads 1.
exposed="$(curl -fsS -m 2 "http://127.0.0.1:$engine_port/metrics" | grep -vc '^#')"
scraped="$(curl -fsS -m 2 --get "$api/query" --data-urlencode 'query=scrape_samples_scraped' |
  jq -r '.data.result[0].value[1] // ""')"
[ "$scraped" = "$exposed" ] || fail "Prometheus kept $scraped samples of the $exposed the engine exposes"
up="$(curl -fsS -m 2 --get "$api/query" --data-urlencode 'query=up' | jq -r '.data.result[0].value[1] // ""')"
[ "$up" = 1 ] || fail "Prometheus's up series is '$up', not 1"
buckets="$(curl -fsS -m 2 --get "$api/query" \
  --data-urlencode 'query=count(seatflow_payment_callback_duration_seconds_bucket{channel="hmac"})' |
  jq -r '.data.result[0].value[1] // "0"')"
[ "$buckets" = 15 ] || fail "Prometheus shows $buckets hmac latency buckets, not 15 (14 bounds and +Inf)"
series="$(curl -fsS -m 2 --get "$api/query" --data-urlencode 'query=count(seatflow_payment_callback_total)' |
  jq -r '.data.result[0].value[1] // "0"')"
[ "$series" -gt 0 ] || fail "no seatflow_payment_callback_total series in Prometheus"
# Every seatflow_ series the alerts and the dashboard use is one the engine exposes (by its # TYPE
# line; a histogram's _bucket, _sum and _count by the histogram's).
curl -fsS -m 2 "http://127.0.0.1:$engine_port/metrics" | awk '$1 == "#" && $2 == "TYPE" { print $3 }' |
  sort -u >"$work/families"
used="$({ grep -vE '^ *(#|summary:|description:)' "$work/alerts.yml"
  jq -r '.panels[].targets[].expr' "$here/../../deploy/grafana/seatflow-dashboard.json"; } |
  grep -o 'seatflow_[a-z0-9_]*' | sort -u)"
[ -n "$used" ] || fail "no seatflow_ series found in the alerts and the dashboard"
for name in $used; do
  grep -qx "$name" "$work/families" || grep -qx "${name%_bucket}" "$work/families" ||
    grep -qx "${name%_sum}" "$work/families" || grep -qx "${name%_count}" "$work/families" ||
    fail "the alerts or the dashboard use $name, which the engine does not expose"
done
rules="$(curl -fsS -m 2 "$api/rules" | jq -r '[.data.groups[].rules[]] | length')"
want="$(grep -c '^ *- alert:' "$work/alerts.yml")"
[ "$rules" = "$want" ] || fail "Prometheus loaded $rules of the $want alert rules"
echo "1 passed, 0 failed: target up, no scrape error, all $exposed samples stored, rejected_signature = 1 via the query API, $series callback series, $buckets hmac buckets, $rules alert rules loaded, $(wc -w <<<"$used") series of the alerts and the dashboard exposed"
