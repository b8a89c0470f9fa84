#!/bin/sh
# PID 1 in the guest after switch_root. Prepares the guest, runs the
# command the host asked for, saves its status to the host, powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /dev/pts /dev/shm
# devtmpfs has no /dev/fd; bash's <(...) (DKMS uses it) needs it.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# Debian's modules, from the cache; a debug kernel has everything built in.
if [ "$KVREG_MODDIR" != none ]; then
	mkdir -p /lib/modules/"$KVREG_KVER"
	mount --bind "$KVREG_MODDIR" /lib/modules/"$KVREG_KVER"
fi
ip link set lo up
hostname kvreg-guest
# One of a pair: the directory both guests share (their control plane).
if [ -n "$KVREG_XCHG" ]; then
	mkdir -p /kvreg-x
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 kvregx /kvreg-x
fi

cd /kvreg-out
# For boot.sh: the kernel came up; whatever happens now is the run's.
: > /kvreg-out/started
/bin/sh /kvreg-out/cmd.sh
echo $? > /kvreg-out/rc
dmesg > /kvreg-out/dmesg.log 2>&1
sync
# With -no-reboot, QEMU exits on reboot; PID 1 must not exit first.
# Debian 13's minimal root has no reboot of its own.
reboot -f 2>/dev/null || busybox reboot -f
sleep 60
