#!/usr/bin/env bash
# `systemd-analyze verify` of the shipped unit, with ExecStart pointed at the binary under test (the
# unit names /usr/local/bin/seatflow, which verify requires to exist). Usage: SEATFLOW_BINARY.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sed "s#/usr/local/bin/seatflow#$1#" "$here/../../deploy/systemd/seatflow.service" >"$work/seatflow.service"
out="$(systemd-analyze verify --man=no "$work/seatflow.service" 2>&1)" || { echo "FAIL: $out"; exit 1; }
# verify exits 0 on unknown keys too: any line it prints is a finding.
[ -z "$out" ] || { echo "FAIL: $out"; exit 1; }
echo "1 passed, 0 failed: systemd-analyze verify found nothing"
