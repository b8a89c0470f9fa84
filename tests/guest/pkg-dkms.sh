#!/bin/sh
# In the guest: DKMS from the tree, as the README's install section does
# it. dkms add, build and install for the running kernel, a plain
# `modprobe kvreg` from where DKMS put it, a registration that moves
# bytes, then modprobe -r and dkms remove, which must leave nothing.
#   pkg-dkms.sh SRC BUILD [installed]
# "installed": the host already ran DKMS's add, build and install for
# this kernel natively in the release's chroot, which is this guest's
# root, and removes it after the guest (tests/guest/chroot.sh dkms-tree):
# here, DKMS must list it as installed and a plain modprobe must load it.
set -eu
SRC=$1
BUILD=$2
INSTALLED=${3:-}
KVER=$(uname -r)
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$SRC/dkms.conf")
step() { echo "--- $*"; }

# The guest's module tree comes from the kernel package alone; the headers
# link a real install gets from linux-headers is made here.
[ -e "/lib/modules/$KVER/build" ] ||
	ln -s "/usr/src/linux-headers-$KVER" "/lib/modules/$KVER/build"

if [ -z "$INSTALLED" ]; then
	step "dkms add/build/install kvreg/$VERSION for $KVER"
	rm -rf "/usr/src/kvreg-$VERSION"
	mkdir -p "/usr/src/kvreg-$VERSION"
	cp -r "$SRC/Kbuild" "$SRC/dkms.conf" "$SRC/kmod" "$SRC/include" \
		"/usr/src/kvreg-$VERSION/"
	dkms add -m kvreg -v "$VERSION"
	dkms build -m kvreg -v "$VERSION" -k "$KVER" > /tmp/dkms-build.log 2>&1 ||
		{ cat /tmp/dkms-build.log; find /var/lib/dkms -name make.log -exec cat {} +; exit 1; }
	dkms install -m kvreg -v "$VERSION" -k "$KVER"
fi
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

if [ -n "$INSTALLED" ]; then
	step "modprobe -r kvreg (the host removes the DKMS tree)"
	modprobe -r kvreg
	exit 0
fi
step "modprobe -r kvreg; dkms remove"
modprobe -r kvreg
dkms remove -m kvreg -v "$VERSION" --all
rm -rf "/usr/src/kvreg-$VERSION"
if find "/lib/modules/$KVER" -name 'kvreg.ko*' | grep -q .; then
	echo "dkms remove left a module behind"
	exit 1
fi
if modprobe -n kvreg 2>/dev/null; then
	echo "modprobe still finds kvreg"
	exit 1
fi
echo "removed: no kvreg module left for $KVER"
