#!/bin/bash
# make check: build everything, then run what tests/list says, where it
# says: the host tests, the DKMS builds, the guests of Debian's kernels
# and the debug kernel, the pairs; end with "N passed, N failed, N
# skipped", every skip named with its reason.
# T="NAME..." (make check T=integration/overlap) runs only the tests named,
# booting only the guests they need: a name is as the results print it,
# debug/, bullseye/, trixie/ and forky/ prefixes choosing those kernels.
# T naming only unit/ and unit-san/ tests needs no kernel and no guest.
# REPEAT=N runs each integration test a guest runs N times in that boot,
# one result each: how often a test fails, measured.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=$BUILD/check
rm -rf "$OUT"
mkdir -p "$OUT"
RESULTS=$OUT/results
: > "$RESULTS"

T=${T:-}
LIST=tests/list

# The run's timeline: each lane's stages, stamped with the time since the
# start and the machine's CPU time used so far (core-minutes), printed at
# the end. The budget is a cold run's (no cache) wall time on two cores,
# where the lanes compete for CPU: the timeline shows which stage made a
# run slow, and whether the CPUs idled meanwhile.
START=$(date +%s)
TIMELINE=$OUT/timeline
: > "$TIMELINE"

# busy_core_min: CPU time the machine spent busy since boot, in
# core-minutes (/proc/stat's user, nice, system, irq, softirq, steal).
busy_core_min() {
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" {
		printf "%.1f", ($2 + $3 + $4 + $7 + $8 + $9) / hz / 60; exit }' \
		/proc/stat
}
BUSY0=$(busy_core_min)

# stamp LANE WHAT
stamp() {
	local s=$(( $(date +%s) - START ))
	printf '%d\t%3d:%02d %6.1f  %-8s %s\n' $s $((s / 60)) $((s % 60)) \
		"$(awk -v a="$(busy_core_min)" -v b="$BUSY0" \
			'BEGIN { print a - b }')" "$1" "$2" >> "$TIMELINE"
}

# list OP [VAR=VALUE...]: tests/list read by tests/list.awk.
list() {
	local op=$1 a args=()
	shift
	for a in "$@"; do args+=(-v "$a"); done
	awk -f tests/list.awk -v op="$op" "${args[@]}" "$LIST"
}

