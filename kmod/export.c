// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exports: a registration made reachable through one endpoint, and only
 * through it. The first EXPORT of a registration through an endpoint
 * draws a secret for it and fast-registers its pages, as MRs
 * in a PD of the export's own on each device the endpoint listens on,
 * with the remote access it was registered with. A connection that
 * presents that secret lives in that PD, and so reaches those MRs and
 * nothing else of the process: not the endpoint's other exports, whose
 * rkeys differ from these by little more than the index, and not this
 * registration's next export, should it be revoked and exported again.
 * The pages are not pinned or DMA-mapped again: the new MRs map the
 * registration's own DMA-mapped table, which the export holds by a
 * reference.
 *
 * Revoking (UNEXPORT, DEREGISTER, UNLISTEN, close, device removal)
 * deregisters those MRs: ib_dereg_mr() returns once the device refuses
 * their keys, as nvme-rdma and RDS rely on, so a peer's operation that
 * comes after fails with a remote access error, and none can reach the
 * pages once the registration unpins them.
 */
#include <crypto/algapi.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "kvreg.h"

/* The bucket of a secret: its first bytes, random already. */
static u32 kvreg_secret_hash(const u8 *secret)
{
	u32 h;

	memcpy(&h, secret, sizeof(h));
	return h;
}

static int kvreg_ed_cg_charge(struct kvreg_export_dev *ed,
			      struct kvreg_error *err)
{
#ifdef CONFIG_CGROUP_RDMA
	return kvreg_cg_charge(ed->rd->dev, &ed->cg, &ed->cg_charged,
			       ed->rd->planned_mrs, err);
#else
	return 0;
#endif
}

static void kvreg_ed_cg_uncharge(struct kvreg_export_dev *ed)
{
#ifdef CONFIG_CGROUP_RDMA
	kvreg_cg_uncharge(ed->rd->dev, ed->cg, &ed->cg_charged);
#endif
}

/*
 * The keys go, then what they cost. Under teardown_rwsem: for read as
 * the owner, for write on device removal.
 */
static void kvreg_export_dev_release(struct kvreg_export_dev *ed)
{
	struct kvreg_dev *kdev = ed->rd->dev;
	u64 t0;

	if (!ed->live)
		return;
	WRITE_ONCE(ed->live, false);
	kvreg_dev_user_del(kdev, &ed->user);
	t0 = kvreg_stage_begin();
	kvreg_mrs_free(ed->mrs, ed->nr_mrs);
	kvreg_stage_end(KVREG_STAGE_DEREG_MR, t0);
	ed->mrs = NULL;
	kvreg_ed_cg_uncharge(ed);
	kvreg_acct_uncharge_dev_mrs(ed->ex->reg->km, kdev, ed->nr_mrs);
}

/* Device removal, before the registration's MRs and the PD go. */
static void kvreg_export_dev_remove(struct kvreg_dev_user *user)
{
	struct kvreg_export_dev *ed =
		container_of(user, struct kvreg_export_dev, user);

	lockdep_assert_held_write(&ed->rd->dev->teardown_rwsem);
	kvreg_export_dev_release(ed);
}

/*
 * Under the endpoint's mutex: @ex's PD on @kdev, with a reference. A PD
 * that a revoked export left with no connection in it holds nothing but
 * its idle engine: it serves as well as a new one, without making a QP.
 */
static struct kvreg_file_dev *kvreg_export_pd_get(struct kvreg_exported *ex,
						  struct kvreg_dev *kdev,
						  struct kvreg_error *err)
{
	struct kvreg_endpoint *ep = ex->ep;
	struct kvreg_file_dev *fdev;

	lockdep_assert_held(&ep->mutex);
	list_for_each_entry(fdev, &ep->spare_pds, file_node) {
		if (fdev->dev == kdev && !READ_ONCE(kdev->dead)) {
			list_move_tail(&fdev->file_node, &ex->pds);
			break;
		}
	}
	return kvreg_pd_get(&ex->pds, kdev, true, err);
}

/*
 * @ex's PDs, once no MR of it is left: one no connection holds is kept
 * for the endpoint's next export, if it has none on that device.
 * Unhashed, @ex takes no new connection, so a count of one (the list's)
 * stays one.
 */
static void kvreg_export_pds_release(struct kvreg_exported *ex)
{
	struct kvreg_endpoint *ep = ex->ep;
	struct kvreg_file_dev *fdev, *tmp, *spare;
	LIST_HEAD(gone);
	bool have;

	mutex_lock(&ep->mutex);
	list_for_each_entry_safe(fdev, tmp, &ex->pds, file_node) {
		have = false;
		list_for_each_entry(spare, &ep->spare_pds, file_node)
			have |= spare->dev == fdev->dev;
		if (!have && kref_read(&fdev->ref) == 1 &&
		    !READ_ONCE(fdev->dev->dead))
			list_move_tail(&fdev->file_node, &ep->spare_pds);
		else
			list_move_tail(&fdev->file_node, &gone);
	}
	mutex_unlock(&ep->mutex);
	kvreg_pds_release(&gone);
}

