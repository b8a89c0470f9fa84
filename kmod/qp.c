// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel QP engine: an RC QP connected to itself, in the protection
 * domain of the export it serves, that fast-registers the export's MRs.
 * Keys of a kernel PD work only on kernel QPs of that PD. An open file's
 * own PD has no engine: REGISTER makes no MR.
 *
 * An engine is addressable by anyone who can send to its QP number with
 * its expected PSN: on rxe a local user's own RC QP aimed at the host's
 * own GID reaches it, and `rdma res show qp` gives both numbers to any
 * user. So an engine never holds a remote right: it only fast-registers,
 * and a TRANSFER between two registrations of a file is a CPU copy
 * (transfer.c), not a loopback chain. PSNs are random, as the CM's are;
 * an engine errored by a foreign packet (refused, it still moves the
 * engine to the error state) is connected again, with new PSNs, and the
 * chain it broke is posted once more.
 */
#include <linux/bottom_half.h>
#include <linux/etherdevice.h>
#include <linux/kmemleak.h>
#include <linux/random.h>
#include <rdma/ib_cache.h>

#include "kvreg.h"
#include "trace.h"

/*
 * Prefer a RoCE v2 GID mapped from IPv4: loopback to it needs no IPv6
 * route. Any valid GID will do on InfiniBand or when there is none.
 */
static const struct ib_gid_attr *kvreg_pick_gid(struct kvreg_dev *kdev)
{
	const struct ib_gid_attr *fallback = NULL, *attr;
	int i;

	/* The IPv4-mapped GID sits right after the link-local ones. */
	for (i = 0; i < KVREG_GID_SCAN; i++) {
		attr = rdma_get_gid_attr(kdev->ibdev, kdev->port, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw)) {
			if (fallback)
				rdma_put_gid_attr(fallback);
			return attr;
		}
		if (!fallback)
			fallback = attr;
		else
			rdma_put_gid_attr(attr);
	}
	return fallback ? fallback : ERR_PTR(-ENODEV);
}

bool kvreg_qp_path_ready(struct kvreg_dev *kdev)
{
	const struct ib_gid_attr *attr = kvreg_pick_gid(kdev);

	if (IS_ERR(attr))
		return false;
	rdma_put_gid_attr(attr);
	return true;
}

