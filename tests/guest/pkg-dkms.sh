#!/bin/sh
# In the guest: DKMS from the tree, as the README's install section does
# it. The host ran DKMS's add, build and install for this kernel natively
# in the root this guest boots (tests/guest/chroot.sh dkms-tree), and
# removes it after the guest, which must leave nothing. Here: DKMS lists
# it as installed, a plain `modprobe kvreg` loads it from where DKMS put
# it, a registration through it moves bytes, and modprobe -r unloads it.
#   pkg-dkms.sh SRC BUILD
set -eu
SRC=$1
BUILD=$2
KVER=$(uname -r)
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$SRC/dkms.conf")
step() { echo "--- $*"; }

step "dkms status: kvreg/$VERSION installed for $KVER"
# "kvreg/0.1.0, KVER, ..." from DKMS 3; "kvreg, 0.1.0, KVER, ..." from 2.8.
# KVER as a fixed string: 7.2's has a "+".
dkms status kvreg | grep -F ", $KVER, " | grep -F ": installed" |
	grep -Eq "^kvreg(/|, )$VERSION," ||
	{ dkms status; echo "dkms does not list kvreg as installed"; exit 1; }

step "modprobe kvreg"
modprobe kvreg
path=$(modinfo -n kvreg)
echo "loaded from $path"
case $path in
*/updates/dkms/kvreg.ko*) ;;
*) echo "modprobe did not take DKMS's module"; exit 1 ;;
esac
[ -c /dev/kvreg ] || { echo "no /dev/kvreg"; exit 1; }
[ "$(cat /sys/module/kvreg/version)" = "$VERSION" ] ||
	{ echo "module version $(cat /sys/module/kvreg/version)"; exit 1; }
# Every parameter is documented for modinfo.
for p in $(ls /sys/module/kvreg/parameters); do
	modinfo -F parm kvreg | grep -q "^$p:.\{20,\}" ||
		{ echo "parameter $p has no description"; exit 1; }
done
echo "modinfo documents: $(ls /sys/module/kvreg/parameters | xargs)"
"$BUILD/tests/integration/transfer_4k" > /tmp/xfer.log 2>&1 ||
	{ cat /tmp/xfer.log; exit 1; }
echo "a registration through DKMS's module moved its bytes"

step "modprobe -r kvreg (the host removes the DKMS tree)"
modprobe -r kvreg
