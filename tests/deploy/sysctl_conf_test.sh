#!/usr/bin/env bash
# The shipped sysctl drop-in: every line is a comment, blank, or `key = integer` whose key this
# kernel knows (a misspelt key would be skipped by `sysctl --system` with only a warning).
set -euo pipefail
conf="$(cd "$(dirname "$0")" && pwd)/../../deploy/sysctl/60-seatflow-postgres.conf"
settings=0
while IFS= read -r line || [ -n "$line" ]; do
  [[ "$line" =~ ^[[:space:]]*(#.*)?$ ]] && continue
  if ! [[ "$line" =~ ^([a-z0-9_.]+)[[:space:]]*=[[:space:]]*([0-9]+)$ ]]; then
    echo "FAIL: not 'key = integer': $line"
    exit 1
  fi
  key="${BASH_REMATCH[1]}"
  if [ ! -e "/proc/sys/${key//.//}" ]; then
    echo "FAIL: this kernel has no $key"
    exit 1
  fi
  settings=$((settings + 1))
done <"$conf"
[ "$settings" -gt 0 ] || { echo "FAIL: no setting in $conf"; exit 1; }
echo "$settings passed, 0 failed: every key of $(basename "$conf") exists"
