// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * kvreg leaves a share of each device's MRs to other users: past its
 * share the registration is refused with the device and the numbers, and
 * nothing is created on any device.
 */
#include "kvtest.h"

#define PARAM "/sys/module/kvreg/parameters/max_mrs_per_device"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *a, *b, *c;
	struct kvt_snap before;
	struct kvreg_error err;
	struct kvreg_stats st;
	uint64_t dev_mask;
	uint8_t *p;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev_mask = 1ULL << devs[0].index;
	st = kvt_stats(kv);
	CHECK(st.device_mr_reserve_percent == 50, "reserve %u%%",
	      st.device_mr_reserve_percent);
	p = kvt_map_anon(3 * SZ_4K);
	before = kvt_snap(kv);

	kvt_write_param(PARAM, devs[0].mrs_in_use + 2);
	CHECK_OK(kvreg_register(kv, p, SZ_4K, KVREG_ACCESS_ALL, dev_mask, &a,
				&err), &err);
	CHECK_OK(kvreg_register(kv, p + SZ_4K, SZ_4K, KVREG_ACCESS_ALL,
				dev_mask, &b, &err), &err);
	/* On every device: the first device refuses, no other is touched. */
	CHECK_FAILS(kvreg_register(kv, p + 2 * SZ_4K, SZ_4K, KVREG_ACCESS_ALL,
				   0, &c, &err),
		    &err, ENOSPC, KVREG_REASON_DEVICE_MR_RESERVE);
	CHECK(err.device_index == devs[0].index &&
	      err.limit == devs[0].mrs_in_use + 2 &&
	      err.usage == devs[0].mrs_in_use + 2 && err.request == 1,
	      "device %u limit %llu usage %llu request %llu", err.device_index,
	      (unsigned long long)err.limit, (unsigned long long)err.usage,
	      (unsigned long long)err.request);
	kvt_check_pinned(kv, &before, 2, "after the refusal");
	kvt_write_param(PARAM, 0);
	CHECK_OK(kvreg_register(kv, p + 2 * SZ_4K, SZ_4K, KVREG_ACCESS_ALL, 0,
				&c, &err), &err);

	CHECK_OK(kvreg_deregister(kv, c, &err), &err);
	CHECK_OK(kvreg_deregister(kv, b, &err), &err);
	CHECK_OK(kvreg_deregister(kv, a, &err), &err);
	kvt_check_unchanged(kv, &before, "after the device reserve test");
	kvreg_close(kv);
	return T_PASS;
}
