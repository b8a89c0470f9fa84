#!/bin/bash
# Turn a bench run's raw lines (OUT/raw.txt, and the pair's OUT/remote.txt)
# into OUT/results.md (tables, targets, per-stage profile) and
# OUT/bench.png (time against size; the remote panels on its last row).
#   report.sh OUT
set -euo pipefail
OUT=$1
RAW=$OUT/raw.txt
HERE=$(cd "$(dirname "$0")" && pwd)

REMOTE=$OUT/remote.txt
{
echo "# kvreg benchmark"
echo
if [ -s "$RAW" ]; then
echo "One guest run, $(grep -c '^REG ' "$RAW") registration cases," \
     "medians. Ratio = kvreg / ibv_reg_mr (the peer registers once per" \
     "device); below 1 kvreg is faster. Times in ms."
echo
echo "## Targets"
echo
awk -f "$HERE/targets.awk" "$RAW"
echo
echo "## Registration"
echo
echo "kvreg MR page: the MR page size kvreg chose (physically contiguous base"
echo "pages can give more than 4 KiB). reg / pin: kvreg's register time over"
echo "its own pin stage, the floor it can approach. 1 CPU: kvreg with"
echo "max_threads=1, and helpers / 1 CPU: its register and deregister time"
echo "with helpers over that, the two timed in turns with no ibv_reg_mr in"
echo "between (above 1: helpers cost more than they gave)."
echo
echo "| backing | size | devices | memory | kvreg reg | ibv reg | ratio | reg / pin | kvreg dereg | ibv dereg | ratio | reg+dereg ratio | kvreg MR page | kvreg 1 CPU reg / dereg | helpers / 1 CPU reg / dereg |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
awk 'function size_name(b) {
	if (b >= 2^30) return sprintf("%g GiB", b / 2^30)
	if (b >= 2^20) return sprintf("%g MiB", b / 2^20)
	return sprintf("%g KiB", b / 2^10) }
$1 == "PAGESHIFT" { shift[$2 " " $3 " " $4 " " $5] = $6 }
$1 == "STAGE" && $6 == "pin" { pin[$2 " " $3 " " $4 " " $5] = $7 }
$1 == "REG" {
	k = $2 " " $3 " " $4 " " $5
	one = NF >= 11 ? sprintf("%.3f / %.3f", $10, $11) : ""
	vs = ""
	if (NF >= 13 && $10 > 0 && $11 > 0)
		vs = sprintf("%.2f / %.2f", $12 / $10, $13 / $11)
	floor = "n/a"
	if (pin[k] > 0)
		floor = sprintf("%.2f", $6 / pin[k])
	printf "| %s | %s | %s | %s | %.3f | %.3f | %.2f | %s | %.3f | %.3f | %.2f | %.2f | %s | %s | %s |\n",
	       $2, size_name($3), $4, $5, $6, $8, $6 / $8, floor, $7, $9,
	       $7 / $9, ($6 + $7) / ($8 + $9), size_name(2 ^ shift[k]), one,
	       vs }' "$RAW"
echo
echo "## Growth with size (kvreg, touched, 1 device)"
echo
echo "Register time per 4 KiB page (4 KiB backing) or per 2 MiB folio (huge backings):"
echo "flat along a row means linear growth."
echo
awk '$1 == "REG" && $4 == 1 && $5 == "touched" && $3 >= 2097152 {
	unit = $2 == "4KiB" ? 4096 : 2097152
	row[$2] = row[$2] sprintf(" %s=%.1f ns", $3 / 1048576 " MiB", $6 * 1e6 / ($3 / unit))
} END { for (b in row) printf "- %s:%s\n", b, row[b] }' "$RAW"
awk '$1 == "EXPORT" {
	printf "- EXPORT of %s MiB of %s pages (its pages registered again in the export'"'"'s PD): %.2f ms; UNEXPORT %.2f ms; the registration itself %.2f ms, ibv_reg_mr %.2f ms (EXPORT / ibv_reg_mr %.2f)\n",
	       $3 / 1048576, $2, $4, $5, $6, $7, $4 / $7 }' "$RAW"
