# The registration targets (issue 15) and the transfer one (issue 5),
# checked against one bench run's REG, STAGE and XFER/PERF lines: kvreg /
# peer medians, 1 GiB where a size is named.
function row(name, ratio, target, le) {
	ok = le ? ratio <= target : ratio >= target
	printf "| %s | %.2f | %s %.2f | %s |\n", name, ratio,
	       le ? "<=" : ">=", target, ok ? "met" : "missed"
}
$1 == "STAGE" && $6 == "pin" { pin[$2 " " $3 " " $4 " " $5] = $7 }
$1 == "REG" && $5 == "touched" { key = $2 " " $3 " " $4; r[key] = $6 / $8
	d[key] = $7 / $9; rd[key] = ($6 + $7) / ($8 + $9); ndev[$4] = 1
	regms[key] = $6
	# Helpers against one CPU, register + deregister: the worst case.
	if (NF >= 13 && $10 + $11 > 0) {
		h = ($12 + $13) / ($10 + $11)
		if (h > worst) { worst = h; worst_case = $2 " " $3 " " $4 }
		helpers = 1
	} }
$1 == "PERF" && $3 == "write" && $4 == 1048576 && $5 == "bw" { peer = $6 }
$1 == "XFER" && $3 == "write" && $4 == 1048576 { kv = $5 }
END {
	print "| case | ratio | target | |"
	print "|---|---|---|---|"
	g = "4KiB 1073741824 1"
	if (g in r) {
		row("register 1 GiB, 4 KiB pages, 1 device", r[g], 0.7, 1)
		p = pin[g " touched"]
		if (p > 0)
			row("the same against its own pin stage", regms[g] / p,
			    1.4, 1)
	}
	g = "4KiB 1073741824 4"
	if (g in r)
		row("register 1 GiB, 4 KiB pages, 4 devices", r[g], 0.33, 1)
	g = "hugetlb 1073741824 1"
	if (g in r)
		row("register 1 GiB, hugetlb 2 MiB, 1 device", r[g], 0.1, 1)
	g = "THP 1073741824 1"
	if (g in r)
		row("register 1 GiB, THP, 1 device", r[g], 0.1, 1)
	g = "4KiB 4096 1"
	if (g in r)
		row("register + deregister 4 KiB, 1 device", rd[g], 1.0, 1)
	# Not slower than one CPU, within a run's noise: cases of one chunk,
	# where no helper can run at all, spread as far.
	if (helpers)
		row("helpers / 1 CPU, register + deregister, worst case (" \
		    worst_case ")", worst, 1.1, 1)
	if (peer > 0 && kv > 0)
		row("transfer throughput at 1 MiB vs ib_write_bw", kv / peer, 0.9, 0)
}
