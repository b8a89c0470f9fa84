#!/bin/bash
# Debian 13 (trixie) and its 6.12 kernel, as a cached chroot. Its headers
# need trixie's gcc and glibc, so the module is built inside the chroot,
# and the 6.12 guest boots with the chroot as its root.
#   trixie.sh prepare   make the chroot (once per package list) and the
#                       initramfs; prints "KVER VMLINUZ INITRD ROOT"
#   trixie.sh build SRC OUT
#                       build the module from the tree SRC in the chroot;
#                       the .ko lands in OUT
#   trixie.sh run CMD... run a command in the chroot
set -euo pipefail

CACHE=${KVREG_CACHE:-/var/cache/kvreg}
HERE=$(cd "$(dirname "$0")" && pwd)
MIRROR=${KVREG_TRIXIE_MIRROR:-http://deb.debian.org/debian}

# What the 6.12 guest runs: the module build, rxe, the test programs'
# libraries (librdmacm for the plain-verbs peer), perftest for the pair
# benchmark, DKMS and udev for the package test (ccache for its second
# build), Python for the binding.
PKGS=(linux-headers-amd64 linux-image-amd64 gcc make libc6-dev kmod
      iproute2 busybox-static rdma-core ibverbs-utils ibverbs-providers
      libibverbs-dev librdmacm-dev perftest dkms pkg-config udev python3
      xz-utils ca-certificates ccache)

# Keyed by the package list, so a changed list makes a new chroot.
KEY=$(printf '%s\n' trixie "${PKGS[@]}" | sha256sum | cut -c1-16)
DIR=$CACHE/trixie/$KEY
ROOT=$DIR/root

make_chroot() {
	local tmp=$DIR/root.tmp
	rm -rf "$tmp"
	mkdir -p "$DIR"
	debootstrap --variant=minbase trixie "$tmp" "$MIRROR" > "$DIR/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$DIR/debootstrap.log" >&2; exit 1; }
	# No daemons may start in the chroot while packages install.
	printf '#!/bin/sh\nexit 101\n' > "$tmp/usr/sbin/policy-rc.d"
	chmod 0755 "$tmp/usr/sbin/policy-rc.d"
	in_root "$tmp" apt-get update -qq
	in_root "$tmp" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${PKGS[@]}" > "$DIR/apt.log" 2>&1 ||
		{ tail -n 30 "$DIR/apt.log" >&2; exit 1; }
	in_root "$tmp" apt-get clean
	rm -f "$tmp/usr/sbin/policy-rc.d"
	mv "$tmp" "$ROOT"
	# Older chroots of this cache are of no further use.
	find "$CACHE/trixie" -mindepth 1 -maxdepth 1 ! -name "$KEY" \
		-exec rm -rf {} +
}

# in_root DIR CMD...: run CMD in the chroot with /proc, /sys and /dev.
in_root() {
	local root=$1 rc=0
	shift
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --rbind /dev "$root/dev"
	chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		"$@" || rc=$?
	umount -l "$root/dev" "$root/sys" "$root/proc"
	return $rc
}

kver() {
	local dep
	dep=$(chroot "$ROOT" dpkg-query -W -f='${Depends}' linux-headers-amd64 |
	      grep -o 'linux-headers-[0-9][^ ,]*-amd64' | head -n1)
	echo "${dep#linux-headers-}"
}

prepare() {
	local kv init_hash initrd
	[ -e "$ROOT/usr/bin/make" ] || make_chroot >&2
	kv=$(kver)
	# Keyed by the init script and the scripts that pick the modules.
	init_hash=$(cat "$HERE/initramfs-init" "$HERE/kernel.sh" "$0" |
		    sha256sum | cut -c1-16)
	initrd=$DIR/initrd-$init_hash.cpio.gz
	[ -e "$initrd" ] || "$HERE/kernel.sh" initrd "$initrd" "$ROOT" "$kv"
	echo "$kv $ROOT/boot/vmlinuz-$kv $initrd $ROOT"
}

# build SRC OUT: copy the module's sources into the chroot, build there.
build() {
	local src=$1 out=$2 kv work
	prepare > /dev/null
	kv=$(kver)
	work=$ROOT/build/kvreg
	rm -rf "$work"
	mkdir -p "$work" "$out"
	cp -r "$src/Kbuild" "$src/dkms.conf" "$src/kmod" "$src/include" "$work/"
	in_root "$ROOT" make -C "/lib/modules/$kv/build" M=/build/kvreg W=1 ${KVREG_MAKE_FLAGS:-} \
		modules
	cp "$work/kvreg.ko" "$out/"
}

case "${1:-}" in
prepare) prepare ;;
build) build "$2" "$3" ;;
run) shift; prepare > /dev/null; in_root "$ROOT" "$@" ;;
*) echo "usage: trixie.sh prepare|build SRC OUT|run CMD..." >&2; exit 2 ;;
esac
