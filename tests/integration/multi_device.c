// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * One REGISTER on two devices: keys for both that work (each device's MRs
 * carry bytes by RDMA, to the registration exported and imported back on
 * that device), and the pages pinned once, not once per device.
 */
#include "kvtransfer.h"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	const uint64_t len = 4 * SZ_2M + 5 * SZ_4K;
	struct kvt_snap before;
	struct kvreg_mr *ma, *mb;
	struct kvreg_error err;
	struct kvreg_query q;
	unsigned int ndev, d;
	uint8_t *a, *b;

	ndev = kvt_devices(kv, devs);
	if (ndev < 2)
		kvt_skip("needs two RDMA devices");
	a = kvt_map_anon(len);
	b = kvt_map_anon(len);
	before = kvt_snap(kv);
	CHECK_OK(kvreg_register(kv, a, len, KVREG_ACCESS_ALL, 0, &ma, &err),
		 &err);
	CHECK_OK(kvreg_register(kv, b, len, KVREG_ACCESS_ALL, 0, &mb, &err),
		 &err);
	/* The kernel's own count: pinned once, not once per device. */
	kvt_check_pinned(kv, &before,
			 kvt_span_pages(a, len) + kvt_span_pages(b, len),
			 "two buffers on every device");
	CHECK_OK(kvreg_query(kv, kvreg_mr_handle(ma), &q, NULL, 0, &err),
		 &err);
	CHECK(q.pinned_pages == kvt_span_pages(a, len), "query pinned_pages");

	for (d = 0; d < ndev; d++) {
		uint32_t dev = devs[d].index;
		uint32_t seed = 0x10 + dev;

		CHECK(q.device_mask & (1ULL << dev), "device %u missing", dev);
		kvt_check_keys(ma, a, len, dev, KVT_BASE_PAGES);
		kvt_check_keys(mb, b, len, dev, KVT_BASE_PAGES);
		kvt_fill(a, len, seed);
		memset(b, 0, len);
		kvt_xfer(kv, KVREG_OP_WRITE, dev, ma, 0, mb, 0, len);
		CHECK(kvt_mismatch(b, 0, len, seed, 0) < 0,
		      "device %u WRITE mismatch", dev);
		kvt_fill(b, len, seed + 0x40);
		kvt_xfer(kv, KVREG_OP_READ, dev, ma, 0, mb, 0, len);
		CHECK(kvt_mismatch(a, 0, len, seed + 0x40, 0) < 0,
		      "device %u READ mismatch", dev);
		kvt_rdma_roundtrip(kv, a, b, ma, mb, len, dev);
		printf("device %u (%s): keys work by RDMA, %llu bytes and every "
		       "edge\n", dev, devs[d].name, (unsigned long long)len);
	}
	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	kvt_check_unchanged(kv, &before, "after DEREGISTER");
	kvreg_close(kv);
	return T_PASS;
}
