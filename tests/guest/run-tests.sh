#!/bin/sh
# Runs in the guest: set up Soft-RoCE, load kvreg, run every integration
# test, unload. One result line per test ("PASS name", "FAIL name",
# "SKIP name") goes to RESULTS. Like liburing's runner, each test is
# preceded by a marker in the kernel log, and a test whose slice of the log
# shows a warning, oops or BUG fails whatever its exit status.
#   run-tests.sh BUILD_DIR KO RESULTS [debug KUNIT_KO | bullseye | trixie | forky]
# KVREG_ONLY="NAME..." runs only those tests (make check T=NAME).
# In debug mode (the debug kernel: KASAN, lockdep, kmemleak, fault
# injection) it also runs the KUnit suite, fault injection, the fuzzer and
# a kmemleak scan, and prefixes every result with "debug/". On another
# release's kernel the results are prefixed with its name ("trixie/").
# Debian 11's 5.10 and testing's 7.2 run the proof suite (PROOF) unless
# KVREG_ONLY names tests. The package tests run where the host installed
# what they check, natively in this guest's root: KVREG_DKMS_INSTALLED=1,
# DKMS from the tree (pkg-dkms.sh); KVREG_DEBS_INSTALLED=1, the packages
# (pkg-debs.sh). The two cannot share a root, so the host boots a guest
# for each. A run of package tests alone loads no module of its own.
BUILD=$1
KO=$2
RESULTS=$3
rm -f "$RESULTS.done"
MODE=${4:-debian}
KUNIT_KO=${5:-}
PREFIX=
[ "$MODE" != debian ] && PREFIX=$MODE/
# What proves the mission on the kernels at either end of the range:
# registration and transfers on 4 KiB, hugetlb and THP memory with bytes
# checked, two devices, rollback, revoked keys, kill -9, device removal,
# budgets, memlock, the memory kinds, overlap, the library from Python, and
# DKMS from the tree with a plain modprobe.
PROOF="integration/module_not_loaded integration/transfer_4k
       integration/transfer_hugetlb integration/transfer_thp
       integration/multi_device integration/rollback integration/revoked_keys
       integration/kill9 integration/device_removal integration/budget_bytes
       integration/budget_mrs integration/memlock integration/memory_kinds
       integration/overlap integration/gigantic_page python/binding
       packages/dkms"
case $MODE in
bullseye|forky) [ -z "${KVREG_ONLY:-}" ] && KVREG_ONLY=$(echo $PROOF) ;;
esac
# A hang's bound, not a test's expected time: make check runs two guests
# (or a guest and a kernel build) at once, so each gets about half the
# CPUs, and transfer_large alone takes 330 s under KASAN.
TEST_TIMEOUT=1200
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
KERNEL_BAD='WARNING:|BUG:|Oops|general protection|Call Trace|kernel BUG|UBSAN|KASAN|list_del corruption|refcount_t:|blocked for more than|possible recursive locking|circular locking'
: > "$RESULTS"

record() {
	echo "$1 $PREFIX$2" >> "$RESULTS"
	echo "$1 $PREFIX$2"
}

# wanted NAME: in KVREG_ONLY (space-separated, as make check T= gives
# them, with or without this run's prefix), or every test when it is empty.
wanted() {
	[ -z "${KVREG_ONLY:-}" ] && return 0
	for w in $KVREG_ONLY; do
		[ "$w" = "$1" ] || [ "$w" = "$PREFIX$1" ] && return 0
	done
	return 1
}

# kernel_clean NAME: no bad line in the log since NAME's marker. A missing
# marker fails too: a check that cannot see the log proves nothing.
kernel_clean() {
	dmesg | awk -v m="kvreg-test: begin $1" '
		{ n = length($0) - length(m) + 1 }
		n > 0 && substr($0, n) == m { on = 1 }
		on' > /tmp/slice.log
	if [ ! -s /tmp/slice.log ]; then
		echo "--- no kernel log marker for $1 ---"
		return 1
	fi
	if grep -Eq "$KERNEL_BAD" /tmp/slice.log; then
		echo "--- kernel log of $1 ---"
		cat /tmp/slice.log
		return 1
	fi
	return 0
}

# run_test NAME CMD...: 0 pass, 77 skip, anything else fail.
run_test() {
	name=$1
	shift
	echo "kvreg-test: begin $name" > /dev/kmsg
	echo "=== $name"
	timeout "$TEST_TIMEOUT" "$@" > /tmp/test.log 2>&1
	rc=$?
	sed 's/^/    /' /tmp/test.log
	if ! kernel_clean "$name"; then
		record FAIL "$name"
	elif [ $rc -eq 0 ]; then
		record PASS "$name"
	elif [ $rc -eq 77 ]; then
		record SKIP "$name"
	else
		echo "    (exit status $rc)"
		record FAIL "$name"
	fi
}

# Leaks from before kvreg are not kvreg's.
[ "$MODE" = debug ] && echo clear > /sys/kernel/debug/kmemleak
if [ "$MODE" = debug ] && wanted kunit; then
	if [ -n "$KUNIT_KO" ]; then
		echo "kvreg-test: begin kunit" > /dev/kmsg
		if insmod "$KUNIT_KO"; then
			r=/sys/kernel/debug/kunit/kvreg/results
			sed 's/^/    /' "$r"
			# KTAP: one "ok N name" or "not ok N name" per case.
			awk '$1 == "ok" && NF >= 3 && $0 ~ /^    / {
				print "PASS kunit/" $3 }
			     $1 == "not" && $2 == "ok" && $0 ~ /^    / {
				print "FAIL kunit/" $4 }' "$r" > /tmp/kunit
			[ -s /tmp/kunit ] || echo "FAIL kunit/results" > /tmp/kunit
			kernel_clean kunit || echo "FAIL kunit/kernel-log" >> /tmp/kunit
			while read -r verdict name; do
				record "$verdict" "$name"
			done < /tmp/kunit
			rmmod kvreg_kunit
		else
			record FAIL kunit/insmod
		fi
	fi
