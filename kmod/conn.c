// SPDX-License-Identifier: GPL-2.0-only
/*
 * Connections through the RDMA CM, and their event handler. Each serves
 * one open file. Active connections are made by IMPORT and post the
 * transfers: their QP lives in the file's PD, whose local_dma_lkey
 * their local sides use over the registrations' DMA mappings, and kvreg
 * moves it through its states itself so that it never takes incoming
 * RDMA. Passive ones are accepted on an endpoint
 * (endpoint.c) when the peer presents the secret of one of its exports,
 * and only respond: their QP lives in that export's PD, where only that
 * export has keys.
 *
 * As nvme-rdma and nvmet-rdma do: a cm_id is never destroyed from its own
 * callback (the callback returns non-zero to have the CM do it); device
 * removal reaches the QP through the device's user list, before the CM's
 * own DEVICE_REMOVAL; the peer is disconnected and the QP drained before
 * it is destroyed.
 */
#include <crypto/algapi.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>

#include "kvreg.h"
#include "trace.h"

/* Runs close_work: a passive connection leaves its file once it drops. */
static struct workqueue_struct *kvreg_conn_wq;

void kvreg_set_net_error(struct kvreg_error *err, u32 reason,
			 const struct kvreg_net_addr *addr)
{
	err->reason = reason;
	err->addr_family = addr->family;
	err->port = addr->port;
	memcpy(err->addr, addr->addr, sizeof(err->addr));
}

int kvreg_net_sockaddr(const struct kvreg_net_addr *a,
		       struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(a->port);
		memcpy(&sin->sin_addr, a->addr, sizeof(sin->sin_addr));
		return 0;
	}
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(a->port);
		memcpy(&sin6->sin6_addr, a->addr, sizeof(sin6->sin6_addr));
		sin6->sin6_scope_id = a->scope_id;
		return 0;
	}
	return -EAFNOSUPPORT;
}

static void kvreg_conn_qp_going(struct kvreg_conn *conn)
{
	mutex_lock(&conn->abort_mutex);
	conn->qp_gone = true;
	mutex_unlock(&conn->abort_mutex);
}

/* Device removal, before the CM's: the peer is cut off, the QP goes. */
static void kvreg_conn_remove(struct kvreg_dev_user *user)
{
	struct kvreg_conn *conn = container_of(user, struct kvreg_conn, user);

	lockdep_assert_held_write(&conn->dev->teardown_rwsem);
	WRITE_ONCE(conn->lost, true);
	/* The probe only trylocks the rwsem: it cannot wait on us here. */
	cancel_delayed_work_sync(&conn->keepalive);
	if (READ_ONCE(conn->established))
		rdma_disconnect(conn->cm_id);
	kvreg_conn_qp_going(conn);
	kvreg_qp_destroy_cm(&conn->q, conn->cm_id);
	conn->qp_live = false;
}

/*
 * @id is live while @qp_live is true: the CM's DEVICE_REMOVAL, the only
 * other destroyer, comes after kvreg_conn_remove() took the QP down.
 */
static void kvreg_conn_teardown_qp(struct kvreg_conn *conn,
				   struct rdma_cm_id *id)
{
	struct kvreg_dev *kdev = conn->dev;

	if (!kdev)
		return;
	down_read(&kdev->teardown_rwsem);
	if (conn->qp_live) {
		kvreg_dev_user_del(kdev, &conn->user);
		WRITE_ONCE(conn->lost, true);
		cancel_delayed_work_sync(&conn->keepalive);
		if (READ_ONCE(conn->established))
			rdma_disconnect(id);
		kvreg_conn_qp_going(conn);
		kvreg_qp_destroy_cm(&conn->q, id);
		conn->qp_live = false;
	}
	up_read(&kdev->teardown_rwsem);
}

/* After this no event of @conn runs or will run. Not from a CM callback. */
static void kvreg_conn_shutdown(struct kvreg_conn *conn)
{
	struct rdma_cm_id *id = READ_ONCE(conn->cm_id);

	if (id)
		kvreg_conn_teardown_qp(conn, id);
	id = xchg(&conn->cm_id, NULL);
	if (id)
		rdma_destroy_id(id);
}

static void kvreg_conn_release(struct kref *ref)
{
	struct kvreg_conn *conn = container_of(ref, struct kvreg_conn, ref);

	kvreg_net_unlist(&conn->entry);
	kvreg_conn_shutdown(conn);
	/* Never armed, or cancelled with the QP: this is for the reader. */
	cancel_delayed_work_sync(&conn->keepalive);
	if (conn->fdev)
		kvreg_file_dev_put(conn->fdev);
	if (conn->dev)
		kvreg_dev_put(conn->dev);
	mutex_destroy(&conn->abort_mutex);
	kfree_sensitive(conn);
}

void kvreg_conn_put(struct kvreg_conn *conn)
{
	kref_put(&conn->ref, kvreg_conn_release);
}

static void kvreg_conn_unlist_from(struct kvreg_endpoint *ep,
				   struct kvreg_conn *conn);

/* How often a LOST connection on a port that is down looks again. */
#define KVREG_CLOSE_RETRY	(HZ / 5)
/*
 * Keepalive periods a passive connection's receive PSN may stand still
 * before the importer is taken as gone. The importer writes twice a
 * period, so a live one moves it in each, whatever the two clocks' phase.
 */
#define KVREG_KEEPALIVE_STUCK	3

