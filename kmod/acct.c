// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a registration costs, charged before anything is pinned or created
 * and released with it:
 *  - RLIMIT_MEMLOCK through mm->pinned_vm, once per registration however
 *    many devices it is on, as ib_umem_get() charges it; CAP_IPC_LOCK
 *    bypasses it; a limit of 0 is refused outright (can_do_mlock());
 *  - the process's budget of pinned bytes and of MRs, shared by all its
 *    files, and the host-wide ceiling of pinned bytes;
 *  - each device's MRs, of which kvreg leaves a share to everyone else.
 */
#include <linux/capability.h>
#include <linux/cgroup_rdma.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "kvreg.h"

/*
 * Protects kvreg_mms, every kvreg_mm's counters and budget, the host
 * total (the one count of what kvreg pins, STATS reports it), and
 * kvreg_reg_dev.charged.
 */
static DEFINE_MUTEX(kvreg_acct_lock);
static LIST_HEAD(kvreg_mms);
static u64 kvreg_host_pinned_bytes;

static u64 kvreg_mm_max_mrs(const struct kvreg_mm *km)
{
	return km->own_max_mrs != KVREG_UNLIMITED ? km->own_max_mrs :
	       READ_ONCE(kvreg_max_mrs_per_process);
}

static u64 kvreg_mm_max_bytes(const struct kvreg_mm *km)
{
	return km->own_max_bytes != KVREG_UNLIMITED ? km->own_max_bytes :
	       READ_ONCE(kvreg_max_bytes_per_process);
}

u64 kvreg_device_mr_limit(struct kvreg_dev *kdev)
{
	unsigned long cap = READ_ONCE(kvreg_max_mrs_per_device);
	unsigned int keep = min(READ_ONCE(kvreg_device_mr_reserve_percent),
				100U);
	u64 share = div_u64((u64)kdev->max_mr * (100 - keep), 100);

	return cap ? min_t(u64, cap, kdev->max_mr) : share;
}

/* Defaults that depend on the machine, when the admin set none. */
void kvreg_acct_init(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;

	if (!kvreg_max_bytes_per_process)
		kvreg_max_bytes_per_process = ram / 2;
	if (!kvreg_host_max_bytes)
		kvreg_host_max_bytes = ram / 4 * 3;
}

struct kvreg_mm *kvreg_mm_get_current(void)
{
	struct mm_struct *mm = current->mm;
	struct kvreg_mm *km;

	if (!mm)
		return ERR_PTR(-EPERM);
	mutex_lock(&kvreg_acct_lock);
	list_for_each_entry(km, &kvreg_mms, node) {
		if (km->mm == mm) {
			km->files++;
			goto out;
		}
	}
	km = kzalloc(sizeof(*km), GFP_KERNEL);
	if (!km) {
		km = ERR_PTR(-ENOMEM);
		goto out;
	}
	mmgrab(mm);
	km->mm = mm;
	km->tgid = current->tgid;
	get_task_comm(km->comm, current);
	km->own_max_mrs = KVREG_UNLIMITED;
	km->own_max_bytes = KVREG_UNLIMITED;
	km->files = 1;
	list_add_tail(&km->node, &kvreg_mms);
out:
	mutex_unlock(&kvreg_acct_lock);
	return km;
}

void kvreg_mm_put(struct kvreg_mm *km)
{
	mutex_lock(&kvreg_acct_lock);
	if (--km->files) {
		mutex_unlock(&kvreg_acct_lock);
		return;
	}
	list_del(&km->node);
	mutex_unlock(&kvreg_acct_lock);
	WARN_ON(km->nr_mrs || km->pinned_bytes || km->nr_regs ||
		km->nr_endpoints || km->nr_imports || km->nr_import_chunks);
	mmdrop(km->mm);
	kfree(km);
}

int kvreg_acct_charge_pages(struct kvreg_mm *km, unsigned long nr_pages,
			    struct kvreg_error *err)
{
	u64 bytes = (u64)nr_pages << PAGE_SHIFT, max;
	unsigned long lock_limit;
	s64 pinned;

