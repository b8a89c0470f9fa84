# Sourced by every script that runs tests in a guest (run-tests.sh,
# pair-side.sh): one rule for the kernel log, one way to record a result,
# one reading of tests/list. POSIX sh. The caller sets RESULTS (the file
# results go to), PREFIX (what result names carry: "", "trixie/",
# "debug/"...) and WHERE (this guest in tests/list: 6.1, debug, pair...).
KVREG_SRC=$(cd "$(dirname "$0")/../.." && pwd)
KVREG_LIST=$KVREG_SRC/tests/list
KERNEL_BAD='WARNING:|BUG:|Oops|general protection|Call Trace|kernel BUG|UBSAN|KASAN|list_del corruption|refcount_t:|blocked for more than|possible recursive locking|circular locking'

# tolerate: the kernel log on stdin, less the one report a test may meet
# that is neither kvreg's nor of its doing, each dropped one said on
# stderr as "kvreg-test: tolerated ...". ib_mad's receive completion
# (ib_mad_recv_done, drivers/infiniband/core/mad.c) checks once, at its
# start, that its port is open, then posts a new receive buffer; while an
# RDMA device is unregistered, ib_mad_port_close() takes the port off the
# list and destroys the GSI QP before it frees the CQ, so a CM message
# that arrived just then is followed by a post to a destroyed QP, which
# rxe (6.4 on) reports with a WARNING in rxe_post_recv ("qp has been
# destroyed"). Dropped only whole: that WARNING, ib_mad_post_receive_mads
# in its call trace, and no kvreg frame in it.
tolerate() {
	awk '
	function flush(   i, ok) {
		ok = warn && mad && !ours
		if (ok)
			print "kvreg-test: tolerated: rxe_post_recv from " \
			      "ib_mad_post_receive_mads, the GSI QP destroyed " \
			      "under ib_mad (upstream race, docs/testing.md)" \
			      > "/dev/stderr"
		for (i = 0; i < n && !ok; i++)
			print blk[i]
		n = 0; inblk = 0; warn = 0; mad = 0; ours = 0
	}
	/-----------\[ cut here \]-----------/ { if (inblk) flush(); inblk = 1 }
	inblk {
		blk[n++] = $0
		if ($0 ~ /WARNING: .* rxe_post_recv\+/) warn = 1
		if ($0 ~ / ib_mad_post_receive_mads\+/) mad = 1
		if ($0 ~ /\[kvreg\]/) ours = 1
		if ($0 ~ /---\[ end trace/) flush()
		next
	}
	{ print }
	END { if (inblk) flush() }'
}

# record VERDICT NAME [REASON]: one result line, "SKIP" with its reason.
record() {
	echo "$1 $PREFIX$2${3:+ $3}" >> "$RESULTS"
	echo "$1 $PREFIX$2${3:+ $3}"
}

# mark NAME: where NAME's slice of the kernel log begins.
mark() {
	echo "kvreg-test: begin $1" > /dev/kmsg
}

# kernel_clean NAME: no warning, oops or BUG in the log since NAME's
# mark. A missing mark fails too: a check that cannot see the log proves
# nothing. A dirty slice is shown. The slice ends at an end mark written
# first, so that what the kernel says after it falls in the gap before
# the next test's mark, which kernel_gaps checks.
kernel_clean() {
	echo "kvreg-test: end $1" > /dev/kmsg
	dmesg | awk -v b="kvreg-test: begin $1" -v e="kvreg-test: end $1" '
		function ends(s) { n = length($0) - length(s) + 1
				   return n > 0 && substr($0, n) == s }
		ends(b) { on = 1 }
		on
		on && ends(e) { on = 0 }' > /tmp/slice.log
	if [ ! -s /tmp/slice.log ]; then
		echo "--- no kernel log mark for $1 ---"
		return 1
	fi
	tolerate < /tmp/slice.log 2>&1 > /tmp/slice.kept |
		sed "s|tolerated:|tolerated in $1:|"
	if grep -Eq "$KERNEL_BAD" /tmp/slice.kept; then
		echo "--- kernel log of $1 ---"
		cat /tmp/slice.log
		return 1
	fi
	return 0
}

# kernel_gaps: no warning, oops or BUG in what the kernel said outside
# every test's slice (at boot, between one test's check and the next
# one's mark, after the last): no test's check saw it, so the guest's
# run fails on it here, with the lines around it shown.
kernel_gaps() {
	dmesg | awk '
		/kvreg-test: begin / { on = 1 }
		!on
		/kvreg-test: end / { on = 0 }' | tolerate > /tmp/gaps.log
	if grep -Eq "$KERNEL_BAD" /tmp/gaps.log; then
		echo "--- kernel log outside every test's slice ---"
		grep -E -B5 -A20 "$KERNEL_BAD" /tmp/gaps.log
		return 1
	fi
	return 0
}

# list_names: what tests/list runs here, in its order.
list_names() {
	awk -f "$KVREG_SRC/tests/list.awk" -v op=names -v where="$WHERE" \
		"$KVREG_LIST"
}

# verdict NAME RC LOG: PASS for 0; SKIP for 77 with a reason tests/list
# allows here (the log's last "SKIP: " line); FAIL otherwise, saying why.
verdict() {
	if [ "$2" -eq 0 ]; then
		record PASS "$1"
		return
	fi
	if [ "$2" -eq 77 ]; then
		why=$(sed -n 's/^SKIP: //p' "$3" | tail -n 1)
		if awk -f "$KVREG_SRC/tests/list.awk" -v op=skip -v name="$1" \
			-v where="$WHERE" -v reason="$why" "$KVREG_LIST"; then
			record SKIP "$1" "($why)"
			return
		fi
		echo "    skipped (\"$why\"), which tests/list does not allow on $WHERE"
	else
		echo "    (exit status $2)"
	fi
	record FAIL "$1"
}

# run_test NAME CMD...: one test, bounded by TEST_TIMEOUT, its output
# shown indented; a dirty kernel log slice fails it whatever it returned.
run_test() {
	name=$1
	shift
	# A repeated test's runs each have a slice of their own.
	mark "$name${RUN_TAG:-}"
	echo "=== $name${RUN_TAG:-}"
	timeout "${TEST_TIMEOUT:-1200}" "$@" > /tmp/test.log 2>&1
	rc=$?
	sed 's/^/    /' /tmp/test.log
	kernel_clean "$name${RUN_TAG:-}" || rc=1
	verdict "$name" "$rc" /tmp/test.log
}

# kmemleak_check NAME: what was allocated and never freed, once kvreg is
# gone (two scans: an object is reported only once seen unreferenced
# twice). The log was cleared before kvreg loaded: earlier leaks are not
# kvreg's.
kmemleak_check() {
	echo scan > /sys/kernel/debug/kmemleak
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > /tmp/kmemleak
	if grep -q "unreferenced object" /tmp/kmemleak; then
		cat /tmp/kmemleak
		record FAIL "$1"
	else
		record PASS "$1"
	fi
}
