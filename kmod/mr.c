// SPDX-License-Identifier: GPL-2.0-only
/*
 * A registration on one device: DMA-map the shared pinned table and plan,
 * without making them, the MRs an export of it takes there (their page
 * size and number), so that they are charged at REGISTER. Prepare and
 * commit are two steps so that the plan is known, and charged, in
 * between. The local side of a work request is the mapping itself
 * (runs.c).
 *
 * An export's MRs (kvreg_mrs_make()) split the same mapping into MRs no
 * larger than the device's fast-registration page list, several CPUs
 * creating and mapping them, and fast-register them on the export's own
 * engine QP.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "kvreg.h"

/*
 * Every device gets its own copy of the scatter entries: DMA addresses
 * live in the entries, and two IOMMU domains give two sets of them.
 */
static int kvreg_copy_sgt(struct sg_table *dst, struct sg_table *src)
{
	struct scatterlist *s, *d;
	unsigned int i;
	int ret;

	ret = sg_alloc_table(dst, src->orig_nents, GFP_KERNEL);
	if (ret)
		return ret;
	d = dst->sgl;
	for_each_sgtable_sg(src, s, i) {
		sg_set_page(d, sg_page(s), s->length, s->offset);
		d = sg_next(d);
	}
	return 0;
}

/* Groups map in parallel: after a failure, any slot may still be NULL. */
void kvreg_mrs_free(struct ib_mr **mrs, u32 nr)
{
	while (nr)
		if (mrs[--nr])
			ib_dereg_mr(mrs[nr]);
	kvfree(mrs);
}

static int kvreg_rd_cg_charge(struct kvreg_reg_dev *rd,
			      struct kvreg_error *err)
{
#ifdef CONFIG_CGROUP_RDMA
	return kvreg_cg_charge(rd->dev, &rd->cg, &rd->cg_charged,
			       rd->planned_mrs, err);
#else
	return 0;
#endif
}

static void kvreg_rd_cg_uncharge(struct kvreg_reg_dev *rd)
{
#ifdef CONFIG_CGROUP_RDMA
	kvreg_cg_uncharge(rd->dev, rd->cg, &rd->cg_charged);
#endif
}

/*
 * An export's MRs, in its PD, over a registration's pages as one device
 * maps them, in groups planned by kvreg_plan_groups().
 */
struct kvreg_map_job {
	struct kvreg_reg *reg;
	struct kvreg_dev *dev;
	struct ib_pd *pd;
	struct ib_mr **mrs;		/* @nr_mrs slots */
	u32 nr_mrs;
	struct kvreg_mr_group *groups;
	u32 nr_groups;
	u32 page_shift;
	u32 mr_pages;
};

/*
 * Create and map the MRs of one group. A chunk that ends inside a scatter
 * entry leaves its last page to the next chunk (ib_sg_to_pages);
 * kvreg_plan_groups() counted that in.
 */
static int kvreg_map_group(void *ctx, unsigned int index)
{
	struct kvreg_map_job *job = ctx;
	struct kvreg_mr_group *g = &job->groups[index];
	bool last = index + 1 == job->nr_groups;
	u32 m = g->first_mr;
	u32 end_mr = last ? job->nr_mrs : g[1].first_mr;
	u64 page_size = BIT_ULL(job->page_shift);
	unsigned int sg_offset = index ? 0 : offset_in_page(g->va);
	struct scatterlist *sg = g->sg;
	int nents = g->nents;
	u64 va = g->va;
	u64 left = (last ? job->reg->addr + job->reg->length : g[1].va) - va;
	u64 t0;

	while (left) {
		struct ib_mr *mr;
		int mapped;

		if (WARN_ON_ONCE(m == end_mr || nents <= 0))
			return -EINVAL;
		t0 = kvreg_stage_begin();
		mr = ib_alloc_mr(job->pd, IB_MR_TYPE_MEM_REG,
				 kvreg_mr_alloc_pages(job->dev, va, left,
						      job->page_shift,
						      job->mr_pages));
		kvreg_stage_end(KVREG_STAGE_ALLOC_MR_ONLY, t0);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		job->mrs[m++] = mr;
		t0 = kvreg_stage_begin();
		mapped = ib_map_mr_sg(mr, sg, nents, &sg_offset, page_size);
		kvreg_stage_end(KVREG_STAGE_MAP_MR_SG, t0);
		if (mapped < 0 || (!mapped && !sg_offset))
			return mapped < 0 ? mapped : -EINVAL;
		/* The iova is the user's address, byte-granular as verbs. */
		mr->length = min(mr->length, left);
		mr->iova = va;
		va += mr->length;
		left -= mr->length;
		nents -= mapped;
		while (mapped--)
			sg = sg_next(sg);
	}
	WARN_ON_ONCE(m != end_mr);
	return 0;
}

