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
	if (ret == -EINTR) {
		kvreg_set_error(err, KVREG_REASON_INTERRUPTED,
				KVREG_NO_DEVICE_INDEX);
		return ret;
	}
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

/* Folio chunks: 32 MiB of address space, 16 blocks of 2 MiB. */
#define KVREG_FOLIO_CHUNK	(KVREG_PIN_CHUNK << PAGE_SHIFT)
/* Pins one hugetlb chunk may take: its huge pages, a head and a tail. */
#define KVREG_FOLIO_CHUNK_PINS	((KVREG_FOLIO_CHUNK >> PMD_SHIFT) + 2)
/*
 * THP chunks per window: a THP chunk keeps room for a pin per base page
 * (its PTE-mapped parts are pinned page by page), so windows bound the
 * room to 8 chunks at a time (768 KiB), whatever the registration's size.
 */
#define KVREG_THP_WINDOW_CHUNKS	8

struct kvreg_folio_job {
	unsigned long start, end;	/* page-aligned range */
	unsigned long base;		/* start, down to a chunk boundary */
	unsigned int first_chunk;	/* the window's, from base */
	unsigned int gup_flags;
	bool hugetlb;
	unsigned long chunk_slots;	/* pins room per chunk */
	struct page **pins;		/* chunk_slots per window chunk */
	u32 *bytes;			/* what each pin covers */
	unsigned int *nr_pins;		/* per chunk of the window */
	unsigned long bad_addr;		/* as kvreg_pin_window's */
};

/*
 * Whether @page, pinned at @addr, is mapped there by a PMD, so that its
 * folio is mapped whole and contiguously over the 2 MiB block: then one
 * pin holds the block (a pinned THP cannot be split). Read the way
 * gup_fast reads page tables, with interrupts off: a concurrent munmap
 * frees a page table only after every CPU has had interrupts on (an IPI
 * or RCU-sched), so none goes away while it is read here.
 */
static bool kvreg_pmd_maps(struct mm_struct *mm, unsigned long addr,
			   struct page *page)
{
	unsigned long flags;
	bool mapped = false;
	pgd_t *pgdp;
	p4d_t *p4dp;
	pud_t *pudp;
	pmd_t pmd;

	local_irq_save(flags);
	pgdp = pgd_offset(mm, addr);
	if (pgd_none(READ_ONCE(*pgdp)) || pgd_bad(READ_ONCE(*pgdp)))
		goto out;
	p4dp = p4d_offset(pgdp, addr);
	if (p4d_none(READ_ONCE(*p4dp)) || p4d_bad(READ_ONCE(*p4dp)))
		goto out;
	pudp = pud_offset(p4dp, addr);
	if (pud_none(READ_ONCE(*pudp)) || pud_bad(READ_ONCE(*pudp)))
		goto out;
	pmd = READ_ONCE(*pmd_offset(pudp, addr));
	if (!pmd_present(pmd) || !pmd_trans_huge(pmd))
		goto out;
	mapped = page_to_pfn(page) ==
		 pmd_pfn(pmd) + ((addr & ~PMD_MASK) >> PAGE_SHIFT);
out:
	local_irq_restore(flags);
	return mapped;
}

