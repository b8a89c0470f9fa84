#!/bin/bash
# A debug kernel (KASAN, UBSAN, lockdep, kmemleak, KUnit, fault injection,
# hung-task and soft-lockup detectors, DEBUG_LIST/OBJECTS/VM) built
# once from Debian's linux-source-6.1 and cached under /var/cache/kvreg,
# keyed by the source version, the config fragment and this script.
#   debug-kernel.sh build   build it unless cached; prints "KVER BZIMAGE TREE"
#   debug-kernel.sh path    the same, without building (exit 1 if absent)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${KVREG_CACHE:-/var/cache/kvreg}
FRAG=$HERE/debug.config
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$(cat "$FRAG" "$0" | sha256sum | cut -c1-12)
dir=$CACHE/debug-kernel/$srcver-$key
tree=$dir/linux-source-6.1

report() {
	echo "$(cat "$dir/kernelrelease") $tree/arch/x86/boot/bzImage $tree"
}

# One build at a time: a second make check would delete the first's tree.
mkdir -p "$CACHE"
exec 9> "$CACHE/debug-kernel.lock"
flock 9
if [ -e "$dir/.built" ]; then
	report
	exit 0
fi
[ "${1:-build}" = build ] || exit 1

rm -rf "$dir"
mkdir -p "$dir"
echo "debug kernel: extracting linux-source-$srcver" >&2
tar -xf /usr/src/linux-source-6.1.tar.xz -C "$dir"
cd "$tree"
make -s tinyconfig >/dev/null
scripts/kconfig/merge_config.sh -m .config "$FRAG" >/dev/null
make -s olddefconfig >/dev/null
# A dependency left unmet drops an option silently: refuse that.
missing=$(grep '^CONFIG_' "$FRAG" | while read -r line; do
	grep -qx "$line" .config || echo "$line"
done)
if [ -n "$missing" ]; then
	echo "debug kernel: options did not stick:" $missing >&2
	exit 1
fi
echo "debug kernel: building (about 12 minutes on 2 cores; cached after)" >&2
make -j"$(nproc)" bzImage modules > "$dir/build.log" 2>&1 ||
	{ tail -30 "$dir/build.log" >&2; exit 1; }
make -s kernelrelease > "$dir/kernelrelease"
touch "$dir/.built"
report