	if (!can_do_mlock()) {
		kvreg_set_error(err, KVREG_REASON_MEMLOCK_ZERO,
				KVREG_NO_DEVICE_INDEX);
		err->request = bytes;
		return -EPERM;
	}
	lock_limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	pinned = atomic64_add_return(nr_pages, &km->mm->pinned_vm);
	if (pinned > lock_limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(nr_pages, &km->mm->pinned_vm);
		kvreg_set_error(err, KVREG_REASON_MEMLOCK_EXCEEDED,
				KVREG_NO_DEVICE_INDEX);
		err->limit = rlimit(RLIMIT_MEMLOCK);
		err->usage = (u64)(pinned - nr_pages) << PAGE_SHIFT;
		err->request = bytes;
		return -ENOMEM;
	}

	mutex_lock(&kvreg_acct_lock);
	max = kvreg_mm_max_bytes(km);
	if (km->pinned_bytes + bytes > max) {
		kvreg_set_error(err, KVREG_REASON_PROC_BYTES_BUDGET,
				KVREG_NO_DEVICE_INDEX);
		err->limit = max;
		err->usage = km->pinned_bytes;
		goto err_unlock;
	}
	max = READ_ONCE(kvreg_host_max_bytes);
	if (kvreg_host_pinned_bytes + bytes > max) {
		kvreg_set_error(err, KVREG_REASON_HOST_CEILING,
				KVREG_NO_DEVICE_INDEX);
		err->limit = max;
		err->usage = kvreg_host_pinned_bytes;
		goto err_unlock;
	}
	km->pinned_bytes += bytes;
	km->nr_regs++;
	kvreg_host_pinned_bytes += bytes;
	mutex_unlock(&kvreg_acct_lock);
	return 0;

err_unlock:
	mutex_unlock(&kvreg_acct_lock);
	err->request = bytes;
	atomic64_sub(nr_pages, &km->mm->pinned_vm);
	return -EDQUOT;
}

void kvreg_acct_uncharge_pages(struct kvreg_mm *km, unsigned long nr_pages)
{
	u64 bytes = (u64)nr_pages << PAGE_SHIFT;

	mutex_lock(&kvreg_acct_lock);
	km->pinned_bytes -= bytes;
	km->nr_regs--;
	kvreg_host_pinned_bytes -= bytes;
	mutex_unlock(&kvreg_acct_lock);
	atomic64_sub(nr_pages, &km->mm->pinned_vm);
}

/* Check the process's and each device's MR budget, and charge them all. */
/* Under kvreg_acct_lock: whether @km may hold @nr more MRs; why not. */
static int kvreg_mm_mrs_fit(struct kvreg_mm *km, u64 nr,
			    struct kvreg_error *err)
{
	u64 max = kvreg_mm_max_mrs(km);

	lockdep_assert_held(&kvreg_acct_lock);
	if (km->nr_mrs + nr <= max)
		return 0;
	kvreg_set_error(err, KVREG_REASON_PROC_MR_BUDGET,
			KVREG_NO_DEVICE_INDEX);
	err->limit = max;
	err->usage = km->nr_mrs;
	err->request = nr;
	return -EDQUOT;
}

/* Under kvreg_acct_lock: whether @kdev's reserve leaves @nr more MRs. */
static int kvreg_dev_mrs_fit(struct kvreg_dev *kdev, u64 nr,
			     struct kvreg_error *err)
{
	u64 used = atomic64_read(&kdev->nr_mrs);
	u64 max = kvreg_device_mr_limit(kdev);

	lockdep_assert_held(&kvreg_acct_lock);
	if (used + nr <= max)
		return 0;
	kvreg_set_error(err, KVREG_REASON_DEVICE_MR_RESERVE, kdev->index);
	err->limit = max;
	err->usage = used;
	err->request = nr;
	return -ENOSPC;
}

int kvreg_acct_charge_mrs(struct kvreg_reg *reg, struct kvreg_error *err)
{
	struct kvreg_mm *km = reg->km;
	u64 total = 0;
	int ret;
	u32 i;

	for (i = 0; i < reg->nr_devs; i++)
		total += reg->devs[i].planned_mrs;

	mutex_lock(&kvreg_acct_lock);
	ret = kvreg_mm_mrs_fit(km, total, err);
	for (i = 0; i < reg->nr_devs && !ret; i++)
		ret = kvreg_dev_mrs_fit(reg->devs[i].dev,
					reg->devs[i].planned_mrs, err);
	if (ret)
		goto out;
	km->nr_mrs += total;
	atomic64_add(total, &kvreg_nr_mrs);
	for (i = 0; i < reg->nr_devs; i++) {
		struct kvreg_reg_dev *rd = &reg->devs[i];

		atomic64_add(rd->planned_mrs, &rd->dev->nr_mrs);
		rd->charged = true;
	}
out:
	mutex_unlock(&kvreg_acct_lock);
	return ret;
}

