// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pin a user buffer once, however many devices it is registered on, into
 * one scatter table of merged physically contiguous runs (as ib_umem_get
 * does), and unpin it a run at a time. Large buffers are pinned and
 * unpinned by several CPUs at once: faulting in and pinning are bound by
 * one atomic and one cache miss per page, so they scale with CPUs.
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "kvreg.h"

/*
 * Pages pinned per chunk (32 MiB of 4 KiB pages): big enough that a
 * helper's start-up is noise, small enough that two CPUs share 64 MiB.
 */
#define KVREG_PIN_CHUNK		8192UL
/* Pages pinned before they are appended to the table: 2 MiB of pointers. */
#define KVREG_PIN_WINDOW	(32 * KVREG_PIN_CHUNK)

struct kvreg_pin_window {
	unsigned long start;		/* user address of page 0 */
	unsigned long nr_pages;
	unsigned int gup_flags;
	struct page **pages;
	unsigned long *pinned;		/* per chunk, what it pinned */
	unsigned long bad_addr;		/* where a failed chunk stopped */
};

static int kvreg_pin_chunk(void *ctx, unsigned int chunk)
{
	struct kvreg_pin_window *w = ctx;
	unsigned long first = chunk * KVREG_PIN_CHUNK;
	unsigned long nr = min(KVREG_PIN_CHUNK, w->nr_pages - first);
	unsigned long *done = &w->pinned[chunk];
	int ret;

	while (*done < nr) {
		unsigned long page = first + *done;

		ret = pin_user_pages_fast(w->start + (page << PAGE_SHIFT),
					  nr - *done, w->gup_flags,
					  w->pages + page);
		if (ret <= 0) {
			WRITE_ONCE(w->bad_addr,
				   w->start + (page << PAGE_SHIFT));
			return ret ? ret : -EFAULT;
		}
		*done += ret;
	}
	return 0;
}

static void kvreg_unpin_window(struct kvreg_pin_window *w,
			       unsigned int nr_chunks)
{
	unsigned int c;

	for (c = 0; c < nr_chunks; c++)
		unpin_user_pages(w->pages + c * KVREG_PIN_CHUNK, w->pinned[c]);
}

/* Where an unpin chunk starts: a page inside a scatter entry. */
struct kvreg_unpin_start {
	struct scatterlist *sg;
	unsigned long page;
};

struct kvreg_unpin_job {
	struct kvreg_unpin_start *starts;
	unsigned long nr_pages;
	bool dirty;
};

/*
 * A run at a time: one call per contiguous range, not per page. Chunks
 * are counted in pages, not entries: one run may be most of the buffer.
 */
static int kvreg_unpin_chunk(void *ctx, unsigned int chunk)
{
	struct kvreg_unpin_job *job = ctx;
	unsigned long first = chunk * KVREG_PIN_CHUNK;
	unsigned long left = min(KVREG_PIN_CHUNK, job->nr_pages - first);
	struct scatterlist *sg = job->starts[chunk].sg;
	unsigned long page = job->starts[chunk].page;

	for (; left; sg = sg_next(sg), page = 0) {
		unsigned long n = min(left, (PAGE_ALIGN(sg->length) >>
					     PAGE_SHIFT) - page);

		unpin_user_page_range_dirty_lock(nth_page(sg_page(sg), page),
						 n, job->dirty);
		left -= n;
	}
	return 0;
}

static void kvreg_unpin_table(struct sg_table *sgt, unsigned long nr_pages,
			      bool dirty)
{
	struct kvreg_unpin_job job = { .nr_pages = nr_pages, .dirty = dirty };
	unsigned int nr_chunks = DIV_ROUND_UP(nr_pages, KVREG_PIN_CHUNK);
	unsigned long page = 0, next = 0;
	struct kvreg_unpin_start one;
	struct scatterlist *sg;
	unsigned int i;

	if (!nr_chunks)
		return;
	job.starts = nr_chunks == 1 ? &one :
		     kmalloc_array(nr_chunks, sizeof(*job.starts),
				   GFP_KERNEL | __GFP_NOWARN);
	/* No memory for the chunk starts is no reason not to unpin. */
	if (!job.starts) {
		for_each_sgtable_sg(sgt, sg, i) {
			unsigned long n = PAGE_ALIGN(sg->length) >> PAGE_SHIFT;

			unpin_user_page_range_dirty_lock(sg_page(sg), n, dirty);
		}
		return;
	}
	for_each_sgtable_sg(sgt, sg, i) {
		unsigned long end = page +
				    (PAGE_ALIGN(sg->length) >> PAGE_SHIFT);

		for (; next < end && next < nr_pages;
		     next += KVREG_PIN_CHUNK) {
			job.starts[next / KVREG_PIN_CHUNK].sg = sg;
			job.starts[next / KVREG_PIN_CHUNK].page = next - page;
		}
		page = end;
	}
	if (WARN_ON_ONCE(page != nr_pages)) {
		job.nr_pages = min(page, nr_pages);
		nr_chunks = DIV_ROUND_UP(job.nr_pages, KVREG_PIN_CHUNK);
	}
	kvreg_parallel(nr_chunks, kvreg_unpin_chunk, &job, NULL);
	if (job.starts != &one)
		kfree(job.starts);
}

