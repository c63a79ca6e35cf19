#!/usr/bin/env bash
# The tree's lint gates, run by ctest (Release suite only; the result does not depend on the build):
#   lint.sh format → every C++ source and header is as clang-format (.clang-format) would write it;
#   lint.sh shell  → every shell script passes shellcheck, warnings included, sourced files followed.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

# files PATTERN... → the tree's files matching the name patterns, build outputs and npm's modules left out.
files() {
  local names=() pattern
  for pattern in "$@"; do
    names+=(-o -name "$pattern")
  done
  find . \( -name 'build*' -o -name node_modules -o -name .git \) -prune \
    -o -type f \( "${names[@]:1}" \) -print | sort
}

case "${1:-}" in
  format)
    mapfile -t sources < <(files '*.cpp' '*.hpp')
    [ "${#sources[@]}" -gt 0 ] || { echo "FAIL: no C++ file found under $root"; exit 1; }
    if ! clang-format --dry-run --Werror "${sources[@]}"; then
      echo "FAIL: the files above differ from clang-format's output (fix: clang-format -i FILE)"
      exit 1
    fi
    echo "${#sources[@]} C++ files formatted as .clang-format says"
    ;;
  shell)
    mapfile -t scripts < <(files '*.sh')
    scripts+=(.ci/run)
    if ! shellcheck -x "${scripts[@]}"; then
      echo "FAIL: shellcheck found the problems above"
      exit 1
    fi
    echo "${#scripts[@]} shell scripts pass shellcheck"
    ;;
  *)
    echo "usage: lint.sh format|shell" >&2
    exit 2
    ;;
esac
