#!/bin/sh
# In the guest: what an operator and a storage backend would see.
#   guest-demo.sh BUILD_DIR KO
set -e
BUILD=$1
KO=$2
HERE=$(cd "$(dirname "$0")" && pwd)
step() { printf '\n### %s\n' "$*"; }

step "Soft-RoCE on two links inside the guest"
echo 128 > /proc/sys/vm/nr_hugepages
"$HERE/../guest/rxe-up.sh" 2
rdma link show

step "kvregctl devices (before the module is loaded)"
"$BUILD/bin/kvregctl" devices || true

step "insmod kvreg.ko"
# kvreg links against rdma_cm; built in on the debug kernel.
modprobe rdma_cm 2>/dev/null || true
insmod "$KO"
"$BUILD/bin/kvregctl" devices

step "start-up pre-flight: kvregctl check 64M --hugetlb (root)"
"$BUILD/bin/kvregctl" check 64M --hugetlb

step "the same check for an unprivileged user with an 8 MiB memlock limit"
prlimit --memlock=8388608 setpriv --reuid=65534 --regid=65534 \
	--clear-groups "$BUILD/bin/kvregctl" check 64M || true

step "a storage backend registers its hugetlb KV pool and moves data"
"$BUILD/tests/demo"

step "kvregctl stats"
"$BUILD/bin/kvregctl" stats

step "rmmod kvreg: nothing is left registered"
rmmod kvreg
echo "module unloaded"
