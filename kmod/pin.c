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
	unsigned long bad_addr;		/* lowest address a chunk failed at */
};

/*
 * Chunks fail in any order: keep the lowest address, so the error names
 * the first bad page of the buffer, as a pin on one CPU would.
 */
static void kvreg_note_bad_addr(unsigned long *slot, unsigned long addr)
{
	unsigned long old = READ_ONCE(*slot);

	while (addr < old) {
		unsigned long seen = cmpxchg(slot, old, addr);

		if (seen == old)
			break;
		old = seen;
	}
}

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
			kvreg_note_bad_addr(&w->bad_addr,
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
 * then again into a table of that many. An entry cut by max_seg ends on a
 * 2 MiB physical boundary: cut anywhere else, a long run of huge pages
 * registered from an unaligned address would lose its 2 MiB MR pages.
 */
struct kvreg_sg_builder {
	struct scatterlist *sg;		/* entry being filled; NULL: count */
	unsigned long pfn_end;		/* first pfn after that entry */
	unsigned int len;		/* its length */
	unsigned int cap;		/* its most */
	unsigned int max_seg;
	unsigned int nents;
};

static unsigned int kvreg_sg_cap(const struct kvreg_sg_builder *b,
				 unsigned long pfn)
{
	if (!IS_ALIGNED(b->max_seg, BIT(KVREG_HUGE_SHIFT)))
		return b->max_seg;
	return b->max_seg - (PFN_PHYS(pfn) & (BIT(KVREG_HUGE_SHIFT) - 1));
}

static void kvreg_sg_add(struct kvreg_sg_builder *b, struct page *page,
			 unsigned long bytes)
{
	while (bytes) {
		unsigned long pfn = page_to_pfn(page);
		unsigned int n;

		if (b->nents && b->len < b->cap && pfn == b->pfn_end) {
			n = min_t(unsigned long, bytes, b->cap - b->len);
			b->len += n;
			if (b->sg)
				b->sg->length = b->len;
		} else {
			b->cap = kvreg_sg_cap(b, pfn);
			n = min_t(unsigned long, bytes, b->cap);
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

/* hugetlb chunks: 32 MiB of address space, 16 huge pages of 2 MiB. */
#define KVREG_FOLIO_CHUNK	(KVREG_PIN_CHUNK << PAGE_SHIFT)
/* Pins one chunk may take: its whole huge pages plus a head and a tail. */
#define KVREG_FOLIO_CHUNK_PINS	((KVREG_FOLIO_CHUNK >> PMD_SHIFT) + 2)

struct kvreg_folio_job {
	unsigned long start, end;	/* page-aligned range */
	unsigned long base;		/* start, down to a chunk boundary */
	unsigned int gup_flags;
	struct page **pins;		/* KVREG_FOLIO_CHUNK_PINS per chunk */
	u32 *bytes;			/* what each pin covers */
	unsigned int *nr_pins;		/* per chunk */
	unsigned long bad_addr;		/* as kvreg_pin_window's */
};

/* Pin the huge pages under one chunk of the range, once each. */
static int kvreg_pin_folio_chunk(void *ctx, unsigned int chunk)
{
	struct kvreg_folio_job *job = ctx;
	unsigned long va = max(job->start,
			       job->base + chunk * KVREG_FOLIO_CHUNK);
	unsigned long end = min(job->end,
				job->base + (chunk + 1) * KVREG_FOLIO_CHUNK);
	unsigned long slot = (unsigned long)chunk * KVREG_FOLIO_CHUNK_PINS;
	unsigned int *n = &job->nr_pins[chunk];
	int ret;

	while (va < end) {
		struct page **page = &job->pins[slot + *n];

		if (*n == KVREG_FOLIO_CHUNK_PINS)
			return -EAGAIN;		/* huge pages under 2 MiB */
		ret = pin_user_pages_fast(va, 1, job->gup_flags, page);
		if (ret != 1) {
			kvreg_note_bad_addr(&job->bad_addr, va);
			return ret ? ret : -EFAULT;
		}
		job->bytes[slot + *n] = min(kvreg_folio_tail(*page), end - va);
		va += job->bytes[slot + (*n)++];
		/* No longer hugetlb since it was checked: pin page by page. */
		if (!kvreg_page_hugetlb(*page))
			return -EAGAIN;
	}
	return 0;
}

/*
 * hugetlb: a huge page is mapped whole or not at all, so one pin of the
 * page at an address holds the folio from there to its end. Pin once per
 * folio instead of once per 4 KiB page, in chunks on several CPUs (a huge
 * page never touched is zeroed as it is pinned), and build the scatter
 * table straight from the folios: the cost follows folios, not pages.
 * Returns -EAGAIN, having pinned nothing, when the memory is no longer
 * hugetlb (it changed since kvreg_check_memory() looked).
 */
static int kvreg_pin_hugetlb(struct kvreg_reg *reg, unsigned int max_segment,
			     struct kvreg_error *err)
{
	struct kvreg_folio_job job = {
		.start = reg->addr & PAGE_MASK,
		.gup_flags = FOLL_LONGTERM | (reg->writable ? FOLL_WRITE : 0),
		.bad_addr = ULONG_MAX,
	};
	struct kvreg_sg_builder count = { .max_seg = max_segment };
	struct kvreg_sg_builder fill = { .max_seg = max_segment };
	unsigned long slots, i, n = 0;
	unsigned int nr_chunks, c;
	int ret;
	u64 t0;

	job.end = job.start + (reg->nr_pages << PAGE_SHIFT);
	job.base = ALIGN_DOWN(job.start, KVREG_FOLIO_CHUNK);
	nr_chunks = (ALIGN(job.end, KVREG_FOLIO_CHUNK) - job.base) /
		    KVREG_FOLIO_CHUNK;
	slots = (unsigned long)nr_chunks * KVREG_FOLIO_CHUNK_PINS;
	job.pins = kvmalloc_array(slots, sizeof(*job.pins), GFP_KERNEL);
	job.bytes = kvmalloc_array(slots, sizeof(*job.bytes), GFP_KERNEL);
	job.nr_pins = kvcalloc(nr_chunks, sizeof(*job.nr_pins), GFP_KERNEL);
	if (!job.pins || !job.bytes || !job.nr_pins) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		ret = -ENOMEM;
		goto out_free;
	}
	ret = kvreg_parallel(nr_chunks, kvreg_pin_folio_chunk, &job,
			     current->mm);
	/* The chunks' pins, in address order, at the front of the array. */
	for (c = 0; c < nr_chunks; c++) {
		unsigned long slot = (unsigned long)c * KVREG_FOLIO_CHUNK_PINS;

		memmove(&job.pins[n], &job.pins[slot],
			job.nr_pins[c] * sizeof(*job.pins));
		memmove(&job.bytes[n], &job.bytes[slot],
			job.nr_pins[c] * sizeof(*job.bytes));
		n += job.nr_pins[c];
	}
	if (ret) {
		if (ret != -EAGAIN)
			kvreg_pin_error(ret, job.bad_addr, err);
		goto err_unpin;
	}

	t0 = kvreg_stage_begin();
	/* Count the entries, then fill a table of that many. */
	for (i = 0; i < n; i++)
		kvreg_sg_add(&count, job.pins[i], job.bytes[i]);
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
	for (i = 0; i < n; i++)
		kvreg_sg_add(&fill, job.pins[i], job.bytes[i]);
	WARN_ON_ONCE(fill.nents != count.nents);
	kvreg_stage_end(KVREG_STAGE_SG_BUILD, t0);
	reg->folio_pins = job.pins;
	reg->nr_folio_pins = n;
	job.pins = NULL;
	goto out_free;

err_unpin:
	unpin_user_pages(job.pins, n);
out_free:
	kvfree(job.nr_pins);
	kvfree(job.bytes);
	kvfree(job.pins);
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
		.bad_addr = ULONG_MAX,
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
}
