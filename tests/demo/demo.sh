#!/bin/bash
# make demo: boot Debian's kernel in QEMU and show kvreg at work.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
KVER=$(tests/guest/kernel.sh kver)
make -s all tests BUILD="$BUILD" KVER="$KVER"
echo "booting Debian $KVER in QEMU (software emulation, ~30 s)"
tests/guest/boot.sh "$BUILD/demo" sh "$PWD/tests/demo/guest-demo.sh" \
	"$PWD/$BUILD" "$PWD/$BUILD/kmod/$KVER/kvreg.ko"
