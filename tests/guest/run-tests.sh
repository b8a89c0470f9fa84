#!/bin/sh
# Runs in the guest: set up Soft-RoCE, then what tests/list runs on this
# kernel, in its order: the module loaded, the tests, the module unloaded.
# One result line per test ("PASS name", "FAIL name", "SKIP name (why)")
# goes to RESULTS. Like liburing's runner, each test is preceded by a mark
# in the kernel log, and a test whose slice of the log shows a warning,
# oops or BUG fails whatever its exit status (lib.sh).
#   run-tests.sh BUILD_DIR KO RESULTS [debug KUNIT_KO | bullseye | trixie | forky]
# KVREG_ONLY="NAME..." runs only those tests (make check T=NAME), and
# KVREG_REPEAT=N each integration test N times (REPEAT=N). Results
# of another release's kernel carry its name ("trixie/"), the debug
# kernel's "debug/". The package tests run where the host installed what
# they check, natively in this guest's root: KVREG_DKMS_INSTALLED=1, DKMS
# from the tree (pkg-dkms.sh); KVREG_DEBS_INSTALLED=1, the packages
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
# This guest in tests/list.
case $MODE in
debian) WHERE=6.1 ;; trixie) WHERE=6.12 ;; bullseye) WHERE=5.10 ;;
forky) WHERE=7.2 ;; debug) WHERE=debug ;;
esac
# A hang's bound, not a test's expected time: make check runs two guests
# (or a guest and a kernel build) at once, so each gets about half the
# CPUs, and transfer_large alone takes 330 s under KASAN.
TEST_TIMEOUT=1200
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"
: > "$RESULTS"

# wanted NAME: in KVREG_ONLY (space-separated, as make check T= gives
# them, with or without this run's prefix), or every test when it is empty.
wanted() {
	[ -z "${KVREG_ONLY:-}" ] && return 0
	for w in $KVREG_ONLY; do
		[ "$w" = "$1" ] || [ "$w" = "$PREFIX$1" ] && return 0
	done
	return 1
}

# test_args NAME: the arguments an integration test takes, as words.
test_args() {
	case $1 in
	module_not_loaded|check_matches|conns) echo "$BIN/bin/kvregctl" ;;
	# 1,000 connect/close cycles; 200 under KASAN, ten times slower there.
	remote) echo "$BIN/bin/kvregctl $([ "$MODE" = debug ] && echo 200 ||
		echo 1000)" ;;
	fuzz) echo "100000 0x6b767265" ;;	# fixed seed: reproducible
	# 1,000 connection requests; 400 under KASAN (the cap is 256).
	caps) echo "$([ "$MODE" = debug ] && echo 400 || echo 1000)" ;;
	device_not_active) echo kvdummy0 ;;
	races|device_removal) echo kvdummy1 ;;
	# rxe under KASAN lets a busy device go in minutes, not seconds.
	removal_remote) echo "kvdummy1 $([ "$MODE" = debug ] && echo 240 ||
		echo 20)" ;;
	no_device) echo "$BIN/bin/kvregctl kvdummy0 kvdummy1" ;;
	# A regular file's page cache: the build tree's copy, not /tmp's.
	memory_kinds) echo "$BUILD/tests/integration/memory_kinds" ;;
	esac
}

# The KUnit suite (the debug kernel's): every case of the source ran and
# passed; a case KTAP marks "# SKIP" is a skip, which no case may take.
kunit_step() {
	[ -n "$KUNIT_KO" ] || { record FAIL kunit/module-missing; return; }
	mark kunit
	if ! insmod "$KUNIT_KO"; then
		record FAIL kunit/insmod
		return
	fi
	r=/sys/kernel/debug/kunit/kvreg/results
	sed 's/^/    /' "$r"
	# KTAP: "ok N name [# SKIP why]" or "not ok N name", indented.
	awk '/^    (not )?ok [0-9]+ / {
		skip = index($0, "# SKIP")
		name = $1 == "ok" ? $3 : $4
		print ($1 == "not" ? "FAIL" : skip ? "SKIP" : "PASS"), name }' \
		"$r" > /tmp/kunit
	want=$(grep -c 'KUNIT_CASE(' "$SRC/tests/kunit/kvreg_kunit.c")
	got=$(grep -c . /tmp/kunit)
	while read -r v name; do
		# A KUnit skip is a skip, and tests/list allows none.
		[ "$v" = SKIP ] && v=FAIL && echo "    kunit/$name skipped"
		record "$v" "kunit/$name"
	done < /tmp/kunit
	if [ "$got" -ne "$want" ]; then
		echo "    $got KUnit results for the $want cases of kvreg_kunit.c"
		record FAIL kunit/case-count
	fi
	kernel_clean kunit || record FAIL kunit/kernel-log
	rmmod kvreg_kunit
}