/* Pin the huge pages under one chunk of the range, once each. */
static int kvreg_pin_hugetlb_chunk(struct kvreg_folio_job *job,
				   unsigned long va, unsigned long end,
				   unsigned long slot, unsigned int *n)
{
	int ret;

	while (va < end) {
		struct page **page = &job->pins[slot + *n];

		if (*n == job->chunk_slots)
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
 * THP: a 2 MiB block mapped by a PMD is pinned once, as a huge page is;
 * a block mapped by PTEs (a THP split, partly unmapped or never made) is
 * pinned page by page.
 */
static int kvreg_pin_thp_chunk(struct kvreg_folio_job *job, unsigned long va,
			       unsigned long end, unsigned long slot,
			       unsigned int *n)
{
	int ret, i;

	while (va < end) {
		unsigned long block_end = min(ALIGN(va + 1, PMD_SIZE), end);
		struct page **pins = &job->pins[slot + *n];
		u32 *bytes = &job->bytes[slot + *n];

		ret = pin_user_pages_fast(va, 1, job->gup_flags, pins);
		if (ret != 1)
			goto err;
		if (kvreg_pmd_maps(current->mm, va, pins[0])) {
			bytes[0] = block_end - va;
			(*n)++;
			va = block_end;
			continue;
		}
		bytes[0] = PAGE_SIZE;
		(*n)++;
		va += PAGE_SIZE;
		while (va < block_end) {
			ret = pin_user_pages_fast(va, (block_end - va) >>
						  PAGE_SHIFT, job->gup_flags,
						  &job->pins[slot + *n]);
			if (ret <= 0)
				goto err;
			for (i = 0; i < ret; i++)
				job->bytes[slot + (*n)++] = PAGE_SIZE;
			va += (unsigned long)ret << PAGE_SHIFT;
		}
	}
	return 0;
err:
	kvreg_note_bad_addr(&job->bad_addr, va);
	return ret ? ret : -EFAULT;
}

static int kvreg_pin_folio_chunk(void *ctx, unsigned int index)
{
	struct kvreg_folio_job *job = ctx;
	unsigned long chunk = job->first_chunk + index;
	unsigned long va = max(job->start,
			       job->base + chunk * KVREG_FOLIO_CHUNK);
	unsigned long end = min(job->end,
				job->base + (chunk + 1) * KVREG_FOLIO_CHUNK);
	unsigned long slot = index * job->chunk_slots;

	if (job->hugetlb)
		return kvreg_pin_hugetlb_chunk(job, va, end, slot,
					       &job->nr_pins[index]);
	return kvreg_pin_thp_chunk(job, va, end, slot, &job->nr_pins[index]);
}

/* The pins of a whole registration, window after window. */
struct kvreg_folio_pins {
	struct page **pins;
	u32 *bytes;
	unsigned long nr, room;
};

/* Append a window's chunks' pins, in address order. */
static int kvreg_folio_pins_add(struct kvreg_folio_pins *all,
				struct kvreg_folio_job *job,
				unsigned int nr_chunks)
{
	unsigned long want = all->nr;
	unsigned int c;

	for (c = 0; c < nr_chunks; c++)
		want += job->nr_pins[c];
	if (want > all->room) {
		unsigned long room = max(want, 2 * all->room);
		struct page **pins = kvmalloc_array(room, sizeof(*pins),
						    GFP_KERNEL);
		u32 *bytes = kvmalloc_array(room, sizeof(*bytes), GFP_KERNEL);

		if (!pins || !bytes) {
			kvfree(bytes);
			kvfree(pins);
			return -ENOMEM;
		}
		if (all->nr) {
			memcpy(pins, all->pins, all->nr * sizeof(*pins));
			memcpy(bytes, all->bytes, all->nr * sizeof(*bytes));
		}
		kvfree(all->pins);
		kvfree(all->bytes);
		all->pins = pins;
		all->bytes = bytes;
		all->room = room;
	}
	for (c = 0; c < nr_chunks; c++) {
		unsigned long slot = c * job->chunk_slots;

		memcpy(&all->pins[all->nr], &job->pins[slot],
		       job->nr_pins[c] * sizeof(*all->pins));
		memcpy(&all->bytes[all->nr], &job->bytes[slot],
		       job->nr_pins[c] * sizeof(*all->bytes));
		all->nr += job->nr_pins[c];
	}
	return 0;
}

static void kvreg_unpin_window_pins(struct kvreg_folio_job *job,
				    unsigned int nr_chunks)
{
	unsigned int c;

	for (c = 0; c < nr_chunks; c++)
		unpin_user_pages(&job->pins[c * job->chunk_slots],
				 job->nr_pins[c]);
}

/* The scatter table straight from the pins: count, then fill. */
static int kvreg_folio_sg_build(struct kvreg_reg *reg,
				struct kvreg_folio_pins *all,
				unsigned int max_segment)
{
	struct kvreg_sg_builder count = { .max_seg = max_segment };
	struct kvreg_sg_builder fill = { .max_seg = max_segment };
	unsigned long i;
	int ret;
	u64 t0 = kvreg_stage_begin();

	for (i = 0; i < all->nr; i++)
		kvreg_sg_add(&count, all->pins[i], all->bytes[i]);
	ret = sg_alloc_table(&reg->pinned.sgt, count.nents, GFP_KERNEL);
	if (!ret) {
		/* sg_free_append_table() frees by total_nents. */
		reg->pinned.total_nents = count.nents;
		fill.sg = reg->pinned.sgt.sgl;
		for (i = 0; i < all->nr; i++)
			kvreg_sg_add(&fill, all->pins[i], all->bytes[i]);
		WARN_ON_ONCE(fill.nents != count.nents);
	}
	kvreg_stage_end(KVREG_STAGE_SG_BUILD, t0);
	return ret;
}

/*
 * hugetlb and THP: a huge page is mapped whole, so one pin at an address
 * holds the folio from there to its end. Pin once per folio instead of
 * once per 4 KiB page, in chunks on several CPUs (a huge page never
 * touched is zeroed as it is pinned), and build the scatter table
 * straight from the folios: the cost follows folios, not pages. On the
 * THP path a block the page table maps by PTEs is pinned page by page.
 * Returns -EAGAIN, having pinned nothing, when hugetlb memory is no longer
 * hugetlb (it changed since kvreg_check_memory() looked).
 */
static int kvreg_pin_folios(struct kvreg_reg *reg, bool hugetlb,
			    unsigned int max_segment, struct kvreg_error *err)
{
	struct kvreg_folio_job job = {
		.start = reg->addr & PAGE_MASK,
		.gup_flags = reg->gup_flags,
		.hugetlb = hugetlb,
		/*
		 * A THP chunk has room for a pin per base page, but no more
		 * than the registration has: a small one must not pay for a
		 * vmalloc'ed window (a 2 MiB THP registration took 2.6x
		 * longer with room for a whole chunk).
		 */
		.chunk_slots = hugetlb ? KVREG_FOLIO_CHUNK_PINS :
			       min(KVREG_PIN_CHUNK, reg->nr_pages),
		.bad_addr = ULONG_MAX,
	};
	struct kvreg_folio_pins all = {};
	unsigned int nr_chunks, window, n;
	int ret = 0;

	job.end = job.start + (reg->nr_pages << PAGE_SHIFT);
	job.base = ALIGN_DOWN(job.start, KVREG_FOLIO_CHUNK);
	nr_chunks = (ALIGN(job.end, KVREG_FOLIO_CHUNK) - job.base) /
		    KVREG_FOLIO_CHUNK;
	window = hugetlb ? nr_chunks : min_t(unsigned int, nr_chunks,
					     KVREG_THP_WINDOW_CHUNKS);
	job.pins = kvmalloc_array(window * job.chunk_slots, sizeof(*job.pins),
				  GFP_KERNEL);
	job.bytes = kvmalloc_array(window * job.chunk_slots,
				   sizeof(*job.bytes), GFP_KERNEL);
	job.nr_pins = kvcalloc(window, sizeof(*job.nr_pins), GFP_KERNEL);
	if (!job.pins || !job.bytes || !job.nr_pins)
		goto err_nomem;	/* nothing pinned yet: @all is empty */

	for (; job.first_chunk < nr_chunks; job.first_chunk += n) {
		n = min(window, nr_chunks - job.first_chunk);
		memset(job.nr_pins, 0, window * sizeof(*job.nr_pins));
		ret = kvreg_parallel(n, kvreg_pin_folio_chunk, &job,
				     current->mm);
		if (!ret && kvreg_folio_pins_add(&all, &job, n))
			ret = -ENOMEM;
		if (ret) {
			kvreg_unpin_window_pins(&job, n);
			if (ret == -ENOMEM)
				goto err_nomem;
			if (ret != -EAGAIN)
				kvreg_pin_error(ret, job.bad_addr, err);
			goto err_unpin;
		}
	}
	if (kvreg_folio_sg_build(reg, &all, max_segment))
		goto err_nomem;
	reg->folio_pins = all.pins;
	reg->nr_folio_pins = all.nr;
	all.pins = NULL;
	goto out_free;

err_nomem:
	kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
			KVREG_NO_DEVICE_INDEX);
	ret = -ENOMEM;
err_unpin:
	if (all.nr)
		unpin_user_pages(all.pins, all.nr);
out_free:
	kvfree(all.bytes);
	kvfree(all.pins);
	kvfree(job.nr_pins);
	kvfree(job.bytes);
	kvfree(job.pins);
	return ret;
}

/*
 * THP is worth pinning a folio at a time when the caller asked for it
 * (MADV_HUGEPAGE on every VMA) or the first whole 2 MiB block of the
 * range is mapped by a PMD already (THP "always").
 */
static bool kvreg_thp_likely(struct kvreg_reg *reg)
{
	unsigned long block = ALIGN(reg->addr, PMD_SIZE);
	struct page *page;
	bool huge;

	if (reg->length < PMD_SIZE)
		return false;
	if (reg->thp_advised)
		return true;
	if (block + PMD_SIZE > reg->addr + reg->length)
		return false;
	/*
	 * A reference, not a pin: this only looks. It faults the block in
	 * as pinning would, for writing if the pin will be, so that it is
	 * not the shared zero page that is looked at.
	 */
	if (get_user_pages_fast(block, 1, reg->gup_flags & ~FOLL_LONGTERM,
				&page) != 1)
		return false;
	huge = kvreg_pmd_maps(current->mm, block, page);
	put_page(page);
	return huge;
}

static int kvreg_pin_pages(struct kvreg_reg *reg, unsigned int max_segment,
			   struct kvreg_error *err)
{
	unsigned long window_pages = min(reg->nr_pages, KVREG_PIN_WINDOW);
	unsigned int max_chunks = DIV_ROUND_UP(window_pages, KVREG_PIN_CHUNK);
	struct kvreg_pin_window w = {
		.gup_flags = reg->gup_flags,
		.bad_addr = ULONG_MAX,
	};
	unsigned long done = 0;
	unsigned int nr_chunks;
	int ret = 0;
	u64 t0;

	if (reg->all_hugetlb || kvreg_thp_likely(reg)) {
		ret = kvreg_pin_folios(reg, reg->all_hugetlb, max_segment,
				       err);
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

/**
 * kvreg_pin - pin a registration's range once, into reg->pinned
 * @reg: the registration; its range, access and memory kind are set
 * @max_segment: the longest run one table entry may hold
 * @err: the reason, on failure
 *
 * Builds the table of pinned runs and its marks (reg->run_marks). On
 * failure nothing is left pinned or allocated. Undone by kvreg_unpin().
 */
int kvreg_pin(struct kvreg_reg *reg, unsigned int max_segment,
	      struct kvreg_error *err)
{
	int ret = kvreg_pin_pages(reg, max_segment, err);

	if (ret)
		return ret;
	reg->run_marks = kvreg_mark_runs(&reg->pinned.sgt, false,
					 (u64)reg->nr_pages << PAGE_SHIFT);
	if (!reg->run_marks) {
		ret = -ENOMEM;
		kvreg_unpin(reg);
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
	}
	return ret;
}

/**
 * kvreg_unpin - undo kvreg_pin(): the marks, the pins (dirty where the
 * registration was writable), the table
 * @reg: a registration kvreg_pin() succeeded on
 */
void kvreg_unpin(struct kvreg_reg *reg)
{
	kvfree(reg->run_marks);
	reg->run_marks = NULL;
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
