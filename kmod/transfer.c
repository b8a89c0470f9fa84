// SPDX-License-Identifier: GPL-2.0-only
/*
 * TRANSFER: WRITE or READ between a registration of the caller and either
 * another of its registrations or a region it imported, waiting for the
 * end. To an imported region the bytes go by RDMA, through the rail's QP.
 * Between two of the caller's own registrations they never leave the host,
 * and the CPU copies them between the pinned pages: an RDMA loopback would
 * need a QP of the file that takes remote RDMA while it runs, and RC says
 * nothing of who sent a request (rxe checks IP addresses only), so a local
 * verbs user who read that QP's number and PSN from `rdma res` could aim
 * at the file's memory in that window. The file's PD holds no MR, and
 * no QP of it takes remote RDMA.
 */
#include <linux/highmem.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "kvreg.h"
#include "trace.h"

/*
 * One chain of work requests never moves more than this, so that
 * op_timeout_ms bounds a fixed amount of work, not a whole transfer:
 * a 40 MiB chain outlasted 30 s under KASAN and emulation. On a real
 * device 8 MiB is a millisecond's work, and the wait between chains
 * costs one completion per 8 MiB. A fatal signal ends the transfer
 * between chains, or within one (flushed).
 */
#define KVREG_CHAIN_BYTES	SZ_8M

/*
 * Scatter entries one chain takes: on memory of scattered base pages an
 * entry is a page, so a chain of them moves 4 MiB.
 */
#define KVREG_CHAIN_SGES	1024

struct kvreg_rdma_batch {
	struct ib_rdma_wr wr[KVREG_WR_BATCH];
	struct ib_sge sge[KVREG_CHAIN_SGES];
};

/*
 * Registration @handle, held by a reference in @side even when a check
 * fails (the caller puts it, not under any lock: it may be the last),
 * checked for @need_access over @length bytes at @offset; with a device
 * named, its mapping there too. @offset_arg names the offset's field. Takes
 * no lock: what it reads of the registration is fixed once published.
 */
int kvreg_resolve_side(struct kvreg_file *kf, u64 handle, u64 offset,
		       u64 length, u32 device_index, u32 need_access,
		       u32 offset_arg, struct kvreg_side *side,
		       struct kvreg_error *err)
{
	struct kvreg_reg *reg = kvreg_reg_get(kf, handle);
	bool removed = false;
	u32 i;

	if (!reg) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_HANDLE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_HANDLE;
		return -ENOENT;
	}
	side->reg = reg;
	if (offset > reg->length || length > reg->length - offset) {
		/* Offset and length apart: their sum may not fit in 64 bits. */
		kvreg_set_error(err, KVREG_REASON_OUT_OF_RANGE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = offset_arg;
		err->limit = reg->length;
		err->address = offset;
		err->request = length;
		return -ERANGE;
	}
	if ((reg->access & need_access) != need_access) {
		kvreg_set_error(err, KVREG_REASON_ACCESS_DENIED,
				KVREG_NO_DEVICE_INDEX);
		err->request = need_access;
		err->usage = reg->access;
		return -EACCES;
	}
	side->va = reg->addr + offset;
	/* A region's rail picks the device, later: the registration only. */
	if (device_index == KVREG_NO_DEVICE_INDEX)
		return 0;
	for (i = 0; i < reg->nr_devs; i++) {
		struct kvreg_reg_dev *rd = &reg->devs[i];

		if (rd->dev->index != device_index)
			continue;
		if (READ_ONCE(rd->live)) {
			side->rd = rd;
			return 0;
		}
		removed = true;
	}
	kvreg_set_error(err, removed ? KVREG_REASON_DEVICE_REMOVED :
			KVREG_REASON_NO_DEVICE, device_index);
	return -ENODEV;
}

