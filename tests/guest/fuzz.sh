#!/bin/bash
# make fuzz: the ioctl fuzzer on the debug kernel (KASAN, lockdep),
# for as many calls as asked; a kernel report fails it.
#   fuzz.sh CALLS [SEED]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
make -s all tests BUILD="$BUILD"
read -r DKVER _ DTREE < <(tests/guest/debug-kernel.sh build)
tests/guest/build-module.sh "$DTREE" "$BUILD/kmod/$DKVER" >/dev/null
cat > "$BUILD/fuzz-guest.sh" <<GUEST
set -e
echo 64 > /proc/sys/vm/nr_hugepages
$PWD/tests/guest/rxe-up.sh 2
# kvreg links against rdma_cm; built in on the debug kernel.
modprobe rdma_cm 2>/dev/null || true
insmod $PWD/$BUILD/kmod/$DKVER/kvreg.ko
$PWD/$BUILD/tests/integration/fuzz $1 ${2:-}
rmmod kvreg
! dmesg | grep -E 'BUG:|WARNING:|KASAN|Call Trace'
GUEST
KVREG_KERNEL=debug KVREG_GUEST_TIMEOUT=${KVREG_GUEST_TIMEOUT:-36000} \
	tests/guest/boot.sh "$BUILD/fuzz" sh "$PWD/$BUILD/fuzz-guest.sh"
