#!/usr/bin/env bash
# Installs the Debian 12 packages SeatFlow needs to build, test and serve; idempotent and quick when all are present.
set -euo pipefail

SEATFLOW_PACKAGES=(
  build-essential cmake ninja-build pkgconf clang-format shellcheck
  libcaf-dev libpqxx-dev libpq-dev libhiredis-dev libboost-dev libssl-dev zlib1g-dev
  libmimalloc-dev
  nlohmann-json3-dev libspdlog-dev libcli11-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  postgresql-15 redis-server redis-sentinel haproxy curl jq openssl wrk prometheus systemd
  faketime nftables iproute2 python3
  chromium nodejs npm
)

missing=()
for pkg in "${SEATFLOW_PACKAGES[@]}"; do
  # A nodejs package from another repository may bundle npm (and conflict with Debian's npm).
  if [ "$pkg" = npm ] && command -v npm >/dev/null 2>&1; then
    continue
  fi
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "seatflow: missing packages: ${missing[*]}; run as root or install them with apt-get" >&2
  exit 1
fi

echo "seatflow: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
