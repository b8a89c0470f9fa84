// SPDX-License-Identifier: GPL-2.0-only
/*
 * SUBMIT and REAP: batches of operations on imported regions, posted
 * without waiting, completed into the file's list for REAP and poll().
 *
 * SUBMIT runs each operation through the same steps (resolve its handles,
 * choose its rails, build its work requests and reserve their SQ slots)
 * and appends them to one chain per rail; each chain is posted once, with
 * one doorbell, when the batch ends (or its buffer fills). Only a chain's
 * last work request is signalled: RC completes in order, so its
 * completion ends every part in the chain, while a failed work request
 * anywhere in it still completes (errors always do, and what follows it
 * is flushed), with its part's cqe, which notes the failure first.
 *
 * A part is an operation's share on one rail: all of it, or a slice of a
 * large one over several. A part whose rail failed is posted again, alone,
 * on another, from a work item, until it succeeds or no rail is left.
 */
#include <linux/poll.h>
#include <linux/slab.h>

#include "kvreg.h"
#include "trace.h"

struct kvreg_op_ctx;

struct kvreg_op_part {
	/* Its work requests' but the chain's last: notes a failure. */
	struct ib_cqe cqe;
	/* The chain's last work request, when this part ends the chain. */
	struct ib_cqe last_cqe;
	struct list_head retry_node;	/* on kf->retry; kf->cq_lock */
	struct kvreg_op_ctx *op;
	/*
	 * Posted on: alive until the part completes, as releasing a
	 * connection drains its QP first.
	 */
	struct kvreg_conn *conn;
	struct kvreg_reg_dev *rd;	/* the local MRs on @conn's device */
	/* Its chain's parts, in posting order; the last knows the first. */
	struct kvreg_op_part *chain_next;
	struct kvreg_op_part *chain_first;
	u64 offset;			/* in the operation */
	u64 length;
	u32 rail;
	u32 tried;			/* rails it failed on */
	u32 pieces;			/* SQ slots taken on @conn */
	int ret;			/* a post that failed */
	enum ib_wc_status status;	/* the first failed completion */
	/* Where it last failed: the completion's record names it. */
	u32 fail_dev;
	struct kvreg_net_addr fail_addr;
};

