// SPDX-License-Identifier: GPL-2.0-only
/*
 * Registrations of one open file: REGISTER, DEREGISTER, QUERY and the
 * release of everything left when the file closes (process exit included).
 * A registration is all or nothing: whatever step fails, every earlier
 * step is undone in reverse order before the error returns.
 */
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kvreg.h"

static void kvreg_reg_put_devs(struct kvreg_reg *reg)
{
	u32 i = reg->nr_devs;

	while (i--) {
		if (reg->devs[i].fdev)
			kvreg_file_dev_put(reg->devs[i].fdev);
		if (reg->devs[i].dev)
			kvreg_dev_put(reg->devs[i].dev);
	}
	kfree_rcu(reg, rcu);
}

/*
 * Every device of @mask, and the file's PD on each (made on the file's
 * first use of the device), into @reg->devs.
 */
static int kvreg_reg_get_devs(struct kvreg_file *kf, struct kvreg_reg *reg,
			      u64 mask, struct kvreg_error *err)
{
	struct kvreg_file_dev *fdev;
	int ret = 0;
	u32 bit;

	mutex_lock(&kf->lock);
	for_each_set_bit(bit, (unsigned long *)&mask, KVREG_MAX_DEVICES) {
		struct kvreg_reg_dev *rd = &reg->devs[reg->nr_devs];

		INIT_LIST_HEAD(&rd->user.node);
		rd->reg = reg;
		rd->dev = kvreg_dev_get(bit);
		if (!rd->dev) {
			kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, bit);
			ret = -ENODEV;
			break;
		}
		reg->nr_devs++;
		fdev = kvreg_file_dev_get(kf, rd->dev, err);
		if (IS_ERR(fdev)) {
			ret = PTR_ERR(fdev);
			break;
		}
		rd->fdev = fdev;
	}
	mutex_unlock(&kf->lock);
	return ret;
}

/*
 * Undo kvreg_reg_pin_charged() and kvreg_reg_map(), in reverse order:
 * every device's mapping (whatever state each reached), the pin, the
 * charge. The registration is freed after.
 */
static void kvreg_reg_undo(struct kvreg_reg *reg)
{
	u32 i = reg->nr_devs;
	u64 t0;

	while (i--)
		kvreg_reg_dev_teardown(&reg->devs[i]);
	t0 = kvreg_stage_begin();
	kvreg_unpin(reg);
	kvreg_stage_end(KVREG_STAGE_UNPIN, t0);
	kvreg_acct_uncharge_pages(reg->km, reg->nr_pages);
	kvreg_reg_put_devs(reg);
}

static void kvreg_reg_release(struct kref *kref)
{
	struct kvreg_reg *reg = container_of(kref, struct kvreg_reg, kref);

	atomic64_dec(&kvreg_nr_regs);
	kvreg_reg_undo(reg);
}

/* Not under kvreg_file.lock: the last put unpins, which takes a while. */
void kvreg_reg_put(struct kvreg_reg *reg)
{
	kref_put(&reg->kref, kvreg_reg_release);
}

/*
 * The scatter entries are shared by every device: bound them by the
 * smallest DMA segment, on a 2 MiB boundary when that still leaves one, so
 * a split never costs huge MR pages, and by KVREG_MAX_RUN, so that MR
 * groups can be cut often enough to keep several CPUs busy.
 */
static unsigned int kvreg_max_segment(struct kvreg_reg *reg)
{
	unsigned int max_seg = UINT_MAX;
	u32 i;

	for (i = 0; i < reg->nr_devs; i++)
		max_seg = min(max_seg, reg->devs[i].dev->max_seg_size);
	max_seg = min_t(unsigned int, max_seg, KVREG_MAX_RUN);
	if (max_seg >= BIT(KVREG_HUGE_SHIFT))
		return ALIGN_DOWN(max_seg, BIT(KVREG_HUGE_SHIFT));
	return max_t(unsigned int, ALIGN_DOWN(max_seg, PAGE_SIZE), PAGE_SIZE);
}

static u32 kvreg_out_flags(struct kvreg_reg *reg)
{
	u32 flags = 0, i;

	for (i = 0; i < reg->nr_devs; i++) {
		if (!READ_ONCE(reg->devs[i].live))
			continue;
		if (READ_ONCE(reg->devs[i].planned_mrs) > 1)
			flags |= KVREG_REG_OUT_SPLIT;
		if (reg->devs[i].page_shift < KVREG_HUGE_SHIFT &&
		    reg->huge_backed)
			flags |= KVREG_REG_OUT_HUGE_HINT;
	}
	return flags;
}

