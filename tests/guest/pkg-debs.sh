#!/bin/sh
# In the guest: the Debian packages as a user installs them. dpkg -i
# builds the module through DKMS, udev gives /dev/kvreg to group kvreg
# (0660), a program built with `pkg-config --cflags --libs kvreg` against
# libkvreg-dev registers memory and moves bytes, a user outside the group
# is told which group to join, and purging leaves nothing.
#   pkg-debs.sh DEB_DIR SRC
set -eu
DEBS=$1
SRC=$2
KVER=$(uname -r)
step() { echo "--- $*"; }

[ -e "/lib/modules/$KVER/build" ] ||
	ln -s "/usr/src/linux-headers-$KVER" "/lib/modules/$KVER/build"

step "dpkg -i the four packages"
dpkg -i "$DEBS"/kvreg-dkms_*.deb "$DEBS"/libkvreg1_*_*.deb \
	"$DEBS"/libkvreg-dev_*.deb "$DEBS"/kvreg-tools_*_*.deb \
	> /tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; exit 1; }
grep -i -E 'dkms|kvreg' /tmp/dpkg.log | tail -n 5
dkms status kvreg | grep -q ": installed" ||
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

step "modprobe -r; dpkg --purge"
modprobe -r kvreg
udevadm control --exit
dpkg --purge kvreg-tools libkvreg-dev libkvreg1 kvreg-dkms > /tmp/purge.log 2>&1 ||
	{ cat /tmp/purge.log; exit 1; }
if find "/lib/modules/$KVER" /usr/src -name 'kvreg*' | grep -q .; then
	find "/lib/modules/$KVER" /usr/src -name 'kvreg*'
	echo "purge left files behind"
	exit 1
fi
echo "purged: no module, no source left"
