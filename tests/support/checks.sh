# shellcheck shell=bash
# The shell tests' checks (tests/bench/lib_test.sh, tests/scripts/pg_cluster_test.sh): check_eq
# counts each check and prints the ones that fail; checks_end prints the tally and is the test's
# exit status.
failures=0
checks=0

# check_eq NAME WANT GOT
check_eq() {
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1: want '$2', got '$3'"
    failures=$((failures + 1))
  fi
}

# checks_end WHAT → "N passed, 0 failed: WHAT" and success, or "F of N checks failed" and failure.
checks_end() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures of $checks checks failed"
    return 1
  fi
  echo "$checks passed, 0 failed: $1"
}