/* Bring the QP from any state to RTS, connected to itself. */
static int kvreg_qp_connect(struct kvreg_qp *q)
{
	struct kvreg_dev *kdev = q->dev;
	const struct ib_gid_attr *gid_attr;
	struct ib_port_attr port_attr;
	struct ib_qp_attr attr = {};
	union ib_gid dgid;
	u16 vlan_id;
	u32 psn;
	int ret;

	lockdep_assert_held(&q->mutex);
	WRITE_ONCE(q->ready, false);

	attr.qp_state = IB_QPS_RESET;
	ret = ib_modify_qp(q->qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = kdev->port;
	/* No remote right, ever: see the top of this file. */
	attr.qp_access_flags = 0;
	ret = ib_modify_qp(q->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	gid_attr = kvreg_pick_gid(kdev);
	if (IS_ERR(gid_attr))
		return PTR_ERR(gid_attr);

	/* The port's MTU, as the CM gives a connection. */
	ret = ib_query_port(kdev->ibdev, kdev->port, &port_attr);
	if (ret) {
		rdma_put_gid_attr(gid_attr);
		return ret;
	}

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = port_attr.active_mtu;
	attr.dest_qp_num = q->qp->qp_num;
	/* Connected to itself: what it sends is what it expects. */
	psn = get_random_u32() & KVREG_PSN_MASK;
	attr.rq_psn = psn;
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(kdev->ibdev, kdev->port);
	rdma_ah_set_port_num(&attr.ah_attr, kdev->port);
	dgid = gid_attr->gid;
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, gid_attr->index, 64, 0);
	if (attr.ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE) {
		/* Kernel QPs must bring their own resolved L2 address. */
		ret = rdma_read_gid_l2_fields(gid_attr, &vlan_id,
					      attr.ah_attr.roce.dmac);
		if (ret) {
			rdma_put_gid_attr(gid_attr);
			return ret;
		}
	} else {
		rdma_ah_set_dlid(&attr.ah_attr, 0);
	}
	ret = ib_modify_qp(q->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	rdma_put_gid_attr(gid_attr);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = psn;
	attr.max_rd_atomic = 16;
	ret = ib_modify_qp(q->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		return ret;
	WRITE_ONCE(q->ready, true);
	return 0;
}

/*
 * A chain is signalled on its last work request only. RC completes in
 * order, so the last completion means every earlier one is done; a failed
 * earlier request still completes (errors are always reported, and the
 * rest are flushed), which is what mid_cqe records.
 */
struct kvreg_chain_wait {
	struct ib_cqe mid_cqe;
	struct ib_cqe last_cqe;
	struct completion done;
	enum ib_wc_status status;
};

static void kvreg_chain_note(struct kvreg_chain_wait *w, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS && w->status == IB_WC_SUCCESS)
		w->status = wc->status;
}

static void kvreg_mid_done(struct ib_cq *cq, struct ib_wc *wc)
{
	kvreg_chain_note(container_of(wc->wr_cqe, struct kvreg_chain_wait,
				      mid_cqe), wc);
}

static void kvreg_last_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvreg_chain_wait *w =
		container_of(wc->wr_cqe, struct kvreg_chain_wait, last_cqe);

	kvreg_chain_note(w, wc);
	complete(&w->done);
}

/*
 * A chain's wait, for the QP's life. Allocated, not on the poster's
 * stack: a chain whose flush fails outlives its call (kvreg_post_chain()).
 */
static int kvreg_qp_alloc_chain(struct kvreg_qp *q)
{
	q->chain = kzalloc(sizeof(*q->chain), GFP_KERNEL_ACCOUNT);
	if (!q->chain)
		return -ENOMEM;
	q->chain->mid_cqe.done = kvreg_mid_done;
	q->chain->last_cqe.done = kvreg_last_done;
	init_completion(&q->chain->done);
	return 0;
}

/*
 * After the QP is destroyed. A chain it could not flush, and that the
 * drain did not end either, may still complete into its wait from the
 * shared CQ: that wait stays allocated, a few bytes against memory
 * scribbled on.
 */
static void kvreg_qp_free_chain(struct kvreg_qp *q, u32 qpn)
{
	if (q->chain_owed && !completion_done(&q->chain->done)) {
		dev_err(&q->dev->ibdev->dev,
			"kvreg: QP %u went with a chain it could not flush\n",
			qpn);
		kmemleak_not_leak(q->chain);
		return;
	}
	kfree(q->chain);
}

/*
 * A QP's CQ is a share of the device's pool (ib_cq_pool_get()), as the
 * NVMe-oF and iSER targets take theirs, and goes back to it: kvreg never
 * frees one. ib_free_cq() as a QP goes is not safe under IB_POLL_SOFTIRQ:
 * ib_poll_handler() lets go of IRQ_POLL_F_SCHED, all irq_poll_disable()
 * waits for, before it re-arms the CQ with ib_req_notify_cq(). The
 * drain's completion wakes the thread that frees in that window, so the
 * re-arm can touch a freed CQ; on 6.12's rxe, under the fuzzer, it did.
 * A pooled CQ outlives every QP on its device, and the pool frees it when
 * the device is unregistered, after kvreg has let go of it (device.c).
 * Shared, it may still hold a QP's completions after the QP is gone, and
 * poll them into freed memory: no QP goes before its last completion is
 * polled (the drain in kvreg_qp_destroy_cm(), the chain's own wait in
 * kvreg_post_chain(), the drain in kvreg_qp_destroy() of a chain whose
 * flush failed).
 */
static int kvreg_qp_get_cq(struct kvreg_qp *q, u32 nr_cqe)
{
	q->cq = ib_cq_pool_get(q->dev->ibdev, nr_cqe, -1, IB_POLL_SOFTIRQ);
	if (IS_ERR(q->cq))
		return PTR_ERR(q->cq);
	q->cq_entries = nr_cqe;
	return 0;
}

static void kvreg_qp_put_cq(struct kvreg_qp *q)
{
	ib_cq_pool_put(q->cq, q->cq_entries);
}

/*
 * Caller holds teardown_rwsem of @kdev for read, and has checked it is
 * not dead. A port that is not up yet is connected at first use.
 */
int kvreg_qp_create(struct kvreg_qp *q, struct kvreg_dev *kdev,
		    struct ib_pd *pd)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	q->dev = kdev;
	mutex_init(&q->mutex);
	spin_lock_init(&q->post_lock);
	ret = kvreg_qp_alloc_chain(q);
	if (ret)
		goto err_mutex;
	/* Entries for a chain's completions, flushes included. */
	ret = kvreg_qp_get_cq(q, KVREG_CQ_DEPTH);
	if (ret)
		goto err_chain;
	init_attr.send_cq = q->cq;
	init_attr.recv_cq = q->cq;
	init_attr.cap.max_send_wr = KVREG_SQ_DEPTH;
	init_attr.cap.max_recv_wr = 1;
	init_attr.cap.max_send_sge = 1;
	init_attr.cap.max_recv_sge = 1;
	init_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	init_attr.qp_type = IB_QPT_RC;
	q->qp = ib_create_qp(pd, &init_attr);
	if (IS_ERR(q->qp)) {
		ret = PTR_ERR(q->qp);
		goto err_cq;
	}
	mutex_lock(&q->mutex);
	kvreg_qp_connect(q);
	mutex_unlock(&q->mutex);
	return 0;

err_cq:
	kvreg_qp_put_cq(q);
err_chain:
	kfree(q->chain);
err_mutex:
	mutex_destroy(&q->mutex);
	return ret;
}

