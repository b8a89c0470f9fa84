#!/bin/bash
# A Debian release and its kernel, as a cached chroot: Debian 11 (bullseye,
# 5.10), 13 (trixie, 6.12) or testing (forky, 7.2). Each kernel's headers
# want their own release's compiler and libc, so the module and the
# user-space side are built inside the chroot, and that kernel's guest
# boots with the chroot as its root. Debian 12 (bookworm, 6.1) is the
# host's own release: its root is an overlay of the host's, with
# Debian's kernel (tests/guest/kernel.sh) under /lib/modules, on a tmpfs
# that the installs below write to and nothing outlives.
#   chroot.sh SUITE prepare    make the chroot (once per package list)
#                              and the initramfs; prints
#                              "KVER VMLINUZ INITRD ROOT"
#   chroot.sh SUITE release    bookworm: unmount its overlay
#   chroot.sh SUITE build SRC OUT
#                              build the module from the tree SRC in the
#                              chroot, at W=1; the .ko lands in OUT
#   chroot.sh SUITE user SRC BUILD
#                              build the library, kvregctl and the tests
#                              from SRC in the chroot into BUILD (a path
#                              under SRC, which the guest sees there too)
#   chroot.sh SUITE dkms-deb DEB_DIR
#                              install the kvreg-dkms package in a
#                              throwaway overlay of the chroot: DKMS must
#                              build and install the module for the
#                              chroot's kernel, and purging must leave
#                              nothing
#   chroot.sh SUITE dkms-tree SRC install|remove
#                              DKMS from the tree SRC, as the README's
#                              install section does it, natively in the
#                              chroot: add, build and install for its
#                              kernel, so that its guest loads the module
#                              with a plain modprobe; remove, after the
#                              guest, which must leave nothing
#   chroot.sh SUITE debs DEB_DIR install|purge
#                              the four packages, natively in the chroot:
#                              dpkg -i, whose DKMS build must install the
#                              module for its kernel, so that its guest
#                              checks them as a user meets them; purge,
#                              after the guest, which must leave nothing
#   chroot.sh SUITE run CMD... run a command in the chroot
# DKMS builds under emulation take many minutes (Kbuild and depmod over
# 9p), so every install and removal happens here, natively, and a guest
# only loads and uses what they left. Their compiles share a compiler
# cache when KVREG_CCACHE names one. The packages come from the host's
# own Debian mirror (its apt sources), or from KVREG_MIRROR, so a site
# mirror or proxy is honoured.
set -euo pipefail

CACHE=${KVREG_CACHE:-/var/cache/kvreg}
HERE=$(cd "$(dirname "$0")" && pwd)
SUITE=${1:-}
shift || true

case $SUITE in
bookworm|bullseye|trixie) SCRIPT= ;;
# bookworm's debootstrap has no script for forky: testing is made as sid.
forky) SCRIPT=/usr/share/debootstrap/scripts/sid ;;
*) echo "chroot.sh: SUITE is bookworm, bullseye, trixie or forky" >&2; exit 2 ;;
esac

# What a guest runs: the module build, rxe, the test programs' libraries
# (librdmacm for the plain-verbs peer), perftest for the pair benchmark,
# DKMS and udev for the package tests (ccache for their second build),
# Python for the binding.
PKGS=(linux-headers-amd64 linux-image-amd64 gcc make libc6-dev kmod
      iproute2 busybox-static rdma-core ibverbs-utils ibverbs-providers
      libibverbs-dev librdmacm-dev perftest dkms pkg-config udev python3
      xz-utils ca-certificates ccache)

# Keyed by the suite and the package list, so a changed list makes a new
# chroot; the mirror is where the packages come from, not what they are.
KEY=$(printf '%s\n' "$SUITE" "${PKGS[@]}" | sha256sum | cut -c1-16)
DIR=$CACHE/$SUITE/$KEY
ROOT=$DIR/root
# bookworm: the overlay's mount point and its tmpfs (upper layers).
if [ "$SUITE" = bookworm ]; then
	DIR=$CACHE/bookworm
	ROOT=$DIR/root
fi

# The host's Debian mirror: the URI apt uses for the host's own release.
mirror() {
	local codename uri
	if [ -n "${KVREG_MIRROR:-}" ]; then
		echo "$KVREG_MIRROR"
		return
	fi
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	      awk -v r="$codename" '$2 == r { print $1; exit }')
	if [ -z "$uri" ]; then
		echo "chroot.sh: no apt source for $codename on this host; set KVREG_MIRROR" >&2
		exit 1
	fi
	echo "${uri%/}"
}

