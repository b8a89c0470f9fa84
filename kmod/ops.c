// SPDX-License-Identifier: GPL-2.0-only
/*
 * SUBMIT and REAP: batches of operations on imported regions, posted
 * without waiting. Each operation holds its registration and its region
 * by reference, goes in one part to the rail with the most room, or in
 * slices over several rails when it is large (rails.c), takes SQ slots
 * on each (a full queue accepts fewer, never blocks) and completes
 * exactly once into its file's completion list: REAP drains it and
 * poll() watches it. Every work request is signalled, so a part is done
 * when all of its completions (or flushes) have come, whichever way the
 * QP went; a part whose rail failed is posted again on another, from a
 * work item, until it succeeds or no rail is left.
 */
#include <linux/poll.h>
#include <linux/slab.h>

#include "kvreg.h"

struct kvreg_op_ctx;

/*
 * The share of an operation one rail carries: all of it, or with several
 * rails and a large operation, a slice. Its work requests are on one QP,
 * so one CQ context sees its completions. Posted again, whole, on another
 * rail when the one it was on fails.
 */
struct kvreg_op_part {
	struct ib_cqe cqe;
	struct list_head retry_node;	/* on kf->retry; kf->cq_lock */
	struct kvreg_op_ctx *op;
	/*
	 * Posted on: alive until the part completes, as releasing a
	 * connection drains its QP first.
	 */
	struct kvreg_conn *conn;
	u64 offset;			/* in the operation */
	u64 length;
	u32 rail;
	u32 tried;			/* rails it failed on */
	u32 pieces;			/* SQ slots taken on @conn */
	/* WRs not completed, plus one the poster holds while posting. */
	atomic_t left;
	int ret;			/* a post that failed */
	enum ib_wc_status status;	/* the first failed completion */
	/* Where it last failed: the completion's record names it. */
	u32 fail_dev;
	struct kvreg_net_addr fail_addr;
};

struct kvreg_op_ctx {
	struct list_head node;		/* on kf->done once complete */
	struct kvreg_file *kf;
	struct kvreg_side local;	/* holds the registration */
	struct kvreg_side unused;	/* kvreg_transfer_release()'s */
	struct kvreg_target t;		/* holds the region */
	u32 opcode;
	u64 local_offset;
	u64 remote_offset;
	u64 user_data;
	u64 length;
	atomic_t parts_left;
	/* The first part that failed for good; the rest of it once set. */
	atomic_t failed;
	int ret;
	enum ib_wc_status status;
	u32 fail_dev;
	struct kvreg_net_addr fail_addr;
	u32 nr_parts;
	struct kvreg_op_part parts[];
};

static void kvreg_ops_retry(struct work_struct *work);

void kvreg_ops_init(struct kvreg_file *kf)
{
	spin_lock_init(&kf->cq_lock);
	INIT_LIST_HEAD(&kf->done);
	init_waitqueue_head(&kf->cq_wait);
	INIT_LIST_HEAD(&kf->retry);
	INIT_DELAYED_WORK(&kf->retry_work, kvreg_ops_retry);
}

/* From the CQ's softirq, or a poster. Touches no sleeping lock. */
static void kvreg_op_finish(struct kvreg_op_ctx *op)
{
	struct kvreg_file *kf = op->kf;
	unsigned long flags;

	/* Release may free @kf once it sees the count fall: under the lock. */
	spin_lock_irqsave(&kf->cq_lock, flags);
	list_add_tail(&op->node, &kf->done);
	kf->nr_done++;
	kf->nr_inflight--;
	wake_up(&kf->cq_wait);
	spin_unlock_irqrestore(&kf->cq_lock, flags);
}

/* @part failed and is not tried again: the operation fails with it. */
static void kvreg_part_failed(struct kvreg_op_part *part)
{
	struct kvreg_op_ctx *op = part->op;

	if (atomic_cmpxchg(&op->failed, 0, 1))
		return;
	op->ret = part->ret;
	op->status = part->status;
	op->fail_dev = part->fail_dev;
	op->fail_addr = part->fail_addr;
}

static void kvreg_part_close(struct kvreg_op_part *part)
{
	struct kvreg_op_ctx *op = part->op;

	if (atomic_dec_and_test(&op->parts_left))
		kvreg_op_finish(op);
}