# host_only: T names unit tests only, which need no kernel and no guest.
host_only() {
	local w
	[ -n "$T" ] || return 1
	for w in $T; do
		case $w in unit/*|unit-san/*) ;; *) return 1 ;; esac
	done
}

# host_wanted NAME: the full run, or T names this host test.
host_wanted() {
	[ -z "$T" ] && return 0
	for w in $T; do [ "$w" = "$1" ] && return 0; done
	return 1
}

# The releases whose kernels are tested from a chroot of their own
# (tests/guest/chroot.sh): Debian 11's 5.10, 13's 6.12 and testing's 7.2.

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

# only_names KIND: what run-tests.sh is told to run in that guest (KVREG_ONLY;
# empty for all).
only_names() {
	local names
	names=$(guest_wanted "$1")
	[ "$names" = all ] && names=
	echo "$names"
}

# record VERDICT NAME [REASON]
record() {
	echo "$1 $2${3:+ $3}" >> "$RESULTS"
	echo "$1 $2${3:+ $3}"
}

# run NAME CMD...: a host test; exit 0 pass, 77 a skip if tests/list
# allows its reason on the host, else fail.
run() {
	local name=$1 rc=0 why
	shift
	host_wanted "$name" || return 0
	echo "=== $name"
	timeout 600 "$@" > "$OUT/test.log" 2>&1 || rc=$?
	sed 's/^/    /' "$OUT/test.log"
	case $rc in
	0) record PASS "$name" ;;
	77)
		why=$(sed -n 's/^SKIP: //p' "$OUT/test.log" | tail -n 1)
		if list skip name="$name" where=host reason="$why"; then
			record SKIP "$name" "($why)"
		else
			echo "    skipped (\"$why\"), which tests/list does not allow"
			record FAIL "$name"
		fi ;;
	*) echo "    (exit status $rc)"; record FAIL "$name" ;;
	esac
}

# host_test NAME: the command of a host test of tests/list.
host_test() {
	local n=${1#*/}
	case $1 in
	unit/*)
		if [ -x "$BUILD/tests/unit/$n" ]; then
			run "$1" "$BUILD/tests/unit/$n"
		elif [ -f "tests/unit/$n.sh" ]; then
			run "$1" bash "tests/unit/$n.sh" "$BUILD"
		else
			record FAIL "$1/no-such-test"
		fi ;;
	unit-san/*) run "$1" "$BUILD/tests/unit-san/$n" ;;
	deb/build-lintian) run "$1" bash dist/make-deb.sh "$BUILD/deb" ;;
	static/sparse) run "$1" bash tests/static/sparse.sh "${KVER:-}" "$BUILD" ;;
	static/checkpatch) run "$1" bash tests/static/checkpatch.sh ;;
	*) record FAIL "$1/unknown-to-check.sh" ;;
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
	local p f s t
	p=$(grep -c '^PASS ' "$RESULTS")
	f=$(grep -c '^FAIL ' "$RESULTS")
	s=$(grep -c '^SKIP ' "$RESULTS")
	if [ "$s" -gt 0 ]; then
		echo "skipped (each allowed by tests/list, none counted as passed):"
		grep '^SKIP ' "$RESULTS" | sed 's/^SKIP /  /'
	fi
	if [ "$f" -gt 0 ]; then
		# CI keeps the head and the tail of a long run's output: what
		# a failed check said must be in the tail to be read at all.
		# Each line after the guest whose log it is in (pair/a, ...),
		# once however many logs say it.
		echo "what the failed checks said (every guest's log):"
		find "$OUT" -name console.log -exec grep -HE \
			'\.[ch]:[0-9]+: |\(exit status [0-9]+\)|^ *File ".*", line|Oops|BUG:' \
			{} + 2>/dev/null |
			sed "s|^$OUT/||; s|/console.log: *|: |" |
			awk '{ m = $0; sub(/^[^ ]*: /, "", m) } !seen[m]++' |
			head -n 40 | cut -c1-600 | sed 's/^/  /'
		echo "failed:"
		grep '^FAIL ' "$RESULTS" | sed 's/^FAIL /  /'
	fi
	# The upstream report the kernel-log rule lets through, counted.
	t=$(find "$OUT" -name console.log -exec cat {} + 2>/dev/null |
		grep -c '^kvreg-test: tolerated')
	[ "$t" -gt 0 ] && echo "kernel reports tolerated (tests/guest/lib.sh):" \
		"$t, each named above"
	echo "$p passed, $f failed, $s skipped"
	[ "$f" -eq 0 ]
}

# result_prefix WHERE: what tests/list's WHERE puts before result names.
result_prefix() {
	case $1 in
	host|6.1|pair) echo "" ;;
	5.10) echo bullseye/ ;;
	6.12) echo trixie/ ;;
	7.2) echo forky/ ;;
	debug|debug-pair) echo debug/ ;;
	esac
}

# not_run_guard: a test that exists but did not run fails. In the full
# run, everything tests/list runs, everywhere it says; with T, every name
# asked for. And a listed test must exist, and every test be listed
# (unit/test_list).
not_run_guard() {
	local name where w
	if [ -z "$T" ]; then
		while read -r name where; do
			has_result "$(result_prefix "$where")$name" ||
				record FAIL "$(result_prefix "$where")$name/not-run"
		done < <(list all)
	else
		for w in $T; do
			has_result "$w" || record FAIL "$w/not-run"
		done
	fi
}

# has_result NAME: a verdict for NAME, or for parts of it (NAME/...).
has_result() {
	awk -v n="$1" '($1 == "PASS" || $1 == "FAIL" || $1 == "SKIP") &&
		($2 == n || index($2, n "/") == 1) { found = 1 }
		END { exit !found }' "$RESULTS"
}


# The guest work runs in two lanes, started as early as each can: a
# guest runs one test at a time, so most of the time one of its two vCPUs
# idles, and the other lane (a guest, or a build) gets that CPU. The
# debug lane builds the debug kernel from the start, beside the host's
# build and tests, then runs the debug guest. The guest lane runs each
# Debian release's guests, the pair of Debian 12 and 13 between them.
# The debug pair runs in the lane that is done first. A third job makes
# the releases' chroots meanwhile, which is mostly download. Each lane
# logs to its own file, printed whole at the end; results append to
# RESULTS a line at a time.

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

# The debug kernel: KASAN, lockdep, kmemleak, KUnit, fault injection.
# Writes what later stages need to debug.env.
debug_build() {
	local DEBUG DKVER DTREE
	echo "=== debug kernel (built once, cached under /var/cache/kvreg)"
	: > "$OUT/debug.env"
	if [ -z "$(guest_wanted debug)" ] && ! pair_wanted debug/; then
		return
	fi
	stamp debug "kernel: build (or the cache's)"
	if ! DEBUG=$(tests/guest/debug-kernel.sh build); then
		record FAIL build/debug-kernel
		return
	fi
	stamp debug "kernel: ready; the module for it"
	read -r DKVER _ DTREE <<< "$DEBUG"
	if tests/guest/build-module.sh "$DTREE" "$BUILD/kmod/$DKVER" \
		> "$OUT/debug-build.log" 2>&1 &&
	   tests/guest/build-module.sh --kunit "$DTREE" \
		"$BUILD/kunit/$DKVER" >> "$OUT/debug-build.log" 2>&1; then
		record PASS build/debug-kernel
		stamp debug "kernel: module and KUnit module built"
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

# Debian 12 is the host's release: its guest boots the host's root under
# an overlay (chroot.sh bookworm), with the host's builds. The other
# three are chroots. Each runs what tests/list says of its kernel.

# kind SUITE: the name guest_wanted knows the release's guest by.
kind() {
	if [ "$1" = bookworm ]; then echo debian; else echo "$1"; fi
}

# suite_wanted SUITE: whether anything of the release is to run.
suite_wanted() {
	[ -n "$(guest_wanted "$(kind "$1")")" ] && return 0
	case $1 in bookworm|trixie) pair_wanted ;; *) return 1 ;; esac
}

# prepare_chroots: make the chroots early; suite_build's own prepare
# waits for this one and reports what failed.
prepare_chroots() {
	local suite
	for suite in trixie bullseye forky; do
		suite_wanted "$suite" || continue
		tests/guest/chroot.sh "$suite" prepare > /dev/null 2>&1 || true
		stamp chroot "$suite: root ready"
	done
}

# suite_build SUITE: the release's root (a cached chroot), then natively
# in it: the module at W=1 with the release's compiler, the library,
# kvregctl and the tests against its libc and rdma-core (Debian 12's are
# the host's own builds), and, on 5.10 and 7.2, the kvreg-dkms package's
# DKMS build for its kernel (on 6.1 and 6.12 the package tests install
# all four packages). Writes SUITE.env: OK=1 KVER=... .
suite_build() {
	local suite=$1 info kv log=$OUT/$1-build.log
	: > "$OUT/$suite.env"
	suite_wanted "$suite" || return 0
	echo "=== $suite: its root (cached under /var/cache/kvreg) and builds"
	if ! info=$(tests/guest/chroot.sh "$suite" prepare 2> "$log"); then
		cat "$log"
		record FAIL "build/$suite-chroot"
		return
	fi
	read -r kv _ <<< "$info"
	stamp guest "$suite: root ready"
	if [ "$suite" = bookworm ]; then
		echo "OK=1 KVER=$kv" > "$OUT/$suite.env"
		return
	fi
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
	stamp guest "$suite: module built"
	recorded "build/$suite-user" "$OUT/$suite-user.log" \
		tests/guest/chroot.sh "$suite" user . "$PWD/$BUILD/$suite" || return
	stamp guest "$suite: library and tests built"
	case $suite in
	bullseye|forky)
		if [ -s "$OUT/deb.ok" ] &&
		   KVREG_CCACHE=$PWD/$BUILD/ccache/$suite tests/guest/chroot.sh \
			"$suite" dkms-deb "$BUILD/deb" > "$OUT/$suite-dkms.log" 2>&1; then
			sed 's/^/    /' "$OUT/$suite-dkms.log"
			record PASS "deb/$suite-dkms"
		else
			cat "$OUT/$suite-dkms.log" 2>/dev/null
			record FAIL "deb/$suite-dkms"
		fi ;;
	esac
	echo "OK=1 KVER=$kv" > "$OUT/$suite.env"
}

# guest_suite DIR NAME KERNEL KO BUILD ONLY [RUN-TESTS ARGS...]: the
# suite in one guest of KERNEL (boot.sh's KVREG_KERNEL), with the tests
# and library of BUILD, running the tests ONLY names (empty: all). A
# lane shares the CPUs, so a guest gets twice its time alone.
guest_suite() {
	local dir=$1 name=$2 boot=$3 ko=$4 build=$5 only=$6
	shift 6
	mkdir -p "$OUT/$dir"
	stamp "${dir%%-*}" "guest $dir: boots"
	KVREG_KERNEL=$boot KVREG_GUEST_TIMEOUT=${GUEST_TIMEOUT:-3300} \
		tests/guest/boot.sh "$OUT/$dir" env "KVREG_ONLY=$only" \
		KVREG_REPEAT="${REPEAT:-1}" \
		KVREG_DKMS_INSTALLED="${DKMS_INSTALLED:-}" \
		KVREG_DEBS_INSTALLED="${DEBS_INSTALLED:-}" sh \
		"$PWD/tests/guest/run-tests.sh" "$build" "$ko" \
		/kvreg-out/results "$@" > "$OUT/$dir/console.log" 2>&1 || true
	stamp "${dir%%-*}" "guest $dir: done"
	cat "$OUT/$dir/console.log"
	guest_results "$OUT/$dir" "$name"
}

# names_wanted KIND NAME: guest_wanted KIND asks for NAME (or for all).
names_wanted() {
	local names
	names=$(guest_wanted "$1")
	[ "$names" = all ] || [[ " $names " == *" $2 "* ]]
}

# suite_guests SUITE: the release's guests. DKMS from the tree and the
# packages cannot share a root, and under emulation their builds take
# many minutes, so the host installs each natively in the root first
# and removes it after (chroot.sh dkms-tree, debs), which must leave
# nothing: the suite's guest loads the module DKMS installed from the
# tree, and on Debian 12 and 13 a short second guest checks the packages.
suite_guests() {
	local suite=$1 OK='' KVER='' kind names only='' prefix='' build args=()
	local ko DKMS_INSTALLED='' DEBS_INSTALLED='' cc
	# shellcheck disable=SC1090
	. "$OUT/$suite.env"
	kind=$(kind "$suite")
	names=$(guest_wanted "$kind")
	[ -n "$OK" ] && [ -n "$names" ] || return 0
	build=$PWD/$BUILD
	if [ "$suite" != bookworm ]; then
		prefix=$suite/
		build=$PWD/$BUILD/$suite
		args=("$suite")
	fi
	ko=$PWD/$BUILD/kmod/$KVER/kvreg.ko
	cc=$PWD/$BUILD/ccache/$suite
	# The suite's guest: every name but the packages' own guest's.
	if [ "$names" != all ]; then
		only=$(echo " $names " | sed 's| packages/debs | |g' | xargs)
	fi
	if [ "$names" = all ] || [ -n "$only" ]; then
		if names_wanted "$kind" packages/dkms &&
		   recorded "build/$suite-dkms-tree" "$OUT/$suite-dkms-tree.log" \
			env KVREG_CCACHE="$cc" tests/guest/chroot.sh "$suite" \
			dkms-tree . install; then
			DKMS_INSTALLED=1
		fi
		echo "=== guest: $suite's kernel $KVER with Soft-RoCE"
		guest_suite "$suite-guest" "${prefix}guest" "$suite" "$ko" \
			"$build" "$only" "${args[@]}"
		[ -z "$DKMS_INSTALLED" ] ||
			recorded "${prefix}packages/dkms-remove" \
				"$OUT/$suite-dkms-remove.log" \
				tests/guest/chroot.sh "$suite" dkms-tree . remove
		DKMS_INSTALLED=
	fi
	case $suite in bookworm|trixie) ;; *) return 0 ;; esac
	names_wanted "$kind" packages/debs && [ -s "$OUT/deb.ok" ] || return 0
	recorded "build/$suite-debs" "$OUT/$suite-debs.log" \
		env KVREG_CCACHE="$cc" tests/guest/chroot.sh "$suite" debs \
		"$BUILD/deb" install || return 0
	sed 's/^/    /' "$OUT/$suite-debs.log"
	echo "=== guest: $suite's kernel $KVER, the packages"
	DEBS_INSTALLED=1 guest_suite "$suite-packages" \
		"${prefix}packages-guest" "$suite" "$ko" "$build" packages/debs \
		"${args[@]}"
	recorded "${prefix}packages/debs-purge" "$OUT/$suite-debs-purge.log" \
		tests/guest/chroot.sh "$suite" debs "$BUILD/deb" purge &&
		sed 's/^/    /' "$OUT/$suite-debs-purge.log"
}

debug_guest() {
	[ -n "${DEBUG_OK:-}" ] && [ -n "$(guest_wanted debug)" ] || return 0
	echo "=== guest: debug kernel $DKVER (KASAN, lockdep, kmemleak)"
	GUEST_TIMEOUT=3600 guest_suite debug-guest debug/guest debug \
		"$PWD/$BUILD/kmod/$DKVER/kvreg.ko" "$PWD/$BUILD" \
		"$(only_names debug)" debug "$PWD/$BUILD/kunit/$DKVER/kvreg_kunit.ko"
}

# pair_run DIR PREFIX KIND_A KO_A KIND_B KO_B: two guests on one link.
pair_run() {
	local dir=$1 prefix=$2 side
	stamp "${dir%%-*}" "pair $dir: boots"
	tests/guest/pair.sh "$OUT/$dir" "$PWD/$BUILD" "$3" "$4" "$5" "$6" \
		"$prefix" || true
	stamp "${dir%%-*}" "pair $dir: done"
	for side in a b; do
		sed -n '/=== \|PASS\|FAIL\|check failed\|exporter\|importer\|pool\|desc\|failed\|ok, then/p' \
			"$OUT/$dir/$side/console.log" | sed 's/^/    /' | head -60
		guest_results "$OUT/$dir/$side" "${prefix}pair/guest-$side"
	done
}

# Two guests on one link: Debian 12's kernel exports, Debian 13's imports,
# which also proves the wire formats across kernels.
debian_pair() {
	local OK='' KVER='' TKVER
	# shellcheck disable=SC1091
	. "$OUT/trixie.env"
	TKVER=$KVER
	[ -n "$OK" ] && pair_wanted || return 0
	echo "=== pair: Debian $HOST_KVER exports, Debian 13 $TKVER imports"
	pair_run pair "" debian "$PWD/$BUILD/kmod/$HOST_KVER/kvreg.ko" \
		trixie "$PWD/$BUILD/kmod/$TKVER/kvreg.ko"
	# Throughput between the two, against perftest in the same run.
	[ -s "$OUT/pair/b/bench.txt" ] &&
		awk -f tests/bench/pair-ratios.awk "$OUT/pair/b/bench.txt"
}

# The debug kernel with itself: KASAN, lockdep and kmemleak on both ends
# of the same connections. No perftest there: its ratios mean nothing
# under KASAN.
debug_pair() {
	[ -n "${DEBUG_OK:-}" ] && pair_wanted debug/ || return 0
	echo "=== pair: the debug kernel $DKVER with itself"
	KVREG_GUEST_TIMEOUT=2400 pair_run debug-pair debug/ \
		debug "$PWD/$BUILD/kmod/$DKVER/kvreg.ko" \
		debug "$PWD/$BUILD/kmod/$DKVER/kvreg.ko"
}

# debug_pair_once: the debug pair, in the lane that is first done with
# the rest of its work (the debug guest takes about as long as all the
# guest lane's other guests, and which ends first depends on what the
# cache held), so the two lanes end together.
debug_pair_once() {
	mkdir "$OUT/debug-pair.claimed" 2>/dev/null || return 0
	debug_pair
}

guest_lane() {
	local suite DEBUG_OK='' DKVER=''
	for suite in bookworm trixie; do
		suite_build "$suite"
		suite_guests "$suite"
	done
	debian_pair
	for suite in bullseye forky; do
		suite_build "$suite"
		suite_guests "$suite"
	done
	while [ ! -e "$OUT/debug.built" ] && kill -0 "$debug_pid" 2>/dev/null
	do
		sleep 5
	done
	# shellcheck disable=SC1091
	. "$OUT/debug.env"
	debug_pair_once
}

# The debug lane builds its kernel beside the host's build; its guests
# run the host's build of the library and tests, so they wait for it (a
# failed build ends the run, and the lane with it).
debug_lane() {
	debug_build
	touch "$OUT/debug.built"
	# shellcheck disable=SC1091
	. "$OUT/debug.env"
	while [ ! -e "$OUT/host.built" ] && kill -0 $$ 2>/dev/null; do
		sleep 2
	done
	debug_guest
	debug_pair_once
}

# stop_lanes: a run that ends early (a failed build, ^C) takes its lanes
# along; each is a process group of its own.
stop_lanes() {
	local pid
	for pid in ${debug_pid:-} ${chroots_pid:-}; do
		kill -0 "$pid" 2>/dev/null && kill -- -"$pid" 2>/dev/null
	done
}

# T names results a full run gives for the tests tests/list names, whole:
# an unknown or partial name (T=module) fails here, before any build,
# instead of booting guests to run nothing and pass.
if [ -n "$T" ]; then
	known=$(list all | while read -r name where; do
		echo "$(result_prefix "$where")$name"
	done)
	unknown=
	for w in $T; do
		grep -qxF -- "$w" <<< "$known" || unknown="$unknown $w"
	done
	if [ -n "$unknown" ]; then
		for w in $unknown; do
			record FAIL "$w/unknown-test"
		done
		echo "T names no test of tests/list:$unknown (a name is as the" \
		     "results print it: integration/overlap, debug/pair/remote)"
		summary
		exit 1
	fi
fi

# Only unit tests asked for: the library, kvregctl and the tests, no
# kernel, no guest.
if host_only; then
	echo "=== build (library, kvregctl, tests)"
	if make -s lib tools tests BUILD="$BUILD" > "$OUT/build.log" 2>&1; then
		for name in $(list names where=host); do
			host_test "$name"
		done
	else
		cat "$OUT/build.log"
		record FAIL build/user
	fi
	not_run_guard
	summary
	exit
fi

KVER=$(tests/guest/kernel.sh kver)
HOST_KVER=$KVER
# One run with guests at a time on this machine: they share the cached
# roots, and the release below would pull Debian 12's from under another
# run's guests. The lock goes with this shell.
mkdir -p "${KVREG_CACHE:-/var/cache/kvreg}"
exec 8> "${KVREG_CACHE:-/var/cache/kvreg}/check.lock"
if ! flock -n 8; then
	echo "another make check with guests is running on this machine" \
	     "(it holds ${KVREG_CACHE:-/var/cache/kvreg}/check.lock):" \
	     "wait for it; only T=unit/... runs beside it"
	exit 1
fi

# A run that was stopped may have left Debian 12's root mounted.
tests/guest/chroot.sh bookworm release
# The debug kernel's build is the longest stage of a cold run: it starts
# first, beside the host's build.
trap stop_lanes EXIT
set -m
debug_lane > "$OUT/lane-debug.log" 2>&1 &
debug_pid=$!
prepare_chroots > "$OUT/chroots.log" 2>&1 &
chroots_pid=$!
set +m

echo "=== build (library, kvregctl, tests, module for $KVER)"
stamp host "build"
if make -s all tests BUILD="$BUILD" KVER="$KVER" > "$OUT/build.log" 2>&1; then
	record PASS build/all
	touch "$OUT/host.built"
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

# The host's tests, as tests/list orders them; the packages among them
# (deb/build-lintian) are what the guests then install.
stamp host "tests"
for name in $(list names where=host); do
	host_test "$name"
done
stamp host "tests: done"
# The guests' package tests and the releases' kvreg-dkms builds need this
# tree's packages even when T did not ask for them to be checked.
if [ -n "$T" ] && ! host_wanted deb/build-lintian; then
	dist/make-deb.sh "$BUILD/deb" > "$OUT/deb.log" 2>&1 ||
		{ cat "$OUT/deb.log"; record FAIL deb/build; }
fi
ls "$BUILD"/deb/kvreg-dkms_*.deb > "$OUT/deb.ok" 2>/dev/null

guest_lane > "$OUT/lane-guest.log" 2>&1
wait "$debug_pid" "$chroots_pid"
tests/guest/chroot.sh bookworm release
echo "=== the guest lane"
cat "$OUT/lane-guest.log"
echo "=== the debug lane"
cat "$OUT/lane-debug.log"
stamp host "end"
echo "=== timeline (min:s since the start, core-minutes of CPU used)"
sort -s -n "$TIMELINE" | cut -f2-

not_run_guard
summary