static void kvreg_conn_close_work(struct work_struct *work)
{
	struct kvreg_conn *conn = container_of(to_delayed_work(work),
					       struct kvreg_conn, close_work);
	struct kvreg_file *kf = conn->kf;
	bool unlink = false;

	/*
	 * Letting it go sends a DREQ, and rxe moves the GSI QP of a port
	 * whose link is down to the error state for good when it sends one
	 * there: no connection could be made on that port again. It is shown
	 * LOST already; it goes once the port is up, or with its file or
	 * endpoint, which cancel this work. Looked at again later, never
	 * waited for: a worker asleep here would hold up others' work.
	 */
	if (!READ_ONCE(conn->dev->port_active) && !READ_ONCE(conn->dev->dead) &&
	    !READ_ONCE(kf->closing)) {
		/*
		 * Refused only while kvreg_conn_cancel_close() waits for this
		 * run: it holds a reference, and sees none left queued.
		 */
		if (!queue_delayed_work(kvreg_conn_wq, &conn->close_work,
					KVREG_CLOSE_RETRY))
			kvreg_conn_put(conn);
		return;
	}

	/*
	 * Off the file, REKEY's and UNLISTEN's cuts no longer see it, and
	 * its QP may still be in RTR or RTS (an ADDR_CHANGE, a passive
	 * CONNECT_ERROR): in the error state first, so that nothing a cut
	 * revoked stays reachable through it until its last put.
	 */
	kvreg_conn_abort(conn);
	/*
	 * A closing file, or an endpoint cutting its connections (it clears
	 * @ep), takes them down itself.
	 */
	mutex_lock(&kf->lock);
	if (!kf->closing && conn->ep && !list_empty(&conn->file_node)) {
		list_del_init(&conn->file_node);
		kvreg_conn_unlist_from(conn->ep, conn);
		unlink = true;
	}
	mutex_unlock(&kf->lock);
	if (unlink)
		kvreg_conn_put(conn);
	kvreg_conn_put(conn);
}

/*
 * From the CM callback, a CQ or a QP event. Once per connection, and
 * with a reference the work drops, so the caller's own put is never the
 * last; not once the last put began (the teardown's drain flushes).
 */
static void kvreg_conn_queue_close_after(struct kvreg_conn *conn,
					 unsigned long delay)
{
	if (test_and_set_bit(0, &conn->close_queued))
		return;
	if (!kref_get_unless_zero(&conn->ref))
		return;
	queue_delayed_work(kvreg_conn_wq, &conn->close_work, delay);
}

static void kvreg_conn_queue_close(struct kvreg_conn *conn)
{
	kvreg_conn_queue_close_after(conn, 0);
}

/*
 * How long an exporter's QP that refused a request (a revoked or guessed
 * rkey) stays connected in the error state. Its NAK is already sent when
 * the event comes; closed at once, the DREQ can overtake it at the
 * importer (rxe completes the NAK from a work item on 7.x), which then
 * flushes its request and reports a lost connection where the exporter's
 * refusal (REMOTE_ACCESS) is the truth. The QP takes nothing meanwhile.
 */
#define KVREG_ACCESS_ERR_GRACE	msecs_to_jiffies(100)

/*
 * Whoever cut @conn from its file, after its QP is gone: the close work
 * it may have queued will not run, and its reference is dropped here.
 */
static void kvreg_conn_cancel_close(struct kvreg_conn *conn)
{
	if (cancel_delayed_work_sync(&conn->close_work))
		kvreg_conn_put(conn);
}

/*
 * A passive connection can die with no CM event: a responder access
 * error (a revoked or guessed rkey), an importer gone quiet (its receive
 * PSN still, kvreg_conn_heard()). It is let go, not kept until the file
 * closes.
 */
static void kvreg_conn_qp_failed(struct kvreg_conn *conn,
				 unsigned long delay)
{
	/*
	 * Not an importer's: its rail is mended when its work fails, and
	 * its close work, which reads the file, would outlive the file.
	 */
	if (!conn->passive || READ_ONCE(conn->qp_gone))
		return;
	WRITE_ONCE(conn->lost, true);
	kvreg_conn_queue_close_after(conn, delay);
}

/*
 * From the CQ: an importer's keepalive WRITE ended. Failed, the exporter
 * is gone (or its QP is), and the rail is mended; flushed, whatever put
 * the QP in the error state says so itself.
 */
static void kvreg_conn_keepalive_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvreg_conn *conn =
		container_of(wc->wr_cqe, struct kvreg_conn, keepalive_cqe);
	void (*lost_fn)(struct kvreg_conn *conn);

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR) {
		WRITE_ONCE(conn->q.ready, false);
		WRITE_ONCE(conn->lost, true);
		/*
		 * The WRITE may fail before the rail took @conn: then
		 * kvreg_rail_connect() sees @lost. Pairs with its smp_mb().
		 */
		smp_mb();
		/* Pairs with its release: @rail_peer is seen with it. */
		lost_fn = smp_load_acquire(&conn->lost_fn);
		if (lost_fn)
			lost_fn(conn);
	}
	atomic_set(&conn->keepalive_busy, 0);
}

static void kvreg_conn_qp_event(struct ib_event *ev, void *ctx)
{
	struct kvreg_conn *conn = ctx;

	switch (ev->event) {
	case IB_EVENT_QP_ACCESS_ERR:
		kvreg_conn_qp_failed(conn, KVREG_ACCESS_ERR_GRACE);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
		kvreg_conn_qp_failed(conn, 0);
		break;
	default:
		break;
	}
}

/*
 * An importer's keepalive: a zero-length RDMA WRITE, which touches no
 * memory and needs no key (IBA C9-88), and moves the exporter's receive
 * PSN. Caller holds teardown_rwsem for read. One pending at a time: an
 * exporter that stops answering fails it at the QP's retry limit.
 */
static void kvreg_conn_keepalive_write(struct kvreg_conn *conn)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
			.wr_cqe = &conn->keepalive_cqe,
		},
	};
	const struct ib_send_wr *bad;

	if (atomic_xchg(&conn->keepalive_busy, 1))
		return;
	if (ib_post_send(conn->q.qp, &wr.wr, &bad))
		atomic_set(&conn->keepalive_busy, 0);
}

/*
 * An exporter's look at its connection: true while the importer is
 * heard from. Every packet the importer sends moves the QP's expected
 * receive PSN on, its keepalive WRITE each period included. Caller holds
 * teardown_rwsem for read.
 */
static bool kvreg_conn_heard(struct kvreg_conn *conn)
{
	struct ib_qp_init_attr init_attr;
	struct ib_qp_attr attr;

	if (ib_query_qp(conn->q.qp, &attr, IB_QP_STATE | IB_QP_RQ_PSN,
			&init_attr))
		return true;	/* no answer is no news */
	if (attr.qp_state == IB_QPS_ERR)
		return false;
	if (attr.rq_psn != conn->keepalive_psn) {
		conn->keepalive_psn = attr.rq_psn;
		conn->keepalive_stuck = 0;
		return true;
	}
	return ++conn->keepalive_stuck < KVREG_KEEPALIVE_STUCK;
}