awk '$1 == "EXPORT-STAGE" && $4 ~ /^(alloc_map_mr|cpu_ib_alloc_mr|cpu_ib_map_mr_sg|post_reg_mr|dereg_mr)$/ {
	k = $2 " pages, " $3 / 1048576 " MiB"; if (!(k in row)) order[n++] = k
	row[k] = row[k] sprintf("%s %s %.2f", row[k] == "" ? "" : ",", $4, $5)
} END { for (i = 0; i < n; i++) printf "- EXPORT'"'"'s stages (ms per export, in exports of their own; alloc_map_mr is the wall time of the two cpu_ stages, which are summed over CPUs), %s:%s\n", order[i], row[order[i]] }' "$RAW"
awk '$1 == "SCALE" {
	printf "- %d live registrations of 4 KiB: median register %.4f ms over the first 500, %.4f ms over the last 500 (ratio %.2f); deregister %.4f ms each\n",
	       $3, $5, $7, $7 / $5, $9 }' "$RAW"
echo
echo "## Where kvreg's time goes (ms per registration, 4 KiB and 1 GiB, touched)"
echo
echo "| case | $(awk '$1 == "STAGE" { if (!seen[$6]++) printf "%s%s", n++ ? " | " : "", $6 }' "$RAW") |"
echo "|---|$(awk '$1 == "STAGE" { if (!seen[$6]++) printf "---|" }' "$RAW")"
awk '$1 == "STAGE" && ($3 == 1073741824 || $3 == 4096) && $5 == "touched" {
	k = $2 " pages, " ($3 == 4096 ? "4 KiB" : "1 GiB") ", " $4 " dev"; if (!(k in row)) order[n++] = k
	row[k] = row[k] sprintf($3 == 4096 ? " %.4f |" : " %.2f |", $7)
} END { for (i = 0; i < n; i++) printf "| %s |%s\n", order[i], row[order[i]] }' "$RAW"
echo
echo "## Transfers on one device (kvreg TRANSFER against perftest)"
echo
echo "| op | size | kvreg Gb/s | perftest Gb/s | ratio | kvreg latency us | perftest latency us |"
echo "|---|---|---|---|---|---|---|"
awk '$1 == "PERF" && $5 == "bw" { bw[$3 " " $4] = $6 }
     $1 == "PERF" && $5 == "lat" { lat[$3 " " $4] = $6 }
     $1 == "XFER" { k = $3 " " $4; kb[k] = $5; kl[k] = $6; order[n++] = k }
     END { for (i = 0; i < n; i++) { k = order[i]; split(k, f, " ")
	b = f[2]
	if (b >= 2^20) sz = sprintf("%g MiB", b / 2^20)
	else sz = sprintf("%g KiB", b / 2^10)
	ratio = "n/a"
	if (bw[k] + 0 > 0) ratio = sprintf("%.2f", kb[k] / bw[k])
	printf "| %s | %s | %.2f | %s | %s | %.1f | %s |\n", f[1], sz, kb[k],
	       bw[k], ratio, kl[k], lat[k] } }' "$RAW"
grep '^SKIP' "$RAW" | sed 's/^SKIP /- skipped: /' || true
fi
if [ -s "$REMOTE" ]; then
	echo
	echo "## Remote: two guests on two links (kvreg against perftest)"
	echo
	echo "tests/bench/bench_remote.c and perftest between the same two guests"
	echo "(rxe on each link; perftest on rxe0, kvreg on one rail unless two"
	echo "are named), the same depth and message count on both, medians of"
	echo "three runs. Ratio = kvreg / perftest."
	echo
	awk -f "$HERE/remote-report.awk" "$REMOTE"
fi
} > "$OUT/results.md"

# One panel per backing and device count: register and deregister time
# against size, touched memory, kvreg and ibv_reg_mr.
for b in 4KiB hugetlb THP; do
	for d in 1 4; do
		for t in touched untouched; do
			awk -v b=$b -v d=$d -v t=$t '$1 == "REG" && $2 == b &&
			    $4 == d && $5 == t { print $3 / 1048576, $6, $8, $7, $9 }' \
			    "$RAW" > "$OUT/plot-$b-$d-$t.dat"
		done
	done