struct kvreg_op_ctx {
	struct list_head node;		/* kf->done, or kf->op_pool */
	struct kvreg_file *kf;
	struct kvreg_reg *reg;		/* the local side, a reference */
	struct kvreg_rregion *rr;	/* the remote side, a reference */
	u32 opcode;
	u64 local_va;
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

/*
 * A chain is signalled at a part boundary once this many work requests
 * went unsignalled, and at its end: completions come back while the rest
 * is in flight, so a caller refilling the queue never finds it drained
 * (RTRS's signal_interval).
 */
#define KVREG_SIGNAL_INTERVAL	16

/* Pooled contexts have one part; a split operation allocates its own. */
#define KVREG_OP_POOL_FILL	KVREG_SUBMIT_DEPTH
#define KVREG_OP_POOL_MAX	(2 * KVREG_SUBMIT_DEPTH)

/*
 * One rail's work requests of one SUBMIT (or of one retried part): the
 * rail's connection (a reference while it is built), the parts appended
 * so far, and room for as many work requests as a rail takes in flight.
 */
struct kvreg_chain {
	struct kvreg_conn *conn;
	struct kvreg_op_part *first;
	struct kvreg_op_part *last;
	/* The stretch since the last signalled work request. */
	struct kvreg_op_part *sub_first;
	u32 sub_wrs;
	u32 nr_wr;
	u32 nr_parts;
	u32 cap;
	u32 nr_sge;
	u32 sge_cap;
	struct ib_rdma_wr *wr;		/* @cap of them */
	struct ib_sge *sge;		/* @sge_cap, packed, in WR order */
};

/*
 * Scatter entries: an operation takes at most KVREG_OP_MAX_PIECES work
 * requests of KVREG_WR_SGES entries each. On memory of huge or merged
 * pages a work request takes one, on scattered base pages one per page.
 * A SUBMIT chain starts with room for KVREG_CHAIN_SGES and grows, once
 * posted, for an operation that could need more.
 */
#define KVREG_OP_MAX_SGES	(KVREG_OP_MAX_PIECES * KVREG_WR_SGES)
#define KVREG_CHAIN_SGES	(4 * (KVREG_SUBMIT_DEPTH + KVREG_OP_MAX_PIECES))

struct kvreg_submit_chains {
	struct kvreg_chain chain[KVREG_DESC_MAX_PATHS];	/* by rail */
};

enum { KVREG_STEP_RESOLVE, KVREG_STEP_RAILS, KVREG_STEP_RESERVE };

static void kvreg_ops_retry(struct work_struct *work);

void kvreg_ops_init(struct kvreg_file *kf)
{
	spin_lock_init(&kf->cq_lock);
	INIT_LIST_HEAD(&kf->done);
	init_waitqueue_head(&kf->cq_wait);
	kf->wake_at = U32_MAX;
	INIT_LIST_HEAD(&kf->op_pool);
	INIT_LIST_HEAD(&kf->retry);
	INIT_DELAYED_WORK(&kf->retry_work, kvreg_ops_retry);
}

/* Caller holds kf->cq_lock: wake whoever waits for what has come. */
static void kvreg_ops_wake(struct kvreg_file *kf)
{
	if (kf->polled || kf->nr_done >= kf->wake_at) {
		kf->wake_at = U32_MAX;
		wake_up(&kf->cq_wait);
	}
}

/*
 * What a chain's completion gathers while it ends its parts, so that the
 * connection's counters and the file's list are touched once per chain,
 * not once per operation.
 */
struct kvreg_tally {
	u32 ok_parts;
	u32 slots;
	u64 ok_bytes;
	struct list_head finished;	/* kvreg_op_ctx.node */
};

/* Caller holds kf->cq_lock: @op joins the completed. */
static void kvreg_op_done_locked(struct kvreg_file *kf,
				 struct kvreg_op_ctx *op)
{
	trace_kvreg_op_done(op->user_data, op->ret, op->status);
	list_add_tail(&op->node, &kf->done);
	kf->nr_done++;
	kf->nr_inflight--;
}

/* From the CQ's softirq, or a poster. Touches no sleeping lock. */
static void kvreg_op_finish(struct kvreg_op_ctx *op, struct kvreg_tally *t)
{
	struct kvreg_file *kf = op->kf;
	unsigned long flags;

	if (t) {
		list_add_tail(&op->node, &t->finished);
		return;
	}
	/* Release may free @kf once it sees the count fall: under the lock. */
	spin_lock_irqsave(&kf->cq_lock, flags);
	kvreg_op_done_locked(kf, op);
	kvreg_ops_wake(kf);
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

static void kvreg_part_close(struct kvreg_op_part *part,
			     struct kvreg_tally *t)
{
	struct kvreg_op_ctx *op = part->op;

	if (atomic_dec_and_test(&op->parts_left))
		kvreg_op_finish(op, t);
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
 * fails the operation. With @t, a success is only counted in it.
 */
static void kvreg_part_end(struct kvreg_op_part *part, struct kvreg_tally *t)
{
	struct kvreg_op_ctx *op = part->op;
	struct kvreg_conn *conn = part->conn;
	struct kvreg_file *kf = op->kf;
	bool ok = !part->ret && part->status == IB_WC_SUCCESS;
	bool again = false;
	unsigned long flags;

	part->conn = NULL;
	if (ok && t) {
		t->ok_parts++;
		t->ok_bytes += part->length;
		t->slots += part->pieces;
		kvreg_part_close(part, t);
		return;
	}
	if (!ok) {
		again = kvreg_part_rail_failed(part) &&
			kvreg_rails_left(op->rr, part->tried |
					 BIT(part->rail));
		part->fail_dev = conn->dev->index;
		part->fail_addr = conn->peer;
		WRITE_ONCE(conn->q.ready, false);
	}
	if (again)
		atomic64_inc(&conn->entry.failovers);
	kvreg_net_count(&conn->entry, part->length, part->status, ok);
	atomic_add(part->pieces, &conn->submit_free);
	if (!ok)
		kvreg_rail_kick(op->rr->peer);
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
	kvreg_part_close(part, t);
}

/*
 * Ends the parts of a chain from @part to @last (NULL: to its end), each
 * with what it noted; the successes are counted on @conn, and the
 * operations they finish put on their file's list, in one go each.
 */
static void kvreg_parts_end(struct kvreg_conn *conn,
			    struct kvreg_op_part *part,
			    struct kvreg_op_part *last)
{
	struct kvreg_tally t = { .finished = LIST_HEAD_INIT(t.finished) };
	struct kvreg_file *kf = part ? part->op->kf : NULL;
	struct kvreg_op_ctx *op, *tmp;
	unsigned long flags;

	while (part) {
		/*
		 * Ending it may repost or free it: its link first. Past @last
		 * is another stretch, ended by its own completion.
		 */
		struct kvreg_op_part *next = part == last ? NULL :
					     part->chain_next;

		kvreg_part_end(part, &t);
		part = next;
	}
	if (t.ok_parts) {
		kvreg_net_count_ok(&conn->entry, t.ok_parts, t.ok_bytes);
		/* The last touch of @conn. */
		atomic_add(t.slots, &conn->submit_free);
	}
	if (list_empty(&t.finished))
		return;
	/* Release may free @kf once it sees the count fall: under the lock. */
	spin_lock_irqsave(&kf->cq_lock, flags);
	list_for_each_entry_safe(op, tmp, &t.finished, node)
		kvreg_op_done_locked(kf, op);
	kvreg_ops_wake(kf);
	spin_unlock_irqrestore(&kf->cq_lock, flags);
}

static void kvreg_part_note(struct kvreg_op_part *part, struct ib_wc *wc)
{
	/* One CQ, polled by one context: no race on @status. */
	if (wc->status != IB_WC_SUCCESS && part->status == IB_WC_SUCCESS)
		part->status = wc->status;
	/*
	 * Any failed completion leaves an RC QP in the error state: no more
	 * is given to it; what comes after on it is flushed.
	 */
	if (wc->status != IB_WC_SUCCESS)
		WRITE_ONCE(part->conn->q.ready, false);
}

/* An unsignalled work request failed (or was flushed): noted only. */
static void kvreg_part_mid_done(struct ib_cq *cq, struct ib_wc *wc)
{
	kvreg_part_note(container_of(wc->wr_cqe, struct kvreg_op_part, cqe),
			wc);
}

/*
 * A signalled work request, the last of its stretch of the chain: every
 * one before it has completed.
 */
static void kvreg_chain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvreg_op_part *last =
		container_of(wc->wr_cqe, struct kvreg_op_part, last_cqe);

	kvreg_part_note(last, wc);
	kvreg_parts_end(last->conn, last->chain_first, last);
}

static void kvreg_op_put_refs(struct kvreg_op_ctx *op)
{
	if (op->rr)
		kvreg_rregion_put(op->rr);
	if (op->reg)
		kvreg_reg_put(op->reg);
	op->rr = NULL;
	op->reg = NULL;
}

/* A context for @nr_parts: a pooled one for a single part. */
static struct kvreg_op_ctx *kvreg_op_alloc(struct kvreg_file *kf,
					   u32 nr_parts)
{
	struct kvreg_op_ctx *op = NULL;

	if (nr_parts == 1) {
		spin_lock_irq(&kf->cq_lock);
		op = list_first_entry_or_null(&kf->op_pool,
					      struct kvreg_op_ctx, node);
		if (op) {
			list_del(&op->node);
			kf->op_pool_len--;
		}
		spin_unlock_irq(&kf->cq_lock);
	}
	if (!op)
		op = kmalloc(struct_size(op, parts, nr_parts),
			     GFP_KERNEL_ACCOUNT);
	if (!op)
		return NULL;
	memset(op, 0, struct_size(op, parts, nr_parts));
	op->kf = kf;
	op->nr_parts = nr_parts;
	return op;
}

/*
 * The pool, filled by a file's first SUBMIT to the depth a rail takes in
 * flight: a file that never submits pays nothing for it.
 */
static void kvreg_op_pool_fill(struct kvreg_file *kf)
{
	struct kvreg_op_ctx *op;
	LIST_HEAD(fresh);
	u32 n;

	if (READ_ONCE(kf->op_pool_filled))
		return;
	WRITE_ONCE(kf->op_pool_filled, true);
	for (n = 0; n < KVREG_OP_POOL_FILL; n++) {
		op = kmalloc(struct_size(op, parts, 1), GFP_KERNEL_ACCOUNT);
		if (!op)
			break;
		list_add(&op->node, &fresh);
	}
	spin_lock_irq(&kf->cq_lock);
	list_splice(&fresh, &kf->op_pool);
	kf->op_pool_len += n;
	spin_unlock_irq(&kf->cq_lock);
}

/* Caller holds kf->cq_lock. Pooled while there is room, else freed. */
static bool kvreg_op_pool_put(struct kvreg_file *kf, struct kvreg_op_ctx *op)
{
	if (op->nr_parts != 1 || kf->op_pool_len >= KVREG_OP_POOL_MAX)
		return false;
	list_add(&op->node, &kf->op_pool);
	kf->op_pool_len++;
	return true;
}

/* Done with: its references dropped, the context pooled or freed. */
static void kvreg_op_free(struct kvreg_op_ctx *op)
{
	struct kvreg_file *kf = op->kf;
	bool pooled;

	kvreg_op_put_refs(op);
	spin_lock_irq(&kf->cq_lock);
	pooled = kvreg_op_pool_put(kf, op);
	spin_unlock_irq(&kf->cq_lock);
	if (!pooled)
		kfree(op);
}

/*
 * @op's registration on @conn's device, when it and the connection are
 * usable. Caller holds the device's teardown_rwsem for read.
 */
static struct kvreg_reg_dev *kvreg_part_path(struct kvreg_op_ctx *op,
					     struct kvreg_conn *conn)
{
	struct kvreg_reg *reg = op->reg;
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
 * Append @part's work requests, at the remote side's chunk boundaries
 * and with the local side's runs as their scatter entries, to @chain:
 * how many, or -errno (the chain as it was). Under the teardown_rwsem of
 * the chain's device, read, with its path checked live in @part->rd.
 */
static int kvreg_chain_build(struct kvreg_chain *chain,
			     struct kvreg_op_part *part,
			     struct kvreg_error *err)
{
	struct kvreg_op_ctx *op = part->op;
	const struct kvreg_rpath *path = &op->rr->paths[part->rail];
	enum ib_wr_opcode opcode = op->opcode == KVREG_OP_WRITE ?
				   IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
	u64 lva = op->local_va + part->offset;
	u64 rva = op->remote_offset + part->offset, left = part->length;
	u32 lkey = chain->conn->q.qp->pd->local_dma_lkey;
	u32 wr_sges = chain->conn->dev->wr_sges;
	u32 at = chain->nr_wr, n = 0, sges = chain->nr_sge;
	struct kvreg_run_mark run = {};

	while (left) {
		const struct kvreg_rchunk *c = kvreg_rpath_chunk(path, rva);
		struct ib_rdma_wr *wr = &chain->wr[at + n];
		struct ib_sge *sge = &chain->sge[sges];
		u64 seg = left;
		u32 nsge;

		if (n == KVREG_OP_MAX_PIECES) {
			kvreg_set_error(err, KVREG_REASON_TOO_MANY_PIECES,
					KVREG_NO_DEVICE_INDEX);
			err->limit = KVREG_OP_MAX_PIECES;
			err->request = op->length;
			return -E2BIG;
		}
		seg = min(seg, c->start + c->length - rva);
		nsge = kvreg_reg_dev_sges(part->rd, lva, &seg, sge, wr_sges,
					  lkey, &run);
		sges += nsge;
		wr->wr.next = &wr[1].wr;
		wr->wr.wr_cqe = &part->cqe;
		wr->wr.sg_list = sge;
		wr->wr.num_sge = nsge;
		wr->wr.opcode = opcode;
		wr->wr.send_flags = 0;
		wr->remote_addr = c->iova + (rva - c->start);
		wr->rkey = c->rkey;
		lva += seg;
		rva += seg;
		left -= seg;
		n++;
	}
	return n;
}

/* The last work request so far ends a stretch: signalled, it ends it. */
static void kvreg_chain_signal(struct kvreg_chain *chain)
{
	struct ib_rdma_wr *wr = &chain->wr[chain->nr_wr - 1];

	wr->wr.wr_cqe = &chain->last->last_cqe;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	chain->last->chain_first = chain->sub_first;
	chain->sub_first = NULL;
	chain->sub_wrs = 0;
}

/* The part a work request of a chain belongs to. */
static struct kvreg_op_part *kvreg_wr_part(struct ib_rdma_wr *wr)
{
	if (wr->wr.send_flags & IB_SEND_SIGNALED)
		return container_of(wr->wr.wr_cqe, struct kvreg_op_part,
				    last_cqe);
	return container_of(wr->wr.wr_cqe, struct kvreg_op_part, cqe);
}

/* @part, built and with its slots, joins the end of @chain. */
static void kvreg_chain_link(struct kvreg_chain *chain,
			     struct kvreg_op_part *part, u32 pieces)
{
	if (chain->last && chain->sub_wrs >= KVREG_SIGNAL_INTERVAL)
		kvreg_chain_signal(chain);
	part->conn = chain->conn;
	part->pieces = pieces;
	part->ret = 0;
	part->status = IB_WC_SUCCESS;
	part->chain_next = NULL;
	part->chain_first = NULL;
	/* Its entries follow the chain's: they end where its last WR's do. */
	chain->nr_sge = chain->wr[chain->nr_wr + pieces - 1].wr.sg_list -
			chain->sge +
			chain->wr[chain->nr_wr + pieces - 1].wr.num_sge;
	if (chain->last)
		chain->last->chain_next = part;
	else
		chain->first = part;
	if (!chain->sub_first)
		chain->sub_first = part;
	chain->last = part;
	chain->sub_wrs += pieces;
	chain->nr_wr += pieces;
	chain->nr_parts++;
}

/*
 * Whether each part of @chain still has its MRs on the device: removal
 * may have come between building and posting. Under its teardown_rwsem.
 */
static bool kvreg_chain_live(struct kvreg_chain *chain)
{
	struct kvreg_conn *conn = chain->conn;
	struct kvreg_op_part *part;

	if (conn->dev->dead || !conn->qp_live || READ_ONCE(conn->lost))
		return false;
	for (part = chain->first; part; part = part->chain_next)
		if (!READ_ONCE(part->rd->live))
			return false;
	return true;
}

/*
 * Post @chain with one doorbell, signalled at its end and every
 * KVREG_SIGNAL_INTERVAL work requests. Once called, each of its parts
 * completes through kvreg_part_end(), posted or not; the chain is empty
 * after, its connection given back.
 */
static void kvreg_chain_post(struct kvreg_chain *chain)
{
	struct kvreg_conn *conn = chain->conn;
	const struct ib_send_wr *bad = NULL;
	struct kvreg_op_part *part, *from;
	struct kvreg_dev *kdev;
	struct kvreg_qp *q;
	u32 at = 0, i;
	int ret = -ENOTCONN;

	if (!chain->nr_parts)
		goto out;
	kdev = conn->dev;
	q = &conn->q;
	chain->wr[chain->nr_wr - 1].wr.next = NULL;
	kvreg_chain_signal(chain);
	/* Before the post: its completion may come as the post returns. */
	kvreg_net_start(&conn->entry, chain->nr_parts);

	down_read(&kdev->teardown_rwsem);
	/*
	 * With bottom halves off, a software device (rxe) runs its send
	 * tasklet when they come back on, here, rather than in ksoftirqd.
	 */
	spin_lock_bh(&q->post_lock);
	if (READ_ONCE(q->ready) && kvreg_chain_live(chain))
		ret = ib_post_send(q->qp, &chain->wr[0].wr, &bad);
	spin_unlock_bh(&q->post_lock);
	trace_kvreg_chain_post(kdev->index, chain->nr_wr, chain->nr_parts,
			       ret);
	if (!ret) {
		up_read(&kdev->teardown_rwsem);
		goto out;
	}
	if (bad && bad != &chain->wr[0].wr) {
		/*
		 * Part of the chain is queued and the end of its stretch is
		 * not: nothing would end that stretch. The drain flushes what
		 * is queued and waits for it; the QP is left in error, as a
		 * failed post leaves a connection. The stretches posted
		 * whole were ended by their completions: their parts may be
		 * gone, so the work requests (ours) say where the rest is.
		 */
		ib_drain_sq(q->qp);
		at = container_of(bad, struct ib_rdma_wr, wr) - chain->wr;
	}
	up_read(&kdev->teardown_rwsem);
	WRITE_ONCE(q->ready, false);
	for (i = at; i && !(chain->wr[i - 1].wr.send_flags & IB_SEND_SIGNALED);
	     i--)
		;
	from = kvreg_wr_part(&chain->wr[at]);
	for (part = from; part; part = part->chain_next)
		part->ret = ret == -ENOTCONN ? ret : -EIO;
	kvreg_parts_end(conn, kvreg_wr_part(&chain->wr[i]), NULL);
out:
	if (conn)
		kvreg_conn_put(conn);
	chain->conn = NULL;
	chain->first = NULL;
	chain->last = NULL;
	chain->sub_first = NULL;
	chain->sub_wrs = 0;
	chain->nr_wr = 0;
	chain->nr_sge = 0;
	chain->nr_parts = 0;
}

static void kvreg_set_queue_full(struct kvreg_conn *conn,
				 struct kvreg_error *err)
{
	kvreg_set_error(err, KVREG_REASON_QUEUE_FULL, conn->dev->index);
	err->limit = KVREG_SUBMIT_DEPTH;
	err->usage = KVREG_SUBMIT_DEPTH - atomic_read(&conn->submit_free);
}

/*
 * Build @part on rail @rail's connection @conn under its device's rwsem
 * and take its slots, into @chain (which takes @conn's reference): -EAGAIN
 * when the rail's queue is full, -ENOTCONN when the rail cannot take it.
 */
static int kvreg_part_add(struct kvreg_chain *chain, struct kvreg_op_part *part,
			  struct kvreg_conn *conn, u32 rail,
			  struct kvreg_error *err)
{
	struct kvreg_dev *kdev = conn->dev;
	u32 slots;
	int n;

	part->rail = rail;
	down_read(&kdev->teardown_rwsem);
	part->rd = kvreg_part_path(part->op, conn);
	n = part->rd ? kvreg_chain_build(chain, part, err) : -ENOTCONN;
	up_read(&kdev->teardown_rwsem);
	slots = max(n, 0);
	if (n > 0 && !kvreg_rail_take_slots(part->op->rr->peer, &conn,
					    &slots, 1))
		n = -EAGAIN;
	if (n < 0)
		return n;
	kvreg_chain_link(chain, part, n);
	return 0;
}

/*
 * Post again the parts whose rail failed, each alone on a rail it has
 * not failed on. A part no rail will take fails its operation with the
 * reason it last failed for; a part that finds every queue full waits
 * for one to drain.
 */
static void kvreg_ops_retry(struct work_struct *work)
{
	struct kvreg_file *kf = container_of(to_delayed_work(work),
					     struct kvreg_file, retry_work);
	struct kvreg_chain chain = { .cap = KVREG_OP_MAX_PIECES,
				     .sge_cap = KVREG_OP_MAX_SGES };
	struct kvreg_op_part *part;
	struct kvreg_error err;
	struct kvreg_conn *conn;
	u32 rail;
	int ret;

	chain.wr = kcalloc(chain.cap, sizeof(*chain.wr), GFP_KERNEL);
	/* 32 KiB: not worth an order-3 page a fragmented host may lack. */
	chain.sge = kvmalloc_array(chain.sge_cap, sizeof(*chain.sge),
				   GFP_KERNEL);
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
		if (chain.wr && chain.sge &&
		    !READ_ONCE(part->op->rr->peer->closing))
			conn = kvreg_rail_get(part->op->rr, part->op->reg,
					      KVREG_NO_DEVICE_INDEX,
					      part->tried, &rail);
		ret = -ENOTCONN;
		if (conn) {
			chain.conn = conn;
			ret = kvreg_part_add(&chain, part, conn, rail, &err);
			/* Posted, or given back with its connection. */
			kvreg_chain_post(&chain);
		}
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
			kvreg_part_close(part, NULL);
		}
	}
	kvfree(chain.sge);
	kfree(chain.wr);
}

/*
 * How an operation is split: with @n rails up and enough bytes, into @n
 * slices of whole 4 KiB pages; otherwise whole, on one rail.
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
 * submits and never reaps is stopped here, once per batch. Two SUBMITs at
 * once may each pass with their room; the cap stays a bound.
 */
static u32 kvreg_ops_room(struct kvreg_file *kf, u32 *held)
{
	u32 max = READ_ONCE(kvreg_max_unreaped);

	spin_lock_irq(&kf->cq_lock);
	*held = kf->nr_inflight + kf->nr_done;
	spin_unlock_irq(&kf->cq_lock);
	return *held < max ? max - *held : 0;
}

void kvreg_ops_stats(struct kvreg_file *kf, struct kvreg_stats *st)
{
	spin_lock_irq(&kf->cq_lock);
	st->file_unreaped = kf->nr_inflight + kf->nr_done;
	spin_unlock_irq(&kf->cq_lock);
}

/* The operation's arguments, as far as they can be checked alone. */
static int kvreg_op_check(const struct kvreg_op *uop, struct kvreg_error *err)
{
	if (uop->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (uop->opcode != KVREG_OP_WRITE && uop->opcode != KVREG_OP_READ)
		return kvreg_bad_arg(err, KVREG_ARG_OPCODE);
	if (!uop->length)
		return kvreg_bad_arg(err, KVREG_ARG_LENGTH);
	return 0;
}

/* Step 1: both handles, each held by a reference in @op. */
static int kvreg_op_resolve(struct kvreg_file *kf, const struct kvreg_op *uop,
			    struct kvreg_op_ctx *op, struct kvreg_error *err)
{
	struct kvreg_side local = {};
	int ret;

	ret = kvreg_resolve_rregion(kf, uop->opcode, KVREG_NO_DEVICE_INDEX,
				    uop->remote, uop->remote_offset,
				    uop->length, &op->rr, err);
	if (!ret)
		ret = kvreg_resolve_side(kf, uop->local_handle,
					 uop->local_offset, uop->length,
					 KVREG_NO_DEVICE_INDEX,
					 uop->opcode == KVREG_OP_WRITE ? 0 :
					 KVREG_ACCESS_LOCAL_WRITE,
					 KVREG_ARG_OFFSET, &local, err);
	op->reg = local.reg;
	op->local_va = local.va;
	op->opcode = uop->opcode;
	op->remote_offset = uop->remote_offset;
	op->user_data = uop->user_data;
	op->length = uop->length;
	trace_kvreg_op_step(uop->user_data, KVREG_STEP_RESOLVE);
	return ret;
}

/*
 * Step 2: up to @want rails for @op, each connection by a reference, in
 * *@nr; none is an error.
 */
static int kvreg_op_choose_rails(struct kvreg_op_ctx *op, u32 want,
				 struct kvreg_conn **conns, u32 *rails,
				 u32 *nr, struct kvreg_error *err)
{
	u32 n = 0, tried = 0;

	while (n < want) {
		conns[n] = kvreg_rail_get(op->rr, op->reg,
					  KVREG_NO_DEVICE_INDEX, tried,
					  &rails[n]);
		if (!conns[n])
			break;
		tried |= BIT(rails[n++]);
	}
	trace_kvreg_op_step(op->user_data, KVREG_STEP_RAILS);
	*nr = n;
	if (n)
		return 0;
	return kvreg_rails_none_up(op->rr, op->reg, err);
}

/*
 * Scatter entries @part can take at most: each starts at a run of the
 * local side or at a work request, runs start at pages, and a work
 * request ends at a remote chunk (a page at least) or after a run; and
 * no more than an operation's most.
 */
static u32 kvreg_part_max_sges(const struct kvreg_op_ctx *op,
			       const struct kvreg_op_part *part)
{
	u64 lva = op->local_va + part->offset;
	u64 pages = (PAGE_ALIGN(lva + part->length) - (lva & PAGE_MASK)) >>
		    PAGE_SHIFT;

	return min_t(u64, 2 * pages + 2, KVREG_OP_MAX_SGES);
}

/*
 * The chain of rail @rail for @conn, with room for one more operation's
 * work requests and @sges scatter entries: one built for another
 * connection of the rail (mended since) or too full is posted first, and
 * its entries grown while it is empty. The chain takes @conn's reference.
 */
static int kvreg_chain_for(struct kvreg_submit_chains *sc, u32 rail,
			   struct kvreg_conn *conn, u32 sges,
			   struct kvreg_chain **out)
{
	struct kvreg_chain *chain = &sc->chain[rail];

	if (!chain->wr) {
		chain->cap = KVREG_SUBMIT_DEPTH + KVREG_OP_MAX_PIECES;
		chain->wr = kvcalloc(chain->cap, sizeof(*chain->wr),
				     GFP_KERNEL_ACCOUNT);
		if (!chain->wr)
			goto err_put;
	}
	if (chain->conn != conn ||
	    chain->nr_wr + KVREG_OP_MAX_PIECES > chain->cap ||
	    chain->nr_sge + sges > chain->sge_cap)
		kvreg_chain_post(chain);
	/* Posted, so empty: no work request points into the old entries. */
	if (sges > chain->sge_cap) {
		u32 cap = max_t(u32, sges, KVREG_CHAIN_SGES);

		kvfree(chain->sge);
		chain->sge_cap = 0;
		chain->sge = kvmalloc_array(cap, sizeof(*chain->sge),
					    GFP_KERNEL_ACCOUNT);
		if (!chain->sge)
			goto err_put;
		chain->sge_cap = cap;
	}
	if (chain->conn)
		kvreg_conn_put(conn);	/* the chain holds one already */
	else
		chain->conn = conn;
	*out = chain;
	return 0;

err_put:
	kvreg_conn_put(conn);
	return -ENOMEM;
}

/*
 * Step 3: each part built into its rail's chain, with its slots; all of
 * the operation's, or none (each chain as it was).
 */
static int kvreg_op_reserve(struct kvreg_submit_chains *sc,
			    struct kvreg_op_ctx *op, struct kvreg_conn **conns,
			    const u32 *rails, struct kvreg_error *err)
{
	struct kvreg_chain *chains[KVREG_DESC_MAX_PATHS];
	u32 slots[KVREG_DESC_MAX_PATHS];
	u64 slice = round_up(div_u64(op->length, op->nr_parts), SZ_4K);
	u64 offset = 0;
	u32 i, n = op->nr_parts;
	int ret = 0;

	for (i = 0; i < n; i++) {
		struct kvreg_op_part *part = &op->parts[i];
		struct kvreg_conn *conn = conns[i];
		int pieces;

		conns[i] = NULL;	/* the chain's now, or put */
		part->op = op;
		part->cqe.done = kvreg_part_mid_done;
		part->last_cqe.done = kvreg_chain_done;
		INIT_LIST_HEAD(&part->retry_node);
		part->offset = offset;
		part->length = i == n - 1 ? op->length - offset : slice;
		part->rail = rails[i];
		offset += part->length;
		if (ret) {
			kvreg_conn_put(conn);
			continue;
		}
		ret = kvreg_chain_for(sc, rails[i], conn,
				      kvreg_part_max_sges(op, part),
				      &chains[i]);
		if (ret) {
			kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
					KVREG_NO_DEVICE_INDEX);
			continue;
		}
		down_read(&conn->dev->teardown_rwsem);
		part->rd = kvreg_part_path(op, conn);
		pieces = part->rd ? kvreg_chain_build(chains[i], part, err) :
				    -ENOTCONN;
		up_read(&conn->dev->teardown_rwsem);
		if (pieces == -ENOTCONN) {
			kvreg_set_error(err, KVREG_REASON_CONN_LOST,
					conn->dev->index);
			kvreg_set_net_error(err, err->reason, &conn->peer);
		}
		if (pieces < 0)
			ret = pieces;
		else
			slots[i] = pieces;
	}
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		conns[i] = chains[i]->conn;
	if (!kvreg_rail_take_slots(op->rr->peer, conns, slots, n)) {
		/* The numbers of a rail that could not take its part. */
		for (i = 0; i + 1 < n; i++)
			if (atomic_read(&conns[i]->submit_free) < (int)slots[i])
				break;
		kvreg_set_queue_full(conns[i], err);
		err->request = slots[i];
		return -EAGAIN;
	}
	for (i = 0; i < n; i++)
		kvreg_chain_link(chains[i], &op->parts[i], slots[i]);
	trace_kvreg_op_step(op->user_data, KVREG_STEP_RESERVE);
	return 0;
}

/*
 * One operation through the steps. Accepted, it is in its rails' chains
 * and completes, whatever the rails do; refused, nothing of it is left.
 */
static int kvreg_submit_one(struct kvreg_file *kf,
			    struct kvreg_submit_chains *sc,
			    const struct kvreg_op *uop, struct kvreg_error *err)
{
	struct kvreg_conn *conns[KVREG_DESC_MAX_PATHS];
	u32 rails[KVREG_DESC_MAX_PATHS], n, i;
	struct kvreg_op_ctx head = { .kf = kf }, *op;
	int ret;

	ret = kvreg_op_check(uop, err);
	if (ret)
		return ret;
	/* The handles first: how many parts depends on the region's rails. */
	ret = kvreg_op_resolve(kf, uop, &head, err);
	if (ret)
		goto err_refs;
	ret = kvreg_op_choose_rails(&head, kvreg_op_rails_wanted(uop->length),
				    conns, rails, &n, err);
	if (ret)
		goto err_refs;
	op = kvreg_op_alloc(kf, n);
	if (!op) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		ret = -ENOMEM;
		goto err_conns;
	}
	op->reg = head.reg;
	op->rr = head.rr;
	op->opcode = head.opcode;
	op->local_va = head.local_va;
	op->remote_offset = head.remote_offset;
	op->user_data = head.user_data;
	op->length = head.length;
	atomic_set(&op->parts_left, n);
	ret = kvreg_op_reserve(sc, op, conns, rails, err);
	if (ret) {
		kvreg_op_free(op);
		return ret;
	}
	spin_lock_irq(&kf->cq_lock);
	kf->nr_inflight++;
	spin_unlock_irq(&kf->cq_lock);
	return 0;

err_conns:
	for (i = 0; i < n; i++)
		kvreg_conn_put(conns[i]);
err_refs:
	kvreg_op_put_refs(&head);
	return ret;
}

