#!/bin/bash
# Install what building and testing kvreg needs, only if something is
# missing (a fresh machine has nothing; a warm one pays nothing).
set -euo pipefail

PKGS=(make gcc libc6-dev linux-headers-amd64 qemu-system-x86 busybox-static
      cpio kmod iproute2 rdma-core ibverbs-utils ibverbs-providers
      libibverbs-dev librdmacm-dev perftest dkms pkg-config binutils sparse
      linux-source-6.1 bc bison flex libelf-dev libssl-dev xz-utils
      gnuplot-nox debootstrap debhelper dh-dkms lintian fakeroot udev
      python3 python3-torch groff-base man-db ccache)

# make check T= naming unit tests only: what the library and its host
# tests build and run with, no kernel.
host_only=1
for w in ${T:-all}; do
	case $w in unit/*|unit-san/*) ;; *) host_only= ;; esac
done
[ -n "$host_only" ] &&
	PKGS=(make gcc libc6-dev libibverbs-dev librdmacm-dev pkg-config
	      binutils python3 groff-base man-db)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing ${missing[*]}; run 'make deps' as root" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