static int kvreg_check_transfer(struct kvreg_transfer *arg,
				struct kvreg_error *err)
{
	if (arg->flags & ~KVREG_TRANSFER_F_REMOTE_REGION)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->opcode != KVREG_OP_WRITE && arg->opcode != KVREG_OP_READ)
		return kvreg_bad_arg(err, KVREG_ARG_OPCODE);
	if (!arg->length)
		return kvreg_bad_arg(err, KVREG_ARG_LENGTH);
	if (arg->device_index >= KVREG_MAX_DEVICES)
		return kvreg_bad_arg(err, KVREG_ARG_DEVICE);
	if (arg->reserved || arg->reserved2)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	return 0;
}

/* Address and rkey of the imported region at @rva, and how far they reach. */
static void kvreg_target_at(struct kvreg_target *t, u64 rva, u64 *seg,
			    u64 *raddr, u32 *rkey)
{
	const struct kvreg_rchunk *c = kvreg_rpath_chunk(t->path, rva);

	*seg = min(*seg, c->start + c->length - rva);
	*raddr = c->iova + (rva - c->start);
	*rkey = c->rkey;
}

u32 kvreg_transfer_reason(int ret, enum ib_wc_status wc_status, bool peer)
{
	if (ret == -EINTR)
		return KVREG_REASON_INTERRUPTED;
	if (ret == -ETIMEDOUT)
		return KVREG_REASON_OP_TIMEOUT;
	if (ret == -ENODEV)
		return KVREG_REASON_DEVICE_REMOVED;
	if (peer && (ret == -ENOTCONN ||
		     wc_status == IB_WC_RETRY_EXC_ERR ||
		     wc_status == IB_WC_RNR_RETRY_EXC_ERR ||
		     wc_status == IB_WC_WR_FLUSH_ERR))
		return KVREG_REASON_CONN_LOST;
	if (peer && wc_status == IB_WC_REM_ACCESS_ERR)
		return KVREG_REASON_REMOTE_ACCESS;
	if (ret == -EIO)
		return KVREG_REASON_TRANSFER_FAILED;
	if (ret == -ENETDOWN)
		return KVREG_REASON_DEVICE_NOT_ACTIVE;
	return KVREG_REASON_DEVICE_REFUSED;
}

/*
 * To an imported region, through the rail's QP in @t. Caller holds
 * teardown_rwsem for read; the local side and the rail are live.
 */
static int kvreg_post_transfer(struct kvreg_transfer *arg,
			       struct kvreg_side *local,
			       struct kvreg_target *t,
			       struct kvreg_rdma_batch *b,
			       struct kvreg_error *err)
{
	struct kvreg_dev *kdev = local->rd->dev;
	struct kvreg_qp *q = t->q;
	u64 lva = local->va, left = arg->length, chained, raddr;
	u64 rva = arg->remote_offset;
	enum ib_wc_status wc_status = IB_WC_SUCCESS;
	u32 lkey = q->qp->pd->local_dma_lkey;
	struct kvreg_run_mark run = {};
	int ret = 0;
	u32 n, rkey, used;

	unsigned long timeout =
		msecs_to_jiffies(max(READ_ONCE(kvreg_op_timeout_ms), 1U));