static void kvreg_conn_keepalive(struct work_struct *work)
{
	struct kvreg_conn *conn = container_of(to_delayed_work(work),
					       struct kvreg_conn, keepalive);
	unsigned int period = conn->keepalive_ms;
	struct kvreg_dev *kdev = conn->dev;
	bool heard = true;

	/* kvreg.keepalive_ms=0 stops it on every connection too. */
	if (READ_ONCE(conn->lost) || !period || !READ_ONCE(kvreg_keepalive_ms))
		return;
	/* Removal holds it for write and cancels this work: never wait. */
	if (down_read_trylock(&kdev->teardown_rwsem)) {
		if (conn->qp_live && !kdev->dead) {
			if (!conn->passive)
				kvreg_conn_keepalive_write(conn);
			else if (READ_ONCE(conn->established))
				heard = kvreg_conn_heard(conn);
			else	/* accepted, and never heard from since */
				heard = ++conn->keepalive_stuck <
					KVREG_KEEPALIVE_STUCK;
		}
		up_read(&kdev->teardown_rwsem);
	}
	if (!heard) {
		/* Its teardown's drain ends what is in flight. */
		kvreg_conn_qp_failed(conn, 0);
		return;
	}
	queue_delayed_work(kvreg_conn_wq, &conn->keepalive,
			   msecs_to_jiffies(conn->passive ? period :
					    period / 2 ?: 1));
}

static void kvreg_conn_note_reject(struct kvreg_conn *conn,
				   const struct rdma_cm_event *ev)
{
	const struct kvreg_cm_rej *rej = ev->param.conn.private_data;

	u8 len = ev->param.conn.private_data_len;

	conn->rej_reason = 0;
	conn->rej_version = 0;
	conn->rej_limit = 0;
	conn->rej_usage = 0;
	if (!rej || len < offsetofend(struct kvreg_cm_rej, reason) ||
	    le32_to_cpu(rej->magic) != KVREG_CM_MAGIC)
		return;
	conn->rej_reason = le16_to_cpu(rej->reason);
	conn->rej_version = le16_to_cpu(rej->version);
	/* A peer before 1.7 sends no numbers; IB pads with zeroes. */
	if (len >= sizeof(*rej)) {
		conn->rej_limit = le32_to_cpu(rej->limit);
		conn->rej_usage = le32_to_cpu(rej->usage);
	}
}

/*
 * Work in flight on @conn must end: the peer went, or the file is going.
 * The error state flushes every one of it, so that each completes, now.
 */
void kvreg_conn_abort(struct kvreg_conn *conn)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	/*
	 * Not under teardown_rwsem, which a removal waiting behind a long
	 * chain would hold this CM callback on: @qp_gone, set under
	 * @abort_mutex before any teardown destroys the QP, keeps it here.
	 */
	mutex_lock(&conn->abort_mutex);
	if (conn->qp_live && !conn->qp_gone) {
		WRITE_ONCE(conn->lost, true);
		WRITE_ONCE(conn->q.ready, false);
		ib_modify_qp(conn->q.qp, &attr, IB_QP_STATE);
	}
	mutex_unlock(&conn->abort_mutex);
}

/*
 * The accept's form: a kvreg endpoint of this wire version sends struct
 * kvreg_cm_req with its magic and version (the CM pads what is short with
 * zeroes). What else the peer put in it is not read.
 */
static bool kvreg_conn_rep_ok(const struct rdma_cm_event *ev)
{
	const struct kvreg_cm_req *rep = ev->param.conn.private_data;

	return rep && ev->param.conn.private_data_len >= sizeof(*rep) &&
	       le32_to_cpu(rep->magic) == KVREG_CM_MAGIC &&
	       le16_to_cpu(rep->version) == KVREG_CM_VERSION;
}

static int kvreg_conn_cm_handler(struct rdma_cm_id *id,
				 struct rdma_cm_event *ev)
{
	enum rdma_cm_event_type event = ev->event;
	struct kvreg_conn *conn = id->context;
	unsigned int period;
	bool lost = false;

	/*
	 * The importer's own QP (no id->qp): the CM reports the peer's REP
	 * and leaves RTR, RTS and the RTU to us. A failed rdma_accept()
	 * has rejected the connection already.
	 */
	if (event == RDMA_CM_EVENT_CONNECT_RESPONSE) {
		int ret = -ENODEV;

		/* Not a kvreg endpoint: its QP gets nothing of ours. */
		conn->rep_bad = !kvreg_conn_rep_ok(ev);
		/*
		 * A REP late for a connect that timed out may come while its
		 * QP is being destroyed: @qp_gone is set before that, under
		 * @abort_mutex, which keeps the QP here while it is moved.
		 */
		mutex_lock(&conn->abort_mutex);
		if (conn->qp_live && !conn->qp_gone && !conn->rep_bad)
			ret = kvreg_qp_own_rts(&conn->q, id);
		mutex_unlock(&conn->abort_mutex);
		if (ret) {
			rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			event = RDMA_CM_EVENT_CONNECT_ERROR;
		} else {
			event = rdma_accept(id, NULL) ?
				RDMA_CM_EVENT_CONNECT_ERROR :
				RDMA_CM_EVENT_ESTABLISHED;
		}
	}
	switch (event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		/* Before any post: IMPORT returns only after this. */
		WRITE_ONCE(conn->established, true);
		WRITE_ONCE(conn->q.ready, true);
		period = conn->keepalive_ms;
		if (period)
			queue_delayed_work(kvreg_conn_wq, &conn->keepalive,
					   msecs_to_jiffies(period));
		break;
	case RDMA_CM_EVENT_REJECTED:
		kvreg_conn_note_reject(conn, ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		lost = true;
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		lost = conn->passive;
		break;
	default:
		break;
	}
	if (lost) {
		void (*lost_fn)(struct kvreg_conn *conn);

		WRITE_ONCE(conn->lost, true);
		WRITE_ONCE(conn->q.ready, false);
		/* Pairs with the release in kvreg_rail_connect(). */
		lost_fn = smp_load_acquire(&conn->lost_fn);
		if (lost_fn)
			lost_fn(conn);
	}
	/*
	 * The CM does not touch the QP on a DREQ: what is in flight would
	 * wait for a peer that is gone. The error state flushes it now.
	 */
	if (event == RDMA_CM_EVENT_DISCONNECTED)
		kvreg_conn_abort(conn);
	if (!conn->passive) {
		conn->cm_event = event;
		conn->cm_status = ev->status;
		complete(&conn->cm_done);
	} else if (lost) {
		kvreg_conn_queue_close(conn);
	}
	if (ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	/*
	 * An IMPORT still connecting uses the id after its wait: it
	 * destroys the id itself, at once (the CM's removal waits for it).
	 */
	if (!conn->passive &&
	    atomic_cmpxchg(&conn->connect_state, KVREG_CONNECTING,
			   KVREG_CONNECT_REMOVED) == KVREG_CONNECTING)
		return 0;
	/* The last touch of @conn: after the swap its release may run. */
	if (cmpxchg(&conn->cm_id, id, NULL) == id)
		return 1;
	return 0;
}

static struct kvreg_conn *kvreg_conn_alloc(struct kvreg_file *kf,
					   bool passive)
{
	struct kvreg_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL_ACCOUNT);

	if (!conn)
		return NULL;
	kref_init(&conn->ref);
	INIT_LIST_HEAD(&conn->file_node);
	INIT_LIST_HEAD(&conn->user.node);
	conn->user.remove = kvreg_conn_remove;
	conn->user.posts = true;
	conn->kf = kf;
	conn->passive = passive;
	kvreg_net_entry_init(&conn->entry, kf, passive ?
			     KVREG_CONN_KIND_PASSIVE : KVREG_CONN_KIND_ACTIVE);
	init_completion(&conn->cm_done);
	INIT_DELAYED_WORK(&conn->close_work, kvreg_conn_close_work);
	atomic_set(&conn->connect_state, KVREG_CONNECTING);
	INIT_DELAYED_WORK(&conn->keepalive, kvreg_conn_keepalive);
	mutex_init(&conn->abort_mutex);
	atomic_set(&conn->submit_free, KVREG_SUBMIT_DEPTH);
	conn->keepalive_cqe.done = kvreg_conn_keepalive_done;
	return conn;
}

/*
 * Caller holds kf->lock; conn->dev and conn->cm_id are set, and for a
 * passive connection conn->fdev (its export's PD). An active one's QP
 * goes in the file's own PD.
 */
static int kvreg_conn_make_qp(struct kvreg_conn *conn,
			      struct kvreg_error *err)
{
	struct kvreg_dev *kdev = conn->dev;
	struct kvreg_file_dev *fdev = conn->fdev;
	int ret;

