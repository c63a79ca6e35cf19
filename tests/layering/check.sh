#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Usage: check.sh BUILD_DIR allowed|forbidden PROBE_TARGET HEADER
# Compiles one probe of tests/layering with the exact command the build would use for it (from
# BUILD_DIR/compile_commands.json, syntax only): an allowed include must compile; a forbidden one
# must fail, and fail because the layer cannot see the header (not for any other reason). The
# compile is tests/layering/probe_compile.sh's.
set -uo pipefail
build_dir="$1" expect="$2" target="$3" header="$4"
# shellcheck source=probe_compile.sh
. "$(dirname "$0")/probe_compile.sh"
probe_compile "$build_dir" "$target" layering
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
