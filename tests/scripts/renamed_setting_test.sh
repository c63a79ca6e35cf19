#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# scripts/services.sh's sf_renamed_setting, which keeps a script setting's old name working (run.sh's
# SEATFLOW_STOP_TIMEOUT, now SEATFLOW_STOP_TIMEOUT_S): the old name alone sets the new one and warns
# in one line, the new name alone warns of nothing, and with both set the new one wins and the line
# says so. No servers; under a second.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"

# shellcheck source=../support/checks.sh
source "$root/tests/support/checks.sh"

# run_alias OLD_VALUE NEW_VALUE → "<value of SEATFLOW_STOP_TIMEOUT_S>|<stderr>" after the call, in a
# fresh shell with only the given names set (an empty value leaves the name unset).
run_alias() {
  local err value
  err="$(mktemp)"
  # shellcheck disable=SC2016 # the inner shell expands its own script
  value="$(env -u SEATFLOW_STOP_TIMEOUT -u SEATFLOW_STOP_TIMEOUT_S \
    ${1:+SEATFLOW_STOP_TIMEOUT=$1} ${2:+SEATFLOW_STOP_TIMEOUT_S=$2} bash -c '
      set -euo pipefail
      . "$0/scripts/services.sh"
      sf_renamed_setting SEATFLOW_STOP_TIMEOUT SEATFLOW_STOP_TIMEOUT_S
      printf "%s" "${SEATFLOW_STOP_TIMEOUT_S:-unset}"' "$root" 2>"$err")"
  printf '%s|%s' "$value" "$(cat "$err")"
  rm -f "$err"
}

out="$(run_alias 7 "")"
check_eq "old name alone: its value" 7 "${out%%|*}"
check_eq "old name alone: one warning line" \
  "seatflow: configuration warning: SEATFLOW_STOP_TIMEOUT is the old name of SEATFLOW_STOP_TIMEOUT_S; it still works, but set SEATFLOW_STOP_TIMEOUT_S instead" \
  "${out#*|}"

out="$(run_alias "" 9)"
check_eq "new name alone: its value" 9 "${out%%|*}"
check_eq "new name alone: no warning" "" "${out#*|}"

out="$(run_alias 7 9)"
check_eq "both set: the new name wins" 9 "${out%%|*}"
check_eq "both set: one line that says so" \
  "seatflow: configuration warning: SEATFLOW_STOP_TIMEOUT is the old name of SEATFLOW_STOP_TIMEOUT_S; both are set and SEATFLOW_STOP_TIMEOUT_S wins (SEATFLOW_STOP_TIMEOUT is ignored)" \
  "${out#*|}"

out="$(run_alias "" "")"
check_eq "neither set: nothing set, nothing said" "unset|" "$out"

checks_end "sf_renamed_setting"