/* A file's chain buffers: the last SUBMIT's, or new ones. */
static struct kvreg_submit_chains *kvreg_chains_get(struct kvreg_file *kf)
{
	struct kvreg_submit_chains *sc = xchg(&kf->spare_chains, NULL);

	return sc ?: kzalloc(sizeof(*sc), GFP_KERNEL_ACCOUNT);
}

static void kvreg_chains_free(struct kvreg_submit_chains *sc)
{
	u32 i;

	if (!sc)
		return;
	for (i = 0; i < KVREG_DESC_MAX_PATHS; i++) {
		kvfree(sc->chain[i].wr);
		kvfree(sc->chain[i].sge);
	}
	kfree(sc);
}

/* Step 4: every chain posted, one doorbell each; the buffers kept. */
static void kvreg_chains_post(struct kvreg_file *kf,
			      struct kvreg_submit_chains *sc)
{
	u32 i;

	for (i = 0; i < KVREG_DESC_MAX_PATHS; i++)
		kvreg_chain_post(&sc->chain[i]);
	kvreg_chains_free(xchg(&kf->spare_chains, sc));
}

/**
 * kvreg_submit() - KVREG_IOC_SUBMIT: post a batch of operations.
 * @kf: the calling file
 * @arg: the batch; @arg->accepted says how many were taken
 * @err: why the first refused one was, when none was taken
 *
 * Operations are taken in order until one is refused; those taken go out
 * with one doorbell per rail when the batch ends.
 *
 * Return: 0 when any was accepted, else the first one's -errno.
 */
