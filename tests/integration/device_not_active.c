// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A device whose port is down is refused up front, for registering and
 * for moving data, with its own reason; once the port is up again both
 * work (the kernel QP reconnects).
 *   device_not_active NETDEV_OF_THE_FIRST_DEVICE
 */
#include "kvtransfer.h"

static int port_active(struct kvreg *kv, uint32_t index)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	unsigned int n = kvt_devices(kv, devs), i;

	for (i = 0; i < n; i++)
		if (devs[i].index == index)
			return devs[i].port_state == 4;
	return 0;
}

int main(int argc, char **argv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *a, *b, *c;
	struct kvt_snap before;
	struct kvreg_error err;
	char cmd[256];
	uint8_t *p, *q;
	uint32_t dev;
	int waited;

	if (argc != 2)
		kvt_skip("usage: device_not_active NETDEV");
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	p = kvt_map_anon(8 * SZ_4K);
	q = kvt_map_anon(8 * SZ_4K);
	before = kvt_snap(kv);
	CHECK_OK(kvreg_register(kv, p, 8 * SZ_4K, KVREG_ACCESS_ALL, 1ULL << dev,
				&a, &err), &err);
	CHECK_OK(kvreg_register(kv, q, 4 * SZ_4K, KVREG_ACCESS_ALL, 1ULL << dev,
				&b, &err), &err);

	snprintf(cmd, sizeof(cmd), "ip link set %s down", argv[1]);
	kvt_run(cmd);
	for (waited = 0; port_active(kv, dev) && waited < 500; waited++)
		usleep(10000);
	CHECK_FAILS(kvreg_register(kv, q + 4 * SZ_4K, 4 * SZ_4K,
				   KVREG_ACCESS_ALL, 1ULL << dev, &c, &err),
		    &err, ENETDOWN, KVREG_REASON_DEVICE_NOT_ACTIVE);
	CHECK(err.device_index == dev, "device %u", err.device_index);
	CHECK_FAILS(kvreg_transfer(kv, KVREG_OP_WRITE, dev, a, 0, b, 0, SZ_4K,
				   &err),
		    &err, ENETDOWN, KVREG_REASON_DEVICE_NOT_ACTIVE);

	snprintf(cmd, sizeof(cmd), "ip link set %s up", argv[1]);
	kvt_run(cmd);
	for (waited = 0; !port_active(kv, dev) && waited < 500; waited++)
		usleep(10000);
	/* kvreg learns of the port from its event, just after the state. */
	for (waited = 0; waited < 500; waited++) {
		if (!kvreg_register(kv, q + 4 * SZ_4K, 4 * SZ_4K,
				    KVREG_ACCESS_ALL, 1ULL << dev, &c, &err))
			break;
		CHECK(err.reason == KVREG_REASON_DEVICE_NOT_ACTIVE,
		      "reason %u", err.reason);
		usleep(10000);
	}
	CHECK(waited < 500, "port never came back");
	kvt_fill(p, 4 * SZ_4K, 0x71);
	kvt_xfer(kv, KVREG_OP_WRITE, dev, a, 0, b, 0, 4 * SZ_4K);
	CHECK(kvt_mismatch(q, 0, 4 * SZ_4K, 0x71, 0) < 0, "after port up");

	CHECK_OK(kvreg_deregister(kv, c, &err), &err);
	CHECK_OK(kvreg_deregister(kv, b, &err), &err);
	CHECK_OK(kvreg_deregister(kv, a, &err), &err);
	kvt_check_unchanged(kv, &before, "after the port test");
	kvreg_close(kv);
	return T_PASS;
}