/* A rail's failure, not the operation's: the peer went, or its link. */
static bool kvreg_part_rail_failed(const struct kvreg_op_part *part)
{
	return part->ret || part->status == IB_WC_WR_FLUSH_ERR ||
	       part->status == IB_WC_RETRY_EXC_ERR ||
	       part->status == IB_WC_RNR_RETRY_EXC_ERR;
}

/*
 * Every work request of @part has completed, or was never posted. From
 * the CQ's softirq, or a poster. A part that failed with its rail goes
 * to another while one is left; what failed otherwise (a refused rkey)
 * fails the operation.
 */
static void kvreg_part_end(struct kvreg_op_part *part)
{
	struct kvreg_op_ctx *op = part->op;
	struct kvreg_conn *conn = part->conn;
	struct kvreg_file *kf = op->kf;
	bool ok = !part->ret && part->status == IB_WC_SUCCESS;
	bool again = false;
	unsigned long flags;

	if (!ok) {
		again = kvreg_part_rail_failed(part) &&
			kvreg_rails_left(op->t.rr, part->tried |
					 BIT(part->rail));
		part->fail_dev = conn->dev->index;
		part->fail_addr = conn->peer;
		WRITE_ONCE(conn->q.ready, false);
	}
	if (again)
		atomic64_inc(&conn->entry.failovers);
	kvreg_net_count(&conn->entry, part->length, part->status, ok);
	/* The last touch of @conn. */
	atomic_add(part->pieces, &conn->submit_free);
	part->conn = NULL;
	if (!ok)
		kvreg_rail_kick(op->t.rr->peer);
	if (again) {
		part->tried |= BIT(part->rail);
		/*
		 * Queued under the lock: release, which frees @kf, looks at
		 * the count under it first, then cancels the work.
		 */
		spin_lock_irqsave(&kf->cq_lock, flags);
		list_add_tail(&part->retry_node, &kf->retry);
		queue_delayed_work(system_unbound_wq, &kf->retry_work, 0);
		spin_unlock_irqrestore(&kf->cq_lock, flags);
		return;
	}
	if (!ok)
		kvreg_part_failed(part);
	kvreg_part_close(part);
}

static void kvreg_part_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvreg_op_part *part =
		container_of(wc->wr_cqe, struct kvreg_op_part, cqe);

	/* One CQ, polled by one context: no race on @status. */
	if (wc->status != IB_WC_SUCCESS && part->status == IB_WC_SUCCESS)
		part->status = wc->status;
	/*
	 * Any failed completion leaves an RC QP in the error state: no more
	 * is given to it; what comes after on it is flushed.
	 */
	if (wc->status != IB_WC_SUCCESS)
		WRITE_ONCE(part->conn->q.ready, false);
	if (atomic_dec_and_test(&part->left))
		kvreg_part_end(part);
}

static void kvreg_op_free(struct kvreg_op_ctx *op)
{
	kvreg_transfer_release(&op->local, &op->unused, &op->t);
	kfree(op);
}

/*
 * The work requests of @part on rail @rail (connection @conn), at both
 * sides' MR boundaries: how many, or -errno. Under the teardown_rwsem of
 * @conn's device, read, with its path checked live.
 */
static int kvreg_part_build(struct kvreg_op_part *part,
			    struct kvreg_reg_dev *rd,
			    const struct kvreg_rpath *path,
			    struct ib_rdma_wr *wr, struct ib_sge *sge,
			    struct kvreg_error *err)
{
	struct kvreg_op_ctx *op = part->op;
	u64 lva = op->local.va + part->offset;
	u64 rva = op->remote_offset + part->offset, left = part->length;
	u32 n = 0;

