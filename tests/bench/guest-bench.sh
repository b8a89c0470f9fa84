#!/bin/sh
# In the guest: every benchmark, kvreg and its peers on the same four rxe
# devices in this one boot. Raw lines go to stdout; report.sh reads them.
#   guest-bench.sh BUILD_DIR KO MAX_MIB REPS RAW_FILE POOL_MIB [QUICK]
set -e
exec > "$5"
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$1
XFER_SIZES="4096 65536 262144 1048576 4194304"
POOL_MIB=$6
export KVREG_BENCH_QUICK=$7
[ -n "$7" ] || unset KVREG_BENCH_QUICK

echo madvise > /sys/kernel/mm/transparent_hugepage/enabled
"$HERE/../guest/rxe-up.sh" 4
modprobe ib_uverbs
# Budgets out of the way: the bench measures speed, not refusals.
# kvreg links against rdma_cm; built in on the debug kernel.
modprobe rdma_cm 2>/dev/null || true
insmod "$2" max_mrs_per_process=1000000 max_bytes_per_process=0x10000000000 \
	host_max_bytes=0x10000000000
"$BUILD/tests/bench/bench_reg" "$3" "$4" "$POOL_MIB"
[ -n "$KVREG_BENCH_QUICK" ] && XFER_SIZES=1048576
"$BUILD/tests/bench/bench_xfer" 0 $XFER_SIZES

# perftest on rxe0 against itself (tests/guest/perftest.sh), through the
# RoCE v2 GID of its IPv4 address; the connection setup goes over loopback
# TCP. Gb/s here, as bench_xfer prints.
. "$HERE/../guest/perftest.sh"
for size in $XFER_SIZES; do
	iters=$(( 67108864 / size ))
	[ "$iters" -lt 64 ] && iters=64
	[ "$iters" -gt 20000 ] && iters=20000
	for op in write read; do
		PERFTEST_PORT=$((PERFTEST_PORT + 1))
		set -- $(perftest_loopback "ib_${op}_bw" "$size" "$iters")
		gbps=nan
		[ -n "${1:-}" ] && gbps=$(awk -v m="$1" 'BEGIN { print m * 8 / 1000 }')
		echo "PERF perftest $op $size bw $gbps"
		n=$(( size >= 1048576 ? 21 : 101 ))
		PERFTEST_PORT=$((PERFTEST_PORT + 1))
		set -- $(perftest_loopback "ib_${op}_lat" "$size" "$n")
		echo "PERF perftest $op $size lat ${1:-nan}"
	done
done
rmmod kvreg
