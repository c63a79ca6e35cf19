#!/usr/bin/env bash
# Usage: check.sh BUILD_DIR allowed|forbidden PROBE_TARGET HEADER
# Compiles one probe of tests/layering with the exact command the build would use for it (from
# BUILD_DIR/compile_commands.json, syntax only): an allowed include must compile; a forbidden one
# must fail, and fail because the layer cannot see the header (not for any other reason). The
# compiler is called directly, not through `cmake --build`, so a probe never rebuilds the layer
# libraries and the probes can run in parallel.
set -uo pipefail
build_dir="$1" expect="$2" target="$3" header="$4"
entry="$(jq -r --arg t "/${target}.dir/" \
  'map(select(.command | contains($t))) | if length == 1 then .[0] | .directory, .command else empty end' \
  "$build_dir/compile_commands.json")"
if [ -z "$entry" ]; then
  echo "layering: $target: no single compile command for it in $build_dir/compile_commands.json" >&2
  exit 1
fi
directory="$(head -n 1 <<<"$entry")"
command="$(tail -n +2 <<<"$entry")"
# The command is shell text (CMake quotes the -D values): evaluate it as the build would.
out="$(cd "$directory" && eval "$command -fsyntax-only" 2>&1)"
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