/*
 * Create and map every MR @job plans, a group per CPU at a time, into a
 * new array of them at *@mrsp. On failure nothing is left.
 */
static int kvreg_map_job_run(struct kvreg_map_job *job, struct ib_mr ***mrsp,
			     struct kvreg_error *err)
{
	int ret;

	job->mrs = kvcalloc(job->nr_mrs, sizeof(*job->mrs), GFP_KERNEL);
	if (!job->mrs) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				job->dev->index);
		return -ENOMEM;
	}
	ret = kvreg_parallel(job->nr_groups, kvreg_map_group, job, NULL);
	if (ret) {
		kvreg_set_error(err, kvreg_driver_reason(ret), job->dev->index);
		err->driver_errno = ret;
		err->page_shift = job->page_shift;
		/* Every slot: a failure anywhere frees whatever was made. */
		kvreg_mrs_free(job->mrs, job->nr_mrs);
		return ret;
	}
	*mrsp = job->mrs;
	return 0;
}

/*
 * Fast-register @nr MRs of @q's PD, KVREG_WR_BATCH at a time. The QP's
 * lock may be held by another thread's chain for up to op_timeout_ms: a
 * fatal signal ends the wait for it, as it ends the wait for a chain.
 */
static int kvreg_post_reg_wrs(struct kvreg_qp *q, struct ib_mr **mrs, u32 nr,
			      int ib_access, enum ib_wc_status *wc_status)
{
	u32 batch = min_t(u32, nr, KVREG_WR_BATCH);
	struct ib_reg_wr *wrs;
	u32 i, j, n;
	int ret = 0;

	*wc_status = IB_WC_SUCCESS;
	wrs = kcalloc(batch, sizeof(*wrs), GFP_KERNEL);
	if (!wrs)
		return -ENOMEM;

	if (mutex_lock_killable(&q->mutex)) {
		kfree(wrs);
		return -EINTR;
	}
	for (i = 0; i < nr && !ret; i += n) {
		n = min_t(u32, nr - i, KVREG_WR_BATCH);
		memset(wrs, 0, n * sizeof(*wrs));
		for (j = 0; j < n; j++) {
			struct ib_mr *mr = mrs[i + j];

			wrs[j].wr.next = j + 1 < n ? &wrs[j + 1].wr : NULL;
			/* A fresh key each time: stale keys must not match. */
			ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
			wrs[j].wr.opcode = IB_WR_REG_MR;
			wrs[j].mr = mr;
			wrs[j].key = mr->rkey;
			wrs[j].access = ib_access;
		}
		ret = kvreg_post_chain(q, &wrs[0].wr, &wrs[n - 1].wr,
				       KVREG_WR_TIMEOUT, wc_status);
	}
	mutex_unlock(&q->mutex);
	kfree(wrs);
	return ret;
}

/*
 * Why kvreg_post_reg_wrs() failed, for REGISTER and EXPORT: a kill or
 * the deadline is the caller's to know as such, not as the device's
 * refusal.
 */
static void kvreg_reg_wrs_error(struct kvreg_error *err, int ret,
				enum ib_wc_status wc_status, u32 dev_index)
{
	u32 reason;

	switch (ret) {
	case -ENOMEM:
		reason = KVREG_REASON_NO_KERNEL_MEMORY;
		break;
	case -ENETDOWN:
		reason = KVREG_REASON_DEVICE_NOT_ACTIVE;
		break;
	case -EINTR:
		reason = KVREG_REASON_INTERRUPTED;
		break;
	case -ETIMEDOUT:
		reason = KVREG_REASON_OP_TIMEOUT;
		break;
	default:
		reason = KVREG_REASON_DEVICE_REFUSED;
	}
	kvreg_set_error(err, reason, dev_index);
	if (ret == -ETIMEDOUT)
		err->limit = jiffies_to_msecs(KVREG_WR_TIMEOUT);
	err->driver_errno = ret;
	err->wc_status = wc_status;
}

/*
 * Give back everything @rd holds on its device, whatever state it reached.
 * Caller holds teardown_rwsem: for read as the owner, for write on removal.
 */
static void kvreg_reg_dev_release(struct kvreg_reg_dev *rd)
{
	struct kvreg_dev *kdev = rd->dev;
	u64 t0;

	if (!rd->mapped)
		return;
	WRITE_ONCE(rd->live, false);
	kvreg_rd_cg_uncharge(rd);
	kvfree(rd->dma_marks);
	rd->dma_marks = NULL;
	t0 = kvreg_stage_begin();
	ib_dma_unmap_sgtable_attrs(kdev->ibdev, &rd->sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&rd->sgt);
	kvreg_stage_end(KVREG_STAGE_DMA_UNMAP, t0);
	kvreg_dev_user_del(kdev, &rd->user);
	rd->mapped = false;
}

