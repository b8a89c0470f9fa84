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
		debug:debug/*|trixie:trixie/*) out="$out ${w#*/}" ;;
		debian:debug/*|debian:trixie/*|debian:pair/*) ;;
		debian:unit/*|debian:unit-san/*|debian:static/*|debian:dkms/*) ;;
		debian:deb/*|debian:build/*) ;;
		debian:*) out="$out $w" ;;
		esac
	done
	echo $out
}

# pair_wanted: whether the pair of guests (6.1 exports, 6.12 imports) runs.
pair_wanted() {
	[ -z "$T" ] || [[ " $T " == *" pair/"* ]]
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

# The debug kernel: KASAN, lockdep, kmemleak, KUnit, fault injection.
echo "=== debug kernel (built once, cached under /var/cache/kvreg)"
DEBUG_OK=
if [ -z "$(guest_wanted debug)" ]; then
	:
elif DEBUG=$(tests/guest/debug-kernel.sh build); then
	read -r DKVER _ DTREE <<< "$DEBUG"
	if tests/guest/build-module.sh "$DTREE" "$BUILD/kmod/$DKVER" \
		> "$OUT/debug-build.log" 2>&1 &&
	   tests/guest/build-module.sh --kunit "$DTREE" \
		"$BUILD/kunit/$DKVER" >> "$OUT/debug-build.log" 2>&1; then
		record PASS build/debug-kernel
		DEBUG_OK=1
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
else
	record FAIL build/debug-kernel
fi

if [ -n "$(guest_wanted debian)" ]; then
	echo "=== guest: Debian $KVER with Soft-RoCE"
	mkdir -p "$OUT/guest"
	tests/guest/boot.sh "$OUT/guest" env "$(only_env debian)" sh \
		"$PWD/tests/guest/run-tests.sh" "$PWD/$BUILD" \
		"$PWD/$BUILD/kmod/$KVER/kvreg.ko" /kvreg-out/results 2>&1 |
		tee "$OUT/guest/console.log" || true
	guest_results "$OUT/guest" guest
fi

# Debian 13: its 6.12 kernel, built for and tested in a cached chroot.
TRIXIE_OK=
{ [ -n "$(guest_wanted trixie)" ] || pair_wanted; } &&
	echo "=== Debian 13 (chroot cached under /var/cache/kvreg)"
if [ -z "$(guest_wanted trixie)" ] && ! pair_wanted; then
	:
elif TRIXIE=$(tests/guest/trixie.sh prepare 2> "$OUT/trixie-build.log"); then
	read -r TKVER _ <<< "$TRIXIE"
	if tests/guest/trixie.sh build . "$BUILD/kmod/$TKVER" \
		>> "$OUT/trixie-build.log" 2>&1; then
		record PASS "build/trixie-module"
		TRIXIE_OK=1
		if grep -E 'warning:' "$OUT/trixie-build.log"; then
			record FAIL build/trixie-module-w1-clean
		else
			record PASS build/trixie-module-w1-clean
		fi
	else
		cat "$OUT/trixie-build.log"
		record FAIL build/trixie-module
	fi
else
	cat "$OUT/trixie-build.log"
	record FAIL build/trixie-chroot
fi
if [ -n "$TRIXIE_OK" ] && [ -n "$(guest_wanted trixie)" ]; then
	echo "=== guest: Debian 13 kernel $TKVER with Soft-RoCE"
	mkdir -p "$OUT/trixie-guest"
	KVREG_KERNEL=trixie tests/guest/boot.sh "$OUT/trixie-guest" \
		env "$(only_env trixie)" sh \
		"$PWD/tests/guest/run-tests.sh" "$PWD/$BUILD" \
		"$PWD/$BUILD/kmod/$TKVER/kvreg.ko" /kvreg-out/results trixie \
		2>&1 | tee "$OUT/trixie-guest/console.log" || true
	guest_results "$OUT/trixie-guest" trixie/guest
fi

# Two guests on one link: Debian 12's kernel exports, Debian 13's imports,
# which also proves the wire formats across kernels.
if [ -n "$TRIXIE_OK" ] && pair_wanted; then
	echo "=== pair: Debian $KVER exports, Debian 13 $TKVER imports"
	tests/guest/pair.sh "$OUT/pair" "$PWD/$BUILD" \
		debian "$PWD/$BUILD/kmod/$KVER/kvreg.ko" \
		trixie "$PWD/$BUILD/kmod/$TKVER/kvreg.ko" "" || true
	for side in a b; do
		sed -n '/=== \|PASS\|FAIL\|check failed\|exporter\|pool\|desc/p' \
			"$OUT/pair/$side/console.log" | sed 's/^/    /' | head -40
		guest_results "$OUT/pair/$side" "pair/guest-$side"
	done
	# Throughput between the two, against perftest in the same run.
	[ -s "$OUT/pair/b/bench.txt" ] &&
		awk -f tests/bench/pair-ratios.awk "$OUT/pair/b/bench.txt"
fi

if [ -n "$DEBUG_OK" ]; then
	echo "=== guest: debug kernel $DKVER (KASAN, lockdep, kmemleak)"
	mkdir -p "$OUT/debug-guest"
	KVREG_KERNEL=debug KVREG_GUEST_TIMEOUT=2400 \
		tests/guest/boot.sh "$OUT/debug-guest" \
		env "$(only_env debug)" sh \
		"$PWD/tests/guest/run-tests.sh" "$PWD/$BUILD" \
		"$PWD/$BUILD/kmod/$DKVER/kvreg.ko" /kvreg-out/results debug \
		"$PWD/$BUILD/kunit/$DKVER/kvreg_kunit.ko" 2>&1 |
		tee "$OUT/debug-guest/console.log" || true
	guest_results "$OUT/debug-guest" debug/guest
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
