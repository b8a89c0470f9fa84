#!/bin/sh
# In the guest: the registration benchmark on two rxe devices.
#   guest-bench.sh BUILD_DIR KO MIB REPS
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
echo $(( $3 / 2 + 8 )) > /proc/sys/vm/nr_hugepages
echo madvise > /sys/kernel/mm/transparent_hugepage/enabled
"$HERE/../guest/rxe-up.sh" 2
modprobe ib_uverbs
insmod "$2"
"$1/tests/bench/bench_reg" "$3" "$4"
rmmod kvreg