int kvreg_submit(struct kvreg_file *kf, struct kvreg_submit *arg,
		 struct kvreg_error *err)
{
	struct kvreg_submit_chains *sc;
	struct kvreg_op uop;
	u32 i, room, held;
	int ret = 0;

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
	trace_kvreg_submit(arg->count);
	kvreg_op_pool_fill(kf);
	sc = kvreg_chains_get(kf);
	if (!sc) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	room = kvreg_ops_room(kf, &held);
	for (i = 0; i < arg->count; i++) {
		void __user *src = u64_to_user_ptr(arg->ops) +
				   (size_t)i * arg->op_size;

		if (i == room) {
			ret = kvreg_cap_refuse(err,
					       KVREG_REASON_COMPLETION_LIMIT,
					       READ_ONCE(kvreg_max_unreaped),
					       held + i, 1);
			break;
		}
		ret = copy_struct_from_user(&uop, sizeof(uop), src,
					    arg->op_size);
		if (ret) {
			if (ret == -EFAULT)
				kvreg_bad_arg(err, KVREG_ARG_POINTER);
			else
				kvreg_bad_arg(err, KVREG_ARG_SIZE);
			break;
		}
		ret = kvreg_submit_one(kf, sc, &uop, err);
		if (ret)
			break;
		arg->accepted++;
	}
	kvreg_chains_post(kf, sc);
	/* Some accepted: a success that says how many; the rest try again. */
	if (arg->accepted && ret) {
		memset(err, 0, sizeof(*err));
		err->device_index = KVREG_NO_DEVICE_INDEX;
		ret = 0;
	}
	trace_kvreg_submit_done(arg->accepted, ret);
	return ret;
}

