// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A 1 GiB hugetlb page registers as one 1 GiB MR page, so one MR holds
 * it where 2 MiB pages would take 512 page-list entries; from an
 * unaligned address inside it too. Bytes move at offsets across the
 * whole page, by CPU copy and by RDMA through that MR, and nothing stays
 * pinned after.
 * The guest reserves the page at boot (hugepagesz=1G hugepages=1).
 */
#include "kvtransfer.h"

#ifndef MAP_HUGE_1GB
#define MAP_HUGE_1GB	(30 << 26)	/* log2 of the size, MAP_HUGE_SHIFT */
#endif

#define GIG		(1ULL << 30)
#define NR_1G		"/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"
#define WINDOW		(64 * SZ_4K)

static uint8_t *map_gigantic(void)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
			  MAP_HUGE_1GB;
	void *p = mmap(NULL, GIG, PROT_READ | PROT_WRITE, flags, -1, 0);

	if (p == MAP_FAILED) {
		/* None reserved at boot: one may still be had, compacted. */
		kvt_put("/proc/sys/vm/compact_memory", "1\n");
		kvt_put(NR_1G, "1\n");
		p = mmap(NULL, GIG, PROT_READ | PROT_WRITE, flags, -1, 0);
	}
	CHECK(p != MAP_FAILED, "no 1 GiB hugetlb page (%s): the guest must "
	      "boot with hugepagesz=1G hugepages=1", strerror(errno));
	return p;
}

/* One MR on @dev, of 1 GiB pages, tiling [addr, addr + len). */
static void check_one_gig_mr(const struct kvreg_mr *mr, const void *addr,
			     uint64_t len, uint32_t dev)
{
	CHECK(kvt_check_keys(mr, addr, len, dev, 30) == 1,
	      "%llu bytes of a 1 GiB page in more than one MR",
	      (unsigned long long)len);
}

/* WRITE @win's bytes into @giant at @off, READ them back, check both. */
static void move_at(struct kvreg *kv, uint32_t dev, struct kvreg_mr *mw,
		    uint8_t *win, struct kvreg_mr *mg, uint8_t *giant,
		    uint64_t off, uint64_t n)
{
	uint32_t seed = (uint32_t)(off >> 12) + 1;

	kvt_fill(win, n, seed);
	kvt_xfer(kv, KVREG_OP_WRITE, dev, mw, 0, mg, off, n);
	CHECK(kvt_mismatch(giant + off, 0, n, seed, 0) < 0,
	      "WRITE at offset %#llx of the 1 GiB page: byte %lld differs",
	      (unsigned long long)off,
	      (long long)kvt_mismatch(giant + off, 0, n, seed, 0));
	memset(win, 0, n);
	kvt_xfer(kv, KVREG_OP_READ, dev, mw, 0, mg, off, n);
	CHECK(kvt_mismatch(win, 0, n, seed, 0) < 0,
	      "READ at offset %#llx of the 1 GiB page: byte %lld differs",
	      (unsigned long long)off, (long long)kvt_mismatch(win, 0, n,
							       seed, 0));
}

/*
 * The same by RDMA, which a TRANSFER between registrations (a CPU copy)
 * does not use: @mg's one MR of a 1 GiB page is the local side, the
 * window exported and imported back (@r) the remote one. A WRITE reads
 * the page through the MR at @off, a READ lands there through it.
 */
