// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * SiMM-style: no RDMA device on the node. Registration says so, and
 * kvregctl check fails; both work again once the devices are back.
 *   no_device KVREGCTL NETDEV0 NETDEV1
 */
#include "kvtest.h"

int main(int argc, char **argv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvt_snap before = kvt_snap(kv);
	struct kvreg_error err;
	struct kvreg_mr *mr;
	char cmd[512];
	unsigned int n, i;
	uint8_t *p = kvt_map_anon(SZ_4K);

	if (argc != 4)
		kvt_skip("usage: no_device KVREGCTL NETDEV0 NETDEV1");
	n = kvt_devices(kv, devs);
	if (n != 2)
		kvt_skip("needs exactly the two test devices");
	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "rdma link delete %s", devs[i].name);
		kvt_run(cmd);
	}
	CHECK(kvt_devices(kv, devs + 2) == 0, "devices left");
	CHECK_FAILS(kvreg_register(kv, p, SZ_4K, KVREG_ACCESS_ALL, 0, &mr,
				   &err), &err, ENODEV, KVREG_REASON_NO_DEVICE);
	snprintf(cmd, sizeof(cmd), "%s check 1M", argv[1]);
	CHECK(system(cmd) != 0, "kvregctl check passed with no device");

	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "rdma link add %s type rxe netdev %s",
			 devs[i].name, argv[2 + i]);
		kvt_run(cmd);
	}
	CHECK(kvt_devices(kv, devs) == 2, "devices did not come back");
	CHECK_OK(kvreg_register(kv, p, SZ_4K, KVREG_ACCESS_ALL, 0, &mr, &err),
		 &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvt_check_unchanged(kv, &before, "after no device");
	kvreg_close(kv);
	return T_PASS;
}