	lockdep_assert_held(&conn->kf->lock);
	if (!fdev) {
		fdev = kvreg_file_dev_get(conn->kf, kdev, err);
		if (IS_ERR(fdev))
			return PTR_ERR(fdev);
		conn->fdev = fdev;
	}

	down_read(&kdev->teardown_rwsem);
	if (kdev->dead || !fdev->pd) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, kdev->index);
		ret = -ENODEV;
		goto out;
	}
	ret = kvreg_qp_create_cm(&conn->q, kdev, fdev->pd, conn->cm_id,
				 !conn->passive, kvreg_conn_qp_event, conn);
	if (ret) {
		kvreg_set_error(err, kvreg_driver_reason(ret), kdev->index);
		err->driver_errno = ret;
		goto out;
	}
	conn->qp_live = true;
	kvreg_dev_user_add(kdev, &conn->user);
out:
	up_read(&kdev->teardown_rwsem);
	return ret;
}

/*
 * Called from the CM callback: refuse, saying why (and for a cap, its
 * limit and usage), and have the CM destroy the id.
 */
static int kvreg_conn_reject_cap(struct rdma_cm_id *id, u16 reason,
				 u64 limit, u64 usage)
{
	struct kvreg_cm_rej rej = {
		.magic = cpu_to_le32(KVREG_CM_MAGIC),
		.version = cpu_to_le16(KVREG_CM_VERSION),
		.reason = cpu_to_le16(reason),
		.limit = cpu_to_le32(min_t(u64, limit, U32_MAX)),
		.usage = cpu_to_le32(min_t(u64, usage, U32_MAX)),
	};

	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	return -ECONNREFUSED;
}

static int kvreg_conn_reject(struct rdma_cm_id *id, u16 reason)
{
	return kvreg_conn_reject_cap(id, reason, 0, 0);
}

static bool kvreg_same_host(const struct kvreg_net_addr *a,
			    const struct kvreg_net_addr *b)
{
	return a->family == b->family && !memcmp(a->addr, b->addr,
						 sizeof(a->addr));
}

static u32 kvreg_addr_hash(const struct kvreg_net_addr *a)
{
	return jhash(a->addr, sizeof(a->addr), a->family);
}

/* Under kf->lock: @ep's count of connections from @from, or NULL. */
static struct kvreg_addr_count *
kvreg_addr_count_find(struct kvreg_endpoint *ep,
		      const struct kvreg_net_addr *from)
{
	struct kvreg_addr_count *ac;

	lockdep_assert_held(&ep->kf->lock);
	hash_for_each_possible(ep->addr_counts, ac, node,
			       kvreg_addr_hash(from))
		if (kvreg_same_host(&ac->addr, from))
			return ac;
	return NULL;
}

/*
 * Under kf->lock: @conn, about to be listed on @ep, counted against its
 * peer's address @from. False: no memory for a first count of @from.
 */
static bool kvreg_addr_count_add(struct kvreg_endpoint *ep,
				 struct kvreg_conn *conn,
				 const struct kvreg_net_addr *from)
{
	struct kvreg_addr_count *ac = kvreg_addr_count_find(ep, from);

	if (!ac) {
		ac = kzalloc(sizeof(*ac), GFP_KERNEL_ACCOUNT);
		if (!ac)
			return false;
		ac->addr = *from;
		hash_add(ep->addr_counts, &ac->node,
			 kvreg_addr_hash(&ac->addr));
	}
	ac->conns++;
	conn->addr_count = ac;
	return true;
}

/* Under kf->lock: @conn no longer counts against its address. */
static void kvreg_addr_count_put(struct kvreg_conn *conn)
{
	struct kvreg_addr_count *ac = conn->addr_count;

	conn->addr_count = NULL;
	if (ac && !--ac->conns) {
		hash_del(&ac->node);
		kfree(ac);
	}
}

/* Under kf->lock: @conn leaves @ep's count and its address's. */
static void kvreg_conn_unlist_from(struct kvreg_endpoint *ep,
				   struct kvreg_conn *conn)
{
	lockdep_assert_held(&ep->kf->lock);
	ep->nr_conns--;
	kvreg_addr_count_put(conn);
}