	while (left) {
		struct ib_mr *lmr = kvreg_reg_dev_find_mr(rd, lva);
		const struct kvreg_rchunk *c = kvreg_rpath_chunk(path, rva);
		u64 seg = left;

		if (n == KVREG_OP_MAX_PIECES) {
			kvreg_set_error(err, KVREG_REASON_TOO_MANY_PIECES,
					KVREG_NO_DEVICE_INDEX);
			err->limit = KVREG_OP_MAX_PIECES;
			err->request = op->length;
			return -E2BIG;
		}
		/* Ranges were checked: a miss is a kvreg bug. */
		if (WARN_ON_ONCE(!lmr))
			return -EINVAL;
		seg = min(seg, lmr->iova + lmr->length - lva);
		seg = min(seg, c->start + c->length - rva);
		sge[n] = (struct ib_sge) {
			.addr = lva, .length = seg, .lkey = lmr->lkey,
		};
		wr[n] = (struct ib_rdma_wr) {
			.wr.opcode = op->opcode == KVREG_OP_WRITE ?
				     IB_WR_RDMA_WRITE : IB_WR_RDMA_READ,
			.wr.sg_list = &sge[n],
			.wr.num_sge = 1,
			.wr.send_flags = IB_SEND_SIGNALED,
			.wr.wr_cqe = &part->cqe,
			.remote_addr = c->iova + (rva - c->start),
			.rkey = c->rkey,
		};
		if (n)
			wr[n - 1].wr.next = &wr[n].wr;
		lva += seg;
		rva += seg;
		left -= seg;
		n++;
	}
	return n;
}

/* @op's MRs on @conn's device, when it and the connection are usable. */
static struct kvreg_reg_dev *kvreg_part_path(struct kvreg_op_ctx *op,
					     struct kvreg_conn *conn)
{
	struct kvreg_reg *reg = op->local.reg;
	struct kvreg_dev *kdev = conn->dev;
	u32 i;

	lockdep_assert_held_read(&kdev->teardown_rwsem);
	if (kdev->dead || !conn->qp_live || READ_ONCE(conn->lost) ||
	    !READ_ONCE(conn->q.ready))
		return NULL;
	for (i = 0; i < reg->nr_devs; i++)
		if (reg->devs[i].dev == kdev && READ_ONCE(reg->devs[i].live) &&
		    reg->devs[i].fdev == conn->fdev)
			return &reg->devs[i];
	return NULL;
}

/*
 * Post @part's @n work requests on @conn, whose slots it holds. Once
 * called, the part completes through kvreg_part_end(), posted or not.
 */
static void kvreg_part_post(struct kvreg_op_part *part,
			    struct kvreg_conn *conn, u32 n,
			    struct ib_rdma_wr *wr)
{
	struct kvreg_qp *q = &conn->q;
	const struct ib_send_wr *bad = NULL;
	u32 posted = n;
	int ret;

	part->conn = conn;
	part->pieces = n;
	part->ret = 0;
	part->status = IB_WC_SUCCESS;
	kvreg_net_start(&conn->entry);
	atomic_set(&part->left, n + 1);
	mutex_lock(&q->mutex);
	ret = READ_ONCE(q->ready) ? ib_post_send(q->qp, &wr[0].wr, &bad) :
				    -ENOTCONN;
	mutex_unlock(&q->mutex);
	if (ret) {
		for (posted = 0; bad && &wr[posted].wr != bad; posted++)
			;
		part->ret = ret == -ENOTCONN ? ret : -EIO;
	}
	/* The unposted pieces and the poster's hold. */
	if (atomic_sub_and_test(n - posted + 1, &part->left))
		kvreg_part_end(part);
}

/*
 * Build @part on @conn (rail @rail) under its device's rwsem and post it,
 * after taking its slots: -EAGAIN when the rail's queue is full, -ENOTCONN
 * when the rail cannot take it; 0 once it is posted (and will complete).
 */
static int kvreg_part_send(struct kvreg_op_part *part,
			   struct kvreg_conn *conn, u32 rail,
			   struct ib_rdma_wr *wr, struct ib_sge *sge,
			   struct kvreg_error *err)
{
	struct kvreg_op_ctx *op = part->op;
	struct kvreg_dev *kdev = conn->dev;
	struct kvreg_reg_dev *rd;
	u32 slots;
	int n;

	part->rail = rail;
	down_read(&kdev->teardown_rwsem);
	rd = kvreg_part_path(op, conn);
	n = rd ? kvreg_part_build(part, rd, &op->t.rr->paths[rail], wr, sge,
				  err) : -ENOTCONN;
	slots = max(n, 0);
	if (n > 0 && !kvreg_rail_take_slots(op->t.rr->peer, &conn, &slots, 1))
		n = -EAGAIN;
	if (n > 0)
		kvreg_part_post(part, conn, n, wr);
	up_read(&kdev->teardown_rwsem);
	return n < 0 ? n : 0;
}

