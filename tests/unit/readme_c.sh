#!/bin/bash
# The README's C is code: each ```c block compiles against the installed
# header's copy in include/, its #include lines at file scope and the rest
# as a function's body, with -Wall -Wextra -Werror less the warnings a
# fragment must give (values it only shows, never reads).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
out=$BUILD/tests/gen/readme
mkdir -p "$out"
n=$(awk '/^```c$/ { n++ } END { print n + 0 }' README.md)
[ "$n" -gt 0 ] || { echo "README.md has no C block"; exit 1; }
for i in $(seq 1 "$n"); do
	block=$(awk -v want="$i" '/^```c$/ { n++; on = n == want; next }
				   /^```/ { on = 0 } on' README.md)
	{
		grep '^#include' <<< "$block" || true
		echo "void readme_block_$i(void);"
		echo "void readme_block_$i(void)"
		echo "{"
		grep -v '^#include' <<< "$block"
		echo "}"
	} > "$out/block$i.c"
	if ! cc -std=c11 -Wall -Wextra -Werror -Wno-unused-but-set-variable \
		-Wno-uninitialized -Wno-maybe-uninitialized -Iinclude \
		-c "$out/block$i.c" -o "$out/block$i.o"; then
		echo "README.md's C block $i does not compile ($out/block$i.c)"
		exit 1
	fi
done
echo "README.md: $n C block(s) compile"
