# The remote part of make bench (tests/bench/bench_remote.c and perftest
# between the same two guests, OUT/remote.txt): the tables and the targets
# of issue 14, as ratios kvreg / perftest. Throughput in MB/s (10^6 B).
function size_name(b) {
	if (b >= 2^20) return sprintf("%g MiB", b / 2^20)
	return sprintf("%g KiB", b / 2^10)
}
function row(name, ratio, target, le) {
	ok = le ? ratio <= target : ratio >= target
	printf "| %s | %.2f | %s %.2f | %s |\n", name, ratio,
	       le ? "<=" : ">=", target, ok ? "met" : "missed"
}
$1 == "REMOTE-BW" { bw[$2 " " $3 " " $4] = $5; if ($2 == "kvreg") sz[$4] = 1 }
$1 == "REMOTE-RATE" { rate[$2 " " $3] = $4 }
$1 == "REMOTE-LAT" { lat[$2] = $4 }
$1 == "REMOTE-RAILS" { rails[$2 " " $4] = $5 }
END {
	print "### Targets"
	print ""
	print "| case | ratio | target | |"
	print "|---|---|---|---|"
	n = split("65536 2097152 8388608", big, " ")
	for (o = 1; o <= 2; o++) {
		op = o == 1 ? "write" : "read"
		for (i = 1; i <= n; i++) {
			k = big[i]
			if (bw["perftest " op " " k] > 0 && ("kvreg " op " " k) in bw)
				row(sprintf("%s %s vs ib_%s_bw", op, size_name(k), op),
				    bw["kvreg " op " " k] / bw["perftest " op " " k],
				    0.9, 0)
		}
	}
	if (rate["perftest 4096"] > 0 && ("kvreg 64" in rate))
		row("4 KiB pages in batches of 64 vs ib_write_bw -s 4096",
		    rate["kvreg 64"] / rate["perftest 4096"], 0.8, 0)
	if (lat["perftest"] > 0 && ("kvreg" in lat))
		row("one 4 KiB WRITE (SUBMIT + REAP) vs ib_write_lat",
		    lat["kvreg"] / lat["perftest"], 1.3, 1)
	print ""
	print "### Throughput, one rail (MB/s)"
	print ""
	print "| op | size | kvreg | perftest | ratio |"
	print "|---|---|---|---|---|"
	for (o = 1; o <= 2; o++) {
		op = o == 1 ? "write" : "read"
		split("4096 65536 2097152 8388608", all, " ")
		for (i = 1; i <= 4; i++) {
			k = all[i]
			if (!(("kvreg " op " " k) in bw))
				continue
			p = bw["perftest " op " " k]
			printf "| %s | %s | %.1f | %s | %s |\n", op, size_name(k),
			       bw["kvreg " op " " k], (p == "" ? "-" : p),
			       (p > 0 ? sprintf("%.2f", bw["kvreg " op " " k] / p) : "-")
		}
	}
	print ""
	print "### 4 KiB pages: batch size against perftest's message rate"
	print ""
	print "| batch | kvreg pages/s | ib_write_bw -s 4096 msgs/s | ratio |"
	print "|---|---|---|---|"
	split("1 16 64 256", bs, " ")
	for (i = 1; i <= 4; i++)
		if (("kvreg " bs[i]) in rate)
			printf "| %s | %.0f | %s | %s |\n", bs[i],
			       rate["kvreg " bs[i]], rate["perftest 4096"],
			       (rate["perftest 4096"] > 0 ? sprintf("%.2f",
			       rate["kvreg " bs[i]] / rate["perftest 4096"]) : "-")
	print ""
	print "### Latency of one 4 KiB WRITE (us, median)"
	print ""
	printf "- kvreg SUBMIT + REAP: %s; kvreg_transfer_remote(): %s; ib_write_lat (typical): %s\n",
	       lat["kvreg"], lat["kvreg-sync"], lat["perftest"]
	print ""
	print "### Two rails against one (WRITE, MB/s)"
	print ""
	print "| size | one rail | two rails | ratio |"
	print "|---|---|---|---|"
	split("65536 2097152", rs, " ")
	for (i = 1; i <= 2; i++)
		if (rails["1 " rs[i]] > 0)
			printf "| %s | %.1f | %.1f | %.2f |\n", size_name(rs[i]),
			       rails["1 " rs[i]], rails["2 " rs[i]],
			       rails["2 " rs[i]] / rails["1 " rs[i]]
}
