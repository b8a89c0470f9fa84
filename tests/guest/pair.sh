#!/bin/bash
# Two guests joined by two QEMU socket links, each a Unix stream that
# tests/guest/unix-link.py connects (two virtio-net NICs each: 192.0.2.1
# and 192.0.2.2 on eth0, 198.51.100.1 and 198.51.100.2 on eth1, rxe on
# each NIC), sharing one directory as their control plane: the first
# exports, the second imports. tests/guest/cable.py pulls the first's
# cables when it asks.
#   pair.sh OUTDIR BUILD KIND_A KO_A KIND_B KO_B PREFIX
# KIND is debian, trixie or debug (as KVREG_KERNEL for boot.sh).
# KVREG_PAIR_SIDE: what each guest runs (pair-side.sh: the pair tests).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
BUILD=$2
PREFIX=$7
SIDE=${KVREG_PAIR_SIDE:-$HERE/pair-side.sh}
XCHG=$OUT/xchg

# The links' sockets: a directory of its own, gone with the script.
LINKS=$(mktemp -d /tmp/kvreg-links.XXXXXX)
cable=
trap '[ -z "$cable" ] || kill "$cable" 2>/dev/null; rm -rf "$LINKS"' EXIT

# Each side in a session of its own, so that it can be stopped whole.
boot_pair() {
	rm -rf "$XCHG" "$OUT/a" "$OUT/b" "${LINKS:?}"/*
	mkdir -p "$XCHG" "$OUT/a" "$OUT/b"
	# New links per boot: no frame of an earlier one is left in them.
	L0=$LINKS/eth0.$RANDOM L1=$LINKS/eth1.$RANDOM
	[ -z "$cable" ] || kill "$cable" 2>/dev/null || true
	"$HERE/cable.py" "$XCHG" "$LINKS/qmp-a" &
	cable=$!

	KVREG_KERNEL=$KIND_A KVREG_NET=fd:10 KVREG_MAC=52:54:00:4b:56:01 \
	KVREG_NET2=fd:11 KVREG_MAC2=52:54:00:4b:57:01 \
	KVREG_XCHG=$XCHG KVREG_GUEST_TIMEOUT=${KVREG_GUEST_TIMEOUT:-1200} \
	KVREG_QMP=$LINKS/qmp-a \
		setsid "$HERE/unix-link.py" listen "$L0" "$L1" -- \
		"$HERE/boot.sh" "$OUT/a" sh "$SIDE" export "$BUILD" \
		"$KO_A" /kvreg-out/results "$PREFIX" > "$OUT/a/console.log" 2>&1 &
	a=$!
	KVREG_KERNEL=$KIND_B KVREG_NET=fd:10 KVREG_MAC=52:54:00:4b:56:02 \
	KVREG_NET2=fd:11 KVREG_MAC2=52:54:00:4b:57:02 \
	KVREG_XCHG=$XCHG KVREG_GUEST_TIMEOUT=${KVREG_GUEST_TIMEOUT:-1200} \
		setsid "$HERE/unix-link.py" connect "$L0" "$L1" -- \
		"$HERE/boot.sh" "$OUT/b" sh "$SIDE" import "$BUILD" \
		"$KO_B" /kvreg-out/results "$PREFIX" > "$OUT/b/console.log" 2>&1 &
	b=$!
}

# Its boot ended with no result and before its userspace began.
died_early() {
	! kill -0 "$1" 2>/dev/null && [ ! -s "$OUT/$2/rc" ] &&
		[ ! -e "$OUT/$2/started" ]
}

# Until both sides end. A kernel that dies before its userspace runs
# anything (an int3 oops under TCG, seen at 2 s into boot) would leave the
# other side waiting for it until its timeout: the other is stopped, and
# the pair is booted once more (1 when it was).
watch_pair() {
	while kill -0 "$a" 2>/dev/null || kill -0 "$b" 2>/dev/null; do
		if died_early "$a" a || died_early "$b" b; then
			kill -TERM -- "-$a" "-$b" 2>/dev/null || true
			wait "$a" "$b" 2>/dev/null || true
			return 1
		fi
		sleep 1
	done
	return 0
}

KIND_A=$3 KO_A=$4 KIND_B=$5 KO_B=$6
boot_pair
if ! watch_pair; then
	echo "pair.sh: a kernel died before userspace; booting the pair once more" >&2
	boot_pair
	watch_pair || true
fi
wait "$a" || true
wait "$b" || true
