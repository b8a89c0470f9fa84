#!/bin/bash
# make bench: kvreg against ibv_reg_mr and perftest in one guest run, then
# a table (results.md) and a plot (bench.png) under $BUILD/bench.
#   KVREG_BENCH_MIB (4096): largest buffer; KVREG_BENCH_REPS (5): runs;
#   KVREG_BENCH_QUICK=1: smallest and largest size only, touched memory.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
KVER=$(tests/guest/kernel.sh kver)
MIB=${KVREG_BENCH_MIB:-4096}
OUT=$BUILD/bench
make -s all tests BUILD="$BUILD" KVER="$KVER"
# One buffer at a time (hugetlb pages are reserved per case) plus room.
export KVREG_GUEST_MEM=$(( MIB + 2048 ))
export KVREG_GUEST_TIMEOUT=${KVREG_GUEST_TIMEOUT:-3600}
mkdir -p "$OUT"
tests/guest/boot.sh "$OUT" sh "$PWD/tests/bench/guest-bench.sh" \
	"$PWD/$BUILD" "$PWD/$BUILD/kmod/$KVER/kvreg.ko" "$MIB" \
	"${KVREG_BENCH_REPS:-5}" /kvreg-out/raw.txt ${KVREG_BENCH_QUICK:+1}
tests/bench/report.sh "$OUT"