	while (left && !ret) {
		/*
		 * The rail's lock is taken for one chain at a time, killably:
		 * a TRANSFER behind another on the rail waits one chain, and
		 * a kill ends the wait.
		 */
		if (fatal_signal_pending(current) ||
		    mutex_lock_killable(&q->mutex)) {
			ret = -EINTR;
			break;
		}
		/* Removal waits for this caller: it waits one chain at most. */
		if (READ_ONCE(kdev->dying)) {
			mutex_unlock(&q->mutex);
			ret = -ENODEV;
			break;
		}
		chained = 0;
		used = 0;
		for (n = 0; n < KVREG_WR_BATCH && left &&
		     chained < KVREG_CHAIN_BYTES && used < KVREG_CHAIN_SGES;
		     n++) {
			u64 seg = min_t(u64, left, KVREG_CHAIN_BYTES - chained);
			u32 nsge;

			kvreg_target_at(t, rva, &seg, &raddr, &rkey);
			nsge = kvreg_reg_dev_sges(local->rd, lva, &seg,
						  &b->sge[used],
						  min(kdev->wr_sges,
						      KVREG_CHAIN_SGES - used),
						  lkey, &run);
			b->wr[n] = (struct ib_rdma_wr) {
				.wr.opcode = arg->opcode == KVREG_OP_WRITE ?
					     IB_WR_RDMA_WRITE : IB_WR_RDMA_READ,
				.wr.sg_list = &b->sge[used],
				.wr.num_sge = nsge,
				.remote_addr = raddr,
				.rkey = rkey,
			};
			used += nsge;
			if (n)
				b->wr[n - 1].wr.next = &b->wr[n].wr;
			lva += seg;
			rva += seg;
			left -= seg;
			chained += seg;
		}
		ret = kvreg_post_chain(q, &b->wr[0].wr, &b->wr[n - 1].wr,
				       timeout, &wc_status);
		mutex_unlock(&q->mutex);
	}

	if (ret) {
		/* A device going away fails its work in any number of ways. */
		kvreg_set_error(err, READ_ONCE(kdev->dying) ?
				KVREG_REASON_DEVICE_REMOVED :
				kvreg_transfer_reason(ret, wc_status, true),
				kdev->index);
		if (err->reason == KVREG_REASON_OP_TIMEOUT)
			err->limit = jiffies_to_msecs(timeout);
		err->driver_errno = ret;
		err->wc_status = wc_status;
		if (t->conn)
			kvreg_set_net_error(err, err->reason, &t->conn->peer);
		/* However it was noticed: a flush, a retry limit, no QP. */
		if (err->reason == KVREG_REASON_CONN_LOST)
			ret = -ENOTCONN;
	}
	return ret;
}

/*
 * Imported region @handle, held by a reference in *@rrp (set even when a
 * check fails), checked for @opcode over @length bytes at @offset, through
 * device @device_index if one is named. Without kf->lock.
 */
int kvreg_resolve_rregion(struct kvreg_file *kf, u32 opcode, u32 device_index,
			  u64 handle, u64 offset, u64 length,
			  struct kvreg_rregion **rrp, struct kvreg_error *err)
{
	u32 need = opcode == KVREG_OP_WRITE ? KVREG_ACCESS_REMOTE_WRITE :
					      KVREG_ACCESS_REMOTE_READ;
	struct kvreg_rregion *rr = kvreg_rregion_get(kf, handle);

	if (!rr) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_HANDLE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_HANDLE;
		return -ENOENT;
	}
	*rrp = rr;
	if (device_index != KVREG_NO_DEVICE_INDEX &&
	    !kvreg_rail_on_device(rr, device_index)) {
		kvreg_bad_arg(err, KVREG_ARG_DEVICE);
		err->request = device_index;
		return -EINVAL;
	}
	if (offset > rr->length || length > rr->length - offset) {
		kvreg_set_error(err, KVREG_REASON_OUT_OF_RANGE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_REMOTE_OFFSET;
		err->limit = rr->length;
		err->address = offset;
		err->request = length;
		return -ERANGE;
	}
	if (!(rr->access & need)) {
		kvreg_set_error(err, KVREG_REASON_ACCESS_DENIED,
				KVREG_NO_DEVICE_INDEX);
		err->request = need;
		err->usage = rr->access;
		return -EACCES;
	}
	return 0;
}

