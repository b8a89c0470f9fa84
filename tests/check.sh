#!/bin/bash
# make check: build everything, run the host tests, the DKMS build and the
# guest suite on Debian's kernel; end with "N passed, N failed, N skipped".
# T="NAME..." (make check T=integration/overlap) runs only the tests named,
# booting only the guests they need: a name is as the results print it,
# debug/, bullseye/, trixie/ and forky/ prefixes choosing those kernels.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=$BUILD/check
rm -rf "$OUT"
mkdir -p "$OUT"
RESULTS=$OUT/results
: > "$RESULTS"

T=${T:-}

# host_wanted NAME: the full run, or T names this host test.
host_wanted() {
	[ -z "$T" ] && return 0
	for w in $T; do [ "$w" = "$1" ] && return 0; done
	return 1
}

# The releases whose kernels are tested from a chroot of their own
# (tests/guest/chroot.sh): Debian 13's 6.12 runs the full suite, Debian
# 11's 5.10 and testing's 7.2 the proof suite (tests/guest/run-tests.sh).

# guest_wanted KIND: the names of T that the KIND guest (debian, debug or
# a suite) runs, without the prefix; "all" for the full run.
guest_wanted() {
	local w out=
	[ -z "$T" ] && { echo all; return; }
	for w in $T; do
		case $1:$w in
		debug:debug/pair/*) ;;
		debug:debug/*|trixie:trixie/*|bullseye:bullseye/*|forky:forky/*)
			out="$out ${w#*/}" ;;
		debian:debug/*|debian:trixie/*|debian:bullseye/*|debian:forky/*) ;;
		debian:pair/*) ;;
		debian:unit/*|debian:unit-san/*|debian:static/*|debian:dkms/*) ;;
		debian:deb/*|debian:build/*) ;;
		debian:*) out="$out $w" ;;
		esac
	done
	echo $out
}

# pair_wanted [debug/]: whether the pair of guests runs: 6.1 exporting
# to 6.12, or with debug/, the debug kernel with itself.
pair_wanted() {
	[ -z "$T" ] || [[ " $T " == *" ${1:-}pair/"* ]]
}

# only_env KIND: what run-tests.sh is told to run in that guest.
only_env() {
	local names
	names=$(guest_wanted "$1")
	[ "$names" = all ] && names=
	echo "KVREG_ONLY=$names"
}

record() {
	echo "$1 $2" >> "$RESULTS"
	echo "$1 $2"
}

# run NAME CMD...: a host test; exit 0 pass, 77 skip, else fail.
run() {
	local name=$1 rc=0
	shift
	host_wanted "$name" || return 0
	echo "=== $name"
	timeout 600 "$@" > "$OUT/test.log" 2>&1 || rc=$?
	sed 's/^/    /' "$OUT/test.log"
	case $rc in
	0) record PASS "$name" ;;
	77) record SKIP "$name" ;;
	*) echo "    (exit status $rc)"; record FAIL "$name" ;;
	esac
}

# guest_results DIR NAME: a guest run counts only if it reached its end;
# a panic or a hang leaves the rest of its tests unrun, and that fails.
guest_results() {
	[ -s "$1/results" ] && cat "$1/results" >> "$RESULTS"
	if [ ! -e "$1/results.done" ]; then
		echo "the guest did not finish its run (crash, panic or hang):"
		tail -n 40 "$1/console.log" 2>/dev/null
		record FAIL "$2/completed"
	fi
}

summary() {
	local p f s
	p=$(grep -c '^PASS ' "$RESULTS")
	f=$(grep -c '^FAIL ' "$RESULTS")
	s=$(grep -c '^SKIP ' "$RESULTS")
	if [ "$f" -gt 0 ]; then
		echo "failed:"
		grep '^FAIL ' "$RESULTS" | sed 's/^FAIL /  /'
	fi
	echo "$p passed, $f failed, $s skipped"
	[ "$f" -eq 0 ]
}

KVER=$(tests/guest/kernel.sh kver)
echo "=== build (library, kvregctl, tests, module for $KVER)"
if make -s all tests BUILD="$BUILD" KVER="$KVER" > "$OUT/build.log" 2>&1; then
	record PASS build/all
else
	cat "$OUT/build.log"
	record FAIL build/all
	summary
	exit 1
fi
# The module must build without a single warning at W=1.
if grep -E 'warning:' "$OUT/build.log"; then
	record FAIL build/module-w1-clean
else
	record PASS build/module-w1-clean
fi

for t in "$BUILD"/tests/unit/*; do
	run "unit/$(basename "$t")" "$t"
done
for t in "$BUILD"/tests/unit-san/*; do
	run "unit-san/$(basename "$t")" "$t"
done
for t in tests/unit/*.sh; do
	run "unit/$(basename "$t" .sh)" bash "$t" "$BUILD"
done
# Its compiles fill the compiler cache the Debian 12 guest's DKMS builds
# of the same source then take their objects from (run-tests.sh).
run dkms/build env MAKEFLAGS=CC=/usr/lib/ccache/gcc \
	CCACHE_DIR="$PWD/$BUILD/ccache/$KVER" bash tests/dkms/dkms-build.sh "$KVER"
# The four packages, which the guests then install; lintian must be clean.
run deb/build-lintian bash dist/make-deb.sh "$BUILD/deb"
# The guests' package tests and the releases' kvreg-dkms builds need this
# tree's packages even when T did not ask for them to be checked.
if [ -n "$T" ] && ! host_wanted deb/build-lintian; then
	dist/make-deb.sh "$BUILD/deb" > "$OUT/deb.log" 2>&1 ||
		{ cat "$OUT/deb.log"; record FAIL deb/build; }
fi
ls "$BUILD"/deb/kvreg-dkms_*.deb > "$OUT/deb.ok" 2>/dev/null
run static/sparse bash tests/static/sparse.sh "$KVER" "$BUILD"
run static/checkpatch bash tests/static/checkpatch.sh

# The guest work runs in two lanes at a time. A guest runs one test at a
# time, so most of the time one of its two vCPUs idles: a second lane
# (another guest, or a host build) gets that CPU. Each lane logs to its
# own file, printed whole when the stage ends; results append to RESULTS
# a line at a time. One lane: the debug kernel and its guest, then Debian
# 13's chroot, builds and guest. The other: the Debian 12 guest, then
# Debian 11's and testing's chroots, builds and guests. Then the pairs,
# each two guests.

# The debug kernel: KASAN, lockdep, kmemleak, KUnit, fault injection.
# Writes what later stages need to debug.env.
debug_build() {
	local DEBUG DKVER DTREE
	echo "=== debug kernel (built once, cached under /var/cache/kvreg)"
	: > "$OUT/debug.env"
	if [ -z "$(guest_wanted debug)" ] && ! pair_wanted debug/; then
		return
	fi
	if ! DEBUG=$(tests/guest/debug-kernel.sh build); then
		record FAIL build/debug-kernel
		return
	fi
	read -r DKVER _ DTREE <<< "$DEBUG"
	if tests/guest/build-module.sh "$DTREE" "$BUILD/kmod/$DKVER" \
		> "$OUT/debug-build.log" 2>&1 &&
	   tests/guest/build-module.sh --kunit "$DTREE" \
		"$BUILD/kunit/$DKVER" >> "$OUT/debug-build.log" 2>&1; then
		record PASS build/debug-kernel
		echo "DEBUG_OK=1 DKVER=$DKVER" > "$OUT/debug.env"
		# KASAN and lockdep change what W=1 sees: warning-free there too.
		if grep -E 'warning:' "$OUT/debug-build.log"; then
			record FAIL build/debug-module-w1-clean
		else
			record PASS build/debug-module-w1-clean
		fi
	else
		cat "$OUT/debug-build.log"
		record FAIL build/debug-kernel
	fi
}

# recorded NAME LOG CMD...: a host step, its output in LOG; PASS, or FAIL
# with the log shown (and status 1).
recorded() {
	local name=$1 log=$2
	shift 2
	if "$@" > "$log" 2>&1; then
		record PASS "$name"
		return 0
	fi
	cat "$log"
	record FAIL "$name"
	return 1
}

# suite_build SUITE: the release's chroot (cached), then natively in it:
# the module at W=1 with the release's compiler, the library, kvregctl
# and the tests against its libc and rdma-core, and the kvreg-dkms
# package's DKMS build for its kernel (which fills the compiler cache its
# guest's DKMS builds then hit). Writes SUITE.env: OK=1 KVER=... .
suite_build() {
	local suite=$1 info kv log=$OUT/$1-build.log
	: > "$OUT/$suite.env"
	if [ -z "$(guest_wanted "$suite")" ] &&
	   { [ "$suite" != trixie ] || ! pair_wanted; }; then
		return
	fi
	echo "=== $suite: chroot (cached under /var/cache/kvreg) and builds"
	if ! info=$(tests/guest/chroot.sh "$suite" prepare 2> "$log"); then
		cat "$log"
		record FAIL "build/$suite-chroot"
		return
	fi
	read -r kv _ <<< "$info"
	if ! tests/guest/chroot.sh "$suite" build . "$BUILD/kmod/$kv" \
		>> "$log" 2>&1; then
		cat "$log"
		record FAIL "build/$suite-module"
		return
	fi
	record PASS "build/$suite-module"
	if grep -E 'warning:' "$log"; then
		record FAIL "build/$suite-module-w1-clean"
	else
		record PASS "build/$suite-module-w1-clean"
	fi
	recorded "build/$suite-user" "$OUT/$suite-user.log" \
		tests/guest/chroot.sh "$suite" user . "$PWD/$BUILD/$suite" || return
	if [ -s "$OUT/deb.ok" ] &&
	   tests/guest/chroot.sh "$suite" dkms-deb "$BUILD/deb" \
		"$BUILD/ccache/$suite" > "$OUT/$suite-dkms.log" 2>&1; then
		sed 's/^/    /' "$OUT/$suite-dkms.log"
		record PASS "deb/$suite-dkms"
	else
		cat "$OUT/$suite-dkms.log" 2>/dev/null
		record FAIL "deb/$suite-dkms"
	fi
	# 5.10 and 7.2: DKMS from the tree natively, loaded in the guest;
	# after the package's build, whose purge must find nothing of it.
	case $suite in
	bullseye|forky)
		recorded "build/$suite-dkms-tree" "$OUT/$suite-dkms-tree.log" \
			tests/guest/chroot.sh "$suite" dkms-tree . install ;;
	esac
	echo "OK=1 KVER=$kv" > "$OUT/$suite.env"
}

# guest_suite DIR NAME KIND KO BUILD [RUN-TESTS ARGS...]: the suite in one
# guest, with the tests and library of BUILD. A lane shares the CPUs, so
# a guest gets twice its time alone.
guest_suite() {
	local dir=$1 name=$2 kind=$3 ko=$4 build=$5 seed
	shift 5
	mkdir -p "$OUT/$dir"
	seed=$PWD/$BUILD/ccache/$kind
	[ "$kind" = debian ] && seed=$PWD/$BUILD/ccache/$KVER
	KVREG_KERNEL=$kind KVREG_GUEST_TIMEOUT=${GUEST_TIMEOUT:-3300} \
		tests/guest/boot.sh "$OUT/$dir" env "$(only_env "$kind")" \
		KVREG_CCACHE="$seed" KVREG_DEBS="$PWD/$BUILD/deb" \
		KVREG_DKMS_INSTALLED="${DKMS_INSTALLED:-}" sh \
		"$PWD/tests/guest/run-tests.sh" "$build" "$ko" \
		/kvreg-out/results "$@" > "$OUT/$dir/console.log" 2>&1 || true
	cat "$OUT/$dir/console.log"
	guest_results "$OUT/$dir" "$name"
}

debian_guest() {
	[ -n "$(guest_wanted debian)" ] || return 0
	echo "=== guest: Debian $KVER with Soft-RoCE"
	guest_suite guest guest debian "$PWD/$BUILD/kmod/$KVER/kvreg.ko" \
		"$PWD/$BUILD"
}

# suite_guest SUITE: its kernel, with its chroot as the root and the
# library and tests built there. On 5.10 and 7.2 the module DKMS built
# natively is removed after the guest loaded it, leaving nothing.
suite_guest() {
	local OK= KVER= DKMS_INSTALLED=
	# shellcheck disable=SC1090
	. "$OUT/$1.env"
	[ -n "$OK" ] && [ -n "$(guest_wanted "$1")" ] || return 0
	case $1 in bullseye|forky) DKMS_INSTALLED=1 ;; esac
	echo "=== guest: $1's kernel $KVER with Soft-RoCE"
	guest_suite "$1-guest" "$1/guest" "$1" \
		"$PWD/$BUILD/kmod/$KVER/kvreg.ko" "$PWD/$BUILD/$1" "$1"
	[ -n "$DKMS_INSTALLED" ] || return 0
	recorded "$1/packages/dkms-remove" "$OUT/$1-dkms-remove.log" \
		tests/guest/chroot.sh "$1" dkms-tree . remove
}

debug_guest() {
	[ -n "${DEBUG_OK:-}" ] && [ -n "$(guest_wanted debug)" ] || return 0
	echo "=== guest: debug kernel $DKVER (KASAN, lockdep, kmemleak)"
	GUEST_TIMEOUT=3600 guest_suite debug-guest debug/guest debug \
		"$PWD/$BUILD/kmod/$DKVER/kvreg.ko" "$PWD/$BUILD" debug \
		"$PWD/$BUILD/kunit/$DKVER/kvreg_kunit.ko"
}

# lanes NAME FN FN: run the two at once, then print their logs in order.
lanes() {
	local stage=$1
	echo "=== $stage: $2 | $3 (each lane's log follows when both end)"
	"$2" > "$OUT/$stage-1.log" 2>&1 &
	"$3" > "$OUT/$stage-2.log" 2>&1 &
	wait
	cat "$OUT/$stage-1.log" "$OUT/$stage-2.log"
}

# Debian 13, with the full suite and its long package tests, follows the
# debug guest, which ends first; 5.10 and 7.2, with the proof suite,
# follow Debian 12 in the guest lane. A warm run measured the Debian 12
# guest at 45 minutes and the debug guest at 36.
guest_lane() {
	local suite
	debian_guest
	for suite in bullseye forky; do
		suite_build "$suite"
		suite_guest "$suite"
	done
}

debug_lane() {
	debug_build
	# shellcheck disable=SC1091
	. "$OUT/debug.env"
	debug_guest
	suite_build trixie
	suite_guest trixie
}

lanes guests guest_lane debug_lane
# shellcheck disable=SC1091
. "$OUT/debug.env"
# Debian 13's kernel, for the pair; empty when its chroot or module failed.
# shellcheck disable=SC1091
TKVER=$(OK= KVER=; . "$OUT/trixie.env"; echo "${OK:+$KVER}")
TRIXIE_OK=${TKVER:+1}

# pair_run DIR PREFIX KIND_A KO_A KIND_B KO_B: two guests on one link.
pair_run() {
	local dir=$1 prefix=$2 side
	tests/guest/pair.sh "$OUT/$dir" "$PWD/$BUILD" "$3" "$4" "$5" "$6" \
		"$prefix" || true
	for side in a b; do
		sed -n '/=== \|PASS\|FAIL\|check failed\|exporter\|pool\|desc\|failed\|ok, then/p' \
			"$OUT/$dir/$side/console.log" | sed 's/^/    /' | head -60
		guest_results "$OUT/$dir/$side" "${prefix}pair/guest-$side"
	done
}

# Two guests on one link: Debian 12's kernel exports, Debian 13's imports,
# which also proves the wire formats across kernels.
if [ -n "${TRIXIE_OK:-}" ] && pair_wanted; then
	echo "=== pair: Debian $KVER exports, Debian 13 $TKVER imports"
	pair_run pair "" debian "$PWD/$BUILD/kmod/$KVER/kvreg.ko" \
		trixie "$PWD/$BUILD/kmod/$TKVER/kvreg.ko"
	# Throughput between the two, against perftest in the same run.
	[ -s "$OUT/pair/b/bench.txt" ] &&
		awk -f tests/bench/pair-ratios.awk "$OUT/pair/b/bench.txt"
fi

# The debug kernel with itself: KASAN, lockdep and kmemleak on both ends
# of the same connections. No perftest there: its ratios mean nothing
# under KASAN.
if [ -n "${DEBUG_OK:-}" ] && pair_wanted debug/; then
	echo "=== pair: the debug kernel $DKVER with itself"
	KVREG_GUEST_TIMEOUT=2400 pair_run debug-pair debug/ \
		debug "$PWD/$BUILD/kmod/$DKVER/kvreg.ko" \
		debug "$PWD/$BUILD/kmod/$DKVER/kvreg.ko"
fi

# A test that exists but did not run fails: in the full run, every
# integration program on some kernel; with T, every name asked for.
if [ -z "$T" ]; then
	for c in tests/integration/*.c; do
		n=$(basename "$c" .c)
		grep -Eq "^(PASS|FAIL|SKIP) ([a-z]+/)?integration/$n\$" "$RESULTS" ||
			record FAIL "integration/$n/not-run"
	done
else
	for w in $T; do
		grep -Eq "^(PASS|FAIL|SKIP) $w(/.*)?\$" "$RESULTS" ||
			record FAIL "$w/not-run"
	done
fi
summary
