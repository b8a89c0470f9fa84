// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a REGISTER asks for, checked before anything is done, and the rules
 * that decide whether it is a new registration, the same one again, or an
 * overlap. Pure logic: KUnit drives it directly.
 */
#include <linux/interval_tree_generic.h>
#include <linux/sched.h>

#include "kvreg.h"

/*
 * Registrations of a file by address range, so that finding the ones a
 * new range overlaps costs O(log n + overlaps), not a walk of them all.
 */
static inline u64 kvreg_reg_first_byte(struct kvreg_reg *reg)
{
	return reg->addr;
}

static inline u64 kvreg_reg_last_byte(struct kvreg_reg *reg)
{
	return reg->addr + reg->length - 1;
}

INTERVAL_TREE_DEFINE(struct kvreg_reg, range_node, u64, range_subtree_last,
		     kvreg_reg_first_byte, kvreg_reg_last_byte, static,
		     kvreg_itree)

void kvreg_file_init(struct kvreg_file *kf)
{
	mutex_init(&kf->ep_mutex);
	mutex_init(&kf->lock);
	xa_init_flags(&kf->regs, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&kf->devs);
	kf->by_range = RB_ROOT_CACHED;
	kf->next_handle = 1;
	INIT_LIST_HEAD(&kf->endpoints);
	INIT_LIST_HEAD(&kf->conns);
	xa_init_flags(&kf->remotes, XA_FLAGS_ALLOC1);
	spin_lock_init(&kf->peers_lock);
	INIT_LIST_HEAD(&kf->peers);
}

/* Caller holds kf->lock; @reg has a non-zero length. */
void kvreg_range_insert(struct kvreg_file *kf, struct kvreg_reg *reg)
{
	lockdep_assert_held(&kf->lock);
	kvreg_itree_insert(reg, &kf->by_range);
}

void kvreg_range_remove(struct kvreg_file *kf, struct kvreg_reg *reg)
{
	lockdep_assert_held(&kf->lock);
	kvreg_itree_remove(reg, &kf->by_range);
}

/* Verbs wants local write beside remote write: it is implied. */
int kvreg_access_to_ib(u32 access)
{
	int ib_access = 0;

	if (access & (KVREG_ACCESS_LOCAL_WRITE | KVREG_ACCESS_REMOTE_WRITE))
		ib_access |= IB_ACCESS_LOCAL_WRITE;
	if (access & KVREG_ACCESS_REMOTE_WRITE)
		ib_access |= IB_ACCESS_REMOTE_WRITE;
	if (access & KVREG_ACCESS_REMOTE_READ)
		ib_access |= IB_ACCESS_REMOTE_READ;
	return ib_access;
}

int kvreg_check_register(struct kvreg_register *arg, u64 present,
			 struct kvreg_error *err)
{
	u64 missing;

	if (arg->flags & ~KVREG_REG_F_ALLOW_OVERLAP)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	/* request: the flags given; limit: the ones that may be given. */
	err->request = arg->access;
	if (arg->access & ~KVREG_ACCESS_ALL) {
		err->limit = KVREG_ACCESS_ALL;
		return kvreg_bad_arg(err, KVREG_ARG_ACCESS);
	}
	/* Verbs forbid remote write into memory the HCA may not write. */
	if ((arg->access & KVREG_ACCESS_REMOTE_WRITE) &&
	    !(arg->access & KVREG_ACCESS_LOCAL_WRITE))
		return kvreg_bad_arg(err, KVREG_ARG_ACCESS);
	err->request = 0;
	if (arg->keys_capacity && (arg->key_size < KVREG_KEY_SIZE_VER0 ||
				   arg->key_size > KVREG_MAX_ARG_SIZE))
		return kvreg_bad_size(err, KVREG_ARG_KEYS, arg->key_size);
	if (!arg->length)
		return 0;
	/* A kernel address, or one past the top of user space. */
	if (arg->addr >= TASK_SIZE) {
		err->address = arg->addr;
		err->limit = TASK_SIZE;
		return kvreg_bad_arg(err, KVREG_ARG_ADDRESS);
	}
	if (arg->length > TASK_SIZE - arg->addr) {
		err->address = arg->addr;
		err->request = arg->length;
		err->limit = TASK_SIZE;
		return kvreg_bad_arg(err, KVREG_ARG_LENGTH);
	}
	missing = arg->device_mask & ~present;
	if (missing || !present) {
		kvreg_set_error(err, KVREG_REASON_NO_DEVICE,
				missing ? __ffs64(missing) :
				KVREG_NO_DEVICE_INDEX);
		return -ENODEV;
	}
	return 0;
}

/*
 * Caller holds kf->lock. Returns the registration identical to @arg (same
 * range, access and devices), or NULL; an overlapping one that is not
 * identical fails with -EEXIST unless the caller allowed overlaps. An
 * identical registration wins over any overlap.
 */
struct kvreg_reg *kvreg_find_same(struct kvreg_file *kf,
				  struct kvreg_register *arg, u64 mask,
				  struct kvreg_error *err, int *ret)
{
	u64 last = arg->addr + arg->length - 1;
	struct kvreg_reg *reg, *overlap = NULL;

	lockdep_assert_held(&kf->lock);
	*ret = 0;
	for (reg = kvreg_itree_iter_first(&kf->by_range, arg->addr, last);
	     reg; reg = kvreg_itree_iter_next(reg, arg->addr, last)) {
		if (reg->addr == arg->addr && reg->length == arg->length &&
		    reg->access == arg->access && reg->dev_mask == mask)
			return reg;
		if (!overlap)
			overlap = reg;
	}
	if (!overlap || (arg->flags & KVREG_REG_F_ALLOW_OVERLAP))
		return NULL;
	kvreg_set_error(err, KVREG_REASON_OVERLAP, KVREG_NO_DEVICE_INDEX);
	err->address = overlap->addr;
	err->limit = overlap->length;
	err->usage = overlap->handle;
	*ret = -EEXIST;
	return NULL;
}
