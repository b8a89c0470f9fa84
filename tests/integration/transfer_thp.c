// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Transparent huge pages: pinned a folio at a time, with huge MR pages,
 * also from an unaligned address over long physical runs (where cutting
 * scatter entries anywhere but on a 2 MiB boundary drops to 4 KiB MR
 * pages), and with one THP mapped by PTEs pinned page by page.
 */
#include <sys/mman.h>

#include "kvtransfer.h"

/* Longer than a scatter entry may be (32 MiB), as light as KASAN needs. */
#define LONG_LEN	(20 * SZ_2M)

/*
 * Split the PMD of the 2 MiB block at @block into PTEs, keeping the
 * folio: a VMA split (mprotect of one page) does it, and restoring the
 * protection merges the VMAs back but leaves the PTEs. MADV_NOHUGEPAGE
 * then keeps khugepaged from collapsing the block again.
 */
static void split_pmd(uint8_t *block)
{
	CHECK(!mprotect(block + SZ_4K, SZ_4K, PROT_READ), "mprotect: %s",
	      strerror(errno));
	CHECK(!mprotect(block + SZ_4K, SZ_4K, PROT_READ | PROT_WRITE),
	      "mprotect: %s", strerror(errno));
	CHECK(!madvise(block, SZ_2M, MADV_NOHUGEPAGE), "madvise: %s",
	      strerror(errno));
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	const uint64_t len = 8 * SZ_2M;
	uint8_t *a, *b, *first_a, *first_b;
	uint64_t sub;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	a = kvt_map_thp(len);
	b = kvt_map_thp(len);
	if (kvt_thp_bytes(a, len) < len || kvt_thp_bytes(b, len) < len)
		kvt_skip("the kernel did not back the buffers with THP");
	kvt_roundtrip(kv, a, b, len, devs[0].index, KVT_HUGE_PAGES);
	first_a = a;
	first_b = b;

	a = kvt_map_thp(LONG_LEN);
	b = kvt_map_thp(LONG_LEN);
	if (kvt_thp_bytes(a, LONG_LEN) < LONG_LEN ||
	    kvt_thp_bytes(b, LONG_LEN) < LONG_LEN)
		kvt_skip("the kernel did not back the buffers with THP");
	/* From 4 KiB + 17 bytes in, to 5 bytes before the last block. */
	sub = LONG_LEN - SZ_4K - 17 - SZ_2M - 5;
	kvt_roundtrip(kv, a + SZ_4K + 17, b + SZ_4K + 17, sub, devs[0].index,
		      KVT_HUGE_PAGES);

	/*
	 * Block 5 of the first two buffers mapped by PTEs: 7 blocks pinned
	 * once each and the split one page by page (512 pins), on both
	 * buffers. MADV_NOHUGEPAGE keeps khugepaged from mapping the block by
	 * a PMD again before or during the round trip, so the count is exact
	 * and the block is still split at the end. The MR page size depends
	 * on the kernel: the split folio is still 2 MiB of contiguous memory,
	 * but 5.10 copies the page mprotect left read-only when it is pinned
	 * for writing.
	 */
	a = first_a;
	b = first_b;
	split_pmd(a + 5 * SZ_2M);
	split_pmd(b + 5 * SZ_2M);
	CHECK(kvt_thp_bytes(a, len) == len - SZ_2M &&
	      kvt_thp_bytes(b, len) == len - SZ_2M,
	      "after the split, %llu and %llu THP bytes mapped by PMDs",
	      (unsigned long long)kvt_thp_bytes(a, len),
	      (unsigned long long)kvt_thp_bytes(b, len));
	kvt_roundtrip_pins(kv, a, b, len, devs[0].index, KVT_ANY_PAGES,
			   2 * (7 + SZ_2M / SZ_4K));
	CHECK(kvt_thp_bytes(a, len) == len - SZ_2M &&
	      kvt_thp_bytes(b, len) == len - SZ_2M,
	      "the split block was mapped by a PMD again: %llu and %llu of 8 "
	      "blocks by PMDs after the round trip",
	      (unsigned long long)(kvt_thp_bytes(a, len) / SZ_2M),
	      (unsigned long long)(kvt_thp_bytes(b, len) / SZ_2M));
	printf("the split block: pinned page by page, still split after the "
	       "round trip (7 of 8 blocks by PMDs on each buffer)\n");
	kvreg_close(kv);
	return T_PASS;
}