/* Under teardown_rwsem read: whether the path is still there. */
int kvreg_target_live(struct kvreg_dev *kdev, struct kvreg_side *local,
		      struct kvreg_target *t, struct kvreg_error *err)
{
	if (kdev->dead || !READ_ONCE(local->rd->live) ||
	    (t->side && !READ_ONCE(t->side->rd->live))) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, kdev->index);
		return -ENODEV;
	}
	if (t->conn) {
		struct kvreg_conn *conn = t->conn;

		/* Its QP must be in the PD of the local side's MRs. */
		if (conn->fdev != local->rd->fdev) {
			kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED,
					kdev->index);
			return -ENODEV;
		}
		/* @ready fell: its QP went to the error state. */
		if (READ_ONCE(conn->lost) || !conn->qp_live ||
		    !READ_ONCE(conn->q.ready)) {
			kvreg_set_error(err, KVREG_REASON_CONN_LOST,
					kdev->index);
			kvreg_set_net_error(err, err->reason, &conn->peer);
			return -ENOTCONN;
		}
	}
	if (!READ_ONCE(kdev->port_active)) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_NOT_ACTIVE,
				kdev->index);
		return -ENETDOWN;
	}
	return 0;
}

/*
 * Both sides of @arg, each held by a reference and found without the
 * file's lock: transfers run beside each other and beside REGISTER,
 * QUERY and DEREGISTER, and neither side can go away under the QP.
 * Undone by kvreg_transfer_release(), failed or not.
 */
int kvreg_transfer_resolve(struct kvreg_file *kf, struct kvreg_transfer *arg,
			   struct kvreg_side *local, struct kvreg_side *remote,
			   struct kvreg_target *t, struct kvreg_error *err)
{
	bool region = arg->flags & KVREG_TRANSFER_F_REMOTE_REGION;
	bool write = arg->opcode == KVREG_OP_WRITE;
	int ret = 0;

	if (region)
		ret = kvreg_resolve_rregion(kf, arg->opcode, arg->device_index,
					    arg->remote_handle,
					    arg->remote_offset, arg->length,
					    &t->rr, err);
	if (!ret)
		ret = kvreg_resolve_side(kf, arg->local_handle,
					 arg->local_offset, arg->length,
					 region ? KVREG_NO_DEVICE_INDEX :
					 arg->device_index,
					 write ? 0 : KVREG_ACCESS_LOCAL_WRITE,
					 KVREG_ARG_OFFSET, local, err);
	/*
	 * Between two of the file's own registrations the data stays on
	 * the host: local rights only. A registration's REMOTE_* flags
	 * speak of peers, which EXPORT alone lets in.
	 */
	if (!ret && !region) {
		ret = kvreg_resolve_side(kf, arg->remote_handle,
					 arg->remote_offset, arg->length,
					 arg->device_index,
					 write ? KVREG_ACCESS_LOCAL_WRITE : 0,
					 KVREG_ARG_REMOTE_OFFSET, remote, err);
		t->side = remote;
	}
	return ret;
}

void kvreg_transfer_release(struct kvreg_side *local,
			    struct kvreg_side *remote, struct kvreg_target *t)
{
	if (t->conn)
		kvreg_conn_put(t->conn);
	if (t->rr)
		kvreg_rregion_put(t->rr);
	if (remote->reg)
		kvreg_reg_put(remote->reg);
	if (local->reg)
		kvreg_reg_put(local->reg);
}

/* @reg's MRs on @kdev, live or not; a registration not on it has none. */
static struct kvreg_reg_dev *kvreg_reg_on(struct kvreg_reg *reg,
					  struct kvreg_dev *kdev)
{
	u32 i;

	for (i = 0; i < reg->nr_devs; i++)
		if (reg->devs[i].dev == kdev)
			return &reg->devs[i];
	return NULL;
}

/*
 * One try of a transfer on an imported region, on rail @rail: what the
 * caller holds in @local and @t (a reference on @t->conn) stays held.
 */
static int kvreg_transfer_on_rail(struct kvreg_transfer *arg,
				  struct kvreg_side *local,
				  struct kvreg_target *t, u32 rail,
				  struct kvreg_rdma_batch *batch,
				  struct kvreg_error *err)
{
	struct kvreg_conn *conn = t->conn;
	struct kvreg_dev *kdev = conn->dev;
	int ret;

