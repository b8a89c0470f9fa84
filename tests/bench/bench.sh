#!/bin/bash
# make bench: kvreg against ibv_reg_mr in one guest run.
#   KVREG_BENCH_MIB (1024) and KVREG_BENCH_REPS (3) set the size and runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
KVER=$(tests/guest/kernel.sh kver)
MIB=${KVREG_BENCH_MIB:-1024}
make -s all tests BUILD="$BUILD" KVER="$KVER"
# Room for the 4 KiB buffer and the hugetlb one side by side.
export KVREG_GUEST_MEM=$(( MIB * 2 + 1536 ))
tests/guest/boot.sh "$BUILD/bench" sh "$PWD/tests/bench/guest-bench.sh" \
	"$PWD/$BUILD" "$PWD/$BUILD/kmod/$KVER/kvreg.ko" "$MIB" \
	"${KVREG_BENCH_REPS:-3}"
