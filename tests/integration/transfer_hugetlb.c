// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* hugetlb 2 MiB pages: huge MR pages, also for a range inside huge pages. */
#include "kvtransfer.h"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	const uint64_t len = 8 * SZ_2M;
	uint8_t *a, *b;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	a = kvt_map_hugetlb(len);
	b = kvt_map_hugetlb(len);
	if (!a || !b)
		kvt_skip("no free hugetlb pages (vm.nr_hugepages)");
	kvt_roundtrip(kv, a, b, len, devs[0].index, KVT_HUGE_PAGES);
	/* Starts and ends inside huge pages: still huge MR pages. */
	kvt_roundtrip(kv, a + 3 * SZ_4K + 17, b + SZ_2M - 9, len - 3 * SZ_2M,
		      devs[0].index, KVT_HUGE_PAGES);
	kvreg_close(kv);
	return T_PASS;
}
