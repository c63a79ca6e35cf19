#!/usr/bin/env bash
# Usage: check.sh BUILD_DIR allowed|forbidden PROBE_TARGET [PATTERN]
# Compiles one case of tests/typing/probe.cpp with the exact command the build would use for it
# (from BUILD_DIR/compile_commands.json, syntax only): an allowed case must compile; a forbidden
# one must fail, with PATTERN on an error line (the typed-actor check that refuses the message,
# not any other error). The compiler is called directly, not through `cmake --build`, so
# a probe never rebuilds the libraries and the probes can run in parallel.
set -uo pipefail
build_dir="$1" expect="$2" target="$3" pattern="${4:-}"
entry="$(jq -r --arg t "/${target}.dir/" \
  'map(select(.command | contains($t))) | if length == 1 then .[0] | .directory, .command else empty end' \
  "$build_dir/compile_commands.json")"
if [ -z "$entry" ]; then
  echo "typing: $target: no single compile command for it in $build_dir/compile_commands.json" >&2
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
  echo "typing: $target: a message the interface declares failed to compile" >&2
  exit 1
fi
if [ "$rc" -ne 0 ] && [ -n "$pattern" ] && grep -F -- "$pattern" <<<"$out" | grep -q 'error:'; then
  exit 0
fi
printf '%s\n' "$out" >&2
echo "typing: $target: the undeclared message was not refused with \"$pattern\"" >&2
exit 1
