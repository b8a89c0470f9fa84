#!/bin/bash
# make check: build everything, run the host tests, the DKMS build and the
# guest suite on Debian's kernel; end with "N passed, N failed, N skipped".
# T="NAME..." (make check T=integration/overlap) runs only the tests named,
# booting only the guests they need: a name is as the results print it,
# debug/ and trixie/ prefixes choosing those kernels.
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

# guest_wanted KIND: the names of T that the KIND guest (debian, debug,
# trixie) runs, without the prefix; "all" for the full run.
guest_wanted() {
	local w out=
	[ -z "$T" ] && { echo all; return; }
	for w in $T; do
		case $1:$w in
		debug:debug/pair/*) ;;
		debug:debug/*|trixie:trixie/*) out="$out ${w#*/}" ;;
		debian:debug/*|debian:trixie/*|debian:pair/*) ;;
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
run dkms/build bash tests/dkms/dkms-build.sh "$KVER"
# The four packages, which the guests then install; lintian must be clean.
run deb/build-lintian bash dist/make-deb.sh "$BUILD/deb"
if [ -n "$T" ] && [[ " $T " == *"packages/debs "* ]]; then
	dist/make-deb.sh "$BUILD/deb" > "$OUT/deb.log" 2>&1 ||
		{ cat "$OUT/deb.log"; record FAIL deb/build; }
fi
run static/sparse bash tests/static/sparse.sh "$KVER"
run static/checkpatch bash tests/static/checkpatch.sh

# The guest work runs in two lanes at a time. A guest runs one test at a
# time, so most of the time one of its two vCPUs idles: a second lane
# (another guest, or a host build) gets that CPU. Each lane logs to its
# own file, printed whole when the stage ends; results append to RESULTS
# a line at a time. One lane: the Debian 12 guest, then the Debian 13
# guest. The other: the Debian 13 chroot and module, the debug kernel and
# module, then the debug guest. Then the pairs, each two guests already.

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

# Debian 13: its 6.12 kernel, built for and tested in a cached chroot.
# Writes trixie.env.
trixie_build() {
	local TRIXIE TKVER
	: > "$OUT/trixie.env"
	if [ -z "$(guest_wanted trixie)" ] && ! pair_wanted; then
		return
	fi
	echo "=== Debian 13 (chroot cached under /var/cache/kvreg)"
	if ! TRIXIE=$(tests/guest/trixie.sh prepare 2> "$OUT/trixie-build.log")
	then
		cat "$OUT/trixie-build.log"
		record FAIL build/trixie-chroot
		return
	fi
	read -r TKVER _ <<< "$TRIXIE"
	if tests/guest/trixie.sh build . "$BUILD/kmod/$TKVER" \
		>> "$OUT/trixie-build.log" 2>&1; then
		record PASS "build/trixie-module"
		echo "TRIXIE_OK=1 TKVER=$TKVER" > "$OUT/trixie.env"
		if grep -E 'warning:' "$OUT/trixie-build.log"; then
			record FAIL build/trixie-module-w1-clean
		else
			record PASS build/trixie-module-w1-clean
		fi
	else
		cat "$OUT/trixie-build.log"
		record FAIL build/trixie-module
	fi
}

# guest_suite DIR NAME KIND KO [RUN-TESTS ARGS...]: the suite in one guest.
# A lane shares the CPUs, so a guest gets twice its time alone.
guest_suite() {
	local dir=$1 name=$2 kind=$3 ko=$4
	shift 4
	mkdir -p "$OUT/$dir"
	KVREG_KERNEL=$kind KVREG_GUEST_TIMEOUT=${GUEST_TIMEOUT:-3300} \
		tests/guest/boot.sh "$OUT/$dir" env "$(only_env "$kind")" sh \
		"$PWD/tests/guest/run-tests.sh" "$PWD/$BUILD" "$ko" \
		/kvreg-out/results "$@" > "$OUT/$dir/console.log" 2>&1 || true
	cat "$OUT/$dir/console.log"
	guest_results "$OUT/$dir" "$name"
}

debian_guest() {
	[ -n "$(guest_wanted debian)" ] || return 0
	echo "=== guest: Debian $KVER with Soft-RoCE"
	guest_suite guest guest debian "$PWD/$BUILD/kmod/$KVER/kvreg.ko"
}

trixie_guest() {
	[ -n "${TRIXIE_OK:-}" ] && [ -n "$(guest_wanted trixie)" ] || return 0
	echo "=== guest: Debian 13 kernel $TKVER with Soft-RoCE"
	guest_suite trixie-guest trixie/guest trixie \
		"$PWD/$BUILD/kmod/$TKVER/kvreg.ko" trixie
}

debug_guest() {
	[ -n "${DEBUG_OK:-}" ] && [ -n "$(guest_wanted debug)" ] || return 0
	echo "=== guest: debug kernel $DKVER (KASAN, lockdep, kmemleak)"
	GUEST_TIMEOUT=3600 guest_suite debug-guest debug/guest debug \
		"$PWD/$BUILD/kmod/$DKVER/kvreg.ko" debug \
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

# No barrier between the stages of a lane: a barrier left one lane idle
# for 13 minutes in the empty-cache run while the other finished.
guest_lane() {
	local i
	debian_guest
	# The Debian 13 guest needs the other lane's chroot and module.
	for i in $(seq 720); do
		[ -e "$OUT/trixie.done" ] && break
		sleep 5
	done
	# shellcheck disable=SC1091
	. "$OUT/trixie.env"
	trixie_guest
}

build_lane() {
	trixie_build
	touch "$OUT/trixie.done"
	debug_build
	# shellcheck disable=SC1091
	. "$OUT/debug.env"
	debug_guest
}

lanes guests guest_lane build_lane
# shellcheck disable=SC1091
. "$OUT/trixie.env"
# shellcheck disable=SC1091
. "$OUT/debug.env"

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
