# Reads tests/list (its header says the format) for the runners:
#   awk -f list.awk -v op=names -v where=W list
#       the names that run at W (host, 5.10, 6.1, 6.12, 7.2, debug, pair,
#       debug-pair), in the list's order
#   awk -f list.awk -v op=skip -v name=N -v where=W -v reason=R list
#       exits 0 if N may skip at W for exactly R
#   awk -f list.awk -v op=all list
#       "NAME WHERE" for every place each name runs, "kernels" expanded
#   awk -f list.awk -v op=skips list
#       "NAME WHERE: REASON" for every allowed skip
function kernel(w) {
	return w == "5.10" || w == "6.1" || w == "6.12" || w == "7.2" ||
	       w == "debug"
}
function at(token, w) {
	return token == w || (token == "kernels" && kernel(w))
}
function trim(s) {
	gsub(/^[ \t]+|[ \t]+$/, "", s)
	return s
}
/^#/ || NF == 0 { next }
{
	nf = split($0, field, "|")
	nw = split(field[1], word, " ")
	test = word[1]
}
op == "names" {
	for (i = 2; i <= nw; i++)
		if (at(word[i], where)) {
			print test
			break
		}
}
op == "all" {
	for (i = 2; i <= nw; i++) {
		if (word[i] != "kernels") {
			print test, word[i]
			continue
		}
		print test, "5.10"; print test, "6.1"; print test, "6.12"
		print test, "7.2"; print test, "debug"
	}
}
op == "skip" && test == name {
	for (i = 2; i <= nf; i++) {
		c = index(field[i], ":")
		if (!c || trim(substr(field[i], c + 1)) != reason)
			continue
		nk = split(substr(field[i], 1, c - 1), ks, " ")
		for (j = 1; j <= nk; j++)
			if (at(ks[j], where))
				allowed = 1
	}
}
op == "skips" {
	for (i = 2; i <= nf; i++)
		print test, trim(field[i])
}
END {
	if (op == "skip")
		exit !allowed
}