static int kvreg_keys_error(struct kvreg_error *err, int ret)
{
	if (ret == -ENOMEM) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return ret;
	}
	kvreg_bad_arg(err, KVREG_ARG_KEYS);
	return -EFAULT;
}

/*
 * Caller holds kf->lock: the handle and a snapshot of @reg's keys into
 * @keys, taking a reference if @dup. The keys go to the user after the
 * lock is dropped (kvreg_register_keys_out()).
 */
static int kvreg_register_out(struct kvreg_file *kf, struct kvreg_reg *reg,
			      struct kvreg_register *arg, bool dup,
			      struct kvreg_keys *keys, struct kvreg_error *err)
{
	int ret;

	lockdep_assert_held(&kf->lock);
	ret = kvreg_keys_snap(reg, arg->keys_capacity, keys);
	if (ret)
		return kvreg_keys_error(err, ret);
	if (dup)
		reg->refs++;
	arg->handle = reg->handle;
	arg->nkeys = keys->n;
	arg->refs = reg->refs;
	arg->out_flags = kvreg_out_flags(reg) |
			 (dup ? KVREG_REG_OUT_DUPLICATE : 0);
	return 0;
}

/*
 * Without kf->lock, which a CM callback takes: a key buffer on a slow or
 * faulting mapping (userfaultfd, FUSE) stalls this caller alone. A buffer
 * that cannot take them gives back the reference just handed out, as if
 * REGISTER had not been called.
 */
static int kvreg_register_keys_out(struct kvreg_file *kf,
				   struct kvreg_register *arg,
				   struct kvreg_keys *keys,
				   struct kvreg_error *err)
{
	struct kvreg_error ignored;
	int ret;

	ret = kvreg_keys_put_user(keys, arg->keys, arg->key_size);
	if (!ret)
		return 0;
	kvreg_deregister(kf, arg->handle, &ignored);
	arg->handle = KVREG_HANDLE_NONE;
	arg->nkeys = 0;
	arg->refs = 0;
	arg->out_flags = 0;
	return kvreg_keys_error(err, ret);
}

/*
 * Caller holds kf->lock, so @reg stays: up to @capacity of its keys into
 * @k, all of them counted. A key is a device's view of the registration:
 * the MRs an export makes there, and their page size; no MR of the file
 * exists. No user memory is touched here.
 */
int kvreg_keys_snap(struct kvreg_reg *reg, u32 capacity, struct kvreg_keys *k)
{
	u32 i;

	k->room = min(reg->nr_devs, capacity);
	k->n = 0;
	k->keys = NULL;
	if (k->room) {
		k->keys = kcalloc(k->room, sizeof(*k->keys),
				  GFP_KERNEL_ACCOUNT);
		if (!k->keys)
			return -ENOMEM;
	}
	for (i = 0; i < reg->nr_devs; i++) {
		struct kvreg_reg_dev *rd = &reg->devs[i];

		if (!READ_ONCE(rd->live))
			continue;
		if (k->n < k->room)
			k->keys[k->n] = (struct kvreg_key) {
				.device_index = rd->dev->index,
				.page_shift = rd->page_shift,
				.mrs = READ_ONCE(rd->planned_mrs),
				.iova = reg->addr,
				.length = reg->length,
			};
		k->n++;
	}
	return 0;
}

/* With no lock held: what kvreg_keys_snap() took, out, and freed. */
int kvreg_keys_put_user(struct kvreg_keys *k, u64 uptr, u32 key_size)
{
	int ret = 0;
	u32 i;

	for (i = 0; i < min(k->n, k->room) && !ret; i++)
		ret = kvreg_copy_entry(uptr, key_size, i, &k->keys[i],
				       sizeof(*k->keys));
	kfree(k->keys);
	k->keys = NULL;
	return ret;
}

/*
 * The same buffer again is the same registration, one more reference:
 * 1 when @arg was answered so, else 0 or the overlap's error.
 */
static int kvreg_register_again(struct kvreg_file *kf,
				struct kvreg_register *arg, u64 mask,
				struct kvreg_keys *keys,
				struct kvreg_error *err)
{
	struct kvreg_reg *same;
	int ret;

	mutex_lock(&kf->lock);
	same = kvreg_find_same(kf, arg, mask, err, &ret);
	if (same)
		ret = kvreg_register_out(kf, same, arg, true, keys, err) ?: 1;
	mutex_unlock(&kf->lock);
	return ret;
}