	local->rd = kvreg_reg_on(local->reg, kdev);
	t->q = &conn->q;
	t->path = &t->rr->paths[rail];
	down_read(&kdev->teardown_rwsem);
	ret = local->rd ? kvreg_target_live(kdev, local, t, err) : -ENODEV;
	if (!local->rd)
		kvreg_set_error(err, KVREG_REASON_NO_DEVICE, kdev->index);
	if (!ret) {
		kvreg_net_start(&conn->entry, 1);
		ret = kvreg_post_transfer(arg, local, t, batch, err);
		kvreg_net_count(&conn->entry, arg->length,
				ret ? err->wc_status : 0, !ret);
	}
	up_read(&kdev->teardown_rwsem);
	return ret;
}

/*
 * On an imported region: on the rail of arg->device_index first, and on
 * each other rail in turn for as long as the one tried was lost (moving
 * the same bytes again is harmless). The answer is the last rail's.
 */
static int kvreg_transfer_rails(struct kvreg_transfer *arg,
				struct kvreg_side *local,
				struct kvreg_target *t,
				struct kvreg_rdma_batch *batch,
				struct kvreg_error *err)
{
	struct kvreg_rregion *rr = t->rr;
	u32 tried = 0, rail;
	int ret;

	for (;;) {
		t->conn = kvreg_rail_get(rr, local->reg, arg->device_index,
					 tried, &rail);
		if (!t->conn)
			break;
		/* The answer is this try's, not the one before. */
		memset(err, 0, sizeof(*err));
		ret = kvreg_transfer_on_rail(arg, local, t, rail, batch, err);
		/*
		 * Refused (a revoked key) or late, its QP is in the error
		 * state all the same: the rail is connected again.
		 */
		if (ret && ret != -ENOTCONN && !kvreg_conn_usable(t->conn))
			kvreg_rail_kick(rr->peer);
		if (ret != -ENOTCONN)
			return ret;
		kvreg_rail_kick(rr->peer);
		tried |= BIT(rail);
		if (!kvreg_rails_left(rr, tried))
			return ret;
		atomic64_inc(&t->conn->entry.failovers);
		kvreg_conn_put(t->conn);
		t->conn = NULL;
	}
	/* The last rail tried failed, and none other is up: its reason. */
	if (tried)
		return -ENOTCONN;
	return kvreg_rails_none_up(rr, local->reg, err);
}

/*
 * A local copy checks for a fatal signal and yields the CPU after this
 * many bytes: a few hundred microseconds of memcpy, so a kill or a
 * runnable task waits no longer than that, and the checks cost nothing.
 */
#define KVREG_COPY_STEP		SZ_1M

/* A byte of a registration's pinned pages: an entry and where in it. */
struct kvreg_page_cursor {
	struct scatterlist *sg;
	u64 off;
};

/*
 * The pinned table starts at the page of reg->addr: @va is found from the
 * mark of its 2 MiB stride, walking at most the runs of that stride.
 */
static void kvreg_cursor_seek(struct kvreg_page_cursor *c,
			      struct kvreg_reg *reg, u64 va)
{
	u64 skip = va - (reg->addr & PAGE_MASK);
	const struct kvreg_run_mark *mark =
		&reg->run_marks[skip >> KVREG_RUN_MARK_SHIFT];
	struct scatterlist *sg = mark->sg;

	skip -= mark->start;
	while (skip >= sg->length) {
		skip -= sg->length;
		sg = sg_next(sg);
	}
	c->sg = sg;
	c->off = sg->offset + skip;
}

static struct page *kvreg_cursor_page(const struct kvreg_page_cursor *c,
				      u32 *in_page)
{
	*in_page = offset_in_page(c->off);
	return nth_page(sg_page(c->sg), c->off >> PAGE_SHIFT);
}

static void kvreg_cursor_advance(struct kvreg_page_cursor *c, u64 n)
{
	c->off += n;
	if (c->off == c->sg->offset + c->sg->length) {
		/* NULL past the last entry: only read while bytes are left. */
		c->sg = sg_next(c->sg);
		if (c->sg)
			c->off = c->sg->offset;
	}
}

