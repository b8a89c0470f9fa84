// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Buffers large enough that kvreg pins, maps and unpins them on several
 * CPUs (it cuts them at 32 MiB): the keys must still tile them in order,
 * and the bytes must arrive across every chunk and MR boundary. Then
 * hugetlb, pinned a folio at a time by parallel chunks, starting and
 * ending inside huge pages.
 */
#include "kvtransfer.h"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	/* Two 32 MiB chunks and two MR groups, and small enough for KASAN. */
	const uint64_t len = 40ULL << 20, huge_len = 40ULL << 20;
	uint8_t *a, *b;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	/* Scattered pages: 4 KiB MR pages, 21 MRs in two groups. */
	a = kvt_map_anon_scattered(len);
	b = kvt_map_anon_scattered(len);
	kvt_roundtrip(kv, a, b, len, devs[0].index, 12);
	munmap(a, len);
	munmap(b, len);
	/* Contiguous pages, which may get larger MR pages; not aligned. */
	a = kvt_map_anon(len);
	b = kvt_map_anon(len);
	kvt_roundtrip(kv, a + 5, b + SZ_4K - 3, len - SZ_4K,
		      devs[0].index, KVT_BASE_PAGES);
	munmap(a, len);
	munmap(b, len);

	a = kvt_map_hugetlb(huge_len);
	b = kvt_map_hugetlb(huge_len);
	/* The guest reserves them: tests/list allows no skip for it. */
	if (!a || !b)
		kvt_skip("no free hugetlb pages (vm.nr_hugepages)");
	kvt_roundtrip(kv, a, b, huge_len, devs[0].index, KVT_HUGE_PAGES);
	kvt_roundtrip(kv, a + 3 * SZ_4K + 17, b + SZ_2M - 9,
		      huge_len - 3 * SZ_2M, devs[0].index, KVT_HUGE_PAGES);
	kvreg_close(kv);
	return T_PASS;
}
