#!/bin/bash
# tests/list is whole and sound: every test program, script, pair side,
# Python and example test of the tree is listed once, so the not-run guard
# of make check covers it; every listed test exists; every place and skip
# is one the runners know.
set -uo pipefail
cd "$(dirname "$0")/../.."
fails=0
fail() {
	echo "$*"
	fails=$((fails + 1))
}

listed=$(awk -f tests/list.awk -v op=all tests/list | cut -d' ' -f1 | sort -u)
is_listed() {
	grep -qx "$1" <<< "$listed" || fail "$2 is in no line of tests/list"
}

for f in tests/integration/*.c; do
	is_listed "integration/$(basename "$f" .c)" "$f"
done
for f in tests/unit/*.c; do
	is_listed "unit/$(basename "$f" .c)" "$f"
	is_listed "unit-san/$(basename "$f" .c)" "$f (under ASan and UBSan)"
done
for f in tests/unit/*.sh; do
	is_listed "unit/$(basename "$f" .sh)" "$f"
done
for f in tests/python/*.py; do
	is_listed "python/$(basename "$f" .py)" "$f"
done
# remote_pair.c is pair/remote, pair_faults.c pair/faults.
for f in tests/pair/*.c; do
	n=$(basename "$f" .c)
	n=${n%_pair}
	is_listed "pair/${n#pair_}" "$f"
done
for f in examples/hicache_backend.*; do
	is_listed "examples/$(basename "$f")" "$f"
done
# The remote example runs between the two guests of a pair.
is_listed pair/hicache-c examples/hicache_remote.c
is_listed pair/hicache-py examples/hicache_remote.py

# Each listed test exists, under one name, in known places.
dups=$(awk '!/^#/ && NF { print $1 }' tests/list | sort | uniq -d)
[ -z "$dups" ] || fail "listed twice: $dups"
while read -r name where; do
	case $where in
	host|5.10|6.1|6.12|7.2|debug|pair|debug-pair) ;;
	*) fail "$name: no runner knows the place '$where'" ;;
	esac
	n=${name#*/}
	case $name in
	integration/*) [ -f "tests/integration/$n.c" ] ;;
	unit/*) [ -f "tests/unit/$n.c" ] || [ -f "tests/unit/$n.sh" ] ;;
	unit-san/*) [ -f "tests/unit/$n.c" ] ;;
	python/*) [ -f "tests/python/$n.py" ] ;;
	examples/*) [ -f "examples/$n" ] ;;
	*) true ;;
	esac || fail "$name is listed, but its source is missing"
done < <(awk -f tests/list.awk -v op=all tests/list)

# An allowed skip names where and why.
while read -r name skip; do
	[[ $skip == *:* && -n ${skip#*:} ]] ||
		fail "$name: a skip is 'WHERE...: REASON', not '$skip'"
done < <(awk -f tests/list.awk -v op=skips tests/list)

# The reading itself: a name at a place it is listed for, and only there.
names() { awk -f tests/list.awk -v op=names -v where="$1" tests/list; }
names 5.10 | grep -qx integration/remote ||
	fail "list.awk: 'kernels' does not take in 5.10"
names 6.1 | grep -qx integration/fuzz &&
	fail "list.awk: integration/fuzz read as running on 6.1"
awk -f tests/list.awk -v op=skip -v name=integration/fault_inject \
	-v where=6.1 -v reason="no fault injection in this kernel" tests/list &&
	fail "list.awk: a skip allowed on 6.12 read as allowed on 6.1"

[ "$fails" -eq 0 ] || exit 1
echo "tests/list: $(wc -l <<< "$listed") tests, every one in the tree, \
$(awk -f tests/list.awk -v op=all tests/list | wc -l) places"
