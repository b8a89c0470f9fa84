#!/bin/bash
# Debian's kernel for the guest, extracted into the cache (never /boot).
#   kernel.sh kver      the ABI name of the distribution's kernel
#   kernel.sh prepare   extract it and build the initramfs; prints
#                       "KVER VMLINUZ INITRD MODDIR"
#   kernel.sh initrd-builtin
#                       an initramfs without modules, for a kernel that
#                       has them built in; prints its path
#   kernel.sh initrd OUT MODULE_ROOT KVER
#                       an initramfs with the 9p root's modules of another
#                       kernel tree (a chroot's, from tests/guest/chroot.sh)
set -euo pipefail

CACHE=${KVREG_CACHE:-/var/cache/kvreg}
HERE=$(cd "$(dirname "$0")" && pwd)

kver() {
	# The headers metapackage names the kernel ABI it tracks.
	local dep
	dep=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	      grep -o 'linux-headers-[0-9][^ ,]*-amd64' | head -n1)
	[ -n "$dep" ] || { echo "kernel.sh: linux-headers-amd64 not installed" >&2; exit 1; }
	echo "${dep#linux-headers-}"
}

# make_initrd OUT [MODULE_ROOT KVER]: busybox, our /init, and the modules
# the 9p root needs (none without a module root). Debian 13 ships them
# xz-compressed; busybox's insmod wants them plain.
make_initrd() {
	local out=$1 root=${2:-} kv=${3:-} stage m base
	stage=$(mktemp -d "$CACHE/stage.XXXXXX")
	mkdir -p "$stage"/{bin,dev,proc,sys,mods,lower,upper,newroot}
	cp /bin/busybox "$stage/bin/busybox"
	cp "$HERE/initramfs-init" "$stage/init"
	chmod 0755 "$stage/init"
	: > "$stage/mods/order"
	if [ -n "$root" ]; then
		# Dependencies first, in the order modprobe would load them.
		for m in virtio_pci 9pnet_virtio 9p overlay; do
			modprobe -d "$root" -S "$kv" --show-depends "$m"
		done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
			while read -r m; do
				base=$(basename "$m")
				case $m in
				*.xz) base=${base%.xz}
				      xz -dc "$m" > "$stage/mods/$base" ;;
				*) cp "$m" "$stage/mods/" ;;
				esac
				echo "$base" >> "$stage/mods/order"
			done
	fi
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$stage"
}

initrd_builtin() {
	local hash out
	hash=$(cat "$HERE/initramfs-init" "$0" | sha256sum | cut -c1-16)
	out=$CACHE/initrd-builtin-$hash.cpio.gz
	mkdir -p "$CACHE"
	[ -e "$out" ] || make_initrd "$out"
	echo "$out"
}

prepare() {
	local kv dir deb init_hash initrd
	kv=$(kver)
	dir=$CACHE/kernel/$kv
	if [ ! -e "$dir/.extracted" ]; then
		mkdir -p "$CACHE/debs" "$dir"
		# apt's sandbox user cannot write the cache: download as root.
		(cd "$CACHE/debs" && apt-get download -o APT::Sandbox::User=root \
			"linux-image-$kv" >/dev/null)
		deb=$(ls -t "$CACHE/debs/linux-image-${kv}_"*.deb | head -n1)
		rm -rf "$dir/root"
		dpkg-deb -x "$deb" "$dir/root"
		depmod -b "$dir/root" "$kv"
		touch "$dir/.extracted"
	fi
	# Keyed by the init script and this one (which picks the modules).
	init_hash=$(cat "$HERE/initramfs-init" "$0" | sha256sum | cut -c1-16)
	initrd=$dir/initrd-$init_hash.cpio.gz
	[ -e "$initrd" ] || make_initrd "$initrd" "$dir/root" "$kv"
	echo "$kv $dir/root/boot/vmlinuz-$kv $initrd $dir/root/lib/modules/$kv"
}

case "${1:-}" in
kver) kver ;;
prepare) prepare ;;
initrd-builtin) initrd_builtin ;;
initrd) make_initrd "$2" "$3" "$4" ;;
*) echo "usage: kernel.sh kver|prepare|initrd-builtin|initrd OUT ROOT KVER" >&2
   exit 2 ;;
esac
