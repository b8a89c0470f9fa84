#!/bin/sh
# One guest of make bench's pair (tests/guest/pair.sh with KVREG_PAIR_SIDE):
# both links and an rxe on each, kvreg loaded, then kvreg's remote bench
# (tests/bench/bench_remote.c) and perftest between the same guests. The
# importer writes the lines for tests/bench/report.sh to OUT/remote.txt.
#   pair-bench-side.sh export|import BUILD KO RESULTS PREFIX
ROLE=$1
BUILD=$2
KO=$3
RESULTS=$4
X=/kvreg-x
OUT=$(dirname "$RESULTS")
: > "$RESULTS"
if [ "$ROLE" = export ]; then N=1; else N=2; fi
. "$(dirname "$0")/../guest/pair-net.sh"
pair_net_up $N
if ! insmod "$KO"; then
	echo "FAIL bench/$ROLE/module-load" >> "$RESULTS"
	touch "$RESULTS.done"
	exit 0
fi
pair_net_wait $N

if "$BUILD/tests/bench/bench_remote" "$ROLE" "$X" > /tmp/remote.out 2>&1
then
	echo "PASS bench/remote/$ROLE" >> "$RESULTS"
else
	echo "FAIL bench/remote/$ROLE" >> "$RESULTS"
fi
cat /tmp/remote.out

# perftest: the exporter serves, the importer measures. Each server
# waits for its client; the client gives it two seconds to start.
PEER=192.0.2.1
perf() {
	tool=$1
	shift
	if [ "$ROLE" = export ]; then
		timeout 180 "$tool" -d rxe0 -x 1 -F "$@" > /dev/null 2>&1
	else
		sleep 2
		timeout 180 "$tool" -d rxe0 -x 1 -F "$@" "$PEER" 2>/dev/null
	fi
}
for t in write read; do
	for s in 4096 65536 2097152 8388608; do
		n=$(( s >= 2097152 ? 20 : 1000 ))
		perf "ib_${t}_bw" -s "$s" -n "$n" |
			awk -v t="$t" -v s="$s" '$1 == s && NF >= 5 {
				printf "REMOTE-BW perftest %s %s %.1f\n", t, s,
				       $4 * 1.048576
				if (t == "write" && s == 4096)
					printf "REMOTE-RATE perftest 4096 %.0f\n",
					       $5 * 1e6 }'
	done
done >> /tmp/remote.out
perf ib_write_lat -s 4096 -n 1000 |
	awk '$1 == 4096 && NF >= 5 { printf "REMOTE-LAT perftest 4096 %s\n", $5 }' \
	>> /tmp/remote.out
[ "$ROLE" = import ] && grep '^REMOTE-' /tmp/remote.out > "$OUT/remote.txt"
rmmod kvreg
touch "$RESULTS.done"
