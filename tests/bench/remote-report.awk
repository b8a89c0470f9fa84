# The remote part of make bench (tests/bench/bench_remote.c and perftest
# between the same two guests, OUT/remote.txt): the tables and the targets
# of issue 27, as ratios kvreg / perftest, medians of three runs each at
# the same depth and message count. Throughput in MB/s (10^6 B); CPU in
# busy seconds of the guest per GiB moved. A perftest value "failed" is
# a peer that printed nothing: its rows say so.
function size_name(b) {
	if (b >= 2^20) return sprintf("%g MiB", b / 2^20)
	return sprintf("%g KiB", b / 2^10)
}
function row(name, kv, peer, target, le) {
	if (kv == "") {
		printf "| %s | kvreg printed nothing | %s %.2f | missed |\n",
		       name, le ? "<=" : ">=", target
		return
	}
	if (peer == "" || peer == "failed" || peer + 0 <= 0) {
		printf "| %s | peer failed | %s %.2f | - |\n", name,
		       le ? "<=" : ">=", target
		return
	}
	ratio = kv / peer
	ok = le ? ratio <= target : ratio >= target
	printf "| %s | %.2f | %s %.2f | %s |\n", name, ratio,
	       le ? "<=" : ">=", target, ok ? "met" : "missed"
}
function ratio_of(kv, peer) {
	if (peer == "failed") return "peer failed"
	return peer + 0 > 0 && kv != "" ? sprintf("%.2f", kv / peer) : "-"
}
$1 == "REMOTE-BW" { bw[$2 " " $3 " " $4] = $5 }
$1 == "REMOTE-CPU" { cpu[$2 " " $3 " " $4] = $5 }
$1 == "REMOTE-CPU-TARGET" { cput[$2] = $3 }
$1 == "REMOTE-RATE" { rate[$2 " " $3] = $4 }
$1 == "REMOTE-LAT" { lat[$2] = $5 }
$1 == "REMOTE-RAILS" { rails[$2 " " $4] = $5 }
$1 == "REMOTE-STAGE" { stage[$2 " " $3] = $4; if (!($3 in seen)) { seen[$3] = 1
		       order[nst++] = $3 } }
END {
	print "### Targets"
	print ""
	print "| case | ratio | target | |"
	print "|---|---|---|---|"
	n = split("65536 2097152 8388608", big, " ")
	for (o = 1; o <= 2; o++) {
		op = o == 1 ? "write" : "read"
		for (i = 1; i <= n; i++)
			row(sprintf("%s %s vs ib_%s_bw", op, size_name(big[i]), op),
			    bw["kvreg " op " " big[i]],
			    bw["perftest " op " " big[i]], 1.0, 0)
	}
	row("4 KiB pages streaming vs ib_write_bw -s 4096", rate["kvreg stream"],
	    rate["perftest 4096"], 1.0, 0)
	row("4 KiB pages in batches of 64 vs ib_write_bw -s 4096",
	    rate["kvreg 64"], rate["perftest 4096"], 0.8, 0)
	row("one 4 KiB READ, SUBMIT + REAP, vs ib_read_lat", lat["kvreg"],
	    lat["perftest"], 1.2, 1)
	row("one 4 KiB READ, kvreg_transfer_remote(), vs ib_read_lat",
	    lat["kvreg-sync"], lat["perftest"], 1.2, 1)
	for (o = 1; o <= 2; o++) {
		op = o == 1 ? "write" : "read"
		for (i = 1; i <= n; i++)
			row(sprintf("CPU per GiB, initiator, %s %s", op,
				    size_name(big[i])),
			    cpu["kvreg " op " " big[i]],
			    cpu["perftest " op " " big[i]], 1.0, 1)
	}
	print ""
	print "### Throughput and CPU, one rail"
	print ""
	print "| op | size | kvreg MB/s | perftest MB/s | ratio | kvreg CPU s/GiB | perftest CPU s/GiB | ratio |"
	print "|---|---|---|---|---|---|---|---|"
	split("4096 65536 2097152 8388608", all, " ")
	for (o = 1; o <= 2; o++) {
		op = o == 1 ? "write" : "read"
		for (i = 1; i <= 4; i++) {
			k = op " " all[i]
			if (!(("kvreg " k) in bw) && !(("perftest " k) in bw))
				continue
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", op,
			       size_name(all[i]), bw["kvreg " k], bw["perftest " k],
			       ratio_of(bw["kvreg " k], bw["perftest " k]),
			       cpu["kvreg " k], cpu["perftest " k],
			       ratio_of(cpu["kvreg " k], cpu["perftest " k])
		}
	}
	printf "\nThe target guest's CPU over all of those runs: kvreg %s s/GiB, perftest %s s/GiB (ratio %s).\n",
	       cput["kvreg"], cput["perftest"],
	       ratio_of(cput["kvreg"], cput["perftest"])
	print ""
	print "### 4 KiB pages against perftest's message rate"
	print ""
	print "The floor a batch of b pages can reach on this link: one round"
	print "trip (ib_read_lat) plus its pages at perftest's streaming rate R,"
	print "b / (rtt + b / R) pages/s; streaming's floor is R."
	print ""
	print "| kvreg submits | kvreg pages/s | ib_write_bw -s 4096 msgs/s | ratio | floor pages/s | kvreg / floor |"
	print "|---|---|---|---|---|---|"
	split("stream 1 16 64 256", bs, " ")
	for (i = 1; i <= 5; i++) {
		if (!(("kvreg " bs[i]) in rate))
			continue
		how = bs[i] == "stream" ? "streaming, refilled to the depth" : \
		      "batches of " bs[i] ", each reaped whole"
		floor_rate = ""
		if (rate["perftest 4096"] > 0 && lat["perftest"] > 0)
			floor_rate = bs[i] == "stream" ? rate["perftest 4096"] : \
				     bs[i] / (lat["perftest"] / 1e6 + \
					      bs[i] / rate["perftest 4096"])
		printf "| %s | %.0f | %s | %s | %s | %s |\n", how,
		       rate["kvreg " bs[i]], rate["perftest 4096"],
		       ratio_of(rate["kvreg " bs[i]], rate["perftest 4096"]),
		       floor_rate == "" ? "-" : sprintf("%.0f", floor_rate),
		       floor_rate == "" ? "-" : \
		       ratio_of(rate["kvreg " bs[i]], floor_rate)
	}
	if (nst) {
		print ""
		print "### Where a 4 KiB WRITE's time goes (us per operation, kvreg's tracepoints)"
		print ""
		print "| stage | streaming | batches of 64 |"
		print "|---|---|---|"
		for (i = 0; i < nst; i++)
			printf "| %s | %s | %s |\n", order[i], stage["stream " order[i]],
			       stage["64 " order[i]]
	}
	print ""
	print "### Latency of one 4 KiB READ (us, median; a round trip each)"
	print ""
	printf "- kvreg SUBMIT + REAP: %s; kvreg_transfer_remote(): %s; ib_read_lat (typical): %s\n",
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
