// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Removing a device while registrations use it revokes their MRs on that
 * device at once and leaves the other device working; deregistration then
 * releases the pages. The device is added back at the end.
 *   device_removal NETDEV_OF_THE_SECOND_DEVICE
 */
#include "kvtransfer.h"

int main(int argc, char **argv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	const uint64_t len = 2 * SZ_2M;
	struct kvt_snap before;
	struct kvreg_stats during, after;
	struct kvreg_mr *ma, *mb;
	struct kvreg_error err;
	struct kvreg_query q;
	uint32_t keep, gone;
	char cmd[256];
	uint8_t *a, *b;

	if (argc != 2)
		kvt_skip("usage: device_removal NETDEV");
	if (kvt_devices(kv, devs) < 2)
		kvt_skip("needs two RDMA devices");
	keep = devs[0].index;
	gone = devs[1].index;
	a = kvt_map_anon(len);
	b = kvt_map_anon(len);
	before = kvt_snap(kv);
	CHECK_OK(kvreg_register(kv, a, len, KVREG_ACCESS_ALL, 0, &ma, &err),
		 &err);
	CHECK_OK(kvreg_register(kv, b, len, KVREG_ACCESS_ALL, 0, &mb, &err),
		 &err);
	kvt_fill(a, len, 0x51);
	kvt_xfer(kv, KVREG_OP_WRITE, gone, ma, 0, mb, 0, len);
	CHECK(kvt_mismatch(b, 0, len, 0x51, 0) < 0, "before removal");
	during = kvt_stats(kv);

	snprintf(cmd, sizeof(cmd), "rdma link delete %s", devs[1].name);
	kvt_run(cmd);

	CHECK_FAILS(kvreg_transfer(kv, KVREG_OP_WRITE, gone, ma, 0, mb, 0, len,
				   &err), &err, ENODEV,
		    KVREG_REASON_DEVICE_REMOVED);
	CHECK_OK(kvreg_query(kv, kvreg_mr_handle(ma), &q, NULL, 0, &err),
		 &err);
	CHECK(q.device_mask == 1ULL << keep, "live devices %#llx, want %#llx",
	      (unsigned long long)q.device_mask,
	      (unsigned long long)(1ULL << keep));
	after = kvt_stats(kv);
	CHECK(after.mrs < during.mrs && after.pinned_pages == during.pinned_pages,
	      "removal: MRs %llu -> %llu, pinned %llu -> %llu",
	      (unsigned long long)during.mrs, (unsigned long long)after.mrs,
	      (unsigned long long)during.pinned_pages,
	      (unsigned long long)after.pinned_pages);

	/* The other device still moves data with the same registrations. */
	kvt_fill(a, len, 0x52);
	kvt_xfer(kv, KVREG_OP_WRITE, keep, ma, 0, mb, 0, len);
	CHECK(kvt_mismatch(b, 0, len, 0x52, 0) < 0, "surviving device");

	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	kvt_check_unchanged(kv, &before, "after removal and DEREGISTER");

	snprintf(cmd, sizeof(cmd), "rdma link add %s type rxe netdev %s",
		 devs[1].name, argv[1]);
	kvt_run(cmd);
	CHECK(kvt_devices(kv, devs) >= 2, "device did not come back");
	kvreg_close(kv);
	return T_PASS;
}
