#!/bin/bash
# sparse over every module source (make C=2): any finding fails.
#   sparse.sh KVER [BUILD]
# Built in a staged copy (BUILD/sparse), never in the tree: the tree is
# what DKMS and the packages ship, and must hold no objects.
set -euo pipefail
KVER=$1
cd "$(dirname "$0")/../.."
src=${2:-build}/sparse
mkdir -p "$src"
cp -ru Kbuild dkms.conf kmod include "$src/"
log=$(make -C "/lib/modules/$KVER/build" M="$(cd "$src" && pwd)" C=2 \
	modules 2>&1)
checked=$(grep -c '^  CHECK ' <<< "$log" || true)
findings=$(grep -E '(warning|error):' <<< "$log" || true)
if [ -n "$findings" ]; then
	echo "$findings"
	exit 1
fi
[ "$checked" -gt 0 ] || { echo "sparse checked nothing"; echo "$log"; exit 1; }
echo "sparse: $checked files, no findings"
