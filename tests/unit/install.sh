#!/bin/bash
# 'make install' into a staging root gives a library a program can find
# through pkg-config, shared and static, with the documented header path.
set -euo pipefail
BUILD=${1:-build}
stage=$(readlink -f "$BUILD")/stage
rm -rf "$stage"
make -s install BUILD="$BUILD" DESTDIR="$stage" PREFIX=/usr >/dev/null
prog=$(readlink -f "$BUILD")/install-probe
cat > "$prog.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <kvreg.h>
int main(void)
{
	struct kvreg_error err;
	struct kvreg *kv;
	int ret = kvreg_open_path(&kv, "/nonexistent/kvreg", &err);

	printf("%s\n", kvreg_strerror(err.reason));
	return ret == -ENOENT && err.reason == KVREG_REASON_MODULE_NOT_LOADED ? 0 : 1;
}
C
export PKG_CONFIG_PATH=$stage/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
flags=$(pkg-config --cflags --libs kvreg)
echo "pkg-config: $flags (version $(pkg-config --modversion kvreg))"
cc -std=c11 -Wall -Wextra -Werror "$prog.c" -o "$prog" $flags
LD_LIBRARY_PATH=$stage/usr/lib "$prog"
readelf -d "$prog" | grep -q 'NEEDED.*libkvreg.so.1' ||
	{ echo "not linked against libkvreg.so.1"; exit 1; }
cc -std=c11 -Wall -Wextra -Werror "$prog.c" -o "$prog-static" \
	$(pkg-config --cflags kvreg) "$stage/usr/lib/libkvreg.a"
"$prog-static"
