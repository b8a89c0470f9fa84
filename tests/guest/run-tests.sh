#!/bin/sh
# Runs in the guest: set up Soft-RoCE, load kvreg, run every integration
# test, unload. One result line per test ("PASS name", "FAIL name",
# "SKIP name") goes to RESULTS. Like liburing's runner, each test is
# preceded by a marker in the kernel log, and a test whose slice of the log
# shows a warning, oops or BUG fails whatever its exit status.
#   run-tests.sh BUILD_DIR KO RESULTS [debug KUNIT_KO | trixie]
# In debug mode (the debug kernel: KASAN, lockdep, kmemleak, fault
# injection) it also runs the KUnit suite, fault injection, the fuzzer and
# a kmemleak scan, and prefixes every result with "debug/". On Debian 13's
# kernel the results are prefixed "trixie/".
BUILD=$1
KO=$2
RESULTS=$3
rm -f "$RESULTS.done"
MODE=${4:-debian}
KUNIT_KO=${5:-}
PREFIX=
[ "$MODE" != debian ] && PREFIX=$MODE/
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
KERNEL_BAD='WARNING:|BUG:|Oops|general protection|Call Trace|kernel BUG|UBSAN|KASAN|list_del corruption|refcount_t:|blocked for more than|possible recursive locking|circular locking'
: > "$RESULTS"

record() {
	echo "$1 $PREFIX$2" >> "$RESULTS"
	echo "$1 $PREFIX$2"
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
	timeout 600 "$@" > /tmp/test.log 2>&1
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

if [ "$MODE" = debug ]; then
	# Leaks from before kvreg are not kvreg's.
	echo clear > /sys/kernel/debug/kmemleak
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

# Before the module exists: what users see when it is not loaded.
run_test integration/module_not_loaded \
	"$BUILD/tests/integration/module_not_loaded" "$BUILD/bin/kvregctl"

echo "kvreg-test: begin module/load" > /dev/kmsg
if ! insmod "$KO"; then
	record FAIL module/load
	exit 1
fi
if [ -c /dev/kvreg ] && kernel_clean module/load; then
	record PASS module/load
else
	record FAIL module/load
fi

for t in abi zero_length bad_input transfer_4k transfer_hugetlb transfer_large \
	 transfer_thp multi_device rollback revoked_keys kill9 budget_mrs \
	 budget_bytes device_reserve memlock rdma_cgroup memory_kinds \
	 device_memory overlap foreign mooncake_buffers procs preflight \
	 rdma_res_mr; do
	run_test "integration/$t" "$BUILD/tests/integration/$t"
done
# The Python binding, and the storage-backend examples in C and Python.
run_test python/binding env KVREG_LIBRARY="$BUILD/lib/libkvreg.so.1" \
	PYTHONPATH="$SRC/libuser/python" python3 "$SRC/tests/python/binding.py"
run_test examples/hicache_backend.c "$BUILD/examples/hicache_backend" 32 64
run_test examples/hicache_backend.py env \
	KVREG_LIBRARY="$BUILD/lib/libkvreg.so.1" \
	PYTHONPATH="$SRC/libuser/python" \
	python3 "$SRC/examples/hicache_backend.py" 32 16
run_test integration/check_matches \
	"$BUILD/tests/integration/check_matches" "$BUILD/bin/kvregctl"
if [ "$MODE" = debug ]; then
	run_test integration/fault_inject \
		"$BUILD/tests/integration/fault_inject"
	# A fixed seed: make check is reproducible; make fuzz explores.
	run_test integration/fuzz "$BUILD/tests/integration/fuzz" \
		100000 0x6b767265
fi
run_test integration/device_not_active \
	"$BUILD/tests/integration/device_not_active" kvdummy0
# Last: these remove devices and add them back.
run_test integration/races "$BUILD/tests/integration/races" kvdummy1
run_test integration/device_removal \
	"$BUILD/tests/integration/device_removal" kvdummy1
run_test integration/no_device "$BUILD/tests/integration/no_device" \
	"$BUILD/bin/kvregctl" kvdummy0 kvdummy1

# Every registration is gone by now: the module must unload cleanly.
echo "kvreg-test: begin module/unload" > /dev/kmsg
if rmmod kvreg && kernel_clean module/unload; then
	record PASS module/unload
else
	record FAIL module/unload
fi

# Installed as users install it: DKMS from the tree, then the Debian
# packages (a Debian kernel only: the debug kernel has no packaged headers).
if [ "$MODE" != debug ]; then
	run_test packages/dkms "$HERE/pkg-dkms.sh" "$SRC" "$BUILD"
	run_test packages/debs "$HERE/pkg-debs.sh" "$BUILD/deb" "$SRC"
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
