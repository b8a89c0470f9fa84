// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pin a user buffer once, however many devices it is registered on, into
 * one scatter table of merged physically contiguous runs (as ib_umem_get
 * does), and unpin it a run at a time.
 */
#include <linux/mm.h>
#include <linux/sched.h>

#include "kvreg.h"

/* Pin in slices of one page of page pointers, as ib_umem_get does. */
#define KVREG_PIN_BATCH	(PAGE_SIZE / sizeof(struct page *))

static void kvreg_unpin_table(struct sg_table *sgt, bool dirty)
{
	struct scatterlist *sg;
	unsigned int i;

	/* A run at a time: one call per contiguous range, not per page. */
	for_each_sgtable_sg(sgt, sg, i)
		unpin_user_page_range_dirty_lock(sg_page(sg),
						 PAGE_ALIGN(sg->length) >>
						 PAGE_SHIFT, dirty);
}

int kvreg_pin(struct kvreg_reg *reg, unsigned int max_segment,
	      struct kvreg_error *err)
{
	unsigned long start = reg->addr & PAGE_MASK;
	unsigned long nr_pages = reg->nr_pages;
	unsigned int gup_flags = FOLL_LONGTERM;
	unsigned long done = 0;
	struct page **page_list;
	int pinned, ret;

	if (reg->writable)
		gup_flags |= FOLL_WRITE;

	page_list = (struct page **)__get_free_page(GFP_KERNEL);
	if (!page_list) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}

	while (done < nr_pages) {
		unsigned long batch = min_t(unsigned long, nr_pages - done,
					    KVREG_PIN_BATCH);

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
		pinned = pin_user_pages_fast(start + (done << PAGE_SHIFT),
					     batch, gup_flags, page_list);
		if (pinned <= 0) {
			ret = pinned ? pinned : -EFAULT;
			kvreg_set_error(err, ret == -ENOMEM ?
					KVREG_REASON_NO_KERNEL_MEMORY :
					KVREG_REASON_UNMAPPED_ADDRESS,
					KVREG_NO_DEVICE_INDEX);
			err->address = start + (done << PAGE_SHIFT);
			goto err_unpin;
		}
		ret = sg_alloc_append_table_from_pages(&reg->pinned, page_list,
						       pinned, 0,
						       (unsigned long)pinned <<
						       PAGE_SHIFT, max_segment,
						       nr_pages - done - pinned,
						       GFP_KERNEL);
		if (ret) {
			unpin_user_pages(page_list, pinned);
			kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
					KVREG_NO_DEVICE_INDEX);
			goto err_unpin;
		}
		done += pinned;
	}
	free_page((unsigned long)page_list);
	atomic64_add(nr_pages, &kvreg_pinned_pages);
	return 0;

err_unpin:
	kvreg_unpin_table(&reg->pinned.sgt, false);
	sg_free_append_table(&reg->pinned);
	memset(&reg->pinned, 0, sizeof(reg->pinned));
	free_page((unsigned long)page_list);
	return ret;
}

void kvreg_unpin(struct kvreg_reg *reg)
{
	/* The device may have written into any page it was allowed to. */
	kvreg_unpin_table(&reg->pinned.sgt, reg->writable);
	sg_free_append_table(&reg->pinned);
	atomic64_sub(reg->nr_pages, &kvreg_pinned_pages);
}