/*
 * Under kf->lock: whether one more connection from @from would pass a
 * cap of @ep; if so @err says which, with its numbers.
 */
static bool kvreg_conn_over_cap(struct kvreg_endpoint *ep,
				const struct kvreg_net_addr *from,
				struct kvreg_error *err)
{
	u32 max_ep = READ_ONCE(kvreg_max_conns_per_endpoint);
	u32 max_peer = READ_ONCE(kvreg_max_conns_per_peer);
	struct kvreg_addr_count *ac;

	lockdep_assert_held(&ep->kf->lock);
	if (ep->nr_conns >= max_ep) {
		kvreg_cap_refuse(err, KVREG_REASON_ENDPOINT_CONN_LIMIT, max_ep,
				 ep->nr_conns, 1);
		return true;
	}
	ac = kvreg_addr_count_find(ep, from);
	if (!ac || ac->conns < max_peer)
		return false;
	kvreg_cap_refuse(err, KVREG_REASON_PEER_CONN_LIMIT, max_peer,
			 ac->conns, 1);
	return true;
}

/* The request's form; its secret is looked up later. */
static u16 kvreg_conn_check_req(const struct kvreg_accept *acc)
{
	const struct kvreg_cm_req *req = &acc->req;

	/* Not a kvreg peer: it cannot know a secret either. */
	if (!acc->req_whole || le32_to_cpu(req->magic) != KVREG_CM_MAGIC)
		return KVREG_REASON_CONN_BAD_SECRET;
	if (le16_to_cpu(req->version) != KVREG_CM_VERSION)
		return KVREG_REASON_CONN_VERSION;
	return 0;
}

/*
 * The id's events while its request waits in the queue: only a device
 * removal matters, and the work destroys the id then (the CM waits for
 * it). Under the id's handler lock, as the work looks at @removed.
 */
static int kvreg_accept_cm_handler(struct rdma_cm_id *id,
				   struct rdma_cm_event *ev)
{
	struct kvreg_accept *acc = id->context;

	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		acc->removed = true;
	return 0;
}

/*
 * @acc's request checked and answered, from the work. Non-zero: refused,
 * and the caller destroys the id.
 */
static int kvreg_conn_accept_charged(struct kvreg_accept *acc)
{
	struct kvreg_cm_req accept = {
		.magic = cpu_to_le32(KVREG_CM_MAGIC),
		.version = cpu_to_le16(KVREG_CM_VERSION),
	};
	struct kvreg_endpoint *ep = acc->ep;
	struct rdma_cm_id *id = acc->id;
	struct rdma_conn_param param = {};
	struct kvreg_file *kf = ep->kf;
	struct kvreg_net_addr from;
	struct kvreg_file_dev *fdev;
	struct kvreg_exported *ex;
	struct kvreg_error err = {};
	struct kvreg_conn *conn;
	struct kvreg_dev *kdev;
	u16 reason;
	int ret;

	reason = kvreg_conn_check_req(acc);
	if (reason)
		return kvreg_conn_reject(id, reason);
	kdev = kvreg_dev_find(id->device);
	if (!kdev)
		return kvreg_conn_reject(id, KVREG_REASON_DEVICE_REMOVED);
	conn = kvreg_conn_alloc(kf, true);
	if (!conn) {
		kvreg_dev_put(kdev);
		return kvreg_conn_reject(id, KVREG_REASON_NO_KERNEL_MEMORY);
	}
	conn->dev = kdev;
	conn->cm_id = id;
	/* The importer's writes come at its pace: look no faster. */
	conn->keepalive_ms = READ_ONCE(kvreg_keepalive_ms);
	if (conn->keepalive_ms)
		conn->keepalive_ms = max_t(u32, conn->keepalive_ms,
					   le16_to_cpu(acc->req.keepalive_ms));

	kvreg_net_addr_of(&from, (struct sockaddr *)&id->route.addr.dst_addr);

	mutex_lock(&kf->lock);
	if (kf->closing || ep->closing) {
		err.reason = KVREG_REASON_CONN_NO_LISTENER;
		goto err_unlock;
	}
	/*
	 * The PD of the export whose secret it presented: that export's
	 * keys, and no other, work here. Listed under the same kf->lock,
	 * so a REKEY or UNLISTEN that changes the secrets and then cuts
	 * under kf->lock either refuses it here or cuts it.
	 */
	mutex_lock(&ep->mutex);
	ex = kvreg_export_by_secret(ep, acc->req.secret);
	if (!ex) {
		mutex_unlock(&ep->mutex);
		err.reason = KVREG_REASON_CONN_BAD_SECRET;
		goto err_unlock;
	}
	if (kvreg_conn_over_cap(ep, &from, &err)) {
		mutex_unlock(&ep->mutex);
		goto err_unlock;
	}
	fdev = kvreg_pd_get(&ex->pds, kdev, true, &err);
	mutex_unlock(&ep->mutex);
	if (IS_ERR(fdev))
		goto err_unlock;
	conn->fdev = fdev;
	ret = kvreg_conn_make_qp(conn, &err);
	if (ret)
		goto err_unlock;
	/* Before it can be accepted: a count may need memory. */
	if (!kvreg_addr_count_add(ep, conn, &from)) {
		err.reason = KVREG_REASON_NO_KERNEL_MEMORY;
		goto err_unlock;
	}
	/*
	 * The event spoke from this side: responder_resources is the READ
	 * depth the peer asked to initiate, which this side must answer.
	 */
	param.responder_resources = min_t(u32, acc->responder_resources,
					  kdev->ibdev->attrs.max_qp_rd_atom);
	param.private_data = &accept;
	param.private_data_len = sizeof(accept);
	/*
	 * Its events switch to the connection's handler and the accept
	 * goes out under the id's handler lock, so none comes in between.
	 */
	rdma_lock_handler(id);
	if (acc->removed) {
		rdma_unlock_handler(id);
		err.reason = KVREG_REASON_DEVICE_REMOVED;
		goto err_uncount;
	}
	id->context = conn;
	id->event_handler = kvreg_conn_cm_handler;
	rdma_set_ack_timeout(id, KVREG_ACK_TIMEOUT);
	ret = rdma_accept(id, &param);
	if (ret) {
		id->context = acc;
		id->event_handler = kvreg_accept_cm_handler;
		rdma_unlock_handler(id);
		err.reason = KVREG_REASON_DEVICE_REFUSED;
		goto err_uncount;
	}
	rdma_unlock_handler(id);
	/*
	 * Listed before the file can see it: once on kf->conns a release
	 * may free it. The allocation's reference is the file list's.
	 */
	kvreg_net_list_conn(conn, id);
	conn->ep = ep;
	ep->nr_conns++;
	list_add_tail(&conn->file_node, &kf->conns);
	/*
	 * An importer that never completes the handshake (killed while
	 * connecting, its RTU or REJ lost) would hold this connection, and
	 * a place under the endpoint's caps, until the CM's REP retries
	 * end, a minute or more. The keepalive looks from now on, and lets
	 * go of one not established within as many periods as it gives a
	 * quiet established one. ESTABLISHED queues it again: no-op then.
	 */
	if (conn->keepalive_ms)
		queue_delayed_work(kvreg_conn_wq, &conn->keepalive,
				   msecs_to_jiffies(conn->keepalive_ms));
	mutex_unlock(&kf->lock);
	return 0;

err_uncount:
	kvreg_addr_count_put(conn);
err_unlock:
	mutex_unlock(&kf->lock);
	kvreg_conn_teardown_qp(conn, id);
	/* The caller destroys @id. */
	conn->cm_id = NULL;
	kvreg_conn_put(conn);
	if (acc->removed)
		return -ENODEV;
	return kvreg_conn_reject_cap(id, err.reason, err.limit, err.usage);
}