/*
 * Device removal: the mapping goes at once (exports' MRs over it went
 * first), the pages stay pinned.
 */
static void kvreg_reg_dev_remove(struct kvreg_dev_user *user)
{
	struct kvreg_reg_dev *rd = container_of(user, struct kvreg_reg_dev,
						user);

	lockdep_assert_held_write(&rd->dev->teardown_rwsem);
	kvreg_reg_dev_release(rd);
	kvreg_acct_uncharge_mrs(rd);
}

/* MR pages of one MR, and of one group of them. */
static u32 kvreg_group_pages(struct kvreg_reg_dev *rd, u64 *group_pages)
{
	u32 mr_pages = kvreg_pages_per_mr(rd->dev, rd->page_shift);

	*group_pages = (u64)mr_pages * KVREG_MRS_PER_GROUP;
	return mr_pages;
}

/*
 * How many MRs an export makes over @rd, grouped as kvreg_plan() groups
 * them (a group starts a fresh MR): 0 when an MR cannot hold what one
 * must.
 */
static u32 kvreg_plan_count(struct kvreg_reg *reg, struct kvreg_reg_dev *rd)
{
	u64 group_pages;
	u32 mr_pages = kvreg_group_pages(rd, &group_pages);

	return kvreg_plan_groups(&rd->sgt, reg->addr, rd->page_shift,
				 mr_pages, group_pages, NULL, NULL);
}

/*
 * An export's MRs over @rd's DMA-mapped pages at @rd->page_shift: their
 * number in *@nr, and the groups CPUs map them in, a new array at
 * *@groups. -ENOSPC when an MR cannot hold what one must.
 */
static int kvreg_plan(struct kvreg_reg *reg, struct kvreg_reg_dev *rd,
		      struct kvreg_mr_group **groups, u32 *nr_groups, u32 *nr)
{
	u64 group_pages;
	u32 mr_pages = kvreg_group_pages(rd, &group_pages);

	if (mr_pages < 2)
		return -ENOSPC;
	*groups = kvmalloc_array(kvreg_max_groups(&rd->sgt, reg->nr_pages,
						  group_pages),
				 sizeof(**groups), GFP_KERNEL);
	if (!*groups)
		return -ENOMEM;
	*nr = kvreg_plan_groups(&rd->sgt, reg->addr, rd->page_shift, mr_pages,
				group_pages, *groups, nr_groups);
	if (*nr)
		return 0;
	kvfree(*groups);
	*groups = NULL;
	return -ENOSPC;
}

/*
 * First half of registering on a device: DMA-map the pinned pages, mark
 * the mapping's runs, and plan an export's MRs (page size and count), so
 * that budgets can be charged exactly.
 */
int kvreg_reg_dev_prepare(struct kvreg_reg *reg, struct kvreg_reg_dev *rd,
			  struct kvreg_error *err)
{
	struct kvreg_dev *kdev = rd->dev;
	u64 t0;
	int ret;

	down_read(&kdev->teardown_rwsem);
	if (kdev->dead) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, kdev->index);
		ret = -ENODEV;
		goto out_unlock;
	}
	if (!READ_ONCE(kdev->port_active)) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_NOT_ACTIVE,
				kdev->index);
		ret = -ENETDOWN;
		goto out_unlock;
	}
	t0 = kvreg_stage_begin();
	ret = kvreg_copy_sgt(&rd->sgt, &reg->pinned.sgt);
	if (ret) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				kdev->index);
		goto out_unlock;
	}
	ret = ib_dma_map_sgtable_attrs(kdev->ibdev, &rd->sgt,
				       DMA_BIDIRECTIONAL, 0);
	kvreg_stage_end(KVREG_STAGE_DMA_MAP, t0);
	if (ret) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REFUSED, kdev->index);
		err->driver_errno = ret;
		sg_free_table(&rd->sgt);
		goto out_unlock;
	}
	/* From here device removal undoes the mapping, if it comes first. */
	rd->mapped = true;
	rd->user.remove = kvreg_reg_dev_remove;
	kvreg_dev_user_add(kdev, &rd->user);

	rd->dma_marks = kvreg_mark_runs(&rd->sgt, true,
					(u64)reg->nr_pages << PAGE_SHIFT);
	if (!rd->dma_marks) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				kdev->index);
		ret = -ENOMEM;
		goto out_unlock;
	}
	rd->page_shift = kvreg_pick_page_shift(kdev, reg, &rd->sgt);
	rd->planned_mrs = kvreg_plan_count(reg, rd);
	if (rd->planned_mrs)
		goto out_unlock;
	kvreg_set_error(err, KVREG_REASON_TOO_LARGE, kdev->index);
	err->limit = kdev->max_mr_size;
	err->request = reg->length;
	err->page_shift = rd->page_shift;
	ret = -ENOSPC;
