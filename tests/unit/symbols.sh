#!/bin/bash
# The shared library has its soname and exports exactly the versioned
# kvreg_* symbols of libkvreg.map, nothing internal.
set -euo pipefail
BUILD=${1:-build}
lib=$(readlink -f "$BUILD/lib/libkvreg.so")
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libkvreg.so.1 ] || { echo "soname '$soname'"; exit 1; }
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort)
# Each symbol at the version node that introduced it.
wanted=$(awk '/^KVREG_[0-9.]+ *\{/ { node = $1 }
	      /^[[:space:]]*kvreg_[a-z_]*;$/ {
		sub(/^[[:space:]]*/, ""); sub(/;$/, "")
		print $0 "@@" node }' libuser/lib/libkvreg.map | sort)
if [ "$exported" != "$wanted" ]; then
	diff <(echo "$wanted") <(echo "$exported") || true
	echo "exported symbols differ from libkvreg.map"
	exit 1
fi
echo "soname $soname, $(echo "$exported" | wc -l) versioned symbols:" \
	"$(echo "$exported" | sed 's/.*@@//' | sort | uniq -c | xargs)"