/*
 * @ex's MRs on @rd's device, in the export's PD there: charged first,
 * as REGISTER charged their plan, then made. On failure nothing is left.
 */
static int kvreg_export_dev_make(struct kvreg_exported *ex,
				 struct kvreg_reg_dev *rd,
				 struct kvreg_error *err)
{
	struct kvreg_export_dev *ed = &ex->devs[ex->nr_devs];
	struct kvreg_dev *kdev = rd->dev;
	struct kvreg_file_dev *pd;
	int ret;

	mutex_lock(&ex->ep->mutex);
	pd = kvreg_export_pd_get(ex, kdev, err);
	mutex_unlock(&ex->ep->mutex);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	memset(ed, 0, sizeof(*ed));
	ed->ex = ex;
	ed->rd = rd;
	ed->pd = pd;
	INIT_LIST_HEAD(&ed->user.node);
	ed->user.remove = kvreg_export_dev_remove;

	down_read(&kdev->teardown_rwsem);
	if (kdev->dead || !pd->pd || !READ_ONCE(rd->live)) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, kdev->index);
		ret = -ENODEV;
		goto err_unlock;
	}
	ret = kvreg_acct_charge_dev_mrs(ex->reg->km, kdev, rd->planned_mrs,
					err);
	if (ret)
		goto err_unlock;
	ed->nr_mrs = rd->planned_mrs;
	ret = kvreg_ed_cg_charge(ed, err);
	if (ret)
		goto err_acct;
	ret = kvreg_mrs_make(rd, pd, kvreg_access_to_ib(ex->access),
			     &ed->mrs, err);
	if (ret)
		goto err_cg;
	WRITE_ONCE(ed->live, true);
	kvreg_dev_user_add(kdev, &ed->user);
	up_read(&kdev->teardown_rwsem);
	ex->nr_devs++;
	return 0;

err_cg:
	kvreg_ed_cg_uncharge(ed);
err_acct:
	kvreg_acct_uncharge_dev_mrs(ex->reg->km, kdev, ed->nr_mrs);
err_unlock:
	up_read(&kdev->teardown_rwsem);
	kvreg_file_dev_put(pd);
	return ret;
}

/* Caller holds kf->ep_mutex. */
struct kvreg_exported *kvreg_exported_find(struct kvreg_endpoint *ep,
					   struct kvreg_reg *reg)
{
	struct kvreg_exported *ex;

	lockdep_assert_held(&ep->kf->ep_mutex);
	list_for_each_entry(ex, &ep->exports, ep_node)
		if (ex->reg == reg)
			return ex;
	return NULL;
}

/* @ex's live MRs on @kdev, or NULL. Under @kdev's teardown_rwsem. */
struct kvreg_export_dev *kvreg_exported_on(struct kvreg_exported *ex,
					   struct kvreg_dev *kdev)
{
	u32 i;

	for (i = 0; i < ex->nr_devs; i++)
		if (ex->devs[i].rd->dev == kdev && READ_ONCE(ex->devs[i].live))
			return &ex->devs[i];
	return NULL;
}

/*
 * MRs for @ex on every device the endpoint listens on that the
 * registration is live on and @ex has none on yet (a device the endpoint
 * was given since, or the first EXPORT).
 */
static int kvreg_exported_fill(struct kvreg_exported *ex,
			       struct kvreg_error *err)
{
	struct kvreg_endpoint *ep = ex->ep;
	struct kvreg_reg *reg = ex->reg;
	u32 l, i;
	int ret;