static void kvreg_conn_accept_work(struct work_struct *work)
{
	struct kvreg_accept *acc = container_of(work, struct kvreg_accept,
						work);
	struct kvreg_endpoint *ep = acc->ep;
	struct rdma_cm_id *id = acc->id;
	struct mem_cgroup *old = kvreg_charge_to(ep->kf->memcg);
	int ret = kvreg_conn_accept_charged(acc);

	kvreg_charge_to(old);
	/* The last touch of @ep: it may go once no request is left. */
	if (atomic_dec_and_test(&ep->nr_accepts))
		wake_up_var(&ep->nr_accepts);
	if (ret)
		rdma_destroy_id(id);
	/* It held the secret the peer sent. */
	kfree_sensitive(acc);
}

/*
 * CONNECT_REQUEST on @ep, from a listener's CM callback, with the new
 * @id: queued for kvreg_conn_accept_work(), which answers it, so that
 * this callback waits on nothing of kvreg's. Non-zero: refused at once
 * (too many requests waiting, or no memory), and the CM destroys @id.
 * What a peer's request allocates is charged to the exporting process's
 * memcg.
 */
int kvreg_conn_accept(struct kvreg_endpoint *ep, struct rdma_cm_id *id,
		      const struct rdma_cm_event *event)
{
	u32 max_ep = READ_ONCE(kvreg_max_conns_per_endpoint);
	const struct kvreg_cm_req *req = event->param.conn.private_data;
	u32 waiting = atomic_read(&ep->nr_accepts);
	struct kvreg_accept *acc;
	struct mem_cgroup *old;

	/*
	 * Requests waiting are capped with the connections (read without
	 * kf->lock: the work counts them exactly), so a flood of them
	 * allocates no more than the connections it could make.
	 */
	if (waiting + READ_ONCE(ep->nr_conns) >= max_ep)
		return kvreg_conn_reject_cap(id,
					     KVREG_REASON_ENDPOINT_CONN_LIMIT,
					     max_ep, waiting +
					     READ_ONCE(ep->nr_conns));
	old = kvreg_charge_to(ep->kf->memcg);
	acc = kzalloc(sizeof(*acc), GFP_KERNEL_ACCOUNT);
	kvreg_charge_to(old);
	if (!acc)
		return kvreg_conn_reject(id, KVREG_REASON_NO_KERNEL_MEMORY);
	INIT_WORK(&acc->work, kvreg_conn_accept_work);
	acc->ep = ep;
	acc->id = id;
	if (req && event->param.conn.private_data_len >= sizeof(*req)) {
		memcpy(&acc->req, req, sizeof(*req));
		acc->req_whole = true;
	}
	acc->responder_resources = event->param.conn.responder_resources;
	atomic_inc(&ep->nr_accepts);
	id->context = acc;
	id->event_handler = kvreg_accept_cm_handler;
	queue_work(kvreg_conn_wq, &acc->work);
	return 0;
}

/*
 * @ep's listeners are destroyed, so no request is queued any more: wait
 * for those queued to be answered (each sees @ep closing and refuses).
 */
void kvreg_endpoint_accepts_wait(struct kvreg_endpoint *ep)
{
	wait_var_event(&ep->nr_accepts, !atomic_read(&ep->nr_accepts));
}

/* The CM's answer to the step just started: 0 if it is @want. */
static int kvreg_conn_wait(struct kvreg_conn *conn,
			   enum rdma_cm_event_type want, u32 timeout_ms)
{
	/*
	 * The CM times address and route resolution itself (its answer wins
	 * by the margin); this is the backstop, and the connect step's limit.
	 */
	unsigned long limit = msecs_to_jiffies(timeout_ms) + HZ / 2;
	long left;

