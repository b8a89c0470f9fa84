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

static void kvreg_free_mrs(struct kvreg_reg_dev *rd)
{
	while (rd->nr_mrs)
		ib_dereg_mr(rd->mrs[--rd->nr_mrs]);
	kvfree(rd->mrs);
	rd->mrs = NULL;
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

/* ib_alloc_mr() failures that mean the device ran out, not a bug. */
static u32 kvreg_driver_reason(int ret)
{
	return ret == -ENOMEM || ret == -ENOSPC || ret == -EAGAIN ?
	       KVREG_REASON_DEVICE_EXHAUSTED : KVREG_REASON_DEVICE_REFUSED;
}

/*
 * Map the whole buffer into the MRs planned for it. A chunk that ends
 * inside a scatter entry leaves its last page to the next chunk
 * (ib_sg_to_pages); kvreg_plan_mrs() counted that in.
 */
static int kvreg_map_mrs(struct kvreg_reg *reg, struct kvreg_reg_dev *rd,
			 struct kvreg_error *err)
{
	struct kvreg_dev *kdev = rd->dev;
	u64 page_size = BIT_ULL(rd->page_shift);
	u32 mr_pages = kvreg_pages_per_mr(kdev, rd->page_shift);
	unsigned int sg_offset = offset_in_page(reg->addr);
	struct scatterlist *sg = rd->sgt.sgl;
	int nents = rd->sgt.nents;
	u64 va = reg->addr, left = reg->length;
	int ret;

	rd->mrs = kvcalloc(rd->planned_mrs, sizeof(*rd->mrs), GFP_KERNEL);
	if (!rd->mrs) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				kdev->index);
		return -ENOMEM;
	}

	while (left) {
		struct ib_mr *mr;
		int mapped;

		if (WARN_ON_ONCE(rd->nr_mrs == rd->planned_mrs ||
				 nents <= 0)) {
			ret = -EINVAL;
			goto err_refused;
		}
		mr = ib_alloc_mr(kdev->pd, IB_MR_TYPE_MEM_REG, mr_pages);
		if (IS_ERR(mr)) {
			ret = PTR_ERR(mr);
			goto err_refused;
		}
		rd->mrs[rd->nr_mrs++] = mr;
		mapped = ib_map_mr_sg(mr, sg, nents, &sg_offset, page_size);
		if (mapped < 0 || (!mapped && !sg_offset)) {
			ret = mapped < 0 ? mapped : -EINVAL;
			goto err_refused;
		}
		/* The iova is the user's address, byte-granular as verbs. */
		mr->length = min(mr->length, left);
		mr->iova = va;
		va += mr->length;
		left -= mr->length;
		nents -= mapped;
		while (mapped--)
			sg = sg_next(sg);
	}
	WARN_ON_ONCE(rd->nr_mrs != rd->planned_mrs);
	return 0;

err_refused:
	kvreg_set_error(err, kvreg_driver_reason(ret), kdev->index);
	err->driver_errno = ret;
	err->page_shift = rd->page_shift;
	kvreg_free_mrs(rd);
	return ret;
}

