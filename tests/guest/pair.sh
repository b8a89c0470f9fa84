#!/bin/bash
# Two guests joined by two QEMU socket links on 127.0.0.1 (two virtio-net
# NICs each: 192.0.2.1 and 192.0.2.2 on eth0, 198.51.100.1 and
# 198.51.100.2 on eth1, rxe on each NIC), sharing one directory as their
# control plane: the first exports, the second imports.
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
rm -rf "$XCHG" "$OUT/a" "$OUT/b"
mkdir -p "$XCHG" "$OUT/a" "$OUT/b"
# A port per run, so that a stale QEMU cannot be the one answering.
PORT=$((20000 + RANDOM % 20000))
PORT2=$((PORT + 1))

KVREG_KERNEL=$3 KVREG_NET=listen:$PORT KVREG_MAC=52:54:00:4b:56:01 \
KVREG_NET2=listen:$PORT2 KVREG_MAC2=52:54:00:4b:57:01 \
KVREG_XCHG=$XCHG KVREG_GUEST_TIMEOUT=${KVREG_GUEST_TIMEOUT:-1200} \
	"$HERE/boot.sh" "$OUT/a" sh "$SIDE" export "$BUILD" "$4" \
	/kvreg-out/results "$PREFIX" > "$OUT/a/console.log" 2>&1 &
a=$!
# QEMU's connect side gives up if no one listens yet.
for _ in $(seq 50); do
	ss -ltn 2>/dev/null | grep -q "127.0.0.1:$PORT " &&
		ss -ltn 2>/dev/null | grep -q "127.0.0.1:$PORT2 " && break
	sleep 0.2
done
KVREG_KERNEL=$5 KVREG_NET=connect:$PORT KVREG_MAC=52:54:00:4b:56:02 \
KVREG_NET2=connect:$PORT2 KVREG_MAC2=52:54:00:4b:57:02 \
KVREG_XCHG=$XCHG KVREG_GUEST_TIMEOUT=${KVREG_GUEST_TIMEOUT:-1200} \
	"$HERE/boot.sh" "$OUT/b" sh "$SIDE" import "$BUILD" "$6" \
	/kvreg-out/results "$PREFIX" > "$OUT/b/console.log" 2>&1 &
b=$!
wait $a || true
wait $b || true
