// SPDX-License-Identifier: GPL-2.0-only
/*
 * A registration on one device: DMA-map the shared pinned table, split it
 * into MRs no larger than the device's fast-registration page list, and
 * fast-register them on the device's kernel QP. Prepare and commit are
 * two steps so that what the MRs cost is known, and charged, in between.
 */
#include <linux/cgroup_rdma.h>
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
static void kvreg_free_mrs(struct kvreg_reg_dev *rd)
{
	while (rd->nr_mrs)
		if (rd->mrs[--rd->nr_mrs])
			ib_dereg_mr(rd->mrs[rd->nr_mrs]);
	kvfree(rd->mrs);
	rd->mrs = NULL;
}

static void kvreg_free_groups(struct kvreg_reg_dev *rd)
{
	kvfree(rd->groups);
	rd->groups = NULL;
	rd->nr_groups = 0;
}

static int kvreg_cg_charge(struct kvreg_reg_dev *rd, struct kvreg_error *err)
{
#ifdef CONFIG_CGROUP_RDMA
	struct kvreg_dev *kdev = rd->dev;
	int ret;

	/* One hca_object per MR, in the caller's cgroup, as verbs charges. */
	while (rd->cg_charged < rd->nr_mrs) {
		ret = rdmacg_try_charge(&rd->cg, &kdev->ibdev->cg_device,
					RDMACG_RESOURCE_HCA_OBJECT);
		if (ret) {
			kvreg_set_error(err, KVREG_REASON_RDMA_CGROUP,
					kdev->index);
			err->usage = rd->cg_charged;
			err->request = rd->nr_mrs;
			return ret;
		}
		rd->cg_charged++;
	}
#endif
	return 0;
}

static void kvreg_cg_uncharge(struct kvreg_reg_dev *rd)
{
#ifdef CONFIG_CGROUP_RDMA
	for (; rd->cg_charged; rd->cg_charged--)
		rdmacg_uncharge(rd->cg, &rd->dev->ibdev->cg_device,
				RDMACG_RESOURCE_HCA_OBJECT);
#endif
}

struct kvreg_map_job {
	struct kvreg_reg *reg;
	struct kvreg_reg_dev *rd;
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
	struct kvreg_reg_dev *rd = job->rd;
	struct kvreg_mr_group *g = &rd->groups[index];
	bool last = index + 1 == rd->nr_groups;
	u32 m = g->first_mr;
	u32 end_mr = last ? rd->planned_mrs : g[1].first_mr;
	u64 page_size = BIT_ULL(rd->page_shift);
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
		mr = ib_alloc_mr(rd->fdev->pd, IB_MR_TYPE_MEM_REG,
				 kvreg_mr_alloc_pages(rd->dev, va, left,
						      rd->page_shift,
						      job->mr_pages));
		kvreg_stage_end(KVREG_STAGE_ALLOC_MR_ONLY, t0);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		rd->mrs[m++] = mr;
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

/* Create and map every planned MR, a group per CPU at a time. */
static int kvreg_map_mrs(struct kvreg_reg *reg, struct kvreg_reg_dev *rd,
			 struct kvreg_error *err)
{
	struct kvreg_map_job job = {
		.reg = reg,
		.rd = rd,
		.mr_pages = kvreg_pages_per_mr(rd->dev, rd->page_shift),
	};
	int ret;

	rd->mrs = kvcalloc(rd->planned_mrs, sizeof(*rd->mrs), GFP_KERNEL);
	if (!rd->mrs) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				rd->dev->index);
		return -ENOMEM;
	}
	/* Every slot, so that a failure anywhere frees whatever was made. */
	rd->nr_mrs = rd->planned_mrs;
	ret = kvreg_parallel(rd->nr_groups, kvreg_map_group, &job, NULL);
	kvreg_free_groups(rd);
	if (ret) {
		kvreg_set_error(err, kvreg_driver_reason(ret), rd->dev->index);
		err->driver_errno = ret;
		err->page_shift = rd->page_shift;
		kvreg_free_mrs(rd);
	}
	return ret;
}

/* Fast-register every MR of @rd, KVREG_WR_BATCH at a time. */
static int kvreg_post_reg_wrs(struct kvreg_reg_dev *rd, int ib_access,
			      enum ib_wc_status *wc_status)
{
	struct kvreg_qp *q = &rd->fdev->qp;
	u32 batch = min_t(u32, rd->nr_mrs, KVREG_WR_BATCH);
	struct ib_reg_wr *wrs;
	u32 i, j, n;
	int ret = 0;

	wrs = kcalloc(batch, sizeof(*wrs), GFP_KERNEL);
	if (!wrs)
		return -ENOMEM;

	mutex_lock(&q->mutex);
	for (i = 0; i < rd->nr_mrs && !ret; i += n) {
		n = min_t(u32, rd->nr_mrs - i, KVREG_WR_BATCH);
		memset(wrs, 0, n * sizeof(*wrs));
		for (j = 0; j < n; j++) {
			struct ib_mr *mr = rd->mrs[i + j];

			wrs[j].wr.next = j + 1 < n ? &wrs[j + 1].wr : NULL;
			/* A fresh key each time: stale keys must not match. */
			ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
			wrs[j].wr.opcode = IB_WR_REG_MR;
			wrs[j].mr = mr;
			wrs[j].key = mr->rkey;
			wrs[j].access = ib_access;
		}
		ret = kvreg_post_chain(q, &wrs[0].wr, &wrs[n - 1].wr,
				       wc_status);
	}
	mutex_unlock(&q->mutex);
	kfree(wrs);
	return ret;
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
	kvreg_free_groups(rd);
	t0 = kvreg_stage_begin();
	kvreg_free_mrs(rd);
	kvreg_stage_end(KVREG_STAGE_DEREG_MR, t0);
	kvreg_cg_uncharge(rd);
	t0 = kvreg_stage_begin();
	ib_dma_unmap_sgtable_attrs(kdev->ibdev, &rd->sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&rd->sgt);
	kvreg_stage_end(KVREG_STAGE_DMA_UNMAP, t0);
	kvreg_dev_user_del(kdev, &rd->user);
	rd->mapped = false;
}

