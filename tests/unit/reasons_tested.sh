#!/bin/bash
# Every reason the headers define is expected by at least one test: named
# in a test that provokes it and checks for it (an integration, pair,
# KUnit or Python test, an example, or a unit test of the library's own
# reasons). unit/errors and unit/reason_docs name every reason to check
# its text, which proves nothing of when it is given, so they do not count.
set -uo pipefail
cd "$(dirname "$0")/../.."
sources=(tests/integration/*.c tests/pair/*.c tests/kunit/*.c
	 tests/python/*.py examples/*.c examples/*.py
	 tests/unit/abi_layout.c tests/unit/not_open.c
	 tests/unit/null_error.c tests/unit/open_errors.c)
reasons=$(sed -n 's/^[[:space:]]*\(KVREG_REASON_[A-Z0-9_]*\)[[:space:]]*=.*/\1/p' \
	include/uapi/kvreg.h include/kvreg.h | grep -v '^KVREG_REASON_NONE$')
# Not provoked by any test, each for a reason of this machine or of the
# wire protocol; each is printed on every run. Nothing may join this list
# without one.
declare -A untested=(
	[KVREG_REASON_TOO_LARGE]="rxe's max_mr_size is 2^64-1: no registration exceeds it"
)
# Comments do not count: a test names a reason in code.
code=$(sed 's|/\*.*\*/||; s|^[[:space:]]*\*.*||; s|//.*||' "${sources[@]}")
missing=0
for r in $reasons; do
	if grep -w "$r" <<< "$code" > /dev/null; then
		[ -z "${untested[$r]:-}" ] ||
			{ echo "$r: expected now; take it off the list"; missing=$((missing + 1)); }
		continue
	fi
	if [ -n "${untested[$r]:-}" ]; then
		echo "not provoked: $r (${untested[$r]})"
		continue
	fi
	echo "$r: no test expects it"
	missing=$((missing + 1))
done
n=$(wc -w <<< "$reasons")
if [ "$missing" -gt 0 ]; then
	echo "$missing of $n reasons are expected by no test"
	exit 1
fi
echo "$((n - ${#untested[@]})) of $n reasons are expected by a test; \
${#untested[@]} not provoked, each said why"