static void kvreg_set_queue_full(struct kvreg_conn *conn,
				 struct kvreg_error *err)
{
	kvreg_set_error(err, KVREG_REASON_QUEUE_FULL, conn->dev->index);
	err->limit = KVREG_SUBMIT_DEPTH;
	err->usage = KVREG_SUBMIT_DEPTH - atomic_read(&conn->submit_free);
}

/*
 * Post again the parts whose rail failed, each on a rail it has not
 * failed on. A part no rail will take fails its operation with the
 * reason it last failed for; a part that finds every queue full waits
 * for one to drain.
 */
static void kvreg_ops_retry(struct work_struct *work)
{
	struct kvreg_file *kf = container_of(to_delayed_work(work),
					     struct kvreg_file, retry_work);
	struct kvreg_op_part *part;
	struct kvreg_error err;
	struct kvreg_conn *conn;
	struct ib_rdma_wr *wr;
	struct ib_sge *sge;
	u32 rail;
	int ret;

	wr = kcalloc(KVREG_OP_MAX_PIECES, sizeof(*wr), GFP_KERNEL);
	sge = kcalloc(KVREG_OP_MAX_PIECES, sizeof(*sge), GFP_KERNEL);
	for (;;) {
		spin_lock_irq(&kf->cq_lock);
		part = list_first_entry_or_null(&kf->retry,
						struct kvreg_op_part,
						retry_node);
		if (part)
			list_del_init(&part->retry_node);
		spin_unlock_irq(&kf->cq_lock);
		if (!part)
			break;
		conn = NULL;
		if (wr && sge && !READ_ONCE(part->op->t.rr->peer->closing))
			conn = kvreg_rail_get(part->op->t.rr,
					      part->op->local.reg,
					      KVREG_NO_DEVICE_INDEX,
					      part->tried, &rail);
		ret = conn ? kvreg_part_send(part, conn, rail, wr, sge, &err) :
			     -ENOTCONN;
		if (conn)
			kvreg_conn_put(conn);
		if (ret == -EAGAIN) {
			spin_lock_irq(&kf->cq_lock);
			list_add(&part->retry_node, &kf->retry);
			spin_unlock_irq(&kf->cq_lock);
			queue_delayed_work(system_unbound_wq, &kf->retry_work,
					   1);
			break;
		}
		if (ret == -ENOTCONN && conn) {
			/* That rail too: another, or the end. */
			part->tried |= BIT(rail);
			spin_lock_irq(&kf->cq_lock);
			list_add(&part->retry_node, &kf->retry);
			spin_unlock_irq(&kf->cq_lock);
			continue;
		}
		if (ret) {
			/* No rail left: it fails as it failed last. */
			if (ret != -ENOTCONN) {
				part->ret = ret;
				part->status = IB_WC_SUCCESS;
			}
			kvreg_part_failed(part);
			kvreg_part_close(part);
		}
	}
	kfree(sge);
	kfree(wr);
}

/*
 * How @op is split: with @n rails up and enough bytes, into @n slices
 * of whole 4 KiB pages; otherwise whole, on one rail.
 */
static u32 kvreg_op_rails_wanted(u64 length)
{
	if (length < KVREG_RAIL_SPLIT_MIN)
		return 1;
	return min_t(u64, KVREG_DESC_MAX_PATHS,
		     length / (KVREG_RAIL_SPLIT_MIN / 2));
}

/*
 * Each accepted operation holds a context until it is reaped: a file that
 * submits and never reaps is stopped here. Two SUBMITs at once may each
 * pass with one more; the cap stays a bound.
 */
static int kvreg_ops_cap(struct kvreg_file *kf, struct kvreg_error *err)
{
	u32 max = READ_ONCE(kvreg_max_unreaped), held;

	spin_lock_irq(&kf->cq_lock);
	held = kf->nr_inflight + kf->nr_done;
	spin_unlock_irq(&kf->cq_lock);
	if (held < max)
		return 0;
	return kvreg_cap_refuse(err, KVREG_REASON_COMPLETION_LIMIT, max, held,
				1);
}

void kvreg_ops_stats(struct kvreg_file *kf, struct kvreg_stats *st)
{
	spin_lock_irq(&kf->cq_lock);
	st->file_unreaped = kf->nr_inflight + kf->nr_done;
	spin_unlock_irq(&kf->cq_lock);
}

