#!/bin/bash
# One version number: dkms.conf's PACKAGE_VERSION. What else states a
# version is made from it or must say the same: kvregctl --version, the
# shared library's file name, the pkg-config file, the Python binding's
# __version__, and every man page's .TH line.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
v=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
[ -n "$v" ] || { echo "dkms.conf states no PACKAGE_VERSION"; exit 1; }
fail=0
pages=0
got=$("$BUILD/bin/kvregctl" --version | head -n1)
case $got in
"kvregctl $v, "*) ;;
*) echo "kvregctl --version says '$got', dkms.conf $v"; fail=1 ;;
esac
ls "$BUILD"/lib/libkvreg.so.*."$v" > /dev/null 2>&1 ||
	{ echo "no $BUILD/lib/libkvreg.so.*.$v"; ls "$BUILD/lib"; fail=1; }
py=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' libuser/python/kvreg.py)
[ "$py" = "$v" ] ||
	{ echo "libuser/python/kvreg.py: __version__ '$py', dkms.conf $v"; fail=1; }
# make install fills @VERSION@ from dkms.conf.
grep -qx 'Version: @VERSION@' libuser/lib/kvreg.pc.in ||
	{ echo "kvreg.pc.in does not take its Version from the build"; fail=1; }
for f in man/*.[378]; do
	head -n1 "$f" | grep -q '^\.so ' && continue
	pages=$((pages + 1))
	th=$(grep -m1 '^\.TH' "$f")
	grep -qF "\"kvreg $v\"" <<< "$th" ||
		{ echo "$f: $th (not \"kvreg $v\")"; fail=1; }
done
[ $fail -eq 0 ] && echo "version $v: kvregctl, the library's file, kvreg.pc, kvreg.py and $pages man pages agree"
exit $fail