	/*
	 * A stop whose complete() came before this step's
	 * reinit_completion() was wiped by it, but its flag was set first.
	 * Pairs with the smp_mb() in kvreg_connect_stop().
	 */
	smp_mb();
	if (READ_ONCE(conn->abandoned))
		return -ECANCELED;
	left = wait_for_completion_killable_timeout(&conn->cm_done, limit);
	if (READ_ONCE(conn->abandoned))
		return -ECANCELED;
	if (left < 0)
		return -EINTR;
	if (!left)
		return -ETIMEDOUT;
	if (conn->cm_event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		return -ENODEV;
	return conn->cm_event == want ? 0 : -ECONNREFUSED;
}

static u32 kvreg_conn_refusal(struct kvreg_conn *conn, int ret,
			      struct kvreg_error *err)
{
	if (ret == -ETIMEDOUT || ret == -EINTR)
		return KVREG_REASON_CONN_TIMEOUT;
	if (ret == -ENODEV)
		return KVREG_REASON_DEVICE_REMOVED;
	if (conn->rep_bad)
		return KVREG_REASON_PEER_PROTOCOL;
	if (conn->cm_event != RDMA_CM_EVENT_REJECTED) {
		/* UNREACHABLE, CONNECT_ERROR: no answer the CM could use. */
		err->driver_errno = conn->cm_status;
		return KVREG_REASON_CONN_TIMEOUT;
	}
	switch (conn->rej_reason) {
	case KVREG_REASON_ENDPOINT_CONN_LIMIT:
	case KVREG_REASON_PEER_CONN_LIMIT:
		err->limit = conn->rej_limit;
		err->usage = conn->rej_usage;
		err->request = 1;
		return conn->rej_reason;
	case KVREG_REASON_CONN_BAD_SECRET:
	case KVREG_REASON_CONN_NO_LISTENER:
	case KVREG_REASON_DEVICE_REMOVED:
	case KVREG_REASON_NO_KERNEL_MEMORY:
		return conn->rej_reason;
	case KVREG_REASON_CONN_VERSION:
		err->usage = conn->rej_version;
		err->request = KVREG_CM_VERSION;
		return KVREG_REASON_CONN_VERSION;
	}
	if (conn->cm_status == IB_CM_REJ_INVALID_SERVICE_ID)
		return KVREG_REASON_CONN_NO_LISTENER;
	err->driver_errno = conn->cm_status;
	return KVREG_REASON_CONN_REJECTED;
}

static int kvreg_conn_establish(struct kvreg_conn *conn, u32 timeout_ms,
				struct kvreg_error *err)
{
	struct kvreg_cm_req req = {
		.magic = cpu_to_le32(KVREG_CM_MAGIC),
		.version = cpu_to_le16(KVREG_CM_VERSION),
	};
	struct rdma_conn_param param = {};
	int ret;

	memcpy(req.secret, conn->secret, KVREG_SECRET_LEN);
	conn->keepalive_ms = min_t(u32, READ_ONCE(kvreg_keepalive_ms),
				   U16_MAX);
	req.keepalive_ms = cpu_to_le16(conn->keepalive_ms);
	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.initiator_depth =
		min_t(u32, 16, conn->dev->ibdev->attrs.max_qp_init_rd_atom);
	/*
	 * Six, not seven: rxe reads a retry count of 7 as "retry forever"
	 * (as IBTA does for RNR), so a peer whose link went down would
	 * never fail what is in flight. The accepting side takes the same
	 * counts from this REQ; it sends nothing of its own, and a SEND
	 * would meet no receive here (RNR, then its QP's error).
	 */
	param.retry_count = KVREG_RETRY_COUNT;
	param.rnr_retry_count = KVREG_RETRY_COUNT;
	/* Not the CM's QP: it asks for no responder resources. */
	param.qp_num = conn->q.qp->qp_num;
	rdma_set_ack_timeout(conn->cm_id, KVREG_ACK_TIMEOUT);
	conn->rep_bad = false;
	reinit_completion(&conn->cm_done);
	ret = rdma_connect(conn->cm_id, &param);
	if (ret) {
		kvreg_set_error(err, KVREG_REASON_CONN_REJECTED,
				conn->dev->index);
		err->driver_errno = ret;
		return ret;
	}
	ret = kvreg_conn_wait(conn, RDMA_CM_EVENT_ESTABLISHED, timeout_ms);
	if (ret) {
		err->reason = kvreg_conn_refusal(conn, ret, err);
		err->device_index = conn->dev->index;
		if (err->reason == KVREG_REASON_PEER_PROTOCOL)
			return -EPROTO;
		return ret == -ECONNREFUSED || ret == -ENODEV ? ret :
		       -ETIMEDOUT;
	}
	return 0;
}

/* Resolve the address, then the route: the device comes from the first. */
static int kvreg_conn_resolve(struct kvreg_conn *conn, u32 timeout_ms,
			      struct kvreg_error *err)
{
	struct sockaddr_storage dst;
	int ret;

	ret = kvreg_net_sockaddr(&conn->peer, &dst);
	if (ret)
		return kvreg_bad_arg(err, KVREG_ARG_NET_ADDRESS);
	reinit_completion(&conn->cm_done);
	ret = rdma_resolve_addr(conn->cm_id, NULL, (struct sockaddr *)&dst,
				timeout_ms);
	if (!ret)
		ret = kvreg_conn_wait(conn, RDMA_CM_EVENT_ADDR_RESOLVED,
				      timeout_ms);
	if (ret) {
		err->reason = ret == -ETIMEDOUT ? KVREG_REASON_CONN_TIMEOUT :
			      KVREG_REASON_ADDRESS_UNRESOLVED;
		err->driver_errno = ret == -ECONNREFUSED ? conn->cm_status :
				    ret;
		return -EHOSTUNREACH;
	}
	conn->dev = kvreg_dev_find(conn->cm_id->device);
	if (!conn->dev) {
		err->reason = KVREG_REASON_NO_RDMA_FOR_ADDRESS;
		return -ENODEV;
	}
	/* The route to it leaves through a device the caller ruled out. */
	if (conn->device_mask &&
	    !(conn->device_mask & BIT_ULL(conn->dev->index))) {
		err->reason = KVREG_REASON_NO_DEVICE;
		err->device_index = conn->dev->index;
		err->usage = conn->device_mask;
		return -ENODEV;
	}
	reinit_completion(&conn->cm_done);
	ret = rdma_resolve_route(conn->cm_id, timeout_ms);
	if (!ret)
		ret = kvreg_conn_wait(conn, RDMA_CM_EVENT_ROUTE_RESOLVED,
				      timeout_ms);
	if (ret) {
		err->reason = ret == -ETIMEDOUT ? KVREG_REASON_CONN_TIMEOUT :
			      KVREG_REASON_ROUTE_UNRESOLVED;
		err->driver_errno = ret == -ECONNREFUSED ? conn->cm_status :
				    ret;
		err->device_index = conn->dev->index;
		return -EHOSTUNREACH;
	}
	return 0;
}

/*
 * Stop what connects under @stop now, and whatever would later: its wait
 * returns -ECANCELED. Never sleeps.
 */
void kvreg_connect_stop(struct kvreg_connect_stop *stop)
{
	spin_lock(&stop->lock);
	stop->stopped = true;
	if (stop->conn) {
		WRITE_ONCE(stop->conn->abandoned, true);
		/* Pairs with the one in kvreg_conn_wait(). */
		smp_mb();
		complete(&stop->conn->cm_done);
		trace_kvreg_connect_stopped(stop->conn->peer.port);
	}
	spin_unlock(&stop->lock);
}

/* @conn connects under @stop (if any) from now on, or is stopped already. */
static bool kvreg_connect_stop_set(struct kvreg_connect_stop *stop,
				   struct kvreg_conn *conn)
{
	bool stopped;

