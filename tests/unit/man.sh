#!/bin/bash
# The man pages: each renders without a groff warning (as lintian renders
# them), every library call has a page or a link to one, link targets
# exist, and kvreg(7) lists every reason code the headers define.
set -euo pipefail
cd "$(dirname "$0")/../.."
fail=0
for f in man/*.[378]; do
	if head -n1 "$f" | grep -q '^\.so '; then
		target=man/$(sed -n 's|^\.so man[0-9]/||p' "$f")
		[ -e "$target" ] || { echo "$f: links to missing $target"; fail=1; }
		continue
	fi
	out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
	      man --warnings -E UTF-8 -l -Tutf8 -Z "$f" 2>&1 >/dev/null) || true
	[ -z "$out" ] || { echo "$f:"; echo "$out"; fail=1; }
done
for fn in $(grep -oE '\bkvreg_[a-z_]+\(' include/kvreg.h | tr -d '(' | sort -u); do
	[ -e "man/$fn.3" ] || { echo "no man page for $fn"; fail=1; }
done
for n in $(grep -hoE 'KVREG_REASON_[A-Z_]+[[:space:]]*=[[:space:]]*[0-9]+' \
	   include/uapi/kvreg.h include/kvreg.h | grep -oE '[0-9]+$'); do
	[ "$n" = 0 ] && continue
	grep -q "^$n	" man/kvreg.7 || { echo "kvreg(7) lacks reason $n"; fail=1; }
done
[ -e man/kvregctl.8 ] || { echo "no kvregctl(8)"; fail=1; }
[ $fail -eq 0 ] && echo "$(ls man | wc -l) pages and links render cleanly"
exit $fail