/*
 * Between two registrations of the file: a page piece at a time, from
 * the pinned pages of one to those of the other. The pins hold the pages
 * for as long as the references in @local and @remote do, whatever
 * happens to the user's mappings or to the devices meanwhile.
 */
static int kvreg_copy_local(struct kvreg_transfer *arg,
			    struct kvreg_side *local,
			    struct kvreg_side *remote,
			    struct kvreg_error *err)
{
	bool write = arg->opcode == KVREG_OP_WRITE;
	struct kvreg_side *from = write ? local : remote;
	struct kvreg_side *to = write ? remote : local;
	struct kvreg_page_cursor src, dst;
	u64 left = arg->length, since_check = 0;

	/* Access was checked: pages pinned without FOLL_WRITE are a bug. */
	if (WARN_ON_ONCE(!to->reg->writable)) {
		kvreg_set_error(err, KVREG_REASON_ACCESS_DENIED,
				KVREG_NO_DEVICE_INDEX);
		return -EACCES;
	}
	kvreg_cursor_seek(&src, from->reg, from->va);
	kvreg_cursor_seek(&dst, to->reg, to->va);
	while (left) {
		u32 src_in, dst_in;
		struct page *src_page = kvreg_cursor_page(&src, &src_in);
		struct page *dst_page = kvreg_cursor_page(&dst, &dst_in);
		u64 n = min3(left, (u64)(PAGE_SIZE - src_in),
			     (u64)(PAGE_SIZE - dst_in));
		void *dst_addr = kmap_local_page(dst_page);
		void *src_addr = kmap_local_page(src_page);

		memmove(dst_addr + dst_in, src_addr + src_in, n);
		kunmap_local(src_addr);
		kunmap_local(dst_addr);
		flush_dcache_page(dst_page);
		kvreg_cursor_advance(&src, n);
		kvreg_cursor_advance(&dst, n);
		left -= n;
		since_check += n;
		if (left && since_check >= KVREG_COPY_STEP) {
			since_check = 0;
			if (fatal_signal_pending(current)) {
				kvreg_set_error(err, KVREG_REASON_INTERRUPTED,
						local->rd->dev->index);
				err->driver_errno = -EINTR;
				return -EINTR;
			}
			cond_resched();
		}
	}
	return 0;
}

/* To an imported region: a WR batch for its chains, then its rails. */
static int kvreg_transfer_region(struct kvreg_transfer *arg,
				 struct kvreg_side *local,
				 struct kvreg_target *t,
				 struct kvreg_error *err)
{
	struct kvreg_rdma_batch *batch = kvmalloc(sizeof(*batch), GFP_KERNEL);
	int ret;

	if (!batch) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	ret = kvreg_transfer_rails(arg, local, t, batch, err);
	kvfree(batch);
	return ret;
}

int kvreg_transfer(struct kvreg_file *kf, struct kvreg_transfer *arg,
		   struct kvreg_error *err)
{
	struct kvreg_side local = {}, remote = {};
	struct kvreg_target t = {};
	struct kvreg_dev *kdev;
	int ret;

	ret = kvreg_check_transfer(arg, err);
	if (ret)
		return ret;
	trace_kvreg_transfer(arg->opcode, arg->length);
	ret = kvreg_transfer_resolve(kf, arg, &local, &remote, &t, err);
	if (ret)
		goto out_put;
	if (t.rr) {
		ret = kvreg_transfer_region(arg, &local, &t, err);
		goto out_put;
	}

	/*
	 * Live now on the device named; the copy itself needs no device, so
	 * a removal that starts after this check does not wait for it.
	 */
	kdev = local.rd->dev;
	down_read(&kdev->teardown_rwsem);
	ret = kvreg_target_live(kdev, &local, &t, err);
	up_read(&kdev->teardown_rwsem);
	if (!ret)
		ret = kvreg_copy_local(arg, &local, &remote, err);
out_put:
	kvreg_transfer_release(&local, &remote, &t);
	trace_kvreg_transfer_done(ret);
	return ret;
}