/*
 * Whether completions wait, for poll(): from now on every completion
 * wakes, as a poller (epoll's edge-triggered too) waits for any.
 */
bool kvreg_ops_ready(struct kvreg_file *kf)
{
	bool ready;

	spin_lock_irq(&kf->cq_lock);
	kf->polled = true;
	ready = kf->nr_done > 0;
	spin_unlock_irq(&kf->cq_lock);
	return ready;
}

/*
 * REAP's wait condition: @want have come, or the wake is set for them.
 * Checked after the waiter is queued, so no completion is missed.
 */
static bool kvreg_reap_enough(struct kvreg_file *kf, u32 want)
{
	bool enough;

	spin_lock_irq(&kf->cq_lock);
	enough = kf->nr_done >= want;
	if (!enough)
		kf->wake_at = min(kf->wake_at, want);
	spin_unlock_irq(&kf->cq_lock);
	return enough;
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

/* Reaped: their references dropped, then pooled in one go. */
static void kvreg_ops_free_list(struct kvreg_file *kf, struct list_head *list)
{
	struct kvreg_op_ctx *op, *tmp;
	LIST_HEAD(unpooled);

	list_for_each_entry(op, list, node)
		kvreg_op_put_refs(op);
	spin_lock_irq(&kf->cq_lock);
	list_for_each_entry_safe(op, tmp, list, node) {
		list_del(&op->node);
		if (!kvreg_op_pool_put(kf, op))
			list_add(&op->node, &unpooled);
	}
	spin_unlock_irq(&kf->cq_lock);
	list_for_each_entry_safe(op, tmp, &unpooled, node)
		kfree(op);
}

/**
 * kvreg_reap() - KVREG_IOC_REAP: take completed operations, oldest first.
 * @kf: the calling file
 * @arg: where to put them; @arg->count says how many were
 * @err: why none could be given
 *
 * Waits, killably and at most @arg->timeout_ms, until @arg->min_complete
 * have come; the wake comes once for them, not once per completion.
 *
 * Return: 0, or -errno with nothing taken.
 */
int kvreg_reap(struct kvreg_file *kf, struct kvreg_reap *arg,
	       struct kvreg_error *err)
{
	struct kvreg_op_ctx *op, *tmp;
	struct kvreg_completion c;
	LIST_HEAD(batch);
	LIST_HEAD(copied);
	u32 n = 0;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->count)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	if (arg->capacity && (arg->entry_size < KVREG_COMPLETION_SIZE_VER0 ||
			      arg->entry_size > KVREG_MAX_ARG_SIZE))
		return kvreg_bad_size(err, KVREG_ARG_SIZE, arg->entry_size);
	if (arg->min_complete > arg->capacity ||
	    arg->capacity > KVREG_SUBMIT_MAX)
		return kvreg_bad_arg(err, KVREG_ARG_LENGTH);
	if (arg->timeout_ms > KVREG_REAP_MAX_TIMEOUT_MS) {
		kvreg_bad_arg(err, KVREG_ARG_TIMEOUT);
		err->request = arg->timeout_ms;
		err->limit = KVREG_REAP_MAX_TIMEOUT_MS;
		return -EINVAL;
	}
	trace_kvreg_reap(arg->min_complete, arg->capacity);
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
		list_move_tail(&op->node, &copied);
		arg->count++;
	}
	kvreg_ops_free_list(kf, &copied);
	trace_kvreg_reap_done(arg->count);
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

