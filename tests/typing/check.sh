#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Usage: check.sh BUILD_DIR allowed|forbidden PROBE_TARGET [PATTERN]
# Compiles one case of tests/typing/probe.cpp with the exact command the build would use for it
# (from BUILD_DIR/compile_commands.json, syntax only): an allowed case must compile; a forbidden
# one must fail, with PATTERN on an error line (the typed-actor check that refuses the message,
# not any other error). The compile is tests/layering/probe_compile.sh's.
set -uo pipefail
build_dir="$1" expect="$2" target="$3" pattern="${4:-}"
# shellcheck source=../layering/probe_compile.sh
. "$(dirname "$0")/../layering/probe_compile.sh"
probe_compile "$build_dir" "$target" typing
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