/*
 * One step of the importer's QP, with the attributes the CM would give it
 * but no remote access: the peer can neither READ nor WRITE through it.
 * The ACK timeout is set here, as the CM's own would on every kernel.
 */
static int kvreg_qp_own_step(struct kvreg_qp *q, struct rdma_cm_id *cm_id,
			     enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	ret = rdma_init_qp_attr(cm_id, &attr, &mask);
	if (ret)
		return ret;
	if (mask & IB_QP_ACCESS_FLAGS)
		attr.qp_access_flags = 0;
	if (mask & IB_QP_TIMEOUT)
		attr.timeout = KVREG_ACK_TIMEOUT;
	/*
	 * The counts come from the peer's REP: 7 would retry for ever, and
	 * an operation would never fail on a responder that stopped.
	 */
	if (mask & IB_QP_RETRY_CNT)
		attr.retry_cnt = min_t(u8, attr.retry_cnt, KVREG_RETRY_COUNT);
	if (mask & IB_QP_RNR_RETRY)
		attr.rnr_retry = min_t(u8, attr.rnr_retry, KVREG_RETRY_COUNT);
	return ib_modify_qp(q->qp, &attr, mask);
}

/*
 * The importer's QP on the peer's REP (the CM's CONNECT_RESPONSE): RTR,
 * then RTS; INIT it reached when it was made. The caller sends the RTU.
 */
int kvreg_qp_own_rts(struct kvreg_qp *q, struct rdma_cm_id *cm_id)
{
	return kvreg_qp_own_step(q, cm_id, IB_QPS_RTR) ?:
	       kvreg_qp_own_step(q, cm_id, IB_QPS_RTS);
}

/*
 * A QP connected to a peer through the RDMA CM (conn.c), in @pd. An
 * accepted one is the CM's to move through its states. An importer's
 * (@own_states) is not given to the CM: kvreg moves it, with no remote
 * access flags at any state, so the node it connects to cannot reach the
 * importer's memory even in the instant before the connection is up.
 * Caller holds teardown_rwsem of @kdev for read. One receive slot, for
 * ib_drain_qp()'s marker: neither side posts a receive of its own.
 */
