#!/bin/bash
# Every module parameter is told of where an operator looks, with the
# default the module states: /etc/modprobe.d/kvreg.conf is what
# dist/gen-conf.sh makes from the module's MODULE_PARM_DESC strings, and
# kvreg(7) has an entry (".B name") for each parameter, giving the same
# "(default N)" where the module gives a number, and none for a
# parameter the module does not have.
set -euo pipefail
cd "$(dirname "$0")/../.."
fail=0
if ! diff -u dist/kvreg.conf <(sh dist/gen-conf.sh); then
	echo "dist/kvreg.conf is stale: run dist/gen-conf.sh > dist/kvreg.conf"
	fail=1
fi
# name<TAB>default (empty where none is a number), from the module.
params=$(sh dist/gen-conf.sh --params)
[ -n "$params" ] || { echo "no MODULE_PARM_DESC found in kmod/"; exit 1; }
n=0
while IFS=$'\t' read -r name def; do
	n=$((n + 1))
	grep -q "^#options kvreg $name=" dist/kvreg.conf ||
		{ echo "kvreg.conf lacks $name"; fail=1; }
	# The entry: from ".B name" to the next ".TP", ".PP" or ".SH".
	entry=$(awk -v n="$name" '
		$0 == ".B " n { on = 1; next }
		on && /^\.(TP|PP|SH)/ { exit }
		on { print }' man/kvreg.7 | tr '\n' ' ')
	if [ -z "$entry" ]; then
		echo "kvreg(7) has no entry \".B $name\""
		fail=1
	elif [ -n "$def" ] && ! grep -q "(default $def)" <<< "$entry"; then
		echo "kvreg(7): $name's entry does not say (default $def)"
		fail=1
	fi
done <<< "$params"
# No entry for a parameter the module does not have.
for b in $(sed -n 's/^\.B \([a-z_]*\)$/\1/p' man/kvreg.7); do
	case $b in max_*|*_ms|*_percent|*_bytes|*_threads)
		grep -q "^$b	" <<< "$params" ||
			{ echo "kvreg(7) documents $b, no such parameter"; fail=1; } ;;
	esac
done
[ $fail -eq 0 ] && echo "$n module parameters: in kvreg.conf and kvreg(7), defaults alike"
exit $fail