fi

echo 64 > /proc/sys/vm/nr_hugepages
echo madvise > /sys/kernel/mm/transparent_hugepage/enabled
echo madvise > /sys/kernel/mm/transparent_hugepage/defrag
"$HERE/rxe-up.sh" 2 || { record FAIL guest/rxe-setup; exit 1; }

# Every program in tests/integration runs, in this order: the ones not
# named here first, alphabetically; then those that need the debug kernel,
# change module parameters for others or take devices away, last.
LATE="check_matches caps fault_inject fuzz device_not_active races device_removal
      removal_remote no_device"
# test_args NAME: the arguments a test takes, as words.
test_args() {
	case $1 in
	module_not_loaded|check_matches|conns) echo "$BUILD/bin/kvregctl" ;;
	# 1,000 connect/close cycles; 200 under KASAN, ten times slower there.
	remote) echo "$BUILD/bin/kvregctl $([ "$MODE" = debug ] && echo 200 ||
		echo 1000)" ;;
	fuzz) echo "100000 0x6b767265" ;;	# fixed seed: reproducible
	# 1,000 connection requests; 400 under KASAN (the cap is 256).
	caps) echo "$([ "$MODE" = debug ] && echo 400 || echo 1000)" ;;
	device_not_active) echo kvdummy0 ;;
	races|device_removal) echo kvdummy1 ;;
	# rxe under KASAN lets a busy device go in minutes, not seconds.
	removal_remote) echo "kvdummy1 $([ "$MODE" = debug ] && echo 240 ||
		echo 20)" ;;
	no_device) echo "$BUILD/bin/kvregctl kvdummy0 kvdummy1" ;;
	esac
}
# Only on the debug kernel: fault injection and the fuzzer need it.
debug_only() {
	case $1 in fault_inject|fuzz) return 0 ;; esac
	return 1
}
run_integration() {
	name=$1
	wanted "integration/$name" || return 0
	if debug_only "$name" && [ "$MODE" != debug ]; then
		return 0
	fi
	# shellcheck disable=SC2046
	run_test "integration/$name" "$BUILD/tests/integration/$name" \
		$(test_args "$name")
}

ALL=$(ls "$SRC/tests/integration" | sed -n 's/\.c$//p' | sort)
EARLY=
for t in $ALL; do
	case " $(echo $LATE) module_not_loaded " in
	*" $t "*) ;;
	*) EARLY="$EARLY $t" ;;
	esac
done

# only_packages: KVREG_ONLY names package tests and nothing else.
only_packages() {
	[ -n "${KVREG_ONLY:-}" ] || return 1
	for w in $KVREG_ONLY; do
		case ${w#"$PREFIX"} in packages/*) ;; *) return 1 ;; esac
	done
}

# module_tests: the suite against the module built for this kernel.
module_tests() {
	# Before the module exists: what users see when it is not loaded.
	run_integration module_not_loaded

	echo "kvreg-test: begin module/load" > /dev/kmsg
	# kvreg links against rdma_cm; built in on the debug kernel.
	modprobe rdma_cm 2>/dev/null || true
	if ! insmod "$KO"; then
		record FAIL module/load
		exit 1
	fi
	if [ -c /dev/kvreg ] && kernel_clean module/load; then
		record PASS module/load
	else
		record FAIL module/load
	fi

	for t in $EARLY; do
		run_integration "$t"
	done
	# The Python binding, and the storage-backend examples in C and Python.
	wanted python/binding &&
	run_test python/binding env KVREG_LIBRARY="$BUILD/lib/libkvreg.so.1" \
		PYTHONPATH="$SRC/libuser/python" python3 "$SRC/tests/python/binding.py"
	wanted examples/hicache_backend.c &&
	run_test examples/hicache_backend.c "$BUILD/examples/hicache_backend" 32 64
	wanted examples/hicache_backend.py &&
	run_test examples/hicache_backend.py env \
		KVREG_LIBRARY="$BUILD/lib/libkvreg.so.1" \
		PYTHONPATH="$SRC/libuser/python" \
		python3 "$SRC/examples/hicache_backend.py" 32 16
	# Last: these remove devices and add them back.
	for t in $LATE; do
		run_integration "$t"
	done

	# Every registration is gone by now: the module must unload cleanly.
	echo "kvreg-test: begin module/unload" > /dev/kmsg
	if rmmod kvreg && kernel_clean module/unload; then
		record PASS module/unload
	else
		record FAIL module/unload
	fi
}
only_packages || module_tests

# Installed as users install it: DKMS from the tree, or the Debian
# packages (a Debian kernel only: the debug kernel has no packaged headers).
if [ "$MODE" != debug ]; then
	[ -n "${KVREG_DKMS_INSTALLED:-}" ] && wanted packages/dkms &&
		run_test packages/dkms "$HERE/pkg-dkms.sh" "$SRC" "$BUILD"
	[ -n "${KVREG_DEBS_INSTALLED:-}" ] && wanted packages/debs &&
		run_test packages/debs "$HERE/pkg-debs.sh" "$SRC"
fi

# What kvreg allocated and never freed, now that it is gone.
if [ "$MODE" = debug ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > /tmp/kmemleak
	if grep -q "unreferenced object" /tmp/kmemleak; then
		cat /tmp/kmemleak
		record FAIL kmemleak
	else
		record PASS kmemleak
	fi
fi

# The host counts results only from a run that got here.
touch "$RESULTS.done"