int kvreg_qp_create_cm(struct kvreg_qp *q, struct kvreg_dev *kdev,
		       struct ib_pd *pd, struct rdma_cm_id *cm_id,
		       bool own_states,
		       void (*event_handler)(struct ib_event *, void *),
		       void *ctx)
{
	/*
	 * An importer's: a synchronous chain, SUBMIT's work and the
	 * keepalive WRITE side by side. An accepted one only responds: it
	 * posts the drain's marker alone, and a peer may open thousands.
	 */
	u32 send_wr = own_states ? KVREG_SQ_DEPTH + KVREG_SUBMIT_DEPTH + 1 :
			KVREG_PASSIVE_SQ_DEPTH;
	u32 recv_wr = 1;
	struct ib_qp_init_attr init_attr = {
		.event_handler = event_handler,
		.qp_context = ctx,
	};
	int ret;

	q->dev = kdev;
	q->cm_peer = true;
	mutex_init(&q->mutex);
	spin_lock_init(&q->post_lock);
	ret = kvreg_qp_alloc_chain(q);
	if (ret)
		goto err_mutex;
	/* Each WR, signalled or not (a flush completes each); each receive. */
	ret = kvreg_qp_get_cq(q, (own_states ? KVREG_CQ_DEPTH +
				      KVREG_SUBMIT_DEPTH + 1 : send_wr) +
			      recv_wr);
	if (ret)
		goto err_chain;
	init_attr.send_cq = q->cq;
	init_attr.recv_cq = q->cq;
	init_attr.cap.max_send_wr = send_wr;
	init_attr.cap.max_recv_wr = recv_wr;
	/* An importer's local side: the registration's DMA runs. */
	init_attr.cap.max_send_sge = own_states ? kdev->wr_sges : 1;
	init_attr.cap.max_recv_sge = 1;
	init_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	init_attr.qp_type = IB_QPT_RC;
	if (!own_states) {
		ret = rdma_create_qp(cm_id, pd, &init_attr);
		if (ret)
			goto err_cq;
		q->qp = cm_id->qp;
		return 0;
	}
	q->qp = ib_create_qp(pd, &init_attr);
	if (IS_ERR(q->qp)) {
		ret = PTR_ERR(q->qp);
		goto err_cq;
	}
	/* INIT now, as rdma_create_qp() does: a drain needs a QP past RESET. */
	ret = kvreg_qp_own_step(q, cm_id, IB_QPS_INIT);
	if (ret)
		goto err_qp;
	q->own_states = true;
	return 0;

err_qp:
	ib_destroy_qp(q->qp);
err_cq:
	kvreg_qp_put_cq(q);
err_chain:
	kfree(q->chain);
err_mutex:
	mutex_destroy(&q->mutex);
	return ret;
}

/*
 * The peer was disconnected first, so the drain ends whatever a chain
 * still waits for; no chain can be posted after @ready fell.
 */
void kvreg_qp_destroy_cm(struct kvreg_qp *q, struct rdma_cm_id *cm_id)
{
	u32 qpn = q->qp->qp_num;

	mutex_lock(&q->mutex);
	/*
	 * Never taken from a softirq: no _bh here, so that teardown does not
	 * run pending CQ polls in its own context as it lets go of the lock.
	 */
	spin_lock(&q->post_lock);
	WRITE_ONCE(q->ready, false);
	spin_unlock(&q->post_lock);
	mutex_unlock(&q->mutex);
	ib_drain_qp(q->qp);
	/* A chain whose flush failed ended with the drain, if not before. */
	if (q->chain_owed)
		trace_kvreg_chain_collected(q->dev->index, qpn);
	if (q->own_states)
		ib_destroy_qp(q->qp);
	else
		rdma_destroy_qp(cm_id);
	kvreg_qp_put_cq(q);
	kvreg_qp_free_chain(q, qpn);
	mutex_destroy(&q->mutex);
}

/*
 * Every chain is waited for under @mutex, to its last completion, so the
 * shared CQ holds none of this QP's; all but one whose flush failed,
 * which the drain ends now (its marker completes after the chain).
 */
void kvreg_qp_destroy(struct kvreg_qp *q)
{
	u32 qpn = q->qp->qp_num;

	if (q->chain_owed) {
		if (!completion_done(&q->chain->done))
			ib_drain_sq(q->qp);
		trace_kvreg_chain_collected(q->dev->index, qpn);
	}
	ib_destroy_qp(q->qp);
	kvreg_qp_put_cq(q);
	kvreg_qp_free_chain(q, qpn);
	mutex_destroy(&q->mutex);
}

/*
 * The error state, which flushes what is outstanding. It can fail (a
 * driver's error, a device going; debugfs inject_flush_fail makes it, for
 * the test), and then what was posted is not flushed.
 */
static int kvreg_qp_flush(struct kvreg_qp *q)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	u32 inject = READ_ONCE(kvreg_inject_flush_fail);

	if (inject && cmpxchg(&kvreg_inject_flush_fail, inject,
			      inject - 1) == inject)
		return -EIO;
	return ib_modify_qp(q->qp, &attr, IB_QP_STATE);
}

/*
 * The last chain on @q timed out and could not be flushed: its requests
 * may still run, and complete into @q->chain. Wait for that, as long as
 * a chain may take, before posting anything: reposting would reuse the
 * wait, and a late completion of the old chain would end the new one.
 * Its end in, the QP is connected again before use (@ready fell).
 */
static int kvreg_qp_collect_owed(struct kvreg_qp *q, unsigned long timeout)
{
	long left;

	left = wait_for_completion_killable_timeout(&q->chain->done, timeout);
	if (left <= 0)
		return left ? -EINTR : -ETIMEDOUT;
	q->chain_owed = false;
	trace_kvreg_chain_collected(q->dev->index, q->qp->qp_num);
	return 0;
}

