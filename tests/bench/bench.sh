#!/bin/bash
# make bench: kvreg against ibv_reg_mr and perftest in one guest run, then
# its remote data path against perftest between two guests on two links,
# then a table (results.md) and a plot (bench.png) under $BUILD/bench.
#   KVREG_BENCH_MIB (4096): largest buffer; KVREG_BENCH_REPS (5): runs;
#   KVREG_BENCH_POOL_MIB (16384): a hugetlb and a THP pool of that size on
#   four devices (the guest gets the memory for it; 0: none);
#   KVREG_BENCH_QUICK=1: smallest and largest size only, touched memory;
#   KVREG_BENCH_ONLY=local|remote: one part only.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
KVER=$(tests/guest/kernel.sh kver)
MIB=${KVREG_BENCH_MIB:-4096}
POOL_MIB=${KVREG_BENCH_POOL_MIB:-16384}
OUT=$BUILD/bench
ONLY=${KVREG_BENCH_ONLY:-}
make -s all tests BUILD="$BUILD" KVER="$KVER"
mkdir -p "$OUT"
KO=$PWD/$BUILD/kmod/$KVER/kvreg.ko
if [ "$ONLY" != remote ]; then
	# One buffer at a time (hugetlb pages are reserved per case) plus room.
	KVREG_GUEST_MEM=$(( (MIB > POOL_MIB ? MIB : POOL_MIB) + 2048 )) \
	KVREG_GUEST_TIMEOUT=${KVREG_GUEST_TIMEOUT:-3600} \
	tests/guest/boot.sh "$OUT" sh "$PWD/tests/bench/guest-bench.sh" \
		"$PWD/$BUILD" "$KO" "$MIB" "${KVREG_BENCH_REPS:-5}" \
		/kvreg-out/raw.txt "$POOL_MIB" ${KVREG_BENCH_QUICK:+1}
fi
if [ "$ONLY" != local ]; then
	rm -f "$OUT/remote.txt"
	KVREG_PAIR_SIDE=$PWD/tests/bench/pair-bench-side.sh \
	KVREG_GUEST_TIMEOUT=${KVREG_GUEST_TIMEOUT:-1800} \
		tests/guest/pair.sh "$OUT/pair" "$PWD/$BUILD" debian "$KO" \
		debian "$KO" ""
	grep -h '^FAIL' "$OUT/pair/a/results" "$OUT/pair/b/results" || true
	cp "$OUT/pair/b/remote.txt" "$OUT/remote.txt" 2>/dev/null ||
		echo "bench: the remote part wrote nothing (see $OUT/pair)"
fi
touch "$OUT/raw.txt"
tests/bench/report.sh "$OUT"
