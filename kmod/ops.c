// SPDX-License-Identifier: GPL-2.0-only
/*
 * SUBMIT and REAP: batches of operations on imported regions, posted
 * without waiting. Each operation holds its registration and its region
 * by reference, takes SQ slots of its connection (a full queue accepts
 * fewer, never blocks) and completes exactly once into its file's
 * completion list: REAP drains it and poll() watches it. Every work
 * request of an operation is signalled, so an operation is done when all
 * of its completions (or flushes) have come, whichever way the QP went.
 */
#include <linux/poll.h>
#include <linux/slab.h>

#include "kvreg.h"

struct kvreg_op_ctx {
	struct list_head node;		/* on kf->done once complete */
	struct kvreg_file *kf;
	struct kvreg_side local;	/* holds the registration */
	struct kvreg_side unused;	/* kvreg_transfer_release()'s */
	struct kvreg_target t;		/* holds the region */
	struct ib_cqe cqe;
	/* WRs not completed, plus one the submitter holds while posting. */
	atomic_t left;
	u32 pieces;			/* SQ slots taken */
	int ret;			/* a post that failed */
	enum ib_wc_status status;	/* the first failed completion */
	u64 user_data;
	u64 length;
};

void kvreg_ops_init(struct kvreg_file *kf)
{
	spin_lock_init(&kf->cq_lock);
	INIT_LIST_HEAD(&kf->done);
	init_waitqueue_head(&kf->cq_wait);
}

/* From the CQ's softirq, or the submitter. Touches no sleeping lock. */
static void kvreg_op_finish(struct kvreg_op_ctx *op)
{
	struct kvreg_conn *conn = op->t.rr->conn;
	struct kvreg_file *kf = op->kf;
	unsigned long flags;

	atomic_add(op->pieces, &conn->submit_free);
	kvreg_net_count(&conn->entry, op->length, op->status,
			!op->ret && op->status == IB_WC_SUCCESS);
	/* Release may free @kf once it sees the count fall: under the lock. */
	spin_lock_irqsave(&kf->cq_lock, flags);
	list_add_tail(&op->node, &kf->done);
	kf->nr_done++;
	kf->nr_inflight--;
	wake_up(&kf->cq_wait);
	spin_unlock_irqrestore(&kf->cq_lock, flags);
}

static void kvreg_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvreg_op_ctx *op =
		container_of(wc->wr_cqe, struct kvreg_op_ctx, cqe);

	/* One CQ, polled by one context: no race on @status. */
	if (wc->status != IB_WC_SUCCESS && op->status == IB_WC_SUCCESS)
		op->status = wc->status;
	/*
	 * Any failed completion leaves an RC QP in the error state: what
	 * comes after is refused at once, as on a peer that went.
	 */
	if (wc->status != IB_WC_SUCCESS)
		WRITE_ONCE(op->t.rr->conn->q.ready, false);
	if (atomic_dec_and_test(&op->left))
		kvreg_op_finish(op);
}

static void kvreg_op_free(struct kvreg_op_ctx *op)
{
	kvreg_transfer_release(&op->local, &op->unused, &op->t);
	kfree(op);
}

/* The pieces of @op, at both sides' MR boundaries: how many, or -errno. */
static int kvreg_op_build(struct kvreg_op_ctx *op, struct kvreg_transfer *arg,
			  struct ib_rdma_wr *wr, struct ib_sge *sge,
			  struct kvreg_error *err)
{
	u64 lva = op->local.va, rva = arg->remote_offset, left = arg->length;
	u32 n = 0, rkey;
	u64 raddr;

