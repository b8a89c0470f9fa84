#!/bin/sh
# One guest of a pair (tests/guest/pair.sh): its NIC on the link between
# the two, rxe on it, kvreg loaded, then its side of each pair test and of
# perftest. Results ("PASS pair/NAME/ROLE") go to RESULTS; a test whose
# slice of the kernel log shows a warning fails (lib.sh, as in
# run-tests.sh). What runs is what tests/list says of pair and debug-pair.
#   pair-side.sh export|import BUILD KO RESULTS PREFIX
ROLE=$1
BUILD=$2
KO=$3
RESULTS=$4
PREFIX=$5
X=/kvreg-x
WHERE=${PREFIX:+debug-}pair
. "$(dirname "$0")/lib.sh"
: > "$RESULTS"
rm -f "$RESULTS.done"

if [ "$ROLE" = export ]; then ADDR=192.0.2.1; PEER=192.0.2.2; N=1
else ADDR=192.0.2.2; PEER=192.0.2.1; N=2; fi

. "$(dirname "$0")/pair-net.sh"
pair_net_up $N
# Leaks from before kvreg are not kvreg's.
[ "$PREFIX" = debug/ ] && echo clear > /sys/kernel/debug/kmemleak
# remote_pair's hugetlb pool: 8 MiB of 2 MiB pages, and some to spare.
echo 8 > /proc/sys/vm/nr_hugepages
mark "pair/$ROLE/module-load"
if insmod "$KO" && [ -c /dev/kvreg ] &&
   kernel_clean "pair/$ROLE/module-load"; then
	record PASS "pair/$ROLE/module-load"
else
	record FAIL "pair/$ROLE/module-load"
	touch "$RESULTS.done"
	exit 0
fi
pair_net_wait $N

# pair_test NAME CMD...: one test's side, "pair/NAME/ROLE"; its slice of
# the kernel log must be clean too, by lib.sh's one rule.
pair_test() {
	name=$1
	shift
	mark "pair/$name"
	rc=0
	KVREG_PAIR_TEST=$name
	export KVREG_PAIR_TEST
	"$@" || rc=$?
	# The other side, if it waits for a file of this one, stops at once
	# (kvpair.h), not at its bound.
	[ $rc -eq 0 ] || : > "$X/failed-$name-$ROLE"
	kernel_clean "pair/$name" || rc=1
	# A failure shows the end of its slice: what kvreg said.
	[ $rc -eq 0 ] || tail -40 /tmp/slice.log
	verdict "pair/$name/$ROLE" "$rc" /dev/null
}

# The importer's output carries kvreg's throughput, for the ratios below.
remote_import() {
	"$BUILD/tests/pair/remote_pair" import "$X" > /tmp/pair.out 2>&1
	r=$?
	cat /tmp/pair.out
	return $r
}
if [ "$ROLE" = export ]; then
	pair_test remote "$BUILD/tests/pair/remote_pair" export "$X" "$ADDR"
else
	pair_test remote remote_import
fi

# perftest between the same guests, for the benchmark's ratios only; not
# on the debug kernel, where KASAN makes the ratios meaningless.
if [ "$PREFIX" != debug/ ] && command -v ib_write_bw > /dev/null; then
	. "$(dirname "$0")/perftest.sh"
	PERFTEST_TIMEOUT=120
	for t in write read; do
		for s in 4096 65536 2097152; do
			n=$(( s == 2097152 ? 20 : 200 ))
			perftest_side "$ROLE" "ib_${t}_bw" "$s" "$n" "$PEER" |
				awk -v t="$t" -v s="$s" \
				    '{ print "perftest-bw", t, s, $1 }'
		done
	done | tee -a /tmp/pair.out
fi
[ "$ROLE" = import ] && grep -E '^(kvreg|perftest)-bw' /tmp/pair.out > /kvreg-out/bench.txt

# Both links and both devices: failover, reconnection, both down. It
# leaves each guest with both links up and an rxe on each.
pair_test rails "$BUILD/tests/pair/rails_pair" "$ROLE" "$X"
# A side that failed midway may have left a link down or a device out:
# the tests after need both.
ip link set eth0 up 2>/dev/null
ip link set eth1 up 2>/dev/null
rdma link show rxe0 > /dev/null 2>&1 ||
	rdma link add rxe0 type rxe netdev eth0
rdma link show rxe1 > /dev/null 2>&1 ||
	rdma link add rxe1 type rxe netdev eth1

# The storage-backend examples, a store on one node and a backend with
# batch_set/get/exists on the other: in C (this exporter stores), and in
# Python with a torch tensor as its host pool (the other way round: torch
# is in the Debian 12 root, the exporter's). The Python backend makes the
# same kernel calls as the C one, so the debug pair runs the C one only.
SRC=$(dirname "$BUILD")
store() {
	mkdir -p "$1"
	"$BUILD/examples/hicache_remote" store "$1" "$ADDR" "198.51.100.$N"
}
if [ "$ROLE" = export ]; then
	pair_test hicache-c store "$X/hicache-c"
	[ "$PREFIX" = debug/ ] ||
	pair_test hicache-py env KVREG_LIBRARY="$BUILD/lib/libkvreg.so.1" \
		PYTHONPATH="$SRC/libuser/python" \
		python3 "$SRC/examples/hicache_remote.py" "$X/hicache-py"
else
	pair_test hicache-c "$BUILD/examples/hicache_remote" backend \
		"$X/hicache-c"
	[ "$PREFIX" = debug/ ] || pair_test hicache-py store "$X/hicache-py"
fi

# A network that loses, delays and reorders packets, both ways on the
# first link; not between the debug guests, whose kernel has no netem.
# The qdisc goes whatever the test did: the tests after need the link.
if [ "$PREFIX" != debug/ ]; then
	if [ "$ROLE" = export ]; then
		pair_test netem "$BUILD/tests/pair/netem_pair" export "$X" \
			"$ADDR"
	else
		pair_test netem "$BUILD/tests/pair/netem_pair" import "$X"
	fi
	tc qdisc del dev eth0 root 2> /dev/null
fi

# Last: the exporter removes its device, then takes its link down.
if [ "$ROLE" = export ]; then
	pair_test faults "$BUILD/tests/pair/pair_faults" export "$X" "$ADDR" \
		eth0 rxe0
else
	pair_test faults "$BUILD/tests/pair/pair_faults" import "$X"
fi

mark "pair/$ROLE/module-unload"
rmmod kvreg && kernel_clean "pair/$ROLE/module-unload" &&
	record PASS "pair/$ROLE/module-unload" ||
	record FAIL "pair/$ROLE/module-unload"
[ "$PREFIX" = debug/ ] && kmemleak_check "pair/$ROLE/kmemleak"
if kernel_gaps; then
	record PASS "pair/$ROLE/kernel-log"
else
	record FAIL "pair/$ROLE/kernel-log"
fi
touch "$RESULTS.done"
