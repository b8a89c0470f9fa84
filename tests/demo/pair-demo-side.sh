#!/bin/sh
# make demo, act two: one of two nodes (tests/guest/pair.sh with
# KVREG_PAIR_SIDE), each with two NICs on two links. Node A stores a
# hugetlb KV pool and exports it; node B imports it, writes KV pages into
# A's pool and reads them back over both rails, shows its rails; then A's
# process is killed, and B shows what its next operations got.
#   pair-demo-side.sh export|import BUILD KO RESULTS PREFIX
ROLE=$1
BUILD=$2
KO=$3
RESULTS=$4
X=/kvreg-x/demo
: > "$RESULTS"
if [ "$ROLE" = export ]; then N=1; NODE=A; else N=2; NODE=B; fi
step() { printf '\n### node %s: %s\n' "$NODE" "$*"; }
. "$(dirname "$0")/../guest/pair-net.sh"
pair_net_up $N
insmod "$KO"
mkdir -p "$X"
pair_net_wait $N
step "two NICs, an rxe device on each"
"$BUILD/bin/kvregctl" devices
if [ "$ROLE" = export ]; then
	step "the store: a hugetlb pool of KV page slots, exported on both NICs"
	"$BUILD/examples/hicache_remote" store "$X" 192.0.2.1 198.51.100.1 &
	pid=$!
	until [ -e "$X/kill-store" ]; do sleep 0.2; done
	step "kill -9 of the store's process (pid $pid)"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	: > "$X/.store-killed"
	mv "$X/.store-killed" "$X/store-killed"
	echo "killed; kvregctl conns here now lists none of it:"
	"$BUILD/bin/kvregctl" conns
	echo "PASS demo/$ROLE" >> "$RESULTS"
else
	step "the backend: batch_set, batch_exists, batch_get over both rails"
	if "$BUILD/examples/hicache_remote" backend "$X" demo; then
		echo "PASS demo/$ROLE" >> "$RESULTS"
	else
		echo "FAIL demo/$ROLE" >> "$RESULTS"
	fi
	step "kvregctl conns on node B, once the backend has exited: nothing left"
	"$BUILD/bin/kvregctl" conns
fi
rmmod kvreg
touch "$RESULTS.done"
