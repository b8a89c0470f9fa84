# Sourced by every script that runs perftest (pair-side.sh,
# tests/bench/pair-bench-side.sh, tests/bench/guest-bench.sh): one set of
# flags, one way to pair a server with its client, one reading of what
# perftest prints. Callers choose only the tool, the size and the count.
# POSIX sh.
#
# Flags: the RoCE v2 GID of the device's IPv4 address (perftest's default
# GID index is the link-local IPv6 one, which the pair's routes do not
# carry), -F (QEMU's CPU frequency is not the host's), and for the *_bw
# tools kvreg's submission depth, so the two queue as deeply.
PERFTEST_DEV=${PERFTEST_DEV:-rxe0}
PERFTEST_DEPTH=${PERFTEST_DEPTH:-128}
PERFTEST_TIMEOUT=${PERFTEST_TIMEOUT:-300}
PERFTEST_PORT=${PERFTEST_PORT:-18515}

# perftest_gid: the index of PERFTEST_DEV's first RoCE v2 GID that maps an
# IPv4 address.
perftest_gid() {
	for g in /sys/class/infiniband/"$PERFTEST_DEV"/ports/1/gids/*; do
		case $(cat "$g" 2>/dev/null) in
		0000:0000:0000:0000:0000:ffff:*) ;;
		*) continue ;;
		esac
		i=${g##*/}
		t=/sys/class/infiniband/$PERFTEST_DEV/ports/1/gid_attrs/types/$i
		[ -r "$t" ] && [ "$(cat "$t" 2>/dev/null)" != "RoCE v2" ] &&
			continue
		echo "$i"
		return 0
	done
	return 1
}

# perftest_cmd TOOL SIZE ITERS: the command line both ends share.
perftest_cmd() {
	set -- "$1" -d "$PERFTEST_DEV" -x "$(perftest_gid || echo 1)" -F \
		-p "$PERFTEST_PORT" -s "$2" -n "$3"
	case $1 in *_bw) set -- "$@" -t "$PERFTEST_DEPTH" ;; esac
	echo "$@"
}

# perftest_parse TOOL SIZE: perftest's result row, read as one line:
# "MBPS MSGS_PER_S" (10^6 bytes/s) for a *_bw tool, "USEC" for a *_lat
# tool (the typical latency, or the average where perftest's cycle clock
# gives inf under QEMU). Nothing when perftest printed no row.
perftest_parse() {
	case $1 in
	*_bw) awk -v s="$2" '$1 == s && NF >= 5 {
		printf "%.1f %.0f\n", $4 * 1.048576, $5 * 1e6 }' ;;
	*) awk -v s="$2" '$1 == s && NF >= 6 {
		print ($5 == "inf" ? $6 : $5) }' ;;
	esac
}

# perftest_serve TOOL SIZE ITERS: the server end, until its client is done.
perftest_serve() {
	# shellcheck disable=SC2046
	timeout "$PERFTEST_TIMEOUT" $(perftest_cmd "$@") > /dev/null 2>&1
}

# perftest_client TOOL SIZE ITERS ADDR: the client end, after giving the
# server two seconds to listen; prints perftest_parse's line.
perftest_client() {
	sleep 2
	# shellcheck disable=SC2046
	timeout "$PERFTEST_TIMEOUT" $(perftest_cmd "$1" "$2" "$3") "$4" \
		2> /dev/null | perftest_parse "$1" "$2"
}

# perftest_side ROLE TOOL SIZE ITERS PEER: one end of a run between two
# guests, the exporter serving, the importer measuring.
perftest_side() {
	r=$1
	shift
	if [ "$r" = export ]; then
		perftest_serve "$1" "$2" "$3"
	else
		perftest_client "$@"
	fi
}

# perftest_loopback TOOL SIZE ITERS: both ends in this guest, over the
# device's own address. Called in $(...), it cannot move PERFTEST_PORT on
# for the next run: the caller does, so no server waits on a port the last
# one may still hold.
perftest_loopback() {
	perftest_serve "$@" &
	lb_server=$!
	perftest_client "$@" 127.0.0.1
	wait "$lb_server" || true
}