static int kvreg_pin_error(int ret, unsigned long addr,
			   struct kvreg_error *err)
{
	if (ret == -EINTR)
		return ret;
	kvreg_set_error(err, ret == -ENOMEM ? KVREG_REASON_NO_KERNEL_MEMORY :
			KVREG_REASON_UNMAPPED_ADDRESS, KVREG_NO_DEVICE_INDEX);
	err->address = addr;
	return ret;
}

int kvreg_pin(struct kvreg_reg *reg, unsigned int max_segment,
	      struct kvreg_error *err)
{
	unsigned long window_pages = min(reg->nr_pages, KVREG_PIN_WINDOW);
	unsigned int max_chunks = DIV_ROUND_UP(window_pages, KVREG_PIN_CHUNK);
	struct kvreg_pin_window w = {
		.gup_flags = FOLL_LONGTERM |
			     (reg->writable ? FOLL_WRITE : 0),
	};
	unsigned long done = 0;
	unsigned int nr_chunks;
	int ret = 0;
	u64 t0;

	w.pages = kvmalloc_array(window_pages, sizeof(*w.pages), GFP_KERNEL);
	w.pinned = kcalloc(max_chunks, sizeof(*w.pinned), GFP_KERNEL);
	if (!w.pages || !w.pinned) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		ret = -ENOMEM;
		goto out_free;
	}

	while (done < reg->nr_pages) {
		w.start = (reg->addr & PAGE_MASK) + (done << PAGE_SHIFT);
		w.nr_pages = min(reg->nr_pages - done, window_pages);
		nr_chunks = DIV_ROUND_UP(w.nr_pages, KVREG_PIN_CHUNK);
		memset(w.pinned, 0, max_chunks * sizeof(*w.pinned));
		ret = kvreg_parallel(nr_chunks, kvreg_pin_chunk, &w,
				     current->mm);
		if (ret) {
			kvreg_unpin_window(&w, nr_chunks);
			kvreg_pin_error(ret, w.bad_addr, err);
			goto err_unpin;
		}
		t0 = kvreg_stage_begin();
		ret = sg_alloc_append_table_from_pages(&reg->pinned, w.pages,
						       w.nr_pages, 0,
						       w.nr_pages << PAGE_SHIFT,
						       max_segment,
						       reg->nr_pages - done -
						       w.nr_pages, GFP_KERNEL);
		kvreg_stage_end(KVREG_STAGE_SG_BUILD, t0);
		if (ret) {
			kvreg_unpin_window(&w, nr_chunks);
			kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
					KVREG_NO_DEVICE_INDEX);
			goto err_unpin;
		}
		done += w.nr_pages;
	}
	atomic64_add(reg->nr_pages, &kvreg_pinned_pages);
	goto out_free;

err_unpin:
	kvreg_unpin_table(&reg->pinned.sgt, done, false);
	sg_free_append_table(&reg->pinned);
	memset(&reg->pinned, 0, sizeof(reg->pinned));
out_free:
	kfree(w.pinned);
	kvfree(w.pages);
	return ret;
}

void kvreg_unpin(struct kvreg_reg *reg)
{
	/* The device may have written into any page it was allowed to. */
	kvreg_unpin_table(&reg->pinned.sgt, reg->nr_pages, reg->writable);
	sg_free_append_table(&reg->pinned);
	atomic64_sub(reg->nr_pages, &kvreg_pinned_pages);
}
