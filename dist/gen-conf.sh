#!/bin/sh
# Writes /etc/modprobe.d/kvreg.conf to stdout from the module's own
# parameter descriptions (MODULE_PARM_DESC in kmod/), so that the file
# lists every parameter with the default `modinfo kvreg` states.
#   dist/gen-conf.sh > dist/kvreg.conf   (unit/params_docs checks it)
#   dist/gen-conf.sh --params            name<TAB>default (empty when the
#                                         module states no number)
set -eu
cd "$(dirname "$0")/.."
list=0
[ "${1:-}" = --params ] && list=1
[ $list = 1 ] || cat <<'HEAD'
# kvreg module parameters, made by dist/gen-conf.sh from the module's own
# descriptions (`modinfo kvreg`); kvreg(7) says more of each.
# Uncomment a line to change a default. It applies at the next
# `modprobe kvreg`; root can also change a value at run time under
# /sys/module/kvreg/parameters/.
HEAD
# MODULE_PARM_DESC(name,\n "text"); one string literal each.
awk -v list=$list '
BEGIN {
	example["max_bytes_per_process"] = "68719476736"
	note["max_bytes_per_process"] = "64 GiB"
	example["host_max_bytes"] = "103079215104"
	note["host_max_bytes"] = "96 GiB"
}
/MODULE_PARM_DESC\(/ {
	name = $0
	sub(/.*MODULE_PARM_DESC\(/, "", name)
	sub(/,.*/, "", name)
	text = $0
	if (text !~ /"/) {
		getline text
	}
	sub(/^[^"]*"/, "", text)
	sub(/"[^"]*$/, "", text)
	def = ""
	if (match(text, /\(default [0-9]+\)$/)) {
		def = substr(text, RSTART + 9, RLENGTH - 10)
		text = substr(text, 1, RSTART - 2)
	}
	if (list) {
		print name "\t" def
		next
	}
	if (def == "" && match(text, /; 0: /)) {
		def = "0"
	} else if (def == "" && name in example) {
		# A default worked out at load time: an example instead.
		def = example[name]
		text = text "; here " note[name]
	}
	print "#"
	n = split(text, w, " ")
	line = "#"
	for (i = 1; i <= n; i++) {
		if (length(line) + 1 + length(w[i]) > 74) {
			print line
			line = "#"
		}
		line = line " " w[i]
	}
	print line "."
	if (def == "")
		print "#options kvreg " name "="
	else
		print "#options kvreg " name "=" def
}' $(ls kmod/*.c | LC_ALL=C sort)