static struct kvreg_reg *kvreg_reg_alloc(struct kvreg_file *kf,
					 struct kvreg_register *arg, u64 mask,
					 struct kvreg_error *err)
{
	struct kvreg_reg *reg;

	reg = kzalloc(struct_size(reg, devs, hweight64(mask)), GFP_KERNEL);
	if (!reg) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return NULL;
	}
	reg->addr = arg->addr;
	reg->length = arg->length;
	reg->access = arg->access;
	reg->writable = arg->access & (KVREG_ACCESS_LOCAL_WRITE |
				       KVREG_ACCESS_REMOTE_WRITE);
	/*
	 * Local rights only, whatever REMOTE_* flags say (those say what
	 * EXPORT may grant, in the export's own PD): the file's keys are the
	 * local side of its remote transfers, and a READ lands through them.
	 * No QP of the file's PD then has anything to take remote RDMA into.
	 */
	reg->ib_access = reg->writable ? IB_ACCESS_LOCAL_WRITE : 0;
	INIT_LIST_HEAD(&reg->exports);
	reg->dev_mask = mask;
	reg->km = kf->km;
	reg->refs = 1;
	kref_init(&reg->kref);
	reg->nr_pages = (PAGE_ALIGN(reg->addr + reg->length) -
			 (reg->addr & PAGE_MASK)) >> PAGE_SHIFT;
	return reg;
}

/*
 * Refuse before pinning (what the memory is, then what it costs), then
 * pin. On failure nothing is left charged or pinned.
 */
static int kvreg_reg_pin_charged(struct kvreg_reg *reg,
				 struct kvreg_error *err)
{
	u64 t0 = kvreg_stage_begin();
	int ret;

	ret = kvreg_check_memory(reg, err);
	kvreg_stage_end(KVREG_STAGE_CHECK_MEMORY, t0);
	if (ret)
		return ret;
	ret = kvreg_acct_charge_pages(reg->km, reg->nr_pages, err);
	if (ret)
		return ret;
	t0 = kvreg_stage_begin();
	ret = kvreg_pin(reg, kvreg_max_segment(reg), err);
	kvreg_stage_end(KVREG_STAGE_PIN, t0);
	if (ret)
		kvreg_acct_uncharge_pages(reg->km, reg->nr_pages);
	return ret;
}

/*
 * Every device: map and plan, charge at once the MRs an export takes on
 * all of them, then make each usable. What a failure leaves is undone by
 * kvreg_reg_undo().
 */
static int kvreg_reg_map(struct kvreg_reg *reg, struct kvreg_error *err)
{
	u64 inject = READ_ONCE(kvreg_inject_fail_mask);
	u32 i;
	int ret;

	for (i = 0; i < reg->nr_devs; i++) {
		ret = kvreg_reg_dev_prepare(reg, &reg->devs[i], err);
		if (ret)
			return ret;
	}
	ret = kvreg_acct_charge_mrs(reg, err);
	if (ret)
		return ret;
	for (i = 0; i < reg->nr_devs; i++) {
		struct kvreg_reg_dev *rd = &reg->devs[i];

		ret = kvreg_reg_dev_commit(rd, err);
		if (ret)
			return ret;
		/* Fail after the device is fully set up: the worst case. */
		if (inject & BIT_ULL(rd->dev->index)) {
			kvreg_set_error(err, KVREG_REASON_DEVICE_REFUSED,
					rd->dev->index);
			err->driver_errno = -EIO;
			return -EIO;
		}
	}
	return 0;
}

/*
 * Give @reg its handle and hand out its keys, under the file's lock so
 * nobody may deregister it before the keys are out. Authoritative for
 * duplicates: another thread may have registered the same meanwhile; then
 * that one is handed out (1 is returned) and @reg is the caller's to undo.
 * The handle is only reserved until the keys are out: a lookup without
 * the lock finds @reg once nothing can fail, so a failure here undoes a
 * registration nobody else holds.
 */
static int kvreg_reg_publish(struct kvreg_file *kf, struct kvreg_reg *reg,
			     struct kvreg_register *arg,
			     struct kvreg_keys *keys,
			     struct kvreg_error *err)
{
	struct kvreg_reg *same;
	u32 id;
	int ret;

