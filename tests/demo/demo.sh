#!/bin/bash
# make demo: boot Debian's kernel in QEMU and show kvreg at work, then
# two guests as two nodes, each with two NICs.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
KVER=$(tests/guest/kernel.sh kver)
make -s all tests BUILD="$BUILD" KVER="$KVER"
echo "booting Debian $KVER in QEMU (software emulation, ~30 s)"
tests/guest/boot.sh "$BUILD/demo" sh "$PWD/tests/demo/guest-demo.sh" \
	"$PWD/$BUILD" "$PWD/$BUILD/kmod/$KVER/kvreg.ko"

echo
echo "=== act two: two nodes, two NICs each (two guests on two QEMU links)"
KVREG_PAIR_SIDE=$PWD/tests/demo/pair-demo-side.sh \
	tests/guest/pair.sh "$BUILD/demo-pair" "$PWD/$BUILD" debian \
	"$PWD/$BUILD/kmod/$KVER/kvreg.ko" debian \
	"$PWD/$BUILD/kmod/$KVER/kvreg.ko" ""
for side in a b; do
	sed -n '/^###/,$p' "$BUILD/demo-pair/$side/console.log" |
		grep -v 'reboot:\|kvreg-test' || true
done
grep -q '^PASS demo/import' "$BUILD/demo-pair/b/results" 2>/dev/null