/*
 * Release's wait condition; while it waits, every completion wakes it.
 * @inflight, when given, gets the count it saw.
 */
static bool kvreg_ops_idle(struct kvreg_file *kf, u32 *inflight)
{
	u32 n;

	spin_lock_irq(&kf->cq_lock);
	n = kf->nr_inflight;
	if (n)
		kf->wake_at = 0;
	spin_unlock_irq(&kf->cq_lock);
	if (inflight)
		*inflight = n;
	return !n;
}

/*
 * The file is going: every rail with work in flight is put in the error
 * state, which flushes it, and none is mended or takes a retry; once the
 * last operation completes, the unreaped are dropped with the references
 * they hold, and the pool with them.
 */
void kvreg_ops_release(struct kvreg_file *kf)
{
	struct kvreg_op_ctx *op, *tmp;
	u32 inflight;

	if (!kvreg_ops_idle(kf, &inflight)) {
		trace_kvreg_release_abort(inflight);
		/* Not only the imported: UNIMPORTed regions' work too. */
		kvreg_peers_abort(kf);
		wait_event(kf->cq_wait, kvreg_ops_idle(kf, NULL));
	}
	/* Idle: the retry list is empty, but the work may be finishing. */
	cancel_delayed_work_sync(&kf->retry_work);
	list_for_each_entry_safe(op, tmp, &kf->done, node) {
		list_del(&op->node);
		kvreg_op_put_refs(op);
		kfree(op);
	}
	kf->nr_done = 0;
	list_for_each_entry_safe(op, tmp, &kf->op_pool, node) {
		list_del(&op->node);
		kfree(op);
	}
	kf->op_pool_len = 0;
	kvreg_chains_free(xchg(&kf->spare_chains, NULL));
}
