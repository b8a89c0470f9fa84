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

/*
 * Builds a scatter table from runs of pages, merging physically
 * contiguous ones up to max_seg: first with no @sg, to count the entries,
 * then again into a table of that many.
 */
struct kvreg_sg_builder {
	struct scatterlist *sg;		/* entry being filled; NULL: count */
	unsigned long pfn_end;		/* first pfn after that entry */
	unsigned int len;		/* its length */
	unsigned int max_seg;
	unsigned int nents;
};

static void kvreg_sg_add(struct kvreg_sg_builder *b, struct page *page,
			 unsigned long bytes)
{
	while (bytes) {
		unsigned long pfn = page_to_pfn(page);
		unsigned int n;

		if (b->nents && b->len < b->max_seg && pfn == b->pfn_end) {
			n = min_t(unsigned long, bytes, b->max_seg - b->len);
			b->len += n;
			if (b->sg)
				b->sg->length = b->len;
		} else {
			n = min_t(unsigned long, bytes, b->max_seg);
			if (b->sg) {
				if (b->nents)
					b->sg = sg_next(b->sg);
				sg_set_page(b->sg, page, n, 0);
			}
			b->len = n;
			b->nents++;
		}
		b->pfn_end = pfn + (n >> PAGE_SHIFT);
		bytes -= n;
		page = nth_page(page, n >> PAGE_SHIFT);
	}
}

/* Bytes of @page's folio from @page to the folio's end. */
static unsigned long kvreg_folio_tail(struct page *page)
{
	struct folio *folio = page_folio(page);

	return (folio_nr_pages(folio) - folio_page_idx(folio, page)) <<
	       PAGE_SHIFT;
}

/*
 * hugetlb: a huge page is mapped whole or not at all, so one pin of the
 * page at an address holds the folio from there to its end. Pin once per
 * folio instead of once per 4 KiB page, and build the scatter table
 * straight from the folios: the cost follows folios, not pages. Returns
 * -EAGAIN, having pinned nothing, when the memory is no longer hugetlb
 * (it changed since kvreg_check_memory() looked): pin page by page then.
 */
static int kvreg_pin_hugetlb(struct kvreg_reg *reg, unsigned int max_segment,
			     struct kvreg_error *err)
{
	unsigned long va = reg->addr & PAGE_MASK;
	unsigned long end = va + (reg->nr_pages << PAGE_SHIFT);
	/* Huge pages are 2 MiB or more: whole ones, plus a head and tail. */
	unsigned long max_pins =
		(reg->nr_pages >> (PMD_SHIFT - PAGE_SHIFT)) + 2;
	unsigned int gup_flags = FOLL_LONGTERM |
				 (reg->writable ? FOLL_WRITE : 0);
	struct kvreg_sg_builder count = { .max_seg = max_segment };
	struct kvreg_sg_builder fill = { .max_seg = max_segment };
	unsigned long n = 0, i;
	struct page **pins;
	int ret;
	u64 t0;

	pins = kvmalloc_array(max_pins, sizeof(*pins), GFP_KERNEL);
	if (!pins) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	while (va < end) {
		struct folio *folio;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
		ret = pin_user_pages_fast(va, 1, gup_flags, &pins[n]);
		if (ret != 1) {
			ret = kvreg_pin_error(ret ? ret : -EFAULT, va, err);
			goto err_unpin;
		}
		folio = page_folio(pins[n++]);
		if (!folio_test_hugetlb(folio) || n == max_pins) {
			ret = -EAGAIN;
			goto err_unpin;
		}
		va += min(kvreg_folio_tail(pins[n - 1]), end - va);
	}

	t0 = kvreg_stage_begin();
	/* Count the entries, then fill a table of that many. */
	for (i = 0, va = reg->addr & PAGE_MASK; i < n; i++) {
		unsigned long bytes = min(kvreg_folio_tail(pins[i]), end - va);

		kvreg_sg_add(&count, pins[i], bytes);
		va += bytes;
	}
	ret = sg_alloc_table(&reg->pinned.sgt, count.nents, GFP_KERNEL);
	if (ret) {
		kvreg_stage_end(KVREG_STAGE_SG_BUILD, t0);
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		goto err_unpin;
	}
	/* sg_free_append_table() frees by total_nents. */
	reg->pinned.total_nents = count.nents;
	fill.sg = reg->pinned.sgt.sgl;
	for (i = 0, va = reg->addr & PAGE_MASK; i < n; i++) {
		unsigned long bytes = min(kvreg_folio_tail(pins[i]), end - va);

		kvreg_sg_add(&fill, pins[i], bytes);
		va += bytes;
	}
	WARN_ON_ONCE(fill.nents != count.nents);
	kvreg_stage_end(KVREG_STAGE_SG_BUILD, t0);
	reg->folio_pins = pins;
	reg->nr_folio_pins = n;
	return 0;

err_unpin:
	unpin_user_pages(pins, n);
	kvfree(pins);
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

	if (reg->all_hugetlb) {
		ret = kvreg_pin_hugetlb(reg, max_segment, err);
		if (ret != -EAGAIN)
			goto out_counted;
	}
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
	ret = 0;
	goto out_free;

err_unpin:
	kvreg_unpin_table(&reg->pinned.sgt, done, false);
	sg_free_append_table(&reg->pinned);
	memset(&reg->pinned, 0, sizeof(reg->pinned));
out_free:
	kfree(w.pinned);
	kvfree(w.pages);
out_counted:
	if (!ret)
		atomic64_add(reg->nr_pages, &kvreg_pinned_pages);
	return ret;
}

void kvreg_unpin(struct kvreg_reg *reg)
{
	/* The device may have written into any page it was allowed to. */
	if (reg->folio_pins) {
		unpin_user_pages_dirty_lock(reg->folio_pins, reg->nr_folio_pins,
					    reg->writable);
		kvfree(reg->folio_pins);
		reg->folio_pins = NULL;
	} else {
		kvreg_unpin_table(&reg->pinned.sgt, reg->nr_pages,
				  reg->writable);
	}
	sg_free_append_table(&reg->pinned);
	atomic64_sub(reg->nr_pages, &kvreg_pinned_pages);
}
