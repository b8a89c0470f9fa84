// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Mooncake-style register_buffer() cases: a malloc'd buffer that is not
 * page aligned registers byte-granular (QUERY shows the pinned page span);
 * a hugetlb buffer with an unaligned end registers with huge MR pages; a
 * buffer only partly backed by huge pages gets 4 KiB MR pages and the
 * alignment hint.
 */
#include "kvtransfer.h"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *mr, *peer;
	struct kvt_snap before;
	struct kvreg_error err;
	struct kvreg_query q;
	uint8_t *heap_base, *heap, *huge, *mixed, *b;
	const size_t len = 100000;
	uint32_t dev;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	before = kvt_snap(kv);

	/* malloc: not page aligned, not a page multiple. */
	heap_base = malloc(len + 64);
	CHECK(heap_base, "malloc");
	heap = heap_base + 13;
	b = kvt_map_anon(len);
	kvt_fill(heap, len, 0x12);
	CHECK_OK(kvreg_register(kv, heap, len, KVREG_ACCESS_ALL, 1ULL << dev,
				&mr, &err), &err);
	CHECK_OK(kvreg_query(kv, kvreg_mr_handle(mr), &q, NULL, 0, &err), &err);
	CHECK(q.addr == (uintptr_t)heap && q.length == len &&
	      q.pinned_addr == ((uintptr_t)heap & ~(SZ_4K - 1)) &&
	      q.pinned_pages == kvt_span_pages(heap, len),
	      "query: addr %#llx len %llu pinned %#llx x %llu",
	      (unsigned long long)q.addr, (unsigned long long)q.length,
	      (unsigned long long)q.pinned_addr,
	      (unsigned long long)q.pinned_pages);
	CHECK_OK(kvreg_register(kv, b, len, KVREG_ACCESS_ALL, 1ULL << dev,
				&peer, &err), &err);
	kvt_xfer(kv, KVREG_OP_WRITE, dev, mr, 0, peer, 0, len);
	CHECK(kvt_mismatch(b, 0, len, 0x12, 0) < 0, "heap buffer transfer");
	CHECK_OK(kvreg_deregister(kv, peer, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	free(heap_base);

	/* hugetlb, 3.5 huge pages long: huge MR pages, no hint. */
	huge = kvt_map_hugetlb(4 * SZ_2M);
	/* run-tests.sh reserves them: a part that cannot run fails. */
	CHECK(huge, "no hugetlb pages: this part cannot run");
	CHECK_OK(kvreg_register(kv, huge, 3 * SZ_2M + SZ_2M / 2,
				KVREG_ACCESS_ALL, 1ULL << dev, &mr, &err), &err);
	kvt_check_keys(mr, huge, 3 * SZ_2M + SZ_2M / 2, dev, KVT_HUGE_PAGES);
	CHECK(!(kvreg_mr_flags(mr) & KVREG_REG_OUT_HUGE_HINT), "hint");
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);

	/* THP on the first 2 MiB only: base MR pages, and the hint. */
	mixed = mmap(NULL, 3 * SZ_2M, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mixed != MAP_FAILED, "mmap");
	mixed = (uint8_t *)(((uintptr_t)mixed + SZ_2M - 1) & ~(SZ_2M - 1));
	/* Advice before the first touch: faults decide the page size. */
	CHECK(!madvise(mixed, SZ_2M, MADV_HUGEPAGE) &&
	      !madvise(mixed + SZ_2M, SZ_2M, MADV_NOHUGEPAGE), "madvise");
	memset(mixed, 0, 2 * SZ_2M);
	CHECK(kvt_thp_bytes(mixed, SZ_2M) >= SZ_2M,
	      "no THP under MADV_HUGEPAGE: the hint part cannot run");
	CHECK_OK(kvreg_register(kv, mixed, 2 * SZ_2M, KVREG_ACCESS_ALL,
				1ULL << dev, &mr, &err), &err);
	CHECK(kvreg_mr_flags(mr) & KVREG_REG_OUT_HUGE_HINT,
	      "no hint, flags %#x", kvreg_mr_flags(mr));
	kvt_check_keys(mr, mixed, 2 * SZ_2M, dev, KVT_BASE_PAGES);
	printf("hint: %s\n", kvreg_hint(kvreg_mr_flags(mr)));
	CHECK(strstr(kvreg_hint(kvreg_mr_flags(mr)), "2 MiB"), "text");
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);

	kvt_check_unchanged(kv, &before, "after the Mooncake cases");
	kvreg_close(kv);
	return T_PASS;
}