	while (left) {
		struct ib_mr *lmr = kvreg_reg_dev_find_mr(op->local.rd, lva);
		u64 seg = left;

		if (n == KVREG_OP_MAX_PIECES) {
			kvreg_set_error(err, KVREG_REASON_TOO_MANY_PIECES,
					KVREG_NO_DEVICE_INDEX);
			err->limit = KVREG_OP_MAX_PIECES;
			err->request = arg->length;
			return -E2BIG;
		}
		/* Ranges were checked: a miss is a kvreg bug. */
		if (WARN_ON_ONCE(!lmr))
			return -EINVAL;
		seg = min(seg, lmr->iova + lmr->length - lva);
		kvreg_target_at(&op->t, arg, rva, &seg, &raddr, &rkey);
		sge[n] = (struct ib_sge) {
			.addr = lva, .length = seg, .lkey = lmr->lkey,
		};
		wr[n] = (struct ib_rdma_wr) {
			.wr.opcode = arg->opcode == KVREG_OP_WRITE ?
				     IB_WR_RDMA_WRITE : IB_WR_RDMA_READ,
			.wr.sg_list = &sge[n],
			.wr.num_sge = 1,
			.wr.send_flags = IB_SEND_SIGNALED,
			.wr.wr_cqe = &op->cqe,
			.remote_addr = raddr,
			.rkey = rkey,
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

/* Slots on the connection, all or none. */
static int kvreg_op_take_slots(struct kvreg_conn *conn, u32 n,
			       struct kvreg_error *err)
{
	if (atomic_sub_return(n, &conn->submit_free) >= 0)
		return 0;
	atomic_add(n, &conn->submit_free);
	kvreg_set_error(err, KVREG_REASON_QUEUE_FULL, conn->dev->index);
	err->limit = KVREG_SUBMIT_DEPTH;
	err->usage = KVREG_SUBMIT_DEPTH - atomic_read(&conn->submit_free);
	err->request = n;
	return -EAGAIN;
}

/*
 * Post @op's pieces. Once any is posted the operation is accepted, and it
 * completes through its CQEs; a post that fails part way leaves the rest
 * unposted, and the operation completes with the error.
 */
static void kvreg_op_post(struct kvreg_op_ctx *op, struct ib_rdma_wr *wr,
			  u32 n)
{
	struct kvreg_qp *q = op->t.q;
	const struct ib_send_wr *bad = NULL;
	unsigned long flags;
	u32 posted = n;
	int ret;

	spin_lock_irqsave(&op->kf->cq_lock, flags);
	op->kf->nr_inflight++;
	spin_unlock_irqrestore(&op->kf->cq_lock, flags);
	kvreg_net_start(&op->t.rr->conn->entry);
	atomic_set(&op->left, n + 1);
	mutex_lock(&q->mutex);
	ret = READ_ONCE(q->ready) ? ib_post_send(q->qp, &wr[0].wr, &bad) :
				    -ENOTCONN;
	mutex_unlock(&q->mutex);
	if (ret) {
		for (posted = 0; bad && &wr[posted].wr != bad; posted++)
			;
		op->ret = ret == -ENOTCONN ? ret : -EIO;
		WRITE_ONCE(q->ready, false);
	}
	/* The unposted pieces and the submitter's hold. */
	if (atomic_sub_and_test(n - posted + 1, &op->left))
		kvreg_op_finish(op);
}

static int kvreg_submit_one(struct kvreg_file *kf, struct kvreg_op *uop,
			    struct ib_rdma_wr *wr, struct ib_sge *sge,
			    struct kvreg_error *err)
{
	struct kvreg_transfer arg = {
		.flags = KVREG_TRANSFER_F_REMOTE_REGION,
		.opcode = uop->opcode,
		.local_handle = uop->local_handle,
		.local_offset = uop->local_offset,
		.remote_handle = uop->remote,
		.remote_offset = uop->remote_offset,
		.length = uop->length,
	};
	struct kvreg_rregion *rr;
	struct kvreg_op_ctx *op;
	struct kvreg_dev *kdev;
	int ret, n;

	if (uop->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (uop->opcode != KVREG_OP_WRITE && uop->opcode != KVREG_OP_READ)
		return kvreg_bad_arg(err, KVREG_ARG_OPCODE);
	if (!uop->length)
		return kvreg_bad_arg(err, KVREG_ARG_LENGTH);
	/* The device is the region's connection's, not the caller's to say. */
	mutex_lock(&kf->lock);
	rr = kvreg_rregion_get(kf, uop->remote);
	if (rr) {
		arg.device_index = rr->conn->dev->index;
		kvreg_rregion_put(rr);
	}
	mutex_unlock(&kf->lock);
	if (!rr) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_HANDLE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_HANDLE;
		return -ENOENT;
	}

	op = kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT);
	if (!op) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	op->kf = kf;
	op->cqe.done = kvreg_op_done;
	op->user_data = uop->user_data;
	op->length = uop->length;
	ret = kvreg_transfer_resolve(kf, &arg, &op->local, &op->unused, &op->t,
				     err);
	if (ret)
		goto err_free;
	kdev = op->local.rd->dev;
	down_read(&kdev->teardown_rwsem);
	ret = kvreg_target_live(kdev, &op->local, &op->t, err);
	if (ret)
		goto err_unlock;
	n = kvreg_op_build(op, &arg, wr, sge, err);
	if (n < 0) {
		ret = n;
		goto err_unlock;
	}
	ret = kvreg_op_take_slots(op->t.rr->conn, n, err);
	if (ret)
		goto err_unlock;
	op->pieces = n;
	kvreg_op_post(op, wr, n);
	up_read(&kdev->teardown_rwsem);
	return 0;

err_unlock:
	up_read(&kdev->teardown_rwsem);
err_free:
	kvreg_op_free(op);
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
	struct kvreg_conn *conn = op->t.rr->conn;
	int ret = op->ret ? op->ret : op->status != IB_WC_SUCCESS ? -EIO : 0;

	memset(c, 0, sizeof(*c));
	c->user_data = op->user_data;
	c->error.device_index = KVREG_NO_DEVICE_INDEX;
	if (!ret) {
		c->bytes = op->length;
		return;
	}
	c->error.reason = kvreg_transfer_reason(ret, op->status, true);
	c->error.device_index = conn->dev->index;
	c->error.wc_status = op->status;
	c->error.driver_errno = ret;
	kvreg_set_net_error(&c->error, c->error.reason, &conn->peer);
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
 * The file is going: every connection with work in flight is put in the
 * error state, which flushes it; once the last operation completes,
 * the unreaped are dropped with the references they hold.
 */
void kvreg_ops_release(struct kvreg_file *kf)
{
	struct kvreg_op_ctx *op, *tmp;
	struct kvreg_rregion *rr;
	unsigned long id;

	if (!kvreg_ops_idle(kf)) {
		xa_for_each(&kf->remotes, id, rr)
			if (atomic_read(&rr->conn->submit_free) !=
			    KVREG_SUBMIT_DEPTH)
				kvreg_conn_abort(rr->conn);
		wait_event(kf->cq_wait, kvreg_ops_idle(kf));
	}
	list_for_each_entry_safe(op, tmp, &kf->done, node) {
		list_del(&op->node);
		kvreg_op_free(op);
	}
	kf->nr_done = 0;
}