/* Device removal: the keys are revoked at once, the pages stay pinned. */
static void kvreg_reg_dev_remove(struct kvreg_dev_user *user)
{
	struct kvreg_reg_dev *rd = container_of(user, struct kvreg_reg_dev,
						user);

	lockdep_assert_held_write(&rd->dev->teardown_rwsem);
	kvreg_reg_dev_release(rd);
	kvreg_acct_uncharge_mrs(rd);
}

/*
 * First half of registering on a device: DMA-map the pinned pages and plan
 * the MRs (page size and count), so budgets can be charged exactly before
 * any device resource exists.
 */
int kvreg_reg_dev_prepare(struct kvreg_reg *reg, struct kvreg_reg_dev *rd,
			  struct kvreg_error *err)
{
	struct kvreg_dev *kdev = rd->dev;
	u32 shift, mr_pages;
	u64 group_pages;
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

	shift = kvreg_pick_page_shift(kdev, reg, &rd->sgt);
	rd->page_shift = shift;
	mr_pages = kvreg_pages_per_mr(kdev, shift);
	if (mr_pages < 2)
		goto err_too_large;
	group_pages = (u64)mr_pages * KVREG_MRS_PER_GROUP;
	rd->groups = kvmalloc_array(kvreg_max_groups(&rd->sgt, reg->nr_pages,
						     group_pages),
				    sizeof(*rd->groups), GFP_KERNEL);
	if (!rd->groups) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				kdev->index);
		ret = -ENOMEM;
		goto out_unlock;
	}
	rd->planned_mrs = kvreg_plan_groups(&rd->sgt, reg->addr, shift,
					    mr_pages, group_pages,
					    rd->groups, &rd->nr_groups);
	if (rd->planned_mrs)
		goto out_unlock;
	kvreg_free_groups(rd);
err_too_large:
	kvreg_set_error(err, KVREG_REASON_TOO_LARGE, kdev->index);
	err->limit = kdev->max_mr_size;
	err->request = reg->length;
	err->page_shift = rd->page_shift;
	ret = -ENOSPC;
out_unlock:
	up_read(&kdev->teardown_rwsem);
	return ret;
}

/* Second half: create the planned MRs, charge the cgroup, fast-register. */
int kvreg_reg_dev_commit(struct kvreg_reg *reg, struct kvreg_reg_dev *rd,
			 struct kvreg_error *err)
{
	struct kvreg_dev *kdev = rd->dev;
	enum ib_wc_status wc_status;
	u64 t0;
	int ret;

	down_read(&kdev->teardown_rwsem);
	if (kdev->dead || !rd->mapped) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, kdev->index);
		ret = -ENODEV;
		goto out_unlock;
	}
	t0 = kvreg_stage_begin();
	ret = kvreg_map_mrs(reg, rd, err);
	kvreg_stage_end(KVREG_STAGE_ALLOC_MR, t0);
	if (ret)
		goto out_unlock;
	ret = kvreg_cg_charge(rd, err);
	if (ret)
		goto err_mrs;
	t0 = kvreg_stage_begin();
	ret = kvreg_post_reg_wrs(rd, reg->ib_access, &wc_status);
	kvreg_stage_end(KVREG_STAGE_POST_REG, t0);
	if (ret) {
		kvreg_set_error(err, ret == -ENOMEM ?
				KVREG_REASON_NO_KERNEL_MEMORY :
				ret == -ENETDOWN ?
				KVREG_REASON_DEVICE_NOT_ACTIVE :
				KVREG_REASON_DEVICE_REFUSED, kdev->index);
		err->driver_errno = ret;
		err->wc_status = wc_status;
		err->page_shift = rd->page_shift;
		goto err_cg;
	}
	WRITE_ONCE(rd->live, true);
	up_read(&kdev->teardown_rwsem);
	return 0;

err_cg:
	kvreg_cg_uncharge(rd);
err_mrs:
	/* Deregistering also revokes whatever part of the chain completed. */
	kvreg_free_mrs(rd);
out_unlock:
	up_read(&kdev->teardown_rwsem);
	return ret;
}

/*
 * No LOCAL_INV first: ib_dereg_mr() revokes the keys itself and returns
 * only once the device can no longer use them, and no work request of
 * kvreg's can still hold them (a transfer holds a reference to both its
 * registrations until its last completion). Only then are the pages
 * unpinned.
 */
void kvreg_reg_dev_teardown(struct kvreg_reg_dev *rd)
{
	struct kvreg_dev *kdev = rd->dev;

	down_read(&kdev->teardown_rwsem);
	kvreg_reg_dev_release(rd);
	up_read(&kdev->teardown_rwsem);
	kvreg_acct_uncharge_mrs(rd);
}

/* The MR whose range holds @va; MRs are sorted by iova and contiguous. */
struct ib_mr *kvreg_reg_dev_find_mr(struct kvreg_reg_dev *rd, u64 va)
{
	u32 lo = 0, hi = rd->nr_mrs;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		struct ib_mr *mr = rd->mrs[mid];

		if (va < mr->iova)
			hi = mid;
		else if (va - mr->iova >= mr->length)
			lo = mid + 1;
		else
			return mr;
	}
	return NULL;
}
