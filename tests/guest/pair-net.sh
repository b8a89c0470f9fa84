#!/bin/sh
# Sourced by each guest of a pair (pair-side.sh, the bench's and the
# demo's): node N (1 exports, 2 imports) on both links, an rxe device on
# each NIC, and a wait until the other node answers on both.
#   . pair-net.sh; pair_net_up N; ...; pair_net_wait N

pair_net_up() {
	# Built in on the debug kernel: modprobe has nothing to do there.
	for m in virtio_net rdma_rxe rdma_cm ib_uverbs; do
		modprobe "$m" 2>/dev/null || true
	done
	# Jumbo frames, as on RoCE fabrics: rxe's MTU is then 4096, not 1024.
	ip link set eth0 mtu 9000 up
	ip addr add "192.0.2.$1/24" dev eth0
	rdma link add rxe0 type rxe netdev eth0
	ip link set eth1 mtu 9000 up
	ip addr add "198.51.100.$1/24" dev eth1
	rdma link add rxe1 type rxe netdev eth1
	echo 64 > /proc/sys/vm/nr_hugepages
}

# The links first, so that a failure after is kvreg's, not the network's.
pair_net_wait() {
	peer=$((3 - $1))
	i=0
	until busybox ping -c 1 -W 1 "192.0.2.$peer" > /dev/null 2>&1 &&
		busybox ping -c 1 -W 1 "198.51.100.$peer" > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge 60 ] && break
	done
}