	mutex_lock(&kf->lock);
	same = kvreg_find_same(kf, arg, reg->dev_mask, err, &ret);
	if (same)
		ret = kvreg_register_out(kf, same, arg, true, keys, err) ?: 1;
	if (same || ret)
		goto out_unlock;
	ret = xa_alloc_cyclic(&kf->regs, &id, NULL, xa_limit_31b,
			      &kf->next_handle, GFP_KERNEL);
	if (ret < 0) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		goto out_unlock;
	}
	reg->handle = id;
	kvreg_range_insert(kf, reg);
	ret = kvreg_register_out(kf, reg, arg, false, keys, err);
	if (ret) {
		kvreg_range_remove(kf, reg);
		xa_erase(&kf->regs, id);
		goto out_unlock;
	}
	/* Into the slot reserved above: allocates nothing, cannot fail. */
	xa_store(&kf->regs, id, reg, GFP_KERNEL);
	atomic64_inc(&kvreg_nr_regs);
out_unlock:
	mutex_unlock(&kf->lock);
	return ret;
}

/*
 * REGISTER, as a pipeline: check, the same buffer again, allocate, the
 * devices and the file's PD on each, pin what is paid for, map on every
 * device, publish. All or nothing: one unwind path, in reverse order.
 */
static int kvreg_register_timed(struct kvreg_file *kf,
				struct kvreg_register *arg,
				struct kvreg_error *err)
{
	u64 present = kvreg_devices_present();
	struct kvreg_keys keys = {};
	struct kvreg_reg *reg;
	u64 mask, t0;
	int ret;

	/* Outputs are written, never read: a struct may be reused. */
	arg->handle = KVREG_HANDLE_NONE;
	arg->nkeys = 0;
	arg->out_flags = 0;
	arg->refs = 0;
	ret = kvreg_check_register(arg, present, err);
	/* Zero bytes need no pages and no keys: succeed, create nothing. */
	if (ret || !arg->length)
		return ret;
	mask = arg->device_mask ? arg->device_mask : present;
	ret = kvreg_register_again(kf, arg, mask, &keys, err);
	if (ret)
		return ret < 0 ? ret : kvreg_register_keys_out(kf, arg, &keys,
							       err);

	reg = kvreg_reg_alloc(kf, arg, mask, err);
	if (!reg)
		return -ENOMEM;
	t0 = kvreg_stage_begin();
	ret = kvreg_reg_get_devs(kf, reg, mask, err);
	kvreg_stage_end(KVREG_STAGE_DEVICES, t0);
	if (ret)
		goto err_put;
	ret = kvreg_reg_pin_charged(reg, err);
	if (ret)
		goto err_put;
	ret = kvreg_reg_map(reg, err);
	if (ret)
		goto err_undo;
	t0 = kvreg_stage_begin();
	ret = kvreg_reg_publish(kf, reg, arg, &keys, err);
	if (ret)
		goto err_undo;
	ret = kvreg_register_keys_out(kf, arg, &keys, err);
	kvreg_stage_end(KVREG_STAGE_PUBLISH, t0);
	return ret;

err_undo:
	kvreg_stage_end(KVREG_STAGE_PUBLISH, t0);
	kvreg_reg_undo(reg);
	/* A duplicate that won the race was handed out instead. */
	return ret < 0 ? ret : kvreg_register_keys_out(kf, arg, &keys, err);
err_put:
	kvreg_reg_put_devs(reg);
	return ret;
}

/* What the stages leave out of a registration is its own time. */
int kvreg_register(struct kvreg_file *kf, struct kvreg_register *arg,
		   struct kvreg_error *err)
{
	u64 t0 = kvreg_stage_begin();
	int ret = kvreg_register_timed(kf, arg, err);

	kvreg_stage_end(KVREG_STAGE_REGISTER, t0);
	return ret;
}

int kvreg_deregister(struct kvreg_file *kf, u64 handle,
		     struct kvreg_error *err)
{
	bool exported = false;
	struct kvreg_reg *reg;
	int ret = 0;

	if (handle == KVREG_HANDLE_NONE)
		return 0;
	mutex_lock(&kf->lock);
	reg = kvreg_reg_lookup(kf, handle);
	if (reg && --reg->refs) {
		reg = NULL;	/* still referenced: nothing to release */
	} else if (reg) {
		kvreg_range_remove(kf, reg);
		xa_erase(&kf->regs, handle);
		/* An EXPORT under way sees it gone and revokes itself. */
		exported = !list_empty(&reg->exports);
	} else {
		ret = -ENOENT;
	}
	mutex_unlock(&kf->lock);
	if (ret) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_HANDLE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_HANDLE;
		return ret;
	}
	/* A transfer still using it holds it until the transfer ends. */
	if (reg) {
		u64 t0 = kvreg_stage_begin();

		/* No peer reaches it once this returns. */
		if (exported)
			kvreg_reg_revoke_exports(kf, reg);
		kvreg_reg_put(reg);
		kvreg_stage_end(KVREG_STAGE_DEREGISTER, t0);
	}
	return 0;
}

