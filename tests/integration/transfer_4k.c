// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * 4 KiB MR pages: an aligned buffer split across several MRs (more pages
 * than one fast-registration page list holds), and a byte-granular one
 * that starts and ends inside pages. Then contiguous base pages, where
 * kvreg may pick larger MR pages: the bytes must move the same.
 */
#include "kvtransfer.h"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	uint64_t len;
	uint8_t *a, *b;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	/* Past one MR, and an odd number of pages. */
	len = (uint64_t)devs[0].max_fast_reg_page_list_len * SZ_4K * 2 +
	      3 * SZ_4K;
	/* Scattered: 4 KiB MR pages, whatever the allocator handed out. */
	a = kvt_map_anon_scattered(len);
	b = kvt_map_anon_scattered(len);
	kvt_roundtrip(kv, a, b, len, devs[0].index, 12);
	kvt_roundtrip(kv, a + 100, b + 300, len - 400, devs[0].index, 12);
	a = kvt_map_anon(len);
	b = kvt_map_anon(len);
	kvt_roundtrip(kv, a, b, len, devs[0].index, KVT_BASE_PAGES);
	kvreg_close(kv);
	return T_PASS;
}
