// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvreg's protection domains on a device. An open file has one on each
 * device it uses, made on first use: its registrations' mappings serve
 * its importer's connections there through the PD's local_dma_lkey, and
 * no MR lives in it, so no QP of another file (another process) and no
 * peer reaches the file's memory through it whatever key it guesses.
 * Each export has domains of its own (export.c), with an engine QP that
 * fast-registers the export's MRs: only those MRs and the connections
 * that presented its secret live there. Device removal takes the PD and
 * QP away; the struct stays until its owner and its users let go of it.
 *
 * The PD and QP are charged to the rdma cgroup of the task that makes them,
 * as verbs charges a process for its own: the caller of REGISTER, IMPORT
 * or EXPORT, nearly always. One made by kvreg's own work (a rail's
 * reconnect after its device came back) is charged where that work runs,
 * the root cgroup.
 */
#include <linux/slab.h>

#include "kvreg.h"

/* The PD and its engine QP, if any: what verbs would charge for them. */
static int kvreg_file_dev_cg_charge(struct kvreg_file_dev *fdev,
				    struct kvreg_error *err)
{
#ifdef CONFIG_CGROUP_RDMA
	return kvreg_cg_charge(fdev->dev, &fdev->cg, &fdev->cg_charged,
			       fdev->engine ? 2 : 1, err);
#else
	return 0;
#endif
}

static void kvreg_file_dev_cg_uncharge(struct kvreg_file_dev *fdev)
{
#ifdef CONFIG_CGROUP_RDMA
	kvreg_cg_uncharge(fdev->dev, fdev->cg, &fdev->cg_charged);
#endif
}

/* Device removal, after every MR of this PD was revoked (they came later). */
static void kvreg_file_dev_remove(struct kvreg_dev_user *user)
{
	struct kvreg_file_dev *fdev =
		container_of(user, struct kvreg_file_dev, user);

	lockdep_assert_held_write(&fdev->dev->teardown_rwsem);
	if (fdev->engine)
		kvreg_qp_destroy(&fdev->qp);
	ib_dealloc_pd(fdev->pd);
	fdev->pd = NULL;
	kvreg_file_dev_cg_uncharge(fdev);
}

static void kvreg_file_dev_release(struct kref *ref)
{
	struct kvreg_file_dev *fdev =
		container_of(ref, struct kvreg_file_dev, ref);
	struct kvreg_dev *kdev = fdev->dev;

	down_read(&kdev->teardown_rwsem);
	if (fdev->pd) {
		kvreg_dev_user_del(kdev, &fdev->user);
		if (fdev->engine)
			kvreg_qp_destroy(&fdev->qp);
		ib_dealloc_pd(fdev->pd);
		kvreg_file_dev_cg_uncharge(fdev);
	}
	up_read(&kdev->teardown_rwsem);
	kvreg_dev_put(kdev);
	kfree(fdev);
}

void kvreg_file_dev_put(struct kvreg_file_dev *fdev)
{
	kref_put(&fdev->ref, kvreg_file_dev_release);
}

static struct kvreg_file_dev *kvreg_file_dev_create(struct kvreg_dev *kdev,
						    bool engine,
						    struct kvreg_error *err)
{
	struct kvreg_file_dev *fdev = kzalloc(sizeof(*fdev), GFP_KERNEL);
	int ret;

	if (!fdev) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				kdev->index);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&fdev->ref);
	INIT_LIST_HEAD(&fdev->file_node);
	INIT_LIST_HEAD(&fdev->user.node);
	fdev->user.remove = kvreg_file_dev_remove;
	fdev->dev = kdev;
	fdev->engine = engine;

	down_read(&kdev->teardown_rwsem);
	if (kdev->dead) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, kdev->index);
		ret = -ENODEV;
		goto err_unlock;
	}
	ret = kvreg_file_dev_cg_charge(fdev, err);
	if (ret)
		goto err_unlock;
	fdev->pd = ib_alloc_pd(kdev->ibdev, 0);
	if (IS_ERR(fdev->pd)) {
		ret = PTR_ERR(fdev->pd);
		goto err_driver;
	}
	if (engine) {
		ret = kvreg_qp_create(&fdev->qp, kdev, fdev->pd);
		if (ret)
			goto err_pd;
	}
	kvreg_dev_user_add(kdev, &fdev->user);
	up_read(&kdev->teardown_rwsem);
	kref_get(&kdev->ref);
	return fdev;

err_pd:
	ib_dealloc_pd(fdev->pd);
err_driver:
	kvreg_set_error(err, kvreg_driver_reason(ret), kdev->index);
	err->driver_errno = ret;
	kvreg_file_dev_cg_uncharge(fdev);
err_unlock:
	up_read(&kdev->teardown_rwsem);
	kfree(fdev);
	return ERR_PTR(ret);
}

/**
 * kvreg_pd_get - the owner's PD on a device, made on first use
 * @devs: a file's or an export's list of them; the caller holds its lock
 * @kdev: the device
 * @engine: an engine QP comes with a PD made now (an export's)
 * @err: the reason, on failure
 *
 * One left over from a device that was removed (its index may be reused)
 * is dropped and replaced.
 *
 * Return: the PD, with a reference for the caller, or an ERR_PTR.
 */
struct kvreg_file_dev *kvreg_pd_get(struct list_head *devs,
				    struct kvreg_dev *kdev, bool engine,
				    struct kvreg_error *err)
{
	struct kvreg_file_dev *fdev, *tmp;

	list_for_each_entry_safe(fdev, tmp, devs, file_node) {
		if (fdev->dev == kdev && !READ_ONCE(kdev->dead)) {
			kref_get(&fdev->ref);
			return fdev;
		}
		if (READ_ONCE(fdev->dev->dead)) {
			list_del_init(&fdev->file_node);
			kvreg_file_dev_put(fdev);
		}
	}
	fdev = kvreg_file_dev_create(kdev, engine, err);
	if (IS_ERR(fdev))
		return fdev;
	list_add_tail(&fdev->file_node, devs);
	kref_get(&fdev->ref);
	return fdev;
}

/* The owner is going: drop its own references; users hold theirs. */
void kvreg_pds_release(struct list_head *devs)
{
	struct kvreg_file_dev *fdev, *tmp;

	list_for_each_entry_safe(fdev, tmp, devs, file_node) {
		list_del_init(&fdev->file_node);
		kvreg_file_dev_put(fdev);
	}
}

/* Caller holds kf->lock: the file's own PD on @kdev. */
struct kvreg_file_dev *kvreg_file_dev_get(struct kvreg_file *kf,
					  struct kvreg_dev *kdev,
					  struct kvreg_error *err)
{
	lockdep_assert_held(&kf->lock);
	return kvreg_pd_get(&kf->devs, kdev, false, err);
}

void kvreg_file_devs_release(struct kvreg_file *kf)
{
	kvreg_pds_release(&kf->devs);
}