/*
 * @nr MRs on @kdev that are not a registration's own (an export's copy),
 * charged to @km's budget and the device's reserve like them.
 */
int kvreg_acct_charge_dev_mrs(struct kvreg_mm *km, struct kvreg_dev *kdev,
			      u32 nr, struct kvreg_error *err)
{
	int ret;

	mutex_lock(&kvreg_acct_lock);
	ret = kvreg_mm_mrs_fit(km, nr, err) ?: kvreg_dev_mrs_fit(kdev, nr, err);
	if (!ret) {
		km->nr_mrs += nr;
		atomic64_add(nr, &kvreg_nr_mrs);
		atomic64_add(nr, &kdev->nr_mrs);
	}
	mutex_unlock(&kvreg_acct_lock);
	return ret;
}

void kvreg_acct_uncharge_dev_mrs(struct kvreg_mm *km, struct kvreg_dev *kdev,
				 u32 nr)
{
	mutex_lock(&kvreg_acct_lock);
	km->nr_mrs -= nr;
	atomic64_sub(nr, &kvreg_nr_mrs);
	atomic64_sub(nr, &kdev->nr_mrs);
	mutex_unlock(&kvreg_acct_lock);
}

void kvreg_acct_uncharge_mrs(struct kvreg_reg_dev *rd)
{
	mutex_lock(&kvreg_acct_lock);
	if (rd->charged) {
		rd->reg->km->nr_mrs -= rd->planned_mrs;
		atomic64_sub(rd->planned_mrs, &kvreg_nr_mrs);
		atomic64_sub(rd->planned_mrs, &rd->dev->nr_mrs);
		rd->charged = false;
	}
	mutex_unlock(&kvreg_acct_lock);
}

static int kvreg_budget_value(u64 want, unsigned long dflt, u64 *own,
			      struct kvreg_error *err)
{
	if (want > dflt && !capable(CAP_SYS_RESOURCE)) {
		kvreg_set_error(err, KVREG_REASON_NOT_PERMITTED,
				KVREG_NO_DEVICE_INDEX);
		err->limit = dflt;
		err->request = want;
		return -EPERM;
	}
	*own = want;
	return 0;
}

int kvreg_acct_set_budget(struct kvreg_mm *km, struct kvreg_budget *b,
			  struct kvreg_error *err)
{
	const u32 known = KVREG_BUDGET_F_MRS | KVREG_BUDGET_F_BYTES |
			  KVREG_BUDGET_F_DEFAULTS;
	u64 mrs, bytes;
	int ret = 0;

	if ((b->flags & ~known) || ((b->flags & KVREG_BUDGET_F_DEFAULTS) &&
				    (b->flags & ~KVREG_BUDGET_F_DEFAULTS)))
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (b->reserved)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);

	mutex_lock(&kvreg_acct_lock);
	mrs = km->own_max_mrs;
	bytes = km->own_max_bytes;
	if (b->flags & KVREG_BUDGET_F_DEFAULTS) {
		mrs = KVREG_UNLIMITED;
		bytes = KVREG_UNLIMITED;
	}
	if (b->flags & KVREG_BUDGET_F_MRS)
		ret = kvreg_budget_value(b->max_mrs,
					 READ_ONCE(kvreg_max_mrs_per_process),
					 &mrs, err);
	if (!ret && (b->flags & KVREG_BUDGET_F_BYTES))
		ret = kvreg_budget_value(b->max_pinned_bytes,
					 READ_ONCE(kvreg_max_bytes_per_process),
					 &bytes, err);
	/* All or nothing: a refused half changes neither. */
	if (!ret) {
		km->own_max_mrs = mrs;
		km->own_max_bytes = bytes;
	}
	b->max_mrs = kvreg_mm_max_mrs(km);
	b->max_pinned_bytes = kvreg_mm_max_bytes(km);
	mutex_unlock(&kvreg_acct_lock);
	return ret;
}