static int kvreg_submit_one(struct kvreg_file *kf, struct kvreg_op *uop,
			    struct ib_rdma_wr *wr, struct ib_sge *sge,
			    struct kvreg_error *err)
{
	struct kvreg_transfer arg = {
		.flags = KVREG_TRANSFER_F_REMOTE_REGION,
		.opcode = uop->opcode,
		.device_index = KVREG_NO_DEVICE_INDEX,
		.local_handle = uop->local_handle,
		.local_offset = uop->local_offset,
		.remote_handle = uop->remote,
		.remote_offset = uop->remote_offset,
		.length = uop->length,
	};
	struct kvreg_conn *conns[KVREG_DESC_MAX_PATHS];
	u32 rails[KVREG_DESC_MAX_PATHS], slots[KVREG_DESC_MAX_PATHS];
	struct kvreg_side local = {}, unused = {};
	struct kvreg_target t = {};
	u32 want, n = 0, i, tried = 0;
	struct kvreg_op_ctx *op;
	u64 slice, at;
	int ret;

	if (uop->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (uop->opcode != KVREG_OP_WRITE && uop->opcode != KVREG_OP_READ)
		return kvreg_bad_arg(err, KVREG_ARG_OPCODE);
	if (!uop->length)
		return kvreg_bad_arg(err, KVREG_ARG_LENGTH);
	ret = kvreg_ops_cap(kf, err);
	if (ret)
		return ret;
	ret = kvreg_transfer_resolve(kf, &arg, &local, &unused, &t, err);
	if (ret)
		goto err_release;

	want = kvreg_op_rails_wanted(uop->length);
	while (n < want) {
		conns[n] = kvreg_rail_get(t.rr, local.reg,
					  KVREG_NO_DEVICE_INDEX, tried,
					  &rails[n]);
		if (!conns[n])
			break;
		tried |= BIT(rails[n++]);
	}
	if (!n) {
		kvreg_set_error(err, KVREG_REASON_CONN_LOST,
				KVREG_NO_DEVICE_INDEX);
		for (i = 0; i < KVREG_DESC_MAX_PATHS; i++)
			if (t.rr->paths[i].chunks)
				break;
		if (i < KVREG_DESC_MAX_PATHS)
			kvreg_set_net_error(err, err->reason,
					    &t.rr->peer->rails[i].addr);
		ret = -ENOTCONN;
		goto err_release;
	}

	op = kzalloc(struct_size(op, parts, n), GFP_KERNEL_ACCOUNT);
	if (!op) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		ret = -ENOMEM;
		goto err_conns;
	}
	op->kf = kf;
	op->local = local;
	op->unused = unused;
	op->t = t;
	op->opcode = uop->opcode;
	op->local_offset = uop->local_offset;
	op->remote_offset = uop->remote_offset;
	op->user_data = uop->user_data;
	op->length = uop->length;
	op->nr_parts = n;
	slice = round_up(div_u64(uop->length, n), SZ_4K);
	for (i = 0, at = 0; i < n; i++) {
		struct kvreg_op_part *part = &op->parts[i];

		part->cqe.done = kvreg_part_done;
		part->op = op;
		INIT_LIST_HEAD(&part->retry_node);
		part->offset = at;
		part->length = i == n - 1 ? uop->length - at : slice;
		at += part->length;
	}

	/* Each part's pieces, to know its slots; all must fit, or none. */
	for (i = 0; i < n; i++) {
		struct kvreg_dev *kdev = conns[i]->dev;
		struct kvreg_reg_dev *rd;
		int pieces;

		down_read(&kdev->teardown_rwsem);
		rd = kvreg_part_path(op, conns[i]);
		pieces = rd ? kvreg_part_build(&op->parts[i], rd,
					       &t.rr->paths[rails[i]],
					       wr, sge, err) : -ENOTCONN;
		up_read(&kdev->teardown_rwsem);
		if (pieces == -ENOTCONN) {
			kvreg_set_error(err, KVREG_REASON_CONN_LOST,
					kdev->index);
			kvreg_set_net_error(err, err->reason,
					    &conns[i]->peer);
		}
		if (pieces < 0) {
			ret = pieces;
			goto err_free;
		}
		slots[i] = pieces;
	}
	if (!kvreg_rail_take_slots(t.rr->peer, conns, slots, n)) {
		kvreg_set_queue_full(conns[0], err);
		err->request = slots[0];
		ret = -EAGAIN;
		goto err_free;
	}

