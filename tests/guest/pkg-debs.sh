#!/bin/sh
# In the guest: the Debian packages as a user meets them. The host ran
# dpkg -i natively in the root this guest boots, whose DKMS build
# installed the module for this kernel (tests/guest/chroot.sh debs), and
# purges them after the guest, which must leave nothing. Here: DKMS lists
# the package's module, udev gives /dev/kvreg to group kvreg (0660), a
# program built with `pkg-config --cflags --libs kvreg` against
# libkvreg-dev registers memory and moves bytes, and a user outside the
# group is told which group to join.
#   pkg-debs.sh SRC
set -eu
SRC=$1
KVER=$(uname -r)
step() { echo "--- $*"; }

step "the four packages, installed"
dpkg-query -W kvreg-dkms libkvreg1 libkvreg-dev kvreg-tools
dkms status kvreg | grep -F ", $KVER, " | grep -q ": installed" ||
	{ dkms status; echo "the package's DKMS build is not installed"; exit 1; }
getent group kvreg || { echo "no group kvreg"; exit 1; }

step "udevd, modprobe kvreg"
udevd=$(command -v systemd-udevd || echo /lib/systemd/systemd-udevd)
[ -x "$udevd" ] || udevd=/usr/lib/systemd/systemd-udevd
"$udevd" --daemon
modprobe kvreg
# A udevd started moments ago may not have seen the add event yet: replay
# it, as the package's postinst does for a node that already exists.
udevadm trigger --action=add --subsystem-match=misc --sysname-match=kvreg
udevadm settle
perm=$(stat -c '%a %U:%G' /dev/kvreg)
echo "/dev/kvreg: $perm"
[ "$perm" = "660 root:kvreg" ] || { echo "want 660 root:kvreg"; exit 1; }

step "a program built against libkvreg-dev with pkg-config"
echo "pkg-config: $(pkg-config --cflags --libs kvreg)"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o /tmp/backend \
	"$SRC/examples/hicache_backend.c" $(pkg-config --cflags --libs kvreg)
ldd /tmp/backend | grep -q "libkvreg.so.1 => .*/lib/[^ ]*-linux-gnu/libkvreg.so.1" ||
	{ ldd /tmp/backend; echo "not linked to the packaged library"; exit 1; }
/tmp/backend 8 16

step "a user outside group kvreg, then inside it"
gid=$(getent group kvreg | cut -d: -f3)
if setpriv --reuid=65534 --regid=65534 --clear-groups \
	kvregctl devices > /tmp/denied.log 2>&1; then
	echo "a user outside group kvreg opened /dev/kvreg"
	exit 1
fi
cat /tmp/denied.log
grep -q "group kvreg" /tmp/denied.log && grep -q "usermod -aG kvreg" /tmp/denied.log ||
	{ echo "the error does not name the group and how to join it"; exit 1; }
setpriv --reuid=65534 --regid=65534 --groups="$gid" kvregctl devices

step "modprobe -r (the host purges the packages)"
modprobe -r kvreg
udevadm control --exit