/* Caller holds kf->lock, which keeps the registration in the table. */
struct kvreg_reg *kvreg_reg_lookup(struct kvreg_file *kf, u64 handle)
{
	lockdep_assert_held(&kf->lock);
	if (handle == KVREG_HANDLE_NONE || handle > U32_MAX)
		return NULL;
	return xa_load(&kf->regs, handle);
}

/*
 * Without kf->lock, which REGISTER, EXPORT and the CM's accept take: the
 * registration with a reference, or NULL. A lookup that races DEREGISTER
 * and wins holds the registration, as a transfer started just before the
 * DEREGISTER would; once DEREGISTER has returned, none finds it.
 */
struct kvreg_reg *kvreg_reg_get(struct kvreg_file *kf, u64 handle)
{
	struct kvreg_reg *reg;

	if (handle == KVREG_HANDLE_NONE || handle > U32_MAX)
		return NULL;
	rcu_read_lock();
	reg = xa_load(&kf->regs, handle);
	if (reg && !kref_get_unless_zero(&reg->kref))
		reg = NULL;
	rcu_read_unlock();
	return reg;
}

int kvreg_query(struct kvreg_file *kf, struct kvreg_query *arg,
		struct kvreg_error *err)
{
	struct kvreg_keys keys;
	struct kvreg_reg *reg;
	int ret = 0;
	u32 i;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	if (arg->keys_capacity && (arg->key_size < KVREG_KEY_SIZE_VER0 ||
				   arg->key_size > KVREG_MAX_ARG_SIZE))
		return kvreg_bad_size(err, KVREG_ARG_KEYS, arg->key_size);

	mutex_lock(&kf->lock);
	reg = kvreg_reg_lookup(kf, arg->handle);
	if (!reg) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_HANDLE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_HANDLE;
		ret = -ENOENT;
		goto out;
	}
	arg->addr = reg->addr;
	arg->length = reg->length;
	arg->access = reg->access;
	arg->pinned_addr = reg->addr & PAGE_MASK;
	arg->pinned_pages = reg->nr_pages;
	arg->device_mask = 0;
	for (i = 0; i < reg->nr_devs; i++)
		if (READ_ONCE(reg->devs[i].live))
			arg->device_mask |= BIT_ULL(reg->devs[i].dev->index);
	arg->refs = reg->refs;
	arg->out_flags = kvreg_out_flags(reg);
	ret = kvreg_keys_snap(reg, arg->keys_capacity, &keys);
	if (ret) {
		ret = kvreg_keys_error(err, ret);
		goto out;
	}
	arg->nkeys = keys.n;
	mutex_unlock(&kf->lock);
	/* Not under the lock: see kvreg_register_keys_out(). */
	ret = kvreg_keys_put_user(&keys, arg->keys, arg->key_size);
	return ret ? kvreg_keys_error(err, ret) : 0;
out:
	mutex_unlock(&kf->lock);
	return ret;
}

void kvreg_file_stats(struct kvreg_file *kf, struct kvreg_stats *st)
{
	struct kvreg_conn *conn;
	struct kvreg_reg *reg;
	unsigned long id;
	u32 i;

	mutex_lock(&kf->lock);
	xa_for_each(&kf->regs, id, reg) {
		st->file_registrations++;
		st->file_pinned_pages += reg->nr_pages;
		/* Charged as an export would make them: none exist. */
		for (i = 0; i < reg->nr_devs; i++) {
			struct kvreg_reg_dev *rd = &reg->devs[i];

			if (READ_ONCE(rd->live))
				st->file_mrs += READ_ONCE(rd->planned_mrs);
		}
	}
	list_for_each_entry(conn, &kf->conns, file_node)
		st->file_conns++;
	mutex_unlock(&kf->lock);
	kvreg_acct_stats(kf->km, st);
}

/* The last reference to the file is gone: no ioctl can be running. */
void kvreg_file_release(struct kvreg_file *kf)
{
	struct kvreg_reg *reg;
	unsigned long id;

	xa_for_each(&kf->regs, id, reg) {
		xa_erase(&kf->regs, id);
		kvreg_reg_put(reg);
	}
	xa_destroy(&kf->regs);
	kvreg_file_devs_release(kf);
	mutex_destroy(&kf->lock);
	mutex_destroy(&kf->ep_mutex);
}