	if (!stop)
		return true;
	spin_lock(&stop->lock);
	stopped = stop->stopped;
	stop->conn = stopped ? NULL : conn;
	spin_unlock(&stop->lock);
	return !stopped;
}

/*
 * A new active connection of @kf to the endpoint at @addr that @secret
 * opens, in the caller's network namespace (rails.c runs this from a
 * work item too: the file's opener's), through a device in @device_mask
 * (0: any), established or failed within about three times @timeout_ms
 * (one per step), or at once after kvreg_connect_stop() of @stop, which
 * one caller at a time may pass (the mend's), and others NULL.
 */
struct kvreg_conn *kvreg_conn_connect(struct kvreg_file *kf,
				      const struct kvreg_net_addr *addr,
				      const u8 *secret, u64 device_mask,
				      u32 timeout_ms,
				      struct kvreg_connect_stop *stop,
				      struct kvreg_error *err)
{
	struct kvreg_conn *conn = kvreg_conn_alloc(kf, false);
	struct rdma_cm_id *id;
	int ret;

	if (!conn) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return ERR_PTR(-ENOMEM);
	}
	if (!kvreg_connect_stop_set(stop, conn)) {
		kvreg_set_error(err, KVREG_REASON_CONN_LOST,
				KVREG_NO_DEVICE_INDEX);
		kvreg_conn_put(conn);
		return ERR_PTR(-ECANCELED);
	}
	conn->peer = *addr;
	memcpy(conn->secret, secret, KVREG_SECRET_LEN);
	conn->device_mask = device_mask;

	id = rdma_create_id(kf->net, kvreg_conn_cm_handler, conn,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		err->driver_errno = ret;
		goto err_put;
	}
	conn->cm_id = id;
	ret = kvreg_conn_resolve(conn, timeout_ms, err);
	if (ret)
		goto err_put;
	mutex_lock(&kf->lock);
	ret = kvreg_conn_make_qp(conn, err);
	mutex_unlock(&kf->lock);
	if (ret)
		goto err_put;
	ret = kvreg_conn_establish(conn, timeout_ms, err);
	if (ret)
		goto err_put;
	/* From here a DEVICE_REMOVAL has the CM destroy the id. */
	if (atomic_cmpxchg(&conn->connect_state, KVREG_CONNECTING,
			   KVREG_CONNECTED) != KVREG_CONNECTING) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED,
				conn->dev->index);
		ret = -ENODEV;
		goto err_put;
	}
	kvreg_connect_stop_set(stop, NULL);
	kvreg_net_list_conn(conn, id);
	return conn;

err_put:
	kvreg_connect_stop_set(stop, NULL);
	if (!err->limit && err->reason == KVREG_REASON_CONN_TIMEOUT)
		err->limit = timeout_ms;
	kvreg_set_net_error(err, err->reason, &conn->peer);
	kvreg_conn_put(conn);
	return ERR_PTR(ret);
}

/* Whether new work may be posted on @conn; read without a lock. */
bool kvreg_conn_usable(struct kvreg_conn *conn)
{
	return !READ_ONCE(conn->lost) && READ_ONCE(conn->established) &&
	       READ_ONCE(conn->q.ready) && !READ_ONCE(conn->dev->dead) &&
	       READ_ONCE(conn->dev->port_active);
}

/*
 * The file is going (kf->closing is set, so no endpoint adds one and no
 * close_work unlinks one): every passive connection is shut down here,
 * then the work that may still hold one is waited for, as it reads @kf.
 */
void kvreg_conns_release(struct kvreg_file *kf)
{
	struct kvreg_conn *conn, *tmp;
	LIST_HEAD(conns);

	mutex_lock(&kf->lock);
	list_splice_init(&kf->conns, &conns);
	mutex_unlock(&kf->lock);
	list_for_each_entry(conn, &conns, file_node) {
		kvreg_conn_shutdown(conn);
		/* This file's work only: another's may wait for its port. */
		kvreg_conn_cancel_close(conn);
	}
	list_for_each_entry_safe(conn, tmp, &conns, file_node) {
		list_del_init(&conn->file_node);
		kvreg_conn_put(conn);
	}
}

/*
 * Every connection accepted on @ep goes: off the file, disconnected, its
 * QP destroyed, before this returns. Caller holds kf->ep_mutex; not
 * kf->lock, as destroying a cm_id waits for its callback.
 */
void kvreg_endpoint_conns_cut(struct kvreg_endpoint *ep)
{
	struct kvreg_file *kf = ep->kf;
	struct kvreg_conn *conn, *tmp;
	LIST_HEAD(cut);

	mutex_lock(&kf->lock);
	list_for_each_entry_safe(conn, tmp, &kf->conns, file_node) {
		if (conn->ep != ep)
			continue;
		/* Its close_work, if queued, leaves the list to us. */
		conn->ep = NULL;
		kvreg_conn_unlist_from(ep, conn);
		list_move_tail(&conn->file_node, &cut);
	}
	mutex_unlock(&kf->lock);
	list_for_each_entry(conn, &cut, file_node) {
		kvreg_conn_shutdown(conn);
		/* The file may be going next: no work may touch it after. */
		kvreg_conn_cancel_close(conn);
	}
	list_for_each_entry_safe(conn, tmp, &cut, file_node) {
		list_del_init(&conn->file_node);
		kvreg_conn_put(conn);
	}
}

int kvreg_conn_init(void)
{
	/*
	 * Unbound: its work (connect, teardown) has no CPU to stay near,
	 * and 7.2 warns at a workqueue that names neither kind.
	 */
	kvreg_conn_wq = alloc_workqueue("kvreg_conn", WQ_UNBOUND, 0);
	return kvreg_conn_wq ? 0 : -ENOMEM;
}

void kvreg_conn_exit(void)
{
	destroy_workqueue(kvreg_conn_wq);
}
