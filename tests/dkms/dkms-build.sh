#!/bin/bash
# DKMS builds the module from the tree for Debian's kernel, as a user's
# machine would at install time. Nothing is installed or loaded here.
set -euo pipefail
KVER=$1
cd "$(dirname "$0")/../.."
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
src=/usr/src/kvreg-$VERSION
cleanup() {
	dkms remove -m kvreg -v "$VERSION" --all >/dev/null 2>&1 || true
	rm -rf "$src"
}
cleanup
trap cleanup EXIT
mkdir -p "$src"
cp -r Kbuild dkms.conf kmod include "$src/"
dkms add -m kvreg -v "$VERSION"
dkms build -m kvreg -v "$VERSION" -k "$KVER"
ko=$(find "/var/lib/dkms/kvreg/$VERSION/$KVER" -name 'kvreg.ko*' | head -n1)
[ -n "$ko" ] || { echo "dkms produced no kvreg.ko"; exit 1; }
modinfo "$ko" | grep -E '^(vermagic|license|version):'
modinfo -F vermagic "$ko" | grep -q "^$KVER " ||
	{ echo "vermagic does not match $KVER"; exit 1; }