	/* Listeners change only under kf->ep_mutex, which the caller holds. */
	for (l = 0; l < ep->nr_listeners; l++) {
		struct kvreg_dev *kdev = ep->listeners[l]->dev;
		struct kvreg_reg_dev *rd = NULL;

		if (!READ_ONCE(ep->listeners[l]->cm_id) ||
		    kvreg_exported_on(ex, kdev) ||
		    ex->nr_devs == KVREG_DESC_MAX_PATHS)
			continue;
		for (i = 0; i < reg->nr_devs; i++)
			if (reg->devs[i].dev == kdev &&
			    READ_ONCE(reg->devs[i].live))
				rd = &reg->devs[i];
		if (!rd)
			continue;
		ret = kvreg_export_dev_make(ex, rd, err);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Caller holds kf->ep_mutex and a reference on @reg, which has remote
 * access. @reg's export through @ep, made now if it is the first, with
 * MRs on each of @ep's devices it can have; published on @reg only while
 * @reg is still registered, so that DEREGISTER revokes it.
 */
int kvreg_exported_get(struct kvreg_endpoint *ep, struct kvreg_reg *reg,
		       struct kvreg_exported **exp, struct kvreg_error *err)
{
	struct kvreg_file *kf = ep->kf;
	struct kvreg_exported *ex = kvreg_exported_find(ep, reg);
	bool fresh = !ex;
	int ret;

	if (fresh) {
		ex = kzalloc(sizeof(*ex), GFP_KERNEL_ACCOUNT);
		if (!ex) {
			kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
					KVREG_NO_DEVICE_INDEX);
			return -ENOMEM;
		}
		ex->ep = ep;
		ex->reg = reg;
		kref_get(&reg->kref);
		ex->access = reg->access & (KVREG_ACCESS_REMOTE_READ |
					    KVREG_ACCESS_REMOTE_WRITE);
		INIT_LIST_HEAD(&ex->reg_node);
		INIT_HLIST_NODE(&ex->secret_node);
		INIT_LIST_HEAD(&ex->pds);
		get_random_bytes(ex->secret, sizeof(ex->secret));
		list_add_tail(&ex->ep_node, &ep->exports);
	}
	ret = kvreg_exported_fill(ex, err);
	if (ret && fresh)
		goto err_revoke;
	if (ret)
		return ret;

	mutex_lock(&kf->lock);
	if (xa_load(&kf->regs, reg->handle) != reg)
		ret = -ENOENT;
	else if (fresh)
		list_add_tail(&ex->reg_node, &reg->exports);
	mutex_unlock(&kf->lock);
	if (ret) {
		/* DEREGISTER came first; it could not see this export. */
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_HANDLE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_HANDLE;
		goto err_revoke;
	}
	if (fresh) {
		/* Complete: a connection may find it from now on. */
		mutex_lock(&ep->mutex);
		hash_add(ep->by_secret, &ex->secret_node,
			 kvreg_secret_hash(ex->secret));
		mutex_unlock(&ep->mutex);
	}
	*exp = ex;
	return 0;

err_revoke:
	kvreg_exported_revoke(ex);
	return ret;
}

/*
 * Caller holds kf->ep_mutex. Every key of @ex is dead in its device when
 * this returns; then the registration may go. The connections made with
 * its secret stay until their peers or the endpoint drop them, in PDs
 * where no key is left.
 */
void kvreg_exported_revoke(struct kvreg_exported *ex)
{
	struct kvreg_endpoint *ep = ex->ep;
	struct kvreg_file *kf = ep->kf;
	u32 i = ex->nr_devs;

	lockdep_assert_held(&kf->ep_mutex);
	/* First: no connection is let in with its secret any more. */
	mutex_lock(&ep->mutex);
	hash_del(&ex->secret_node);
	mutex_unlock(&ep->mutex);
	list_del(&ex->ep_node);
	mutex_lock(&kf->lock);
	list_del_init(&ex->reg_node);
	mutex_unlock(&kf->lock);
	while (i--) {
		struct kvreg_export_dev *ed = &ex->devs[i];
		struct kvreg_dev *kdev = ed->rd->dev;

		down_read(&kdev->teardown_rwsem);
		kvreg_export_dev_release(ed);
		up_read(&kdev->teardown_rwsem);
		kvreg_file_dev_put(ed->pd);
	}
	kvreg_export_pds_release(ex);
	kvreg_reg_put(ex->reg);
	kfree_sensitive(ex);
}

/* Caller holds @ep's mutex. */
struct kvreg_exported *kvreg_export_by_secret(struct kvreg_endpoint *ep,
					      const u8 *secret)
{
	struct kvreg_exported *ex;

	lockdep_assert_held(&ep->mutex);
	hash_for_each_possible(ep->by_secret, ex, secret_node,
			       kvreg_secret_hash(secret))
		if (!crypto_memneq(ex->secret, secret, KVREG_SECRET_LEN))
			return ex;
	return NULL;
}

/*
 * Caller holds kf->ep_mutex: a new secret for each of @ep's exports, so
 * that no descriptor exported before lets a connection in. The caller
 * then cuts the connections already in.
 */
void kvreg_exports_rekey(struct kvreg_endpoint *ep)
{
	struct kvreg_exported *ex;

	lockdep_assert_held(&ep->kf->ep_mutex);
	mutex_lock(&ep->mutex);
	list_for_each_entry(ex, &ep->exports, ep_node) {
		if (hlist_unhashed(&ex->secret_node))
			continue;
		hash_del(&ex->secret_node);
		get_random_bytes(ex->secret, sizeof(ex->secret));
		hash_add(ep->by_secret, &ex->secret_node,
			 kvreg_secret_hash(ex->secret));
	}
	mutex_unlock(&ep->mutex);
}

/*
 * DEREGISTER took @reg out of the file: every export of it is revoked
 * before the pages can be unpinned. Not under kf->lock.
 */
void kvreg_reg_revoke_exports(struct kvreg_file *kf, struct kvreg_reg *reg)
{
	struct kvreg_exported *ex, *tmp;
	LIST_HEAD(exports);

	mutex_lock(&kf->ep_mutex);
	mutex_lock(&kf->lock);
	list_splice_init(&reg->exports, &exports);
	mutex_unlock(&kf->lock);
	list_for_each_entry_safe(ex, tmp, &exports, reg_node)
		kvreg_exported_revoke(ex);
	mutex_unlock(&kf->ep_mutex);
}