/* Fast-register (or invalidate) every MR of @rd, KVREG_WR_BATCH at a time. */
static int kvreg_post_mr_wrs(struct kvreg_reg_dev *rd, int ib_access,
			     bool invalidate, enum ib_wc_status *wc_status)
{
	struct kvreg_dev *kdev = rd->dev;
	u32 batch = min_t(u32, rd->nr_mrs, KVREG_WR_BATCH);
	struct ib_reg_wr *wrs;
	u32 i, j, n;
	int ret = 0;

	wrs = kcalloc(batch, sizeof(*wrs), GFP_KERNEL);
	if (!wrs)
		return -ENOMEM;

	mutex_lock(&kdev->qp_mutex);
	for (i = 0; i < rd->nr_mrs && !ret; i += n) {
		n = min_t(u32, rd->nr_mrs - i, KVREG_WR_BATCH);
		memset(wrs, 0, n * sizeof(*wrs));
		for (j = 0; j < n; j++) {
			struct ib_mr *mr = rd->mrs[i + j];

			wrs[j].wr.next = j + 1 < n ? &wrs[j + 1].wr : NULL;
			if (invalidate) {
				wrs[j].wr.opcode = IB_WR_LOCAL_INV;
				wrs[j].wr.ex.invalidate_rkey = mr->rkey;
				continue;
			}
			/* A fresh key each time: stale keys must not match. */
			ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
			wrs[j].wr.opcode = IB_WR_REG_MR;
			wrs[j].mr = mr;
			wrs[j].key = mr->rkey;
			wrs[j].access = ib_access;
		}
		ret = kvreg_post_chain(kdev, &wrs[0].wr, &wrs[n - 1].wr,
				       wc_status);
	}
	mutex_unlock(&kdev->qp_mutex);
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

	if (!rd->mapped)
		return;
	WRITE_ONCE(rd->live, false);
	kvreg_free_mrs(rd);
	kvreg_cg_uncharge(rd);
	ib_dma_unmap_sgtable_attrs(kdev->ibdev, &rd->sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&rd->sgt);
	spin_lock(&kdev->mrs_lock);
	list_del_init(&rd->dev_node);
	spin_unlock(&kdev->mrs_lock);
	rd->mapped = false;
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
	u32 shift;
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
	ret = kvreg_copy_sgt(&rd->sgt, &reg->pinned.sgt);
	if (ret) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				kdev->index);
		goto out_unlock;
	}
	ret = ib_dma_map_sgtable_attrs(kdev->ibdev, &rd->sgt,
				       DMA_BIDIRECTIONAL, 0);
	if (ret) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REFUSED, kdev->index);
		err->driver_errno = ret;
		sg_free_table(&rd->sgt);
		goto out_unlock;
	}
	/* From here device removal undoes the mapping, if it comes first. */
	rd->mapped = true;
	spin_lock(&kdev->mrs_lock);
	list_add_tail(&rd->dev_node, &kdev->mrs);
	spin_unlock(&kdev->mrs_lock);

	shift = kvreg_pick_page_shift(kdev, reg, &rd->sgt);
	rd->page_shift = shift;
	rd->planned_mrs = kvreg_plan_mrs(&rd->sgt, offset_in_page(reg->addr),
					 shift,
					 kvreg_pages_per_mr(kdev, shift));
	if (!rd->planned_mrs) {
		kvreg_set_error(err, KVREG_REASON_TOO_LARGE, kdev->index);
		err->limit = kdev->max_mr_size;
		err->request = reg->length;
		err->page_shift = rd->page_shift;
		ret = -ENOSPC;
	}
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
	int ret;

	down_read(&kdev->teardown_rwsem);
	if (kdev->dead || !rd->mapped) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, kdev->index);
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = kvreg_map_mrs(reg, rd, err);
	if (ret)
		goto out_unlock;
	ret = kvreg_cg_charge(rd, err);
	if (ret)
		goto err_mrs;
	ret = kvreg_post_mr_wrs(rd, reg->ib_access, false, &wc_status);
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

void kvreg_reg_dev_teardown(struct kvreg_reg_dev *rd)
{
	struct kvreg_dev *kdev = rd->dev;
	enum ib_wc_status wc_status = IB_WC_SUCCESS;

	down_read(&kdev->teardown_rwsem);
	/*
	 * Invalidate through the QP first so the keys die in order with
	 * earlier work; ib_dereg_mr revokes them regardless, so a failure
	 * here only costs that ordering.
	 */
	if (rd->live && kvreg_post_mr_wrs(rd, 0, true, &wc_status))
		dev_dbg(&kdev->ibdev->dev,
			"kvreg: LOCAL_INV failed (status %d)\n", wc_status);
	kvreg_reg_dev_release(rd);
	up_read(&kdev->teardown_rwsem);
	kvreg_acct_uncharge_mrs(rd);
}

void kvreg_reg_dev_revoke(struct kvreg_reg_dev *rd)
{
	lockdep_assert_held_write(&rd->dev->teardown_rwsem);
	kvreg_reg_dev_release(rd);
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