make_chroot() {
	local tmp=$DIR/root.tmp url proxy
	url=$(mirror)
	rm -rf "$tmp"
	mkdir -p "$DIR"
	echo "chroot.sh: debootstrap $SUITE from $url" >&2
	# apt's proxy, if the host has one, serves debootstrap and the chroot.
	proxy=$(apt-config shell P Acquire::http::Proxy | sed -n "s/^P='\(.*\)'$/\1/p")
	http_proxy=${http_proxy:-$proxy} debootstrap --variant=minbase "$SUITE" \
		"$tmp" "$url" $SCRIPT > "$DIR/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$DIR/debootstrap.log" >&2; exit 1; }
	# A mirror that serves a snapshot may serve a Release file past its
	# Valid-Until date (testing's is short-lived); the packages are still
	# signed and checked.
	echo 'Acquire::Check-Valid-Until "false";' \
		> "$tmp/etc/apt/apt.conf.d/90kvreg-valid-until"
	[ -n "$proxy" ] && printf 'Acquire::http::Proxy "%s";\n' "$proxy" \
		> "$tmp/etc/apt/apt.conf.d/90kvreg-proxy"
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
	# Older chroots of this suite are of no further use.
	find "$CACHE/$SUITE" -mindepth 1 -maxdepth 1 ! -name "$KEY" \
		-exec rm -rf {} +
}

