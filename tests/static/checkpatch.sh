#!/bin/bash
# checkpatch.pl --strict, from Debian's linux-source of the guest kernel's
# series, over the module and the UAPI header: any finding fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE=${KVREG_CACHE:-/var/cache/kvreg}
ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
dir=$CACHE/checkpatch/$ver
if [ ! -x "$dir/scripts/checkpatch.pl" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* | head -n1)
	mkdir -p "$dir.tmp"
	tar -xf "$tarball" -C "$dir.tmp" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
fi
"$dir/scripts/checkpatch.pl" --strict --no-tree --terse --show-types \
	--max-line-length=80 -f kmod/*.c kmod/*.h kmod/probes/*.c include/uapi/kvreg.h