	/* Accepted: from here on it completes, whatever the rails do. */
	spin_lock_irq(&kf->cq_lock);
	kf->nr_inflight++;
	spin_unlock_irq(&kf->cq_lock);
	atomic_set(&op->parts_left, n);
	for (i = 0; i < n; i++) {
		struct kvreg_op_part *part = &op->parts[i];
		struct kvreg_dev *kdev = conns[i]->dev;
		struct kvreg_reg_dev *rd;
		int pieces;

		part->rail = rails[i];
		down_read(&kdev->teardown_rwsem);
		rd = kvreg_part_path(op, conns[i]);
		pieces = rd ? kvreg_part_build(part, rd,
					       &t.rr->paths[rails[i]],
					       wr, sge, err) : -ENOTCONN;
		/* Gone since it was counted: posted as nothing, fails over. */
		if (pieces != slots[i])
			pieces = 0;
		part->conn = conns[i];
		if (pieces) {
			kvreg_part_post(part, conns[i], pieces, wr);
		} else {
			part->pieces = slots[i];
			part->ret = -ENOTCONN;
			atomic_set(&part->left, 1);
			kvreg_net_start(&conns[i]->entry);
			if (atomic_dec_and_test(&part->left))
				kvreg_part_end(part);
		}
		up_read(&kdev->teardown_rwsem);
		kvreg_conn_put(conns[i]);
	}
	return 0;

err_free:
	kfree(op);
err_conns:
	for (i = 0; i < n; i++)
		kvreg_conn_put(conns[i]);
err_release:
	kvreg_transfer_release(&local, &unused, &t);
	return ret;
}

int kvreg_submit(struct kvreg_file *kf, struct kvreg_submit *arg,
		 struct kvreg_error *err)
{
	struct ib_rdma_wr *wr;
	struct ib_sge *sge;
	struct kvreg_op uop;
	int ret = 0;
	u32 i;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->accepted)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	if (arg->count > KVREG_SUBMIT_MAX) {
		kvreg_bad_arg(err, KVREG_ARG_LENGTH);
		err->request = arg->count;
		err->limit = KVREG_SUBMIT_MAX;
		return -EINVAL;
	}
	if (arg->count && (arg->op_size < KVREG_OP_SIZE_VER0 ||
			   arg->op_size > KVREG_MAX_ARG_SIZE))
		return kvreg_bad_arg(err, KVREG_ARG_SIZE);
	wr = kcalloc(KVREG_OP_MAX_PIECES, sizeof(*wr), GFP_KERNEL);
	sge = kcalloc(KVREG_OP_MAX_PIECES, sizeof(*sge), GFP_KERNEL);
	if (!wr || !sge) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < arg->count; i++) {
		void __user *src = u64_to_user_ptr(arg->ops) +
				   (size_t)i * arg->op_size;

		ret = copy_struct_from_user(&uop, sizeof(uop), src,
					    arg->op_size);
		if (ret) {
			if (ret == -EFAULT)
				kvreg_bad_arg(err, KVREG_ARG_POINTER);
			else
				kvreg_bad_arg(err, KVREG_ARG_SIZE);
			break;
		}
		ret = kvreg_submit_one(kf, &uop, wr, sge, err);
		if (ret)
			break;
		arg->accepted++;
	}
	/* Some accepted: a success that says how many; the rest try again. */
	if (arg->accepted && ret) {
		memset(err, 0, sizeof(*err));
		err->device_index = KVREG_NO_DEVICE_INDEX;
		ret = 0;
	}
out:
	kfree(sge);
	kfree(wr);
	return ret;
}

bool kvreg_ops_ready(struct kvreg_file *kf)
{
	return READ_ONCE(kf->nr_done) > 0;
}

static bool kvreg_reap_enough(struct kvreg_file *kf, u32 want)
{
	return READ_ONCE(kf->nr_done) >= want;
}

static void kvreg_op_completion(struct kvreg_op_ctx *op,
				struct kvreg_completion *c)
{
	int ret = op->ret ? op->ret : op->status != IB_WC_SUCCESS ? -EIO : 0;