static void move_rdma_at(struct kvreg *kv, struct kvreg_remote *r,
			 uint8_t *win, struct kvreg_mr *mg, uint8_t *giant,
			 uint64_t off, uint64_t n)
{
	uint32_t seed = (uint32_t)(off >> 12) + 0x51;
	struct kvreg_error err;

	kvt_fill(giant + off, n, seed);
	memset(win, 0, n);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, mg, off, r, 0, n,
				       &err), &err);
	CHECK(kvt_mismatch(win, 0, n, seed, 0) < 0,
	      "RDMA WRITE from offset %#llx of the 1 GiB page: byte %lld "
	      "differs", (unsigned long long)off,
	      (long long)kvt_mismatch(win, 0, n, seed, 0));
	kvt_fill(win, n, seed + 1);
	memset(giant + off, 0, n);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, mg, off, r, 0, n,
				       &err), &err);
	CHECK(kvt_mismatch(giant + off, 0, n, seed + 1, 0) < 0,
	      "RDMA READ into offset %#llx of the 1 GiB page: byte %lld "
	      "differs", (unsigned long long)off,
	      (long long)kvt_mismatch(giant + off, 0, n, seed + 1, 0));
}

int main(void)
{
	static const uint64_t offs[] = {
		0, 4095, SZ_2M - 7, (256ULL << 20) + 3, 512ULL << 20,
		GIG - WINDOW - 1, GIG - WINDOW,
	};
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *mg, *mw, *msub;
	struct kvreg_remote *r;
	struct kvreg_error err;
	uint64_t ep;
	struct kvt_snap before, now;
	uint8_t *giant, *win;
	uint32_t dev;
	size_t i;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	CHECK(devs[0].page_size_cap & GIG, "%s has no 1 GiB MR pages "
	      "(page_size_cap %#llx)", devs[0].name,
	      (unsigned long long)devs[0].page_size_cap);
	giant = map_gigantic();
	win = kvt_map_anon(WINDOW);
	before = kvt_snap(kv);

	CHECK_OK(kvreg_register(kv, giant, GIG, KVREG_ACCESS_ALL, 1ULL << dev,
				&mg, &err), &err);
	CHECK_OK(kvreg_register(kv, win, WINDOW, KVREG_ACCESS_ALL,
				1ULL << dev, &mw, &err), &err);
	check_one_gig_mr(mg, giant, GIG, dev);
	now = kvt_snap(kv);
	CHECK(now.st.pinned_pages - before.st.pinned_pages ==
	      GIG / SZ_4K + WINDOW / SZ_4K, "kvreg pinned %llu pages",
	      (unsigned long long)(now.st.pinned_pages -
				   before.st.pinned_pages));
	/*
	 * A pin per folio and 32 MiB chunk (32 here), not one per 4 KiB or
	 * 2 MiB page; the window's base pages one each.
	 */
	CHECK(now.kernel_pins - before.kernel_pins <=
	      (int64_t)(64 + WINDOW / SZ_4K),
	      "%lld kernel pins for one 1 GiB page and %llu base pages",
	      (long long)(now.kernel_pins - before.kernel_pins),
	      (unsigned long long)(WINDOW / SZ_4K));
	printf("1 GiB page: 1 MR of 1 GiB pages; %lld kernel pins, of them "
	       "%llu for the window's base pages\n",
	       (long long)(now.kernel_pins - before.kernel_pins),
	       (unsigned long long)(WINDOW / SZ_4K));
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		move_at(kv, dev, mw, win, mg, giant, offs[i], WINDOW);
	r = kvt_self_import(kv, mw, dev, &ep);
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		move_rdma_at(kv, r, win, mg, giant, offs[i], WINDOW);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);

	CHECK_OK(kvreg_deregister(kv, mg, &err), &err);

	/* From an unaligned address inside the page, to 2 MiB before its end. */
	CHECK_OK(kvreg_register(kv, giant + SZ_4K + 5, GIG - SZ_2M,
				KVREG_ACCESS_ALL, 1ULL << dev, &msub, &err),
		 &err);
	check_one_gig_mr(msub, giant + SZ_4K + 5, GIG - SZ_2M, dev);
	move_at(kv, dev, mw, win, msub, giant + SZ_4K + 5,
		GIG - SZ_2M - WINDOW, WINDOW);
	CHECK_OK(kvreg_deregister(kv, msub, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mw, &err), &err);
	kvt_check_unchanged(kv, &before, "after DEREGISTER");
	munmap(giant, GIG);
	kvreg_close(kv);
	return T_PASS;
}