# in_root DIR CMD...: run CMD in the chroot with /proc, /sys and /dev,
# and KVREG_CCACHE at /ccache as make's CC: DKMS 2.8 (Debian 11) resets
# PATH, and MAKEFLAGS carries CC through DKMS to Kbuild.
in_root() {
	local root=$1 rc=0 cc=()
	shift
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --rbind /dev "$root/dev"
	if [ -n "${KVREG_CCACHE:-}" ]; then
		mkdir -p "$KVREG_CCACHE" "$root/ccache"
		mount --bind "$KVREG_CCACHE" "$root/ccache"
		cc=(MAKEFLAGS=CC=/usr/lib/ccache/gcc CCACHE_DIR=/ccache)
	fi
	chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		"${cc[@]}" "$@" || rc=$?
	[ ${#cc[@]} -eq 0 ] || umount "$root/ccache"
	umount -l "$root/dev" "$root/sys" "$root/proc"
	return $rc
}

kver() {
	local dep
	dep=$(chroot "$ROOT" dpkg-query -W -f='${Depends}' linux-headers-amd64 |
	      grep -o 'linux-headers-[0-9][^ ,]*-amd64' | head -n1)
	echo "${dep#linux-headers-}"
}

# bookworm_root: the host's root, read-only beneath a tmpfs, with the
# cached Debian kernel's modules beneath /lib/modules/KVER (a second
# overlay: the two trees lie inside one another, which one overlay
# refuses). Mounted once, until "release".
bookworm_root() {
	local kv vmlinuz initrd moddir
	read -r kv vmlinuz initrd moddir < <("$HERE/kernel.sh" prepare)
	if ! mountpoint -q "$ROOT"; then
		mkdir -p "$DIR/layers" "$ROOT"
		mountpoint -q "$DIR/layers" || mount -t tmpfs tmpfs "$DIR/layers"
		mkdir -p "$DIR"/layers/{upper,work,mupper,mwork}
		mount -t overlay overlay -o "lowerdir=/,upperdir=$DIR/layers/upper,workdir=$DIR/layers/work" "$ROOT"
		mount -t overlay overlay -o "lowerdir=$moddir:/lib/modules/$kv,upperdir=$DIR/layers/mupper,workdir=$DIR/layers/mwork" \
			"$ROOT/lib/modules/$kv"
	fi
	echo "$kv $vmlinuz $initrd $ROOT"
}

release() {
	[ "$SUITE" = bookworm ] || return 0
	local m
	for m in "$ROOT/lib/modules/"* "$ROOT" "$DIR/layers"; do
		mountpoint -q "$m" || continue
		umount "$m" 2> /dev/null || umount -l "$m"
	done
}

# One at a time: a lane may ask while make check's first stage is still
# making the chroot.
prepare() {
	local rc=0
	mkdir -p "$CACHE"
	exec 9> "$CACHE/$SUITE.lock"
	flock 9
	if [ "$SUITE" = bookworm ]; then
		bookworm_root || rc=$?
	else
		prepare_chroot || rc=$?
	fi
	exec 9>&-
	return $rc
}

prepare_chroot() {
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
	in_root "$ROOT" make -C "/lib/modules/$kv/build" M=/build/kvreg W=1 \
		${KVREG_MAKE_FLAGS:-} modules
	cp "$work/kvreg.ko" "$out/"
}

# user SRC BUILD: the tree is bind-mounted at its own path in the chroot,
# so BUILD holds the same paths for the chroot's build and for the guest.
user() {
	local src build rc=0
	src=$(cd "$1" && pwd)
	build=$2
	prepare > /dev/null
	mkdir -p "$ROOT$src"
	mount --bind "$src" "$ROOT$src"
	in_root "$ROOT" make -C "$src" -s -j2 BUILD="$build" KVER= lib tools \
		tests || rc=$?
	umount "$ROOT$src"
	return $rc
}

# dkms-deb DEB_DIR: the package's DKMS build, natively.
dkms_deb() {
	local debs kv ovl rc=0
	debs=$(cd "$1" && pwd)
	prepare > /dev/null
	kv=$(kver)
	dkms_leftovers "$kv"
	ovl=$(mktemp -d "$DIR/overlay.XXXXXX")
	mkdir -p "$ovl"/{upper,work,root}
	mount -t overlay overlay -o "lowerdir=$ROOT,upperdir=$ovl/upper,workdir=$ovl/work" \
		"$ovl/root"
	mkdir -p "$ovl/root/debs"
	mount --bind "$debs" "$ovl/root/debs"
	in_root "$ovl/root" env KVER="$kv" sh -euc '
		dpkg -i /debs/kvreg-dkms_*.deb > /tmp/dpkg.log 2>&1 ||
			{ cat /tmp/dpkg.log; find /var/lib/dkms -name make.log -exec cat {} +; exit 1; }
		dkms status kvreg | grep -F ", $KVER, " | grep -q ": installed" ||
			{ dkms status; echo "the package did not build kvreg for $KVER"; exit 1; }
		ko=$(find "/lib/modules/$KVER" -name "kvreg.ko*" | head -n1)
		echo "kvreg-dkms built $ko"
		modinfo -F vermagic "$ko" | grep -q "^$KVER " ||
			{ echo "vermagic does not match $KVER"; exit 1; }
		dpkg --purge kvreg-dkms > /tmp/purge.log 2>&1 ||
			{ cat /tmp/purge.log; exit 1; }
		if find "/lib/modules/$KVER" /usr/src /var/lib/dkms -name "kvreg*" | grep -q .; then
			echo "purging kvreg-dkms left files behind"; exit 1
		fi
		echo "purged: nothing of kvreg left for $KVER"' || rc=$?
	umount "$ovl/root/debs"
	# in_root's lazy unmounts of /dev and /sys can hold the overlay busy
	# for a moment after the chroot's last process is gone.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		umount "$ovl/root" 2> /dev/null && break
		sleep 1
	done
	mountpoint -q "$ovl/root" && umount -l "$ovl/root"
	rm -rf "$ovl"
	return $rc
}

# The four packages, as dpkg names them.
PACKAGES="kvreg-tools libkvreg-dev libkvreg1 kvreg-dkms"

# dkms_leftovers KVER: what an interrupted run's dkms-tree or debs left in
# the chroot goes first.
dkms_leftovers() {
	local p installed=
	for p in $PACKAGES; do
		chroot "$ROOT" dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'ok installed' && installed="$installed $p"
	done
	# shellcheck disable=SC2086
	[ -z "$installed" ] ||
		in_root "$ROOT" dpkg --purge $installed > /dev/null 2>&1 || true
	[ -e "$ROOT/var/lib/dkms/kvreg" ] || [ -n "$(ls -d "$ROOT"/usr/src/kvreg-* 2>/dev/null)" ] ||
		return 0
	rm -rf "$ROOT"/usr/src/kvreg-* "$ROOT/var/lib/dkms/kvreg"
	find "$ROOT/lib/modules/$1" -name 'kvreg.ko*' -delete
	in_root "$ROOT" depmod "$1"
}

# dkms-tree SRC install|remove
dkms_tree() {
	local src=$1 kv ver
	prepare > /dev/null
	kv=$(kver)
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/dkms.conf")
	if [ "$2" = remove ]; then
		# DKMS's own remove, then nothing of kvreg may be left.
		in_root "$ROOT" dkms remove -m kvreg -v "$ver" --all || return 1
		rm -rf "$ROOT/usr/src/kvreg-$ver"
		nothing_left "$kv" "dkms remove" || return 1
		echo "removed: no kvreg module or DKMS tree left for $kv"
		return 0
	fi
	dkms_leftovers "$kv"
	mkdir -p "$ROOT/usr/src/kvreg-$ver"
	cp -r "$src/Kbuild" "$src/dkms.conf" "$src/kmod" "$src/include" \
		"$ROOT/usr/src/kvreg-$ver/"
	in_root "$ROOT" sh -euc "
		dkms add -m kvreg -v $ver
		dkms build -m kvreg -v $ver -k $kv > /tmp/dkms-build.log 2>&1 ||
			{ cat /tmp/dkms-build.log; exit 1; }
		dkms install -m kvreg -v $ver -k $kv
		dkms status kvreg"
}

# nothing_left KVER WHAT: no module, source or DKMS tree of kvreg.
nothing_left() {
	if find "$ROOT/lib/modules/$1" "$ROOT/usr/src" "$ROOT/var/lib/dkms" \
		-name 'kvreg*' | grep .; then
		echo "$2 left files behind"
		return 1
	fi
}

# debs DEB_DIR install|purge
debs() {
	local kv stage=/var/tmp/kvreg-debs
	prepare > /dev/null
	kv=$(kver)
	if [ "$2" = purge ]; then
		# shellcheck disable=SC2086
		in_root "$ROOT" dpkg --purge $PACKAGES > "$ROOT/var/tmp/purge.log" 2>&1 ||
			{ cat "$ROOT/var/tmp/purge.log"; return 1; }
		nothing_left "$kv" "dpkg --purge" || return 1
		if chroot "$ROOT" dpkg-query -W -f='${Status} ${Package}\n' \
			'kvreg*' 'libkvreg*' 2> /dev/null | grep -v ' not-installed '; then
			echo "dpkg still lists these"
			return 1
		fi
		echo "purged: no package, module or source of kvreg left for $kv"
		return 0
	fi
	dkms_leftovers "$kv"
	rm -rf "$ROOT$stage"
	mkdir -p "$ROOT$stage"
	cp "$1"/kvreg-dkms_*.deb "$1"/libkvreg1_*_*.deb "$1"/libkvreg-dev_*.deb \
		"$1"/kvreg-tools_*_*.deb "$ROOT$stage/"
	in_root "$ROOT" env KVER="$kv" STAGE="$stage" sh -euc '
		dpkg -i "$STAGE"/*.deb > "$STAGE/dpkg.log" 2>&1 ||
			{ cat "$STAGE/dpkg.log"; find /var/lib/dkms -name make.log -exec cat {} +; exit 1; }
		grep -i -E "dkms|kvreg" "$STAGE/dpkg.log" | tail -n 5
		dkms status kvreg | grep -F ", $KVER, " | grep -q ": installed" ||
			{ dkms status; echo "the package did not build kvreg for $KVER"; exit 1; }
		ko=$(find "/lib/modules/$KVER" -name "kvreg.ko*" | head -n1)
		modinfo -F vermagic "$ko" | grep -q "^$KVER " ||
			{ echo "vermagic of $ko does not match $KVER"; exit 1; }
		getent group kvreg > /dev/null || { echo "no group kvreg"; exit 1; }
		echo "installed: kvreg-dkms built $ko; group kvreg exists"'
	rm -rf "$ROOT$stage"
}

case "${1:-}" in
prepare) prepare ;;
release) release ;;
debs) debs "$2" "$3" ;;
dkms-tree) dkms_tree "$2" "$3" ;;
dkms-deb) dkms_deb "$2" ;;
build) build "$2" "$3" ;;
user) user "$2" "$3" ;;
run) shift; prepare > /dev/null; in_root "$ROOT" "$@" ;;
*) echo "usage: chroot.sh SUITE prepare|release|build SRC OUT|user SRC BUILD|dkms-deb DEBS|dkms-tree SRC install|remove|debs DEBS install|purge|run CMD..." >&2
   exit 2 ;;
esac
