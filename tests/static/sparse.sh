#!/bin/bash
# sparse over every module source (make C=2): any finding fails.
set -euo pipefail
KVER=$1
cd "$(dirname "$0")/../.."
log=$(make -C "/lib/modules/$KVER/build" M="$PWD" C=2 modules 2>&1)
checked=$(grep -c '^  CHECK ' <<< "$log" || true)
findings=$(grep -E '(warning|error):' <<< "$log" || true)
if [ -n "$findings" ]; then
	echo "$findings"
	exit 1
fi
[ "$checked" -gt 0 ] || { echo "sparse checked nothing"; echo "$log"; exit 1; }
echo "sparse: $checked files, no findings"