out_unlock:
	up_read(&kdev->teardown_rwsem);
	return ret;
}

/*
 * Second half, once the budgets took the plan: the rdma cgroup's share,
 * and the registration is usable on the device.
 */
int kvreg_reg_dev_commit(struct kvreg_reg_dev *rd, struct kvreg_error *err)
{
	struct kvreg_dev *kdev = rd->dev;
	int ret;

	down_read(&kdev->teardown_rwsem);
	if (kdev->dead || !rd->mapped) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, kdev->index);
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = kvreg_rd_cg_charge(rd, err);
	if (!ret)
		WRITE_ONCE(rd->live, true);
out_unlock:
	up_read(&kdev->teardown_rwsem);
	return ret;
}

/*
 * The registration's last put: exports hold a reference, so theirs MRs
 * over the mapping are gone, and no work request of kvreg's still uses
 * it (a transfer holds a reference to its registrations until its last
 * completion). Only then are the pages unmapped, and unpinned.
 */
void kvreg_reg_dev_teardown(struct kvreg_reg_dev *rd)
{
	struct kvreg_dev *kdev = rd->dev;

	down_read(&kdev->teardown_rwsem);
	kvreg_reg_dev_release(rd);
	up_read(&kdev->teardown_rwsem);
	kvreg_acct_uncharge_mrs(rd);
}

/*
 * An export's iovas are what its descriptor tells every importer, so not
 * the user's addresses: the same layout moved to a random base below
 * 2^62 (no chunk wraps), a multiple of the MR page size, so that each
 * page keeps its offset within the MR's pages and only that shows.
 */
static void kvreg_mrs_hide_iova(struct ib_mr **mrs, u32 nr_mrs,
				const struct kvreg_reg_dev *rd)
{
	u64 base = get_random_u64() & GENMASK_ULL(61, rd->page_shift);
	u64 delta = base - round_down(rd->reg->addr, BIT_ULL(rd->page_shift));
	u32 i;

	for (i = 0; i < nr_mrs; i++)
		mrs[i]->iova += delta;
}

/**
 * kvreg_mrs_make - an export's MRs over a registration's mapping
 * @rd: the registration on the device, live; teardown_rwsem held for read
 * @pd: the export's PD there
 * @ib_access: the access the export grants
 * @mrsp: out: a new array of @rd->planned_mrs MRs
 * @err: the reason, on failure
 *
 * As many MRs as REGISTER planned, over @rd's DMA-mapped pages (nothing
 * is pinned or mapped again), at hidden iovas, in @pd, fast-registered
 * with @ib_access on @pd's engine. The caller charged them. On failure
 * nothing is left.
 *
 * Return: 0 or -errno.
 */
int kvreg_mrs_make(struct kvreg_reg_dev *rd, struct kvreg_file_dev *pd,
		   int ib_access, struct ib_mr ***mrsp,
		   struct kvreg_error *err)
{
	struct kvreg_map_job job = {
		.reg = rd->reg,
		.dev = rd->dev,
		.pd = pd->pd,
		.page_shift = rd->page_shift,
		.mr_pages = kvreg_pages_per_mr(rd->dev, rd->page_shift),
	};
	enum ib_wc_status wc_status;
	struct ib_mr **mrs;
	u64 t0;
	int ret;

	ret = kvreg_plan(rd->reg, rd, &job.groups, &job.nr_groups,
			 &job.nr_mrs);
	/* The same table, shift and device: the plan cannot differ. */
	if (!ret && WARN_ON_ONCE(job.nr_mrs != rd->planned_mrs))
		ret = -EINVAL;
	if (ret) {
		kvfree(job.groups);
		kvreg_set_error(err, ret == -ENOMEM ?
				KVREG_REASON_NO_KERNEL_MEMORY :
				KVREG_REASON_DEVICE_REFUSED, rd->dev->index);
		err->driver_errno = ret;
		return ret;
	}
	t0 = kvreg_stage_begin();
	ret = kvreg_map_job_run(&job, &mrs, err);
	kvreg_stage_end(KVREG_STAGE_ALLOC_MR, t0);
	kvfree(job.groups);
	if (ret)
		return ret;
	kvreg_mrs_hide_iova(mrs, job.nr_mrs, rd);
	t0 = kvreg_stage_begin();
	ret = kvreg_post_reg_wrs(&pd->qp, mrs, job.nr_mrs, ib_access,
				 &wc_status);
	kvreg_stage_end(KVREG_STAGE_POST_REG, t0);
	if (ret) {
		kvreg_reg_wrs_error(err, ret, wc_status, rd->dev->index);
		kvreg_mrs_free(mrs, job.nr_mrs);
		return ret;
	}
	*mrsp = mrs;
	return 0;
}