void kvreg_acct_stats(struct kvreg_mm *km, struct kvreg_stats *st)
{
	unsigned long memlock = rlimit(RLIMIT_MEMLOCK);

	mutex_lock(&kvreg_acct_lock);
	st->pinned_pages = kvreg_host_pinned_bytes >> PAGE_SHIFT;
	st->host_pinned_bytes = kvreg_host_pinned_bytes;
	st->page_size = PAGE_SIZE;
	st->host_max_pinned_bytes = READ_ONCE(kvreg_host_max_bytes);
	st->proc_pinned_bytes = km->pinned_bytes;
	st->proc_max_pinned_bytes = kvreg_mm_max_bytes(km);
	st->proc_mrs = km->nr_mrs;
	st->proc_max_mrs = kvreg_mm_max_mrs(km);
	mutex_unlock(&kvreg_acct_lock);
	st->memlock_limit = capable(CAP_IPC_LOCK) || memlock == RLIM_INFINITY ?
			    KVREG_UNLIMITED : memlock;
	st->memlock_used = (u64)atomic64_read(&km->mm->pinned_vm) << PAGE_SHIFT;
	st->device_mr_reserve_percent =
		min(READ_ONCE(kvreg_device_mr_reserve_percent), 100U);
}

/* Charged from before pinning until after unpinning: never less. */
u64 kvreg_acct_host_pinned_bytes(void)
{
	u64 bytes;

	mutex_lock(&kvreg_acct_lock);
	bytes = kvreg_host_pinned_bytes;
	mutex_unlock(&kvreg_acct_lock);
	return bytes;
}

int kvreg_acct_procs(struct kvreg_procs *arg, struct kvreg_error *err)
{
	struct kvreg_proc_info *infos;
	struct kvreg_mm *km;
	u32 n = 0, copied;
	int ret = 0;

	/* Snapshot under the lock, copy to the caller without it. */
	mutex_lock(&kvreg_acct_lock);
	list_for_each_entry(km, &kvreg_mms, node)
		n++;
	infos = kvcalloc(max(n, 1U), sizeof(*infos), GFP_KERNEL);
	if (!infos) {
		mutex_unlock(&kvreg_acct_lock);
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	n = 0;
	list_for_each_entry(km, &kvreg_mms, node) {
		struct kvreg_proc_info *pi = &infos[n++];

		pi->pid = km->tgid;
		pi->files = km->files;
		memcpy(pi->comm, km->comm, sizeof(pi->comm));
		pi->registrations = km->nr_regs;
		pi->mrs = km->nr_mrs;
		pi->max_mrs = kvreg_mm_max_mrs(km);
		pi->pinned_bytes = km->pinned_bytes;
		pi->max_pinned_bytes = kvreg_mm_max_bytes(km);
	}
	mutex_unlock(&kvreg_acct_lock);

	copied = min(n, arg->capacity);
	ret = kvreg_copy_list(arg->entries, arg->entry_size, &arg->count,
			      infos, sizeof(*infos), copied, n, err);
	kvfree(infos);
	return ret;
}

#ifdef CONFIG_CGROUP_RDMA
/*
 * One hca_object per verbs object (MR, PD, QP), in the cgroup of the task
 * that makes it, as verbs charges. All or nothing: a refusal halfway
 * gives back what this call charged (each charge holds a reference on
 * the cgroup, too), so that no caller's error path has a partial count
 * to remember.
 */
int kvreg_cg_charge(struct kvreg_dev *kdev, struct rdma_cgroup **cg,
		    u32 *charged, u32 want, struct kvreg_error *err)
{
	u32 before = *charged;
	int ret;

	while (*charged < want) {
		ret = rdmacg_try_charge(cg, &kdev->ibdev->cg_device,
					RDMACG_RESOURCE_HCA_OBJECT);
		/* -EAGAIN is the limit; -ENOMEM the cgroup's own pool. */
		if (ret) {
			kvreg_set_error(err, ret == -ENOMEM ?
					KVREG_REASON_NO_KERNEL_MEMORY :
					KVREG_REASON_RDMA_CGROUP,
					kdev->index);
			err->usage = *charged;
			err->request = want;
			for (; *charged > before; (*charged)--)
				rdmacg_uncharge(*cg, &kdev->ibdev->cg_device,
						RDMACG_RESOURCE_HCA_OBJECT);
			return ret;
		}
		(*charged)++;
	}
	return 0;
}

void kvreg_cg_uncharge(struct kvreg_dev *kdev, struct rdma_cgroup *cg,
		       u32 *charged)
{
	for (; *charged; (*charged)--)
		rdmacg_uncharge(cg, &kdev->ibdev->cg_device,
				RDMACG_RESOURCE_HCA_OBJECT);
}
#endif
