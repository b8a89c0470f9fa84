/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvreg internal definitions.
 *
 * Lock order, outermost first:
 *   kvreg_file.ep_mutex (endpoints and exports; never taken by a CM
 *   callback, so it may be held across rdma_destroy_id())
 *   kvreg_file.lock
 *     kvreg_dev.teardown_rwsem (read by users, write by device removal)
 *       kvreg_qp.mutex (of a file's QP on that device)
 *         kvreg_qp.post_lock (SUBMIT's posts; a spinlock, bottom
 *         halves off; taken alone by SUBMIT, under the mutex when a
 *         CM QP's @ready falls)
 *       kvreg_acct_lock (budgets and charges; held only briefly)
 *       kvreg_dev.users_lock
 *   kvreg_devs_lock (device table) is never held across any of the above.
 *   kvreg_net_lock (net_list.c: the list of endpoints and connections) is
 *   innermost: taken under kvreg_file.lock or alone, and takes nothing.
 *
 * A file's rails to one endpoint (rails.c): kvreg_peer.mutex (connecting
 * and swapping rails) is taken alone or before kvreg_file.lock;
 * kvreg_peer.lock (a spinlock, also from the CQ's softirq) is innermost,
 * as is kvreg_file.cq_lock (ops.c: the completion list, the operation
 * pool, the retry list).
 *
 * kvreg_endpoint.mutex is taken alone or under kvreg_file.lock, before a
 * device's teardown_rwsem; the accept work takes it (for an export's
 * secret and PD), so it is never held across rdma_destroy_id() either.
 * The RDMA CM holds its id's handler_mutex while it calls kvreg (which
 * then takes kvreg_file.lock): no kvreg lock but kvreg_file.ep_mutex is
 * held across rdma_destroy_id(), rdma_listen() or the like.
 */
#ifndef KVREG_H
#define KVREG_H

/*
 * Layers, lowest first, each header including the one below: dev.h
 * (devices, QPs, PDs), acct.h (budgets, caps, parameters), reg.h
 * (registrations, their mappings, exports and their MRs), net.h
 * (connections, rails, imported regions, SUBMIT). This file adds the
 * open file and the transfers.
 */
#include "net.h"

struct kvreg_file {
	/*
	 * Serialises LISTEN, EXPORT, UNEXPORT, UNLISTEN, REKEY and the
	 * revocation in DEREGISTER: endpoints and exports change, and are
	 * freed, only under it. See the lock order at the top.
	 */
	struct mutex ep_mutex;
	/*
	 * Protects @regs, @by_range, @devs, every registration's @refs,
	 * @endpoints, @conns, @remotes and @closing. Taken before any
	 * device's teardown_rwsem; never held across rdma_destroy_id().
	 * @regs and @remotes change only under it, but SUBMIT and TRANSFER
	 * read them without it: under RCU, taking a reference only if the
	 * object's count is not yet zero (kvreg_reg_get(),
	 * kvreg_rregion_get()); both are freed after a grace period.
	 */
	struct mutex lock;
	struct xarray regs;		/* by handle */
	struct list_head devs;		/* kvreg_file_dev.file_node */
	struct rb_root_cached by_range;	/* the same, by address range */
	u32 next_handle;
	struct kvreg_mm *km;		/* the opener's; fixed for life */
	kuid_t uid;			/* the opener's effective uid */
	/* The opener's: where rails are connected, from work items too. */
	struct net *net;
	/*
	 * The opener's memory cgroup (a reference, or NULL): what a peer's
	 * connection or a rail's mend allocates, outside the opener's own
	 * calls, is charged there.
	 */
	struct mem_cgroup *memcg;
	struct list_head endpoints;	/* kvreg_endpoint.node */
	struct list_head conns;		/* passive kvreg_conn.file_node */
	struct xarray remotes;		/* kvreg_rregion, by handle */
	/*
	 * Every rail group of the file (kvreg_peer.file_node), those of
	 * regions already UNIMPORTed whose work is in flight included, so
	 * that release can end that work too. A spinlock: a peer's release
	 * takes it, and may run with kf->lock held.
	 */
	spinlock_t peers_lock;
	struct list_head peers;
	u64 next_endpoint;
	bool closing;			/* release has begun */

	/*
	 * Submitted operations (ops.c). @cq_lock (taken from the CQ's
	 * softirq too) protects @done, @nr_done and @nr_inflight; @cq_wait
	 * wakes REAP, poll() and release when one completes.
	 */
	spinlock_t cq_lock;
	struct list_head done;		/* kvreg_op.node, unreaped */
	u32 nr_done;
	u32 nr_inflight;
	wait_queue_head_t cq_wait;
	/*
	 * @cq_wait is woken when @nr_done reaches @wake_at: the least a
	 * sleeping REAP asks for (U32_MAX: none sleeps), or at every
	 * completion once poll() has been used (@polled).
	 */
	u32 wake_at;
	bool polled;
	/* Single-part operation contexts kept for reuse (@cq_lock). */
	struct list_head op_pool;
	u32 op_pool_len;
	bool op_pool_filled;		/* by the first SUBMIT */
	/* A SUBMIT's chain buffers, kept for the next one (xchg). */
	struct kvreg_submit_chains *spare_chains;
	/* Parts of operations whose rail failed, for another (@cq_lock). */
	struct list_head retry;
	struct delayed_work retry_work;
};

