#!/usr/bin/env bash
# Sourced by tests/layering/check.sh and tests/typing/check.sh: probe_compile BUILD_DIR TARGET WHO
# compiles the one source of TARGET with the exact command the build would use for it (from
# BUILD_DIR/compile_commands.json, syntax only) and sets `out` (the compiler's output) and `rc`
# (its exit status). The compiler is called directly, not through `cmake --build`, so a probe never
# rebuilds the libraries and the probes can run in parallel. Exits 1 (naming WHO) when the build
# has no single command for TARGET.
probe_compile() {
  local build_dir="$1" target="$2" who="$3" entry directory command
  entry="$(jq -r --arg t "/${target}.dir/" \
    'map(select(.command | contains($t))) | if length == 1 then .[0] | .directory, .command else empty end' \
    "$build_dir/compile_commands.json")"
  if [ -z "$entry" ]; then
    echo "$who: $target: no single compile command for it in $build_dir/compile_commands.json" >&2
    exit 1
  fi
  directory="$(head -n 1 <<<"$entry")"
  command="$(tail -n +2 <<<"$entry")"
  # The command is shell text (CMake quotes the -D values): evaluate it as the build would.
  # shellcheck disable=SC2034 # out and rc are the caller's
  out="$(cd "$directory" && eval "$command -fsyntax-only" 2>&1)"
  # shellcheck disable=SC2034
  rc=$?
}
