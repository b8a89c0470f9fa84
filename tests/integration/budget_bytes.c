// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Pinned bytes: the process's own budget and the host-wide ceiling, both
 * refused before anything is pinned, with the numbers.
 */
#include "kvtest.h"

#define HOST_PARAM "/sys/module/kvreg/parameters/host_max_bytes"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	unsigned long long host_max;
	struct kvreg_mr *a, *b;
	struct kvt_snap before;
	struct kvreg_error err;
	uint8_t *p;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	p = kvt_map_anon(64 * SZ_4K);
	before = kvt_snap(kv);

	/* Own budget: 64 KiB. 48 KiB fit, 32 KiB more do not. */
	CHECK_OK(kvreg_set_budget(kv, KVREG_BUDGET_F_BYTES, 0, 16 * SZ_4K, NULL,
				  &err), &err);
	CHECK_OK(kvreg_register(kv, p, 12 * SZ_4K, KVREG_ACCESS_ALL, 0, &a,
				&err), &err);
	CHECK_FAILS(kvreg_register(kv, p + 16 * SZ_4K, 8 * SZ_4K,
				   KVREG_ACCESS_ALL, 0, &b, &err),
		    &err, EDQUOT, KVREG_REASON_PROC_BYTES_BUDGET);
	CHECK(err.limit == 16 * SZ_4K && err.usage == 12 * SZ_4K &&
	      err.request == 8 * SZ_4K, "limit %llu usage %llu request %llu",
	      (unsigned long long)err.limit, (unsigned long long)err.usage,
	      (unsigned long long)err.request);
	kvt_check_pinned(kv, &before, 12, "refused before pinning");
	CHECK_OK(kvreg_set_budget(kv, KVREG_BUDGET_F_DEFAULTS, 0, 0, NULL,
				  &err), &err);

	/* Host ceiling: what is pinned now plus 16 KiB. */
	host_max = kvt_read_param(HOST_PARAM);
	kvt_write_param(HOST_PARAM, kvt_stats(kv).pinned_pages * SZ_4K + 4 * SZ_4K);
	CHECK_FAILS(kvreg_register(kv, p + 16 * SZ_4K, 8 * SZ_4K,
				   KVREG_ACCESS_ALL, 0, &b, &err),
		    &err, EDQUOT, KVREG_REASON_HOST_CEILING);
	CHECK(err.request == 8 * SZ_4K && err.limit - err.usage == 4 * SZ_4K,
	      "limit %llu usage %llu", (unsigned long long)err.limit,
	      (unsigned long long)err.usage);
	CHECK_OK(kvreg_register(kv, p + 16 * SZ_4K, 4 * SZ_4K,
				KVREG_ACCESS_ALL, 0, &b, &err), &err);
	kvt_write_param(HOST_PARAM, host_max);

	CHECK_OK(kvreg_deregister(kv, b, &err), &err);
	CHECK_OK(kvreg_deregister(kv, a, &err), &err);
	kvt_check_unchanged(kv, &before, "after the byte budgets");
	kvreg_close(kv);
	return T_PASS;
}
