#!/usr/bin/env bash
# What touching fewer rows per paid callback would buy: bench/independent.sh's `unique` (wrk on
# bulk-loaded tables) against four engines built from HEAD with bench/fewer_rows.patch, which
# lets SEATFLOW_EXPERIMENT pick the callback path's statements:
#   this     HEAD's statements (the patch changes nothing without the variable)
#   nolog    no callback-log row (the log insert answers every callback as new)
#   noorder  no order row move and no order row lock (the order.paid event from the payment's row)
#   both     neither
# The variants break SPEC §6 and §12 (no log row, an order left pending) and are measurement
# only: an upper bound of what folding the log row into the payment row, or deriving the order's
# state from the payment's, could save — never an engine to serve. The patched tree is built in a
# temporary directory (removed at exit); the results go to --out (default
# build/fewer-rows-<time>). Every other option goes to bench/independent.sh (--runs, --rows,
# --duration-s, --statements, --pg-setting …; not --engine, --engine-bin, --build-dir, --no-build).
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=../scripts/services.sh
source "$ROOT/scripts/services.sh"
# shellcheck source=lib.sh
source "$BENCH_DIR/lib.sh"

usage() {
  cat <<'USAGE'
usage: bench/fewer_rows.sh [--out DIR] [bench/independent.sh options]
  --out DIR   results (default build/fewer-rows-<time>)
  every other option goes to bench/independent.sh (--runs, --rows, --duration-s, --statements,
  --pg-setting …); not --engine, --engine-bin, --build-dir or --no-build: this script builds
  HEAD with bench/fewer_rows.patch and measures the engines this, nolog, noorder and both
USAGE
}

OUT="$ROOT/build/fewer-rows-$(date +%Y%m%d-%H%M%S)"
PASS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) bench_need_value "$@"; OUT="$2"; shift ;;
    --engine | --engine-bin | --build-dir | --no-build)
      usage >&2
      bench_die "$1 is not an option of bench/fewer_rows.sh (it builds its own engines)" ;;
    -h | --help) usage; exit 0 ;;
    *) PASS+=("$1") ;;
  esac
  shift
done

WORK="$(mktemp -d /tmp/seatflow-fewer-rows.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/src"
git -C "$ROOT" archive HEAD | tar -x -C "$WORK/src"
(cd "$WORK/src" && git apply "$BENCH_DIR/fewer_rows.patch") ||
  bench_die "bench/fewer_rows.patch no longer applies to HEAD's persistence/stores/sql.cpp; redo it"
bench_log "building the patched tree in $WORK/build"
bench_build "$WORK/src" "$WORK/build" || bench_die "the patched build failed"
engines=()
for variant in this nolog noorder both; do
  # shellcheck disable=SC2016 # "$@" belongs to the wrapper
  printf '#!/bin/sh\nSEATFLOW_EXPERIMENT=%s exec %s "$@"\n' "$variant" "$WORK/build/seatflow" \
    >"$WORK/$variant.sh"
  chmod +x "$WORK/$variant.sh"
  engines+=(--engine "$variant=$WORK/$variant.sh")
done
"$BENCH_DIR/independent.sh" --no-build --build-dir "$WORK/build" --tools wrk "${engines[@]}" \
  --out "$OUT" "${PASS[@]}"
