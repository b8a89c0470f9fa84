#!/bin/bash
# Build kvreg.ko (or, with --kunit, kvreg_kunit.ko) against one kernel
# tree, in a staged copy of the sources so that builds for different
# kernels never share objects.
#   build-module.sh [--kunit] KERNEL_TREE OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
kunit=
if [ "${1:-}" = --kunit ]; then
	kunit=1
	shift
fi
tree=$1
out=$2
src=$out/src
mkdir -p "$src"
# Copy only what changed: kbuild then rebuilds only what it must.
cp -ru kmod include dkms.conf "$src/"
if [ -n "$kunit" ]; then
	cp -ru tests/kunit "$src/"
	cp -u tests/kunit/Kbuild.kunit "$src/Kbuild"
else
	cp -u Kbuild "$src/Kbuild"
fi
make -C "$tree" M="$(cd "$src" && pwd)" W=1 modules
cp "$src"/*.ko "$out/"
