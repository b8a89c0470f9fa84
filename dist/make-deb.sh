#!/bin/bash
# make deb: the four Debian packages, built with debhelper and dh-dkms from
# a copy of the tree, then checked by lintian (any error fails).
#   make-deb.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "$1" && cd "$1" && pwd)
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
src=$out/kvreg-$version
rm -rf "$src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mkdir -p "$src"
# Sources only, never objects of an earlier build: what git tracks, and
# new files it does not ignore.
git ls-files -z --cached --others --exclude-standard -- Kbuild Makefile \
	dkms.conf README.md kmod include libuser man dist debian tests/unit \
	tests/common | cpio -p0dm --quiet "$src"

# The changelog is written here so that the version stays in dkms.conf.
when=$(git log -1 --format=%ct 2>/dev/null || date +%s)
cat > "$src/debian/changelog" <<CL
kvreg ($version) unstable; urgency=medium

  * kvreg $version: kvreg.ko for DKMS, libkvreg, kvregctl.

 -- kvreg developers <kvreg@lists.example.org>  $(date -R -u -d "@$when")
CL

(cd "$src" && dpkg-buildpackage -us -uc -b > "$out/build.log" 2>&1) ||
	{ tail -n 40 "$out/build.log"; exit 1; }
ls "$out"/*.deb
# lintian: errors fail the build; warnings are shown.
lintian --tag-display-limit 0 "$out"/kvreg_"$version"_*.changes |
	tee "$out/lintian.log"
if grep -q '^E:' "$out/lintian.log"; then
	echo "lintian reported errors"
	exit 1
fi
