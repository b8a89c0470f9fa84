/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the kernels kvreg builds on differ (Debian's 5.10, 6.1, 6.12 and
 * 7.2 are tested), and what kvreg does on each side. Every difference is
 * decided by a feature probe (probes/NAME.c, run by Kbuild.probes at build
 * time, answered in kvreg_probes.h as KVREG_HAVE_NAME), never by a version
 * number: distributions backport, and a version says nothing about them.
 * The rest of kvreg is written against the newest interfaces; the stand-ins
 * below give the older kernels the same ones. Where one form works on
 * every kernel, kvreg uses it and needs no probe: shmem is told by its
 * superblock (vma.c: shmem_mapping() is unexported on 5.10), and the
 * connection workqueue is unbound (conn.c: 7.2 warns at one that names
 * no kind).
 */
#ifndef KVREG_COMPAT_H
#define KVREG_COMPAT_H

#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include "kvreg_probes.h"

/*
 * sg_append_table: 5.15 turned the chaining form of
 * __sg_alloc_table_from_pages() (5.10: a table built by appends, the last
 * entry passed back in) into struct sg_append_table. 5.10 counts allocated
 * entries in sgt.orig_nents and used ones in sgt.nents; from 5.15 the
 * allocated count is total_nents and sgt.orig_nents the used one, which is
 * what kvreg reads. The stand-in keeps the 5.15 meaning between calls.
 */
#ifndef KVREG_HAVE_SG_APPEND_TABLE
struct sg_append_table {
	struct sg_table sgt;
	struct scatterlist *prv;
	unsigned int total_nents;
};

static inline int
sg_alloc_append_table_from_pages(struct sg_append_table *table,
				 struct page **pages, unsigned int n_pages,
				 unsigned int offset, unsigned long size,
				 unsigned int max_segment,
				 unsigned int left_pages, gfp_t gfp)
{
	struct sg_table *sgt = &table->sgt;
	struct scatterlist *last;

	sgt->nents = sgt->orig_nents;
	sgt->orig_nents = table->total_nents;
	last = __sg_alloc_table_from_pages(sgt, pages, n_pages, offset, size,
					   max_segment, table->prv, left_pages,
					   gfp);
	table->total_nents = sgt->orig_nents;
	sgt->orig_nents = sgt->nents;
	sgt->nents = 0;
	if (IS_ERR(last))
		return PTR_ERR(last);
	table->prv = last;
	return 0;
}

static inline void sg_free_append_table(struct sg_append_table *table)
{
	table->sgt.orig_nents = table->total_nents;
	sg_free_table(&table->sgt);
}
#endif

/*
 * nth_page(): gone in 7.2, where the pages of one physically contiguous
 * range are contiguous in the memory map too; before, it stepped through
 * the memory map's sections (and is plain addition on x86-64's vmemmap).
 */
#ifndef KVREG_HAVE_NTH_PAGE
#define nth_page(page, n)	((page) + (n))
#endif

/*
 * kmap_local_page(): 5.11. Before it, on a kernel without highmem (every
 * 64-bit one, where kvreg is built), a page's mapping is its address in
 * the direct map; the older kmap calls are what checkpatch refuses.
 */
#ifndef KVREG_HAVE_KMAP_LOCAL_PAGE
#ifdef CONFIG_HIGHMEM
#error "kvreg needs kmap_local_page() (5.11) on a kernel with highmem"
#endif
static inline void *kmap_local_page(struct page *page)
{
	return page_address(page);
}

#define kunmap_local(addr)	((void)(addr))
#endif

/*
 * unpin_user_page_range_dirty_lock(): 5.12. Before it, a range is unpinned
 * a page at a time.
 */
#ifndef KVREG_HAVE_UNPIN_USER_PAGE_RANGE_DIRTY_LOCK
static inline void unpin_user_page_range_dirty_lock(struct page *page,
						    unsigned long npages,
						    bool make_dirty)
{
	unsigned long i;

	for (i = 0; i < npages; i++) {
		struct page *p = nth_page(page, i);

		unpin_user_pages_dirty_lock(&p, 1, make_dirty);
	}
}
#endif

/*
 * Folios: page_folio() and folio_test_hugetlb() are 5.16, folio_page_idx()
 * 6.x. Before them, a huge page is a compound page: its head, its order and
 * PageHuge() say the same.
 */
#ifdef KVREG_HAVE_FOLIO_PAGE_IDX
/* Bytes of @page's folio from @page to the folio's end. */
static inline unsigned long kvreg_folio_tail(struct page *page)
{
	struct folio *folio = page_folio(page);

	return (folio_nr_pages(folio) - folio_page_idx(folio, page)) <<
	       PAGE_SHIFT;
}

static inline bool kvreg_page_hugetlb(struct page *page)
{
	return folio_test_hugetlb(page_folio(page));
}
#else
static inline unsigned long kvreg_folio_tail(struct page *page)
{
	struct page *head = compound_head(page);

	return (compound_nr(head) - (page - head)) << PAGE_SHIFT;
}

static inline bool kvreg_page_hugetlb(struct page *page)
{
	return PageHuge(compound_head(page));
}
#endif

/*
 * ib_dma_map_sgtable_attrs() and its unmap: 5.15. Before them, the table's
 * entries are mapped as a list, and the mapped count kept where the
 * sg_table form keeps it (nents).
 */
#ifndef KVREG_HAVE_IB_DMA_MAP_SGTABLE_ATTRS
static inline int ib_dma_map_sgtable_attrs(struct ib_device *dev,
					   struct sg_table *sgt,
					   enum dma_data_direction direction,
					   unsigned long dma_attrs)
{
	int nents = ib_dma_map_sg_attrs(dev, sgt->sgl, sgt->orig_nents,
					direction, dma_attrs);

	if (nents <= 0)
		return -EIO;
	sgt->nents = nents;
	return 0;
}

static inline void ib_dma_unmap_sgtable_attrs(struct ib_device *dev,
					      struct sg_table *sgt,
					      enum dma_data_direction direction,
					      unsigned long dma_attrs)
{
	ib_dma_unmap_sg_attrs(dev, sgt->sgl, sgt->orig_nents, direction,
			      dma_attrs);
}
#endif

/*
 * Charging to a memory cgroup other than the caller's, from a task (a CM
 * callback's or a work item's): set_active_memcg()'s task half, which is
 * the same on every kernel. Its interrupt half names int_active_memcg,
 * which 5.10 does not export, so the inline itself cannot be used there.
 */
#ifdef CONFIG_MEMCG
static inline struct mem_cgroup *kvreg_memcg_get_current(void)
{
	return get_mem_cgroup_from_mm(current->mm);
}

static inline void kvreg_memcg_put(struct mem_cgroup *memcg)
{
	if (memcg)
		mem_cgroup_put(memcg);
}

static inline struct mem_cgroup *kvreg_charge_to(struct mem_cgroup *memcg)
{
	struct mem_cgroup *old = current->active_memcg;

	WARN_ON_ONCE(!in_task());
	current->active_memcg = memcg;
	return old;
}
#else
static inline struct mem_cgroup *kvreg_memcg_get_current(void)
{
	return NULL;
}

static inline void kvreg_memcg_put(struct mem_cgroup *memcg)
{
}

static inline struct mem_cgroup *kvreg_charge_to(struct mem_cgroup *memcg)
{
	return NULL;
}
#endif

#endif /* KVREG_COMPAT_H */