module_load() {
	mark module/load
	# kvreg links against rdma_cm; built in on the debug kernel.
	modprobe rdma_cm 2>/dev/null || true
	if ! insmod "$KO"; then
		record FAIL module/load
		touch "$RESULTS.done"
		exit 1
	fi
	if [ -c /dev/kvreg ] && kernel_clean module/load; then
		record PASS module/load
	else
		record FAIL module/load
	fi
}

# Every registration is gone by now: the module must unload cleanly.
module_unload() {
	mark module/unload
	if rmmod kvreg && kernel_clean module/unload; then
		record PASS module/unload
	else
		record FAIL module/unload
	fi
}

# only_packages: KVREG_ONLY names package tests and nothing else: this
# guest loads no module of its own.
only_packages() {
	[ -n "${KVREG_ONLY:-}" ] || return 1
	for w in $KVREG_ONLY; do
		case ${w#"$PREFIX"} in packages/*) ;; *) return 1 ;; esac
	done
}

# run_listed NAME: one name of tests/list, as this guest runs it. The
# runner's own steps run whenever the module is tested; tests only when
# wanted. A package test runs where the host installed what it checks.
run_listed() {
	case $1 in
	module/load) only_packages || module_load; return ;;
	module/unload) only_packages || module_unload; return ;;
	kmemleak) kmemleak_check kmemleak; return ;;
	kernel-log)
		only_packages && return 0
		if kernel_gaps; then record PASS kernel-log
		else record FAIL kernel-log; fi
		return ;;
	kunit) wanted kunit && kunit_step; return ;;
	esac
	wanted "$1" || return 0
	case $1 in
	packages/*) ;;
	*) only_packages && return 0 ;;
	esac
	lib="KVREG_LIBRARY=$BUILD/lib/libkvreg.so.1"
	py="PYTHONPATH=$SRC/libuser/python"
	case $1 in
	integration/*)
		t=${1#integration/}
		i=0
		while [ "$i" -lt "${KVREG_REPEAT:-1}" ]; do
			i=$((i + 1))
			[ "${KVREG_REPEAT:-1}" -gt 1 ] && RUN_TAG=" (run $i)"
			# shellcheck disable=SC2046
			run_test "$1" "$BIN/integration/$t" $(test_args "$t")
		done
		RUN_TAG= ;;
	python/binding)
		run_test "$1" env "$lib" "$py" python3 \
			"$SRC/tests/python/binding.py" ;;
	examples/hicache_backend.c)
		run_test "$1" "$BUILD/examples/hicache_backend" 32 64 ;;
	examples/hicache_backend.py)
		run_test "$1" env "$lib" "$py" python3 \
			"$SRC/examples/hicache_backend.py" 32 16 ;;
	packages/dkms)
		[ -n "${KVREG_DKMS_INSTALLED:-}" ] &&
		run_test "$1" "$HERE/pkg-dkms.sh" "$SRC" "$BUILD" ;;
	packages/debs)
		[ -n "${KVREG_DEBS_INSTALLED:-}" ] &&
		run_test "$1" "$HERE/pkg-debs.sh" "$SRC" ;;
	*) echo "=== $1: tests/list names it, this runner knows it not"
	   record FAIL "$1" ;;
	esac
}

# Tests run from a copy every user can reach: check_matches drops to an
# unprivileged user, and a tree under a 0700 home cannot be entered.
# kvregctl finds the library at $ORIGIN/../lib, as in the build tree.
BIN=/tmp/kvreg-tests
rm -rf "$BIN"
mkdir -p "$BIN/integration" "$BIN/bin" "$BIN/lib"
cp "$BUILD"/tests/integration/* "$BIN/integration/"
cp "$BUILD/bin/kvregctl" "$BIN/bin/"
cp -P "$BUILD"/lib/libkvreg.so* "$BIN/lib/"
chmod -R a+rX "$BIN"

# Leaks from before kvreg are not kvreg's.
[ "$MODE" = debug ] && echo clear > /sys/kernel/debug/kmemleak
echo 64 > /proc/sys/vm/nr_hugepages
echo madvise > /sys/kernel/mm/transparent_hugepage/enabled
echo madvise > /sys/kernel/mm/transparent_hugepage/defrag
"$HERE/rxe-up.sh" 2 || { record FAIL guest/rxe-setup; exit 1; }

for name in $(list_names); do
	run_listed "$name"
done

# The host counts results only from a run that got here.
touch "$RESULTS.done"
