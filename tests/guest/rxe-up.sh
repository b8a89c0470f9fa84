#!/bin/sh
# Soft-RoCE on N dummy netdevs inside the guest: rxe0..rxeN-1. The
# addresses are documentation ranges on links that exist only in the guest.
set -e
n=${1:-2}
# Modules on Debian's kernel, built in on the debug kernel: there modprobe
# has nothing to load, and 'rdma link add' below fails if rxe is missing.
modprobe rdma_rxe 2>/dev/null || true
modprobe dummy numdummies=0 2>/dev/null || true
i=0
while [ "$i" -lt "$n" ]; do
	ip link add "kvdummy$i" type dummy
	# MTU 1500, rxe's 1024: at 4096 the chains of flush_failed and
	# close_unimported end before the races they run (seen on the debug
	# kernel); the pair's links carry jumbo frames (pair-net.sh).
	ip link set "kvdummy$i" up
	case $i in
	# integration/ipv6: RoCE v2 over IPv6 too (rxe adds the GID).
	0) ip addr add 192.0.2.1/24 dev "kvdummy$i"
	   ip -6 addr add 2001:db8::1/64 dev "kvdummy$i" nodad ;;
	1) ip addr add 198.51.100.1/24 dev "kvdummy$i" ;;
	*) ip addr add "203.0.113.$i/32" dev "kvdummy$i" ;;
	esac
	rdma link add "rxe$i" type rxe netdev "kvdummy$i"
	i=$((i + 1))
done
