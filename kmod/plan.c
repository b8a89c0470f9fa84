// SPDX-License-Identifier: GPL-2.0-only
/*
 * How many MRs a device needs for a registration, before any is created,
 * so that budgets are checked and charged exactly and up front.
 */
#include "kvreg.h"

/*
 * The largest MR page the device supports, up to KVREG_MAX_PAGE_SHIFT,
 * that every gap in the buffer's DMA layout falls on, with the buffer's
 * virtual address congruent to its DMA address modulo that size (the MR
 * translates iova offsets within a page unchanged): the lowest bit set in
 * any of those addresses bounds it, as ib_umem_find_best_pgsz() finds.
 * Entries that go on where the previous one ended are no gap:
 * ib_sg_to_pages() maps them as one run, so a 1 GiB page cut into 32 MiB
 * entries is still one 1 GiB MR page. Huge pages give their own size;
 * base pages that happen to be physically contiguous may give more than
 * 4 KiB, and every larger page is fewer pages to map.
 */
u32 kvreg_pick_page_shift(struct kvreg_dev *kdev, struct kvreg_reg *reg,
			  struct sg_table *sgt)
{
	u64 va = reg->addr & PAGE_MASK, bounds = 0, run_end = 0, sizes;
	unsigned int i, shift = KVREG_MAX_PAGE_SHIFT;
	struct scatterlist *sg;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 dma = sg_dma_address(sg);

		/* Huge pages underneath, whatever page size this gets. */
		if (sg_dma_len(sg) >= BIT(KVREG_HUGE_SHIFT))
			reg->huge_backed = true;
		if (!i)
			bounds |= dma ^ va;
		else if (dma != run_end)
			bounds |= run_end | dma;
		run_end = dma + sg_dma_len(sg);
	}
	if (bounds)
		shift = min_t(unsigned int, shift, __ffs64(bounds));
	/* No page larger than the buffer: it would not make fewer pages. */
	if (reg->length)
		shift = min_t(unsigned int, shift,
			      max_t(unsigned int, PAGE_SHIFT,
				    fls64(reg->length - 1)));
	sizes = kdev->page_size_cap & GENMASK_ULL(shift, PAGE_SHIFT);
	return sizes ? fls64(sizes) - 1 : PAGE_SHIFT;
}

/* MR pages one MR may hold: the fast-registration list, and max_mr_size. */
u32 kvreg_pages_per_mr(struct kvreg_dev *kdev, u32 page_shift)
{
	u32 pages = min_t(u64, kdev->max_fast_reg_pages,
			  kdev->max_mr_size >> page_shift);

	if (kdev->page_list_overread && pages > 2 &&
	    !(pages % KVREG_RXE_BUFS_PER_MAP))
		pages--;
	return pages;
}

/*
 * Mirrors ib_sg_to_pages(), which ib_map_mr_sg() uses: an MR that fills up
 * inside a scatter entry leaves the last page it took to the next MR (the
 * entry's offset is rewound to that page), so it covers one page less;
 * an MR that fills up exactly at the end of an entry covers all its pages.
 * An entry that starts inside the page the previous one ended in adds
 * only the pages after that one.
 *
 * The entries are cut into groups whose MRs are mapped on their own (by
 * different CPUs): a group ends at the first entry boundary after it
 * reached @group_pages MR pages, and the next group starts a fresh MR.
 * When @groups is given (room for kvreg_max_groups() of them) it receives
 * where each group starts: its first entry, its address in the buffer
 * (@addr for the first) and its first MR, and *@nr_groups their number.
 * Returns the number of MRs, or 0 when an MR cannot hold the two pages
 * that need.
 */
u32 kvreg_plan_groups(struct sg_table *sgt, u64 addr, u32 page_shift,
		      u32 pages_per_mr, u64 group_pages,
		      struct kvreg_mr_group *groups, u32 *nr_groups)
{
	const u64 page_size = BIT_ULL(page_shift);
	unsigned int first_offset = offset_in_page(addr);
	struct kvreg_mr_group *g = NULL;
	u64 va = addr & PAGE_MASK, group_filled = 0, run_end = 0;
	struct scatterlist *sg;
	u32 nr_mrs = 0, room = 0, ngroups = 0;
	unsigned int i;

	if (pages_per_mr < 2)
		return 0;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 start = sg_dma_address(sg) + (i ? 0 : first_offset);
		u64 end = sg_dma_address(sg) + sg_dma_len(sg);
		u64 pages = (ALIGN(end, page_size) -
			     ALIGN_DOWN(start, page_size)) >> page_shift;
		/* It goes on inside the page the previous entry ended in. */
		bool shared = i && start == run_end &&
			      (start & (page_size - 1));

		run_end = end;
		if (i == 0 || group_filled >= group_pages) {
			if (g)
				g->nents = i - g->nents;
			room = 0;
			group_filled = 0;
			if (groups) {
				g = &groups[ngroups];
				g->sg = sg;
				g->va = i ? va : addr;
				g->nents = i;	/* the end fixes it up */
				g->first_mr = nr_mrs;
			}
			ngroups++;
		} else if (shared) {
			/*
			 * That page is the MR's already; when the MR is full,
			 * the next one starts with it, unless this entry
			 * holds nothing beyond it (ib_sg_to_pages()).
			 */
			if (room)
				pages--;
			else if (pages == 1)
				pages = 0;
		}
		group_filled += pages;
		va += sg_dma_len(sg);
		while (pages) {
			if (!room) {
				nr_mrs++;
				room = pages_per_mr;
			}
			if (pages <= room) {
				room -= pages;
				pages = 0;
			} else {
				pages -= room - 1;
				room = 0;
			}
		}
	}
	if (g)
		g->nents = sgt->nents - g->nents;
	if (nr_groups)
		*nr_groups = ngroups;
	return nr_mrs;
}

/* Groups kvreg_plan_groups() can make of @sgt covering @nr_pages pages. */
u32 kvreg_max_groups(struct sg_table *sgt, unsigned long nr_pages,
		     u64 group_pages)
{
	/* Each group but the last holds group_pages; entries add <= 1 each. */
	return min_t(u64, sgt->nents, div64_u64(nr_pages + sgt->nents,
						group_pages) + 1);
}

u32 kvreg_plan_mrs(struct sg_table *sgt, unsigned int first_offset,
		   u32 page_shift, u32 pages_per_mr)
{
	return kvreg_plan_groups(sgt, first_offset, page_shift, pages_per_mr,
				 U64_MAX, NULL, NULL);
}

/*
 * Pages the MR starting at @va must hold to map the @left bytes after it
 * in one go, or @pages_per_mr when they need more than one MR. An MR only
 * as large as it must be costs the driver less to create.
 */
u32 kvreg_mr_alloc_pages(struct kvreg_dev *kdev, u64 va, u64 left,
			 u32 page_shift, u32 pages_per_mr)
{
	const u64 page_size = BIT_ULL(page_shift);
	u64 span = (ALIGN(va + left, page_size) -
		    ALIGN_DOWN(va, page_size)) >> page_shift;

	if (span >= pages_per_mr)
		return pages_per_mr;
	/* A full rxe table is what it over-reads: keep a spare entry. */
	if (kdev->page_list_overread && !(span % KVREG_RXE_BUFS_PER_MAP))
		span++;
	return span;
}
