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

# perftest (tests/guest/perftest.sh): the exporter serves, the importer
# measures, with kvreg's depth and message count (bench_remote.c's DEPTH
# and msgs_for()), each case three times, the median kept. A run that
# printed no result is "failed", which the report shows as the peer
# failing.
. "$(dirname "$0")/../guest/perftest.sh"
PERFTEST_DEPTH=128
MSGS=5000
busy() {
	awk '$1 == "cpu" { printf "%d\n", $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}
HZ=$(getconf CLK_TCK 2>/dev/null || echo 100)
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
server_busy=$(busy)
gib=0
for t in write read; do
	for s in 4096 65536 2097152 8388608; do
		n=$(( s <= 65536 ? MSGS : 268435456 / s ))
		: > /tmp/bw.txt
		: > /tmp/cpu.txt
		for rep in 1 2 3; do
			b0=$(busy)
			line=$(perftest_side "$ROLE" "ib_${t}_bw" "$s" "$n" \
				192.0.2.1)
			b1=$(busy)
			[ -n "$line" ] || continue
			echo "$line" >> /tmp/bw.txt
			awk -v d=$((b1 - b0)) -v hz="$HZ" -v n="$n" -v s="$s" \
			    'BEGIN { printf "%.6f\n", d / hz / (n * s / 2^30) }' \
				>> /tmp/cpu.txt
		done
		gib=$(awk -v g="$gib" -v n="$n" -v s="$s" \
		      'BEGIN { print g + 3 * n * s / 2^30 }')
		[ "$ROLE" = import ] || continue
		if [ ! -s /tmp/bw.txt ]; then
			echo "REMOTE-BW perftest $t $s failed"
			continue
		fi
		echo "REMOTE-BW perftest $t $s $(cut -d' ' -f1 /tmp/bw.txt | median)"
		echo "REMOTE-CPU perftest $t $s $(median < /tmp/cpu.txt)"
		[ "$t$s" = write4096 ] &&
			echo "REMOTE-RATE perftest 4096 $(cut -d' ' -f2 /tmp/bw.txt | median)"
	done
done >> /tmp/remote.out
# The server's CPU over every bw run, for the target guest's row.
if [ "$ROLE" = export ]; then
	awk -v d=$(($(busy) - server_busy)) -v hz="$HZ" -v g="$gib" \
	    'BEGIN { printf "%.6f\n", d / hz / g }' > "$X/.perftest-cpu-target"
	mv "$X/.perftest-cpu-target" "$X/perftest-cpu-target"
fi
: > /tmp/lat.txt
for rep in 1 2 3; do
	perftest_side "$ROLE" ib_read_lat 4096 1000 192.0.2.1 >> /tmp/lat.txt
done
if [ "$ROLE" = import ]; then
	if [ -s /tmp/lat.txt ]; then
		echo "REMOTE-LAT perftest read 4096 $(median < /tmp/lat.txt)"
	else
		echo "REMOTE-LAT perftest read 4096 failed"
	fi >> /tmp/remote.out
	i=0
	while [ ! -e "$X/perftest-cpu-target" ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "REMOTE-CPU-TARGET perftest $(cat "$X/perftest-cpu-target" 2>/dev/null || echo failed)" >> /tmp/remote.out
fi
[ "$ROLE" = import ] && grep '^REMOTE-' /tmp/remote.out > "$OUT/remote.txt"
rmmod kvreg
touch "$RESULTS.done"
