// SPDX-License-Identifier: GPL-2.0-only
/*
 * Walking a registration's runs, the pinned ones or a device's DMA-mapped
 * ones, from the byte an operation starts at: a mark per 2 MiB stride
 * finds the run, then the runs are taken as they come. Pure: no lock, no
 * device; what the callers hold keeps the tables.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "kvreg.h"

static void kvreg_mark_run(struct kvreg_run_mark *marks, unsigned long nr,
			   unsigned long *m, struct scatterlist *sg, u64 start,
			   u64 len)
{
	while (*m < nr && ((u64)*m << KVREG_RUN_MARK_SHIFT) < start + len) {
		marks[*m].sg = sg;
		marks[*m].start = start;
		(*m)++;
	}
}

/**
 * kvreg_mark_runs - a mark per 2 MiB stride of a registration's span
 * @sgt: the pinned table, or a device's DMA-mapped copy of it
 * @dma: mark @sgt's DMA runs (sg_dma_len), not its pages
 * @span: bytes the table covers, from the page of the registration's
 *	address
 *
 * Return: the marks (struct kvreg_run_mark; kvfree() them), or NULL
 * without memory.
 */
struct kvreg_run_mark *kvreg_mark_runs(struct sg_table *sgt, bool dma,
				       u64 span)
{
	unsigned long nr = DIV_ROUND_UP(span, BIT_ULL(KVREG_RUN_MARK_SHIFT));
	struct kvreg_run_mark *marks;
	unsigned long m = 0;
	struct scatterlist *sg;
	u64 start = 0;
	unsigned int i;

	marks = kvmalloc_array(nr, sizeof(*marks), GFP_KERNEL_ACCOUNT);
	if (!marks)
		return NULL;
	if (dma) {
		for_each_sgtable_dma_sg(sgt, sg, i) {
			kvreg_mark_run(marks, nr, &m, sg, start,
				       sg_dma_len(sg));
			start += sg_dma_len(sg);
		}
	} else {
		for_each_sgtable_sg(sgt, sg, i) {
			kvreg_mark_run(marks, nr, &m, sg, start, sg->length);
			start += sg->length;
		}
	}
	/* The table covers the span: every stride has its run. */
	WARN_ON_ONCE(m != nr || start != span);
	return marks;
}

/**
 * kvreg_reg_dev_sges - the local side of a work request, from the mapping
 * @rd: a registration live on its device; teardown_rwsem held for read
 * @va: the user address of its first byte
 * @len: in: bytes wanted; out: bytes the entries cover, short when @max
 *	runs out first
 * @sge: room for @max entries
 * @max: entries at most, >= 1
 * @lkey: the local_dma_lkey of the PD the QP posting them lives in
 * @at: where this walk over @rd stood after its previous call, zeroed
 *	before the first; updated
 *
 * The entries address the DMA runs of @rd as they come, a run each (no
 * MR). The walk goes on from @at when @va is at or past it, as it is
 * for the work requests of one operation, which take @rd's runs in
 * order: a stride's mark would make each of them walk again up to the
 * 511 runs before it. Anywhere else, @va's mark finds the first run.
 *
 * Return: entries filled.
 */
u32 kvreg_reg_dev_sges(struct kvreg_reg_dev *rd, u64 va, u64 *len,
		       struct ib_sge *sge, u32 max, u32 lkey,
		       struct kvreg_run_mark *at)
{
	u64 off = va - (rd->reg->addr & PAGE_MASK), want = *len, got = 0;
	struct scatterlist *sg;
	u64 start;
	u32 n = 0;

	if (!at->sg || at->start > off)
		*at = rd->dma_marks[off >> KVREG_RUN_MARK_SHIFT];
	sg = at->sg;
	start = at->start;
	while (start + sg_dma_len(sg) <= off) {
		start += sg_dma_len(sg);
		sg = sg_next(sg);
	}
	while (got < want && n < max) {
		u64 in = off - start;
		u64 seg = min_t(u64, want - got, sg_dma_len(sg) - in);

		/* Adjacent runs are one entry: a single page each, else. */
		if (n && sge[n - 1].addr + sge[n - 1].length ==
			 sg_dma_address(sg) + in &&
		    (u64)sge[n - 1].length + seg <= U32_MAX) {
			sge[n - 1].length += seg;
		} else {
			sge[n].addr = sg_dma_address(sg) + in;
			sge[n].length = seg;
			sge[n].lkey = lkey;
			n++;
		}
		got += seg;
		off += seg;
		if (got < want) {
			start += sg_dma_len(sg);
			sg = sg_next(sg);
		}
	}
	at->sg = sg;
	at->start = start;
	*len = got;
	return n;
}
