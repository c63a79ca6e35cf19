#!/usr/bin/env bash
# Usage: check.sh BUILD_DIR allowed|forbidden PROBE_TARGET HEADER
# Builds one probe of tests/layering: an allowed include must compile; a forbidden one must fail,
# and fail because the layer cannot see the header (not for any other reason).
set -uo pipefail
build_dir="$1" expect="$2" target="$3" header="$4"
out="$(cmake --build "$build_dir" --target "$target" 2>&1)"
rc=$?
if [ "$expect" = allowed ]; then
  [ "$rc" -eq 0 ] && exit 0
  printf '%s\n' "$out" >&2
  echo "layering: $target: an allowed include of $header failed to compile" >&2
  exit 1
fi
if [ "$rc" -ne 0 ] && grep -q "${header}: No such file or directory" <<<"$out"; then
  exit 0
fi
printf '%s\n' "$out" >&2
echo "layering: $target: the forbidden include of $header was not refused by the build" >&2
exit 1