/* transfer.c */
/* The side of a transfer on one registration, resolved and checked. */
struct kvreg_side {
	struct kvreg_reg *reg;
	struct kvreg_reg_dev *rd;
	u64 va;
};

/*
 * Where the remote side of a transfer is: a registration of the caller
 * (@side, copied to or from on the CPU), or a region imported from a peer
 * (@rr), and the QP of the rail that reaches it.
 */
struct kvreg_target {
	struct kvreg_qp *q;
	struct kvreg_side *side;
	struct kvreg_rregion *rr;	/* then rva is the region offset */
	/* A region's: the rail carrying it (a reference), its chunks. */
	struct kvreg_conn *conn;
	const struct kvreg_rpath *path;
};

int kvreg_transfer(struct kvreg_file *kf, struct kvreg_transfer *arg,
		   struct kvreg_error *err);
int kvreg_resolve_side(struct kvreg_file *kf, u64 handle, u64 offset,
		       u64 length, u32 device_index, u32 need_access,
		       u32 offset_arg, struct kvreg_side *side,
		       struct kvreg_error *err);
int kvreg_resolve_rregion(struct kvreg_file *kf, u32 opcode, u32 device_index,
			  u64 handle, u64 offset, u64 length,
			  struct kvreg_rregion **rrp, struct kvreg_error *err);
int kvreg_transfer_resolve(struct kvreg_file *kf, struct kvreg_transfer *arg,
			   struct kvreg_side *local, struct kvreg_side *remote,
			   struct kvreg_target *t, struct kvreg_error *err);
void kvreg_transfer_release(struct kvreg_side *local,
			    struct kvreg_side *remote, struct kvreg_target *t);
/* Under teardown_rwsem read. */
int kvreg_target_live(struct kvreg_dev *kdev, struct kvreg_side *local,
		      struct kvreg_target *t, struct kvreg_error *err);
u32 kvreg_transfer_reason(int ret, enum ib_wc_status wc_status, bool peer);

static inline void kvreg_set_error(struct kvreg_error *err, u32 reason,
				   u32 device_index)
{
	err->reason = reason;
	err->device_index = device_index;
}

/* Driver failures that mean the device ran out, not a bug. */
static inline u32 kvreg_driver_reason(int ret)
{
	return ret == -ENOMEM || ret == -ENOSPC || ret == -EAGAIN ?
	       KVREG_REASON_DEVICE_EXHAUSTED : KVREG_REASON_DEVICE_REFUSED;
}

/*
 * Entry @i of a caller's array of @entry_size-byte entries (checked to be
 * at least the entry's first published size): as much of @src as the
 * entry holds, zeroes past what this module knows.
 */
static inline int kvreg_copy_entry(u64 base, u32 entry_size, u32 i,
				   const void *src, size_t len)
{
	char __user *dst = u64_to_user_ptr(base) + (size_t)i * entry_size;
	size_t n = min_t(size_t, entry_size, len);

	if (copy_to_user(dst, src, n) ||
	    (entry_size > n && clear_user(dst + n, entry_size - n)))
		return -EFAULT;
	return 0;
}

static inline int kvreg_bad_arg(struct kvreg_error *err, u32 argument)
{
	kvreg_set_error(err, KVREG_REASON_BAD_ARGUMENT, KVREG_NO_DEVICE_INDEX);
	err->argument = argument;
	return -EINVAL;
}

/*
 * An array's entry size out of bounds: from its first published size to
 * KVREG_MAX_ARG_SIZE, as a struct's own size is, so that no entry of a
 * few bytes of news makes the module clear megabytes of user memory.
 */
static inline int kvreg_bad_size(struct kvreg_error *err, u32 argument,
				 u32 size)
{
	kvreg_bad_arg(err, argument);
	err->limit = KVREG_MAX_ARG_SIZE;
	err->request = size;
	return -EINVAL;
}

/*
 * A snapshot of @total entries, the first @n of them in @src (@len bytes
 * each), into the caller's list: @count says how many there were, so a
 * caller with too little room learns how much to ask for.
 */
static inline int kvreg_copy_list(u64 base, u32 entry_size, u32 *count,
				  const void *src, size_t len, u32 n,
				  u32 total, struct kvreg_error *err)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (kvreg_copy_entry(base, entry_size, i,
				     (const char *)src + i * len, len)) {
			*count = i;
			kvreg_bad_arg(err, KVREG_ARG_POINTER);
			return -EFAULT;
		}
	}
	*count = total;
	return 0;
}

#endif /* KVREG_H */