done
for o in write read; do
	awk -v o=$o '$1 == "REMOTE-BW" && $3 == o { v[$4 " " $2] = $5; s[$4] = 1 }
	    END { for (k in s) print k / 1024, v[k " kvreg"], v[k " perftest"] }' \
	    "$REMOTE" 2>/dev/null | sort -n > "$OUT/plot-remote-$o.dat" || true
done
awk '$1 == "REMOTE-RATE" && $2 == "kvreg" && $3 != "stream" { print $3, $4 }
     $1 == "REMOTE-RATE" && $2 == "perftest" { p = $4 }
     END { if (p) print "# perftest", p }' "$REMOTE" 2>/dev/null |
	sort -n > "$OUT/plot-remote-rate.dat" || true
awk '$1 == "REMOTE-RAILS" { print $4 / 1024, $2, $5 }' "$REMOTE" 2>/dev/null |
	sort -n > "$OUT/plot-remote-rails.dat" || true
awk '$1 == "REMOTE-CPU" && $5 != "failed" { v[$4 " " $2 " " $3] = $5; s[$4] = 1 }
     END { for (k in s) print k / 1024, v[k " kvreg write"], v[k " perftest write"],
			     v[k " kvreg read"], v[k " perftest read"] }' \
	"$REMOTE" 2>/dev/null | sort -n > "$OUT/plot-remote-cpu.dat" || true
# panel FILE TITLE PLOT: one panel of the picture, "no data" when FILE is
# empty (a part of the bench that did not run).
panel() {
	echo "set title '$2'"
	if [ -s "$1" ]; then
		echo "$3"
	else
		echo "unset logscale; set xrange [0:1]; set yrange [0:1]; plot -1 t 'no data'; set autoscale; set logscale xy"
	fi
}
{
	echo 'set terminal pngcairo size 1800,2000 font ",10" noenhanced'
	echo "set output '$OUT/bench.png'"
	echo 'set multiplot layout 5,4 title "kvreg vs ibv_reg_mr: time (ms) against size (MiB), medians, one guest run; last two rows: remote, kvreg vs perftest"'
	echo 'set logscale xy; set key left top; set grid'
	for b in 4KiB hugetlb THP; do
		for d in 1 4; do
			for t in touched untouched; do
				f=$OUT/plot-$b-$d-$t.dat
				panel "$f" "$b, $d device(s), $t" \
					"plot '$f' u 1:2 w lp t 'kvreg reg', '' u 1:3 w lp t 'ibv reg', '' u 1:4 w lp t 'kvreg dereg', '' u 1:5 w lp t 'ibv dereg'"
			done
		done
	done
	for o in write read; do
		f=$OUT/plot-remote-$o.dat
		panel "$f" "remote $o: MB/s against op size (KiB)" \
			"plot '$f' u 1:2 w lp t 'kvreg', '' u 1:3 w lp t 'perftest'"
	done
	f=$OUT/plot-remote-rate.dat
	p=$(sed -n 's/^# perftest //p' "$f" 2>/dev/null)
	panel "$f" "remote 4 KiB pages/s against batch size" \
		"plot '$f' u 1:2 w lp t 'kvreg'${p:+, $p t 'ib_write_bw -s 4096'}"
	f=$OUT/plot-remote-rails.dat
	panel "$f" "remote WRITE MB/s: one rail and two" \
		"plot '$f' u 1:(\$2 == 1 ? \$3 : 1/0) w lp t 'one rail', '' u 1:(\$2 == 2 ? \$3 : 1/0) w lp t 'two rails'"
	f=$OUT/plot-remote-cpu.dat
	panel "$f" "remote: initiator busy CPU s per GiB against op size (KiB)" \
		"plot '$f' u 1:2 w lp t 'kvreg write', '' u 1:3 w lp t 'ib_write_bw', '' u 1:4 w lp t 'kvreg read', '' u 1:5 w lp t 'ib_read_bw'"
	echo 'unset multiplot'
} | gnuplot 2> "$OUT/gnuplot.log"
rm -f "$OUT"/plot-*.dat
echo "bench: $OUT/results.md, $OUT/bench.png"
cat "$OUT/results.md"
