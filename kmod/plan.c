// SPDX-License-Identifier: GPL-2.0-only
/*
 * How many MRs a device needs for a registration, before any is created,
 * so that budgets are checked and charged exactly and up front.
 */
#include "kvreg.h"

/*
 * 2 MiB MR pages need every run boundary inside the buffer on a 2 MiB
 * boundary, and the buffer's virtual address congruent to its DMA address
 * modulo 2 MiB (the MR translates iova offsets within a page unchanged).
 */
u32 kvreg_pick_page_shift(struct kvreg_dev *kdev, struct kvreg_reg *reg,
			  struct sg_table *sgt)
{
	const u64 mask = BIT_ULL(KVREG_HUGE_SHIFT) - 1;
	u64 va = reg->addr & PAGE_MASK;
	u32 shift = KVREG_HUGE_SHIFT;
	struct scatterlist *sg;
	unsigned int i;

	if (!(kdev->page_size_cap & BIT_ULL(KVREG_HUGE_SHIFT)))
		shift = PAGE_SHIFT;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 dma = sg_dma_address(sg);

		/* Huge pages underneath, whatever page size this gets. */
		if (sg_dma_len(sg) >= BIT(KVREG_HUGE_SHIFT))
			reg->huge_backed = true;
		if (i == 0 ? (dma & mask) != (va & mask) : (dma & mask))
			shift = PAGE_SHIFT;
		if (i + 1 < sgt->nents && ((dma + sg_dma_len(sg)) & mask))
			shift = PAGE_SHIFT;
	}
	return shift;
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
 * Returns 0 when an MR cannot hold the two pages that need.
 */
u32 kvreg_plan_mrs(struct sg_table *sgt, unsigned int first_offset,
		   u32 page_shift, u32 pages_per_mr)
{
	const u64 page_size = BIT_ULL(page_shift);
	struct scatterlist *sg;
	u32 nr_mrs = 0, room = 0;
	unsigned int i;

	if (pages_per_mr < 2)
		return 0;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 start = sg_dma_address(sg) + (i ? 0 : first_offset);
		u64 end = sg_dma_address(sg) + sg_dma_len(sg);
		u64 pages = (ALIGN(end, page_size) -
			     ALIGN_DOWN(start, page_size)) >> page_shift;

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
	return nr_mrs;
}