static int kvreg_post_chain_once(struct kvreg_qp *q, struct ib_send_wr *first,
				 struct ib_send_wr *last, unsigned long timeout,
				 enum ib_wc_status *wc_status)
{
	struct kvreg_chain_wait *w = q->chain;
	const struct ib_send_wr *bad_wr;
	struct ib_send_wr *wr;
	long left;
	int ret;

	lockdep_assert_held(&q->mutex);
	*wc_status = IB_WC_SUCCESS;
	/*
	 * A QP left in error by an earlier failure is recovered here; one
	 * connected to a peer is not: its error state is the connection's.
	 */
	if (!q->ready && q->cm_peer)
		return -ENOTCONN;
	if (q->chain_owed) {
		ret = kvreg_qp_collect_owed(q, timeout);
		if (ret)
			return ret;
	}
	if (!q->ready) {
		ret = kvreg_qp_connect(q);
		if (ret)
			return -ENETDOWN;
	}
	reinit_completion(&w->done);
	w->status = IB_WC_SUCCESS;
	for (wr = first; wr; wr = wr->next) {
		if (wr == last) {
			wr->wr_cqe = &w->last_cqe;
			wr->send_flags |= IB_SEND_SIGNALED;
		} else {
			wr->wr_cqe = &w->mid_cqe;
			wr->send_flags &= ~IB_SEND_SIGNALED;
		}
	}

	/*
	 * Software devices (rxe) do their work in tasklets: posted from
	 * process context those wake ksoftirqd and the caller sleeps until
	 * it has run. With bottom halves off, they run right here when
	 * they are turned back on, and short chains are complete before
	 * the wait below starts. Posting is allowed in atomic context.
	 */
	local_bh_disable();
	ret = ib_post_send(q->qp, first, &bad_wr);
	local_bh_enable();
	if (ret) {
		/* Part of the chain may be queued: flush it before @w dies. */
		if (bad_wr != first)
			ib_drain_sq(q->qp);
		WRITE_ONCE(q->ready, false);
		return ret;
	}
	left = wait_for_completion_killable_timeout(&w->done, timeout);
	if (left <= 0) {
		/*
		 * Late, or the caller is being killed: the error state
		 * flushes every outstanding request, the last one included,
		 * at once. If the QP cannot be moved there, the chain is
		 * left to run (or to be flushed when the QP goes) and the
		 * QP is owed its end: the caller returns now all the same.
		 */
		if (!left)
			dev_warn_ratelimited(&q->dev->ibdev->dev,
					     "kvreg: work requests timed out, flushing the QP\n");
		else if (q->cm_peer)
			WRITE_ONCE(q->killed, true);
		WRITE_ONCE(q->ready, false);
		if (kvreg_qp_flush(q)) {
			q->chain_owed = true;
			trace_kvreg_chain_unflushed(q->dev->index,
						    q->qp->qp_num,
						    !completion_done(&w->done));
			return left ? -EINTR : -ETIMEDOUT;
		}
		wait_for_completion(&w->done);
		*wc_status = w->status;
		return left ? -EINTR : -ETIMEDOUT;
	}
	if (w->status != IB_WC_SUCCESS) {
		WRITE_ONCE(q->ready, false);
		*wc_status = w->status;
		return -EIO;
	}
	return 0;
}

int kvreg_post_chain(struct kvreg_qp *q, struct ib_send_wr *first,
		     struct ib_send_wr *last, unsigned long timeout,
		     enum ib_wc_status *wc_status)
{
	int ret = kvreg_post_chain_once(q, first, last, timeout, wc_status);

	/*
	 * A chain whose first failure is a flush met an engine in error
	 * that kvreg did not see go there: a foreign packet (see the top of
	 * this file), or a late duplicate of its own refused after an
	 * earlier chain. Flushed from its first request, the chain is whole
	 * again once reposted, and the caller does not pay for it; cut
	 * midway, a REG_MR already done is refused the second time (its MR
	 * is not free) and the call fails as it would have. Once: a second
	 * flush is an answer. A peer's QP is never reconnected here.
	 */
	if (ret == -EIO && !q->cm_peer && *wc_status == IB_WC_WR_FLUSH_ERR) {
		trace_kvreg_engine_retry(q->dev->index, q->qp->qp_num);
		ret = kvreg_post_chain_once(q, first, last, timeout, wc_status);
	}
	return ret;
}
