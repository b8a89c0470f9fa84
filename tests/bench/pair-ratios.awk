# kvreg's throughput between two guests as a ratio to perftest's, same
# run, same guests: lines "kvreg-bw POOL PAGE read R write W" and
# "perftest-bw write|read SIZE MBPS" (MB/s, 10^6 bytes). PAGE 4096x64 is
# 4 KiB pages in batches of 64, set against perftest's 4 KiB messages.
$1 == "kvreg-bw" { kv[$2 " " $3 " read"] = $5; kv[$2 " " $3 " write"] = $7
		   pools[$2] = 1 }
$1 == "perftest-bw" { pt[$3 " " $2] = $4 }
END {
	printf "    %-10s %-8s %-6s %10s %10s %7s\n", "pool", "page", "op",
	       "kvreg MB/s", "perftest", "ratio"
	split("desc-4k desc-huge", pl, " ")
	split("4096 4096x64 65536 2097152", pg, " ")
	split("write read", op, " ")
	for (a = 1; a <= 2; a++)
	for (b = 1; b <= 4; b++)
	for (c = 1; c <= 2; c++) {
		k = pl[a] " " pg[b] " " op[c]
		if (!(k in kv))
			continue
		ref = pt[(pg[b] == "4096x64" ? 4096 : pg[b]) " " op[c]]
		printf "    %-10s %-8s %-6s %10.1f %10s %7s\n", pl[a], pg[b],
		       op[c], kv[k], ref == "" ? "-" : ref,
		       ref == "" || ref == 0 ? "-" : sprintf("%.2f", kv[k] / ref)
	}
}