	memset(c, 0, sizeof(*c));
	c->user_data = op->user_data;
	c->error.device_index = KVREG_NO_DEVICE_INDEX;
	if (!ret) {
		c->bytes = op->length;
		return;
	}
	c->error.reason = kvreg_transfer_reason(ret, op->status, true);
	c->error.device_index = op->fail_dev;
	c->error.wc_status = op->status;
	c->error.driver_errno = ret;
	kvreg_set_net_error(&c->error, c->error.reason, &op->fail_addr);
	c->status = c->error.reason == KVREG_REASON_CONN_LOST ? -ENOTCONN :
		    ret;
}

int kvreg_reap(struct kvreg_file *kf, struct kvreg_reap *arg,
	       struct kvreg_error *err)
{
	struct kvreg_op_ctx *op, *tmp;
	struct kvreg_completion c;
	LIST_HEAD(batch);
	u32 n = 0;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->count)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	if (arg->capacity && (arg->entry_size < KVREG_COMPLETION_SIZE_VER0 ||
			      arg->entry_size > KVREG_MAX_ARG_SIZE))
		return kvreg_bad_arg(err, KVREG_ARG_SIZE);
	if (arg->min_complete > arg->capacity ||
	    arg->capacity > KVREG_SUBMIT_MAX)
		return kvreg_bad_arg(err, KVREG_ARG_LENGTH);
	if (arg->timeout_ms > KVREG_REAP_MAX_TIMEOUT_MS) {
		kvreg_bad_arg(err, KVREG_ARG_TIMEOUT);
		err->request = arg->timeout_ms;
		err->limit = KVREG_REAP_MAX_TIMEOUT_MS;
		return -EINVAL;
	}
	/* A signal or the timeout ends the wait: what has come is returned. */
	if (arg->min_complete) {
		long limit = msecs_to_jiffies(arg->timeout_ms);
		u32 want = arg->min_complete;

		wait_event_interruptible_timeout(kf->cq_wait,
						 kvreg_reap_enough(kf, want),
						 limit);
	}

	spin_lock_irq(&kf->cq_lock);
	list_for_each_entry_safe(op, tmp, &kf->done, node) {
		if (n == arg->capacity)
			break;
		list_move_tail(&op->node, &batch);
		kf->nr_done--;
		n++;
	}
	spin_unlock_irq(&kf->cq_lock);

	list_for_each_entry_safe(op, tmp, &batch, node) {
		kvreg_op_completion(op, &c);
		if (kvreg_copy_entry(arg->entries, arg->entry_size, arg->count,
				     &c, sizeof(c)))
			break;
		list_del(&op->node);
		kvreg_op_free(op);
		arg->count++;
	}
	if (list_empty(&batch))
		return 0;
	/* Not copied out: back at the head, in order, for the next REAP. */
	spin_lock_irq(&kf->cq_lock);
	list_for_each_entry(op, &batch, node)
		kf->nr_done++;
	list_splice(&batch, &kf->done);
	spin_unlock_irq(&kf->cq_lock);
	if (arg->count)
		return 0;
	kvreg_bad_arg(err, KVREG_ARG_POINTER);
	return -EFAULT;
}

static bool kvreg_ops_idle(struct kvreg_file *kf)
{
	bool idle;

	spin_lock_irq(&kf->cq_lock);
	idle = !kf->nr_inflight;
	spin_unlock_irq(&kf->cq_lock);
	return idle;
}

/*
 * The file is going: every rail with work in flight is put in the error
 * state, which flushes it, and none is mended or takes a retry; once the
 * last operation completes, the unreaped are dropped with the references
 * they hold.
 */
void kvreg_ops_release(struct kvreg_file *kf)
{
	struct kvreg_op_ctx *op, *tmp;
	struct kvreg_rregion *rr;
	unsigned long id;

	if (!kvreg_ops_idle(kf)) {
		xa_for_each(&kf->remotes, id, rr)
			kvreg_peer_abort(rr->peer);
		wait_event(kf->cq_wait, kvreg_ops_idle(kf));
	}
	/* Idle: the retry list is empty, but the work may be finishing. */
	cancel_delayed_work_sync(&kf->retry_work);
	list_for_each_entry_safe(op, tmp, &kf->done, node) {
		list_del(&op->node);
		kvreg_op_free(op);
	}
	kf->nr_done = 0;
}
