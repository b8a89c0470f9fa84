// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rails: a file's connections to one export of an endpoint (its secret
 * picks the export's PD there), one per path of its descriptors (an
 * address of the endpoint, on one of the exporter's devices), each
 * through the local device the route to that address takes. Operations
 * are spread over the rails that are up; one that fails is taken out,
 * what was in flight on it goes to another (ops.c), and it is connected
 * again from a work item, with a growing pause, for as long as a region
 * uses it. As RTRS does for its paths, and as Mooncake's users ask of
 * theirs: a rail that comes back is used again without the process doing
 * anything.
 */
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "kvreg.h"
#include "trace.h"

/* Pauses between attempts to mend a rail: the first, and the longest. */
#define KVREG_MEND_MIN_MS	250
#define KVREG_MEND_MAX_MS	4000
/* Each step of a reconnect: a rail that is down must not hold the rest. */
#define KVREG_MEND_TIMEOUT_MS	2000

/* Mends rails: connecting may take seconds, so not on a shared queue. */
static struct workqueue_struct *kvreg_rails_wq;
static atomic64_t kvreg_next_peer_id;

static bool kvreg_addr_eq(const struct kvreg_net_addr *a,
			  const struct kvreg_net_addr *b)
{
	return a->family == b->family && a->port == b->port &&
	       a->scope_id == b->scope_id &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* Whether @reg has live MRs on @kdev: a hint, checked again at posting. */
static bool kvreg_local_live_on(struct kvreg_reg *reg, struct kvreg_dev *kdev)
{
	u32 i;

	for (i = 0; i < reg->nr_devs; i++)
		if (reg->devs[i].dev == kdev)
			return READ_ONCE(reg->devs[i].live);
	return false;
}

/* Runs from the CM's callback, or a CQ's softirq: never sleeps. */
void kvreg_rail_kick(struct kvreg_peer *peer)
{
	unsigned long flags;

	/* Release sets @closing under the lock before it cancels the work. */
	spin_lock_irqsave(&peer->lock, flags);
	if (!peer->closing)
		queue_delayed_work(kvreg_rails_wq, &peer->mend,
				   msecs_to_jiffies(READ_ONCE(peer->mend_ms)));
	spin_unlock_irqrestore(&peer->lock, flags);
}

static void kvreg_rail_lost(struct kvreg_conn *conn)
{
	kvreg_rail_kick(conn->rail_peer);
}

/*
 * With peer->mutex held: a new connection on rail @i, in place of the
 * one there (whose counters it carries on). The mutex is dropped while
 * it connects, which may take seconds: another IMPORT of the endpoint,
 * or the mend, does not wait behind it (if it connects the same rail,
 * the earlier connection stays and the later is dropped). The old one,
 * no longer usable, is put outside the lock: its release drains what is
 * still in flight on it, whose completions move it to another rail. The
 * mend passes @stop, so that the last put need not wait for its connect.
 */
static int kvreg_rail_connect(struct kvreg_peer *peer, u32 i, u32 timeout_ms,
			      struct kvreg_connect_stop *stop,
			      struct kvreg_error *err)
{
	struct kvreg_rail *rail = &peer->rails[i];
	struct kvreg_conn *conn, *old;
	unsigned long flags;

	lockdep_assert_held(&peer->mutex);
	/* @addr of a rail is set once, before the rail is counted. */
	mutex_unlock(&peer->mutex);
	conn = kvreg_conn_connect(peer->kf, &rail->addr, peer->secret,
				  peer->device_mask, timeout_ms, stop, err);
	mutex_lock(&peer->mutex);
	if (IS_ERR(conn)) {
		/* The route leaves through a device the caller ruled out. */
		if (err->reason == KVREG_REASON_NO_DEVICE)
			rail->excluded = true;
		return PTR_ERR(conn);
	}
	WRITE_ONCE(conn->rail, i);
	WRITE_ONCE(conn->rail_peer, peer);
	/* Pairs with the CM callback's acquire: it sees the peer first. */
	smp_store_release(&conn->lost_fn, kvreg_rail_lost);

	spin_lock_irqsave(&peer->lock, flags);
	old = rail->conn;
	/*
	 * Another IMPORT or the mend connected the rail meanwhile: that
	 * one stays, as it may carry work already, which replacing it would
	 * flush; this one was never used.
	 */
	if (old && kvreg_conn_usable(old)) {
		spin_unlock_irqrestore(&peer->lock, flags);
		kvreg_conn_put(conn);
		return 0;
	}
	if (!peer->closing)
		rail->conn = conn;
	spin_unlock_irqrestore(&peer->lock, flags);
	if (rail->conn != conn) {
		/* The file is going: this one was its only reference. */
		kvreg_set_error(err, KVREG_REASON_CONN_LOST, conn->dev->index);
		kvreg_conn_put(conn);
		return -ENOTCONN;
	}
	if (old) {
		atomic64_add(atomic64_read(&old->entry.ops), &conn->entry.ops);
		atomic64_add(atomic64_read(&old->entry.ops_failed),
			     &conn->entry.ops_failed);
		atomic64_add(atomic64_read(&old->entry.bytes),
			     &conn->entry.bytes);
		atomic64_add(atomic64_read(&old->entry.failovers),
			     &conn->entry.failovers);
		kvreg_conn_put(old);
	}
	/*
	 * Lost before its callback was set: nothing would have said so.
	 * Pairs with the keepalive completion's smp_mb() (conn.c).
	 */
	smp_mb();
	if (READ_ONCE(conn->lost))
		kvreg_rail_kick(peer);
	return 0;
}

static bool kvreg_rail_down(struct kvreg_rail *rail)
{
	return !rail->excluded && (!rail->conn ||
				   !kvreg_conn_usable(rail->conn));
}

/*
 * A rail whose QP was flushed because its owner is being killed: every
 * completion of that flush kicks the mend, and a connection made now
 * would be half made on the exporter when the release stops it, held
 * there until its keepalive gives up on it. The release is coming.
 */
static bool kvreg_rail_owner_killed(struct kvreg_rail *rail)
{
	return rail->conn && READ_ONCE(rail->conn->q.killed);
}

/* With peer->mutex held: rail @i was tried again, and this came of it. */
static void kvreg_rail_note(struct kvreg_peer *peer, u32 i, int ret,
			    const struct kvreg_error *err)
{
	struct kvreg_rail *rail = &peer->rails[i];
	struct sockaddr_storage ss;

	trace_kvreg_rail_mend(i, ret, ret ? err->reason : 0);
	kvreg_net_sockaddr(&rail->addr, &ss);
	if (!ret) {
		/* A peer that cuts each connection must not flood the log. */
		pr_info_ratelimited("kvreg: rail %u to %pISpc connected again, device %u\n",
				    i, &ss, rail->conn->dev->index);
		WRITE_ONCE(rail->mend_reason, 0);
		WRITE_ONCE(rail->mend_errno, 0);
		return;
	}
	/* Once per change of reason: a rail down for long says it once. */
	if (READ_ONCE(rail->mend_reason) != err->reason)
		pr_info_ratelimited("kvreg: rail %u to %pISpc is down; connecting again failed: reason %u, errno %d\n",
				    i, &ss, err->reason,
				    err->driver_errno ?: ret);
	WRITE_ONCE(rail->mend_reason, err->reason);
	WRITE_ONCE(rail->mend_errno, err->driver_errno ?: ret);
}

static void kvreg_peer_mend(struct work_struct *work)
{
	struct kvreg_peer *peer = container_of(to_delayed_work(work),
					       struct kvreg_peer, mend);
	struct kvreg_error err;
	struct mem_cgroup *old;
	bool down = false;
	int ret;
	u32 i;

	/* A rail is the importing process's to pay for, mended or not. */
	old = kvreg_charge_to(peer->kf->memcg);
	mutex_lock(&peer->mutex);
	for (i = 0; i < peer->nr_rails && !READ_ONCE(peer->closing); i++) {
		if (!READ_ONCE(peer->rails[i].users) ||
		    !kvreg_rail_down(&peer->rails[i]) ||
		    kvreg_rail_owner_killed(&peer->rails[i]))
			continue;
		memset(&err, 0, sizeof(err));
		ret = kvreg_rail_connect(peer, i, KVREG_MEND_TIMEOUT_MS,
					 &peer->mend_stop, &err);
		kvreg_rail_note(peer, i, ret, &err);
		if (ret && !peer->rails[i].excluded)
			down = true;
	}
	/* Read by kicks without @mutex: a pause, never a pointer. */
	WRITE_ONCE(peer->mend_ms, down ? clamp_t(unsigned int,
						 peer->mend_ms * 2,
						 KVREG_MEND_MIN_MS,
						 KVREG_MEND_MAX_MS) : 0);
	mutex_unlock(&peer->mutex);
	kvreg_charge_to(old);
	if (down)
		kvreg_rail_kick(peer);
}

static struct kvreg_peer *kvreg_peer_alloc(struct kvreg_file *kf,
					   const struct kvreg_desc *desc,
					   u64 device_mask)
{
	struct kvreg_peer *peer = kzalloc(sizeof(*peer), GFP_KERNEL_ACCOUNT);

	if (!peer)
		return NULL;
	kref_init(&peer->ref);
	peer->kf = kf;
	peer->id = atomic64_inc_return(&kvreg_next_peer_id);
	peer->device_mask = device_mask;
	memcpy(peer->secret, desc->secret, KVREG_SECRET_LEN);
	mutex_init(&peer->mutex);
	spin_lock_init(&peer->lock);
	INIT_DELAYED_WORK(&peer->mend, kvreg_peer_mend);
	spin_lock_init(&peer->mend_stop.lock);
	spin_lock(&kf->peers_lock);
	list_add_tail(&peer->file_node, &kf->peers);
	spin_unlock(&kf->peers_lock);
	return peer;
}

static void kvreg_peer_release(struct kref *ref)
{
	struct kvreg_peer *peer = container_of(ref, struct kvreg_peer, ref);
	unsigned long flags;
	u32 i;

	spin_lock(&peer->kf->peers_lock);
	list_del(&peer->file_node);
	spin_unlock(&peer->kf->peers_lock);
	spin_lock_irqsave(&peer->lock, flags);
	peer->closing = true;
	spin_unlock_irqrestore(&peer->lock, flags);
	/*
	 * A mend connecting (up to three CM steps of seconds each, to a
	 * peer that may never answer) gives up now, so neither close nor
	 * UNIMPORT waits for it.
	 */
	kvreg_connect_stop(&peer->mend_stop);
	cancel_delayed_work_sync(&peer->mend);
	/* No region holds it: nothing is in flight on any rail. */
	for (i = 0; i < peer->nr_rails; i++)
		if (peer->rails[i].conn)
			kvreg_conn_put(peer->rails[i].conn);
	mutex_destroy(&peer->mutex);
	kfree_sensitive(peer);
}

/* Not from a CQ or CM callback: the last put disconnects every rail. */
void kvreg_peer_put(struct kvreg_peer *peer)
{
	kref_put(&peer->ref, kvreg_peer_release);
}

/*
 * Region @rr goes: each rail it had chunks on has one user less, and a
 * rail left with none is no longer mended. Then @rr's reference goes.
 */
void kvreg_peer_leave(struct kvreg_peer *peer,
		      const struct kvreg_rregion *rr)
{
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&peer->lock, flags);
	for (i = 0; i < peer->nr_rails; i++)
		if (rr->paths[i].chunks)
			peer->rails[i].users--;
	spin_unlock_irqrestore(&peer->lock, flags);
	kvreg_peer_put(peer);
}

/* The file's rails to the export @desc names, with @device_mask. */
static struct kvreg_peer *kvreg_peer_find(struct kvreg_file *kf,
					  const struct kvreg_desc *desc,
					  u64 device_mask)
{
	struct kvreg_peer *peer = NULL;
	struct kvreg_rregion *rr;
	unsigned long id;

	mutex_lock(&kf->lock);
	xa_for_each(&kf->remotes, id, rr) {
		if (rr->peer->device_mask == device_mask &&
		    !memcmp(rr->peer->secret, desc->secret,
			    KVREG_SECRET_LEN)) {
			peer = rr->peer;
			kref_get(&peer->ref);
			break;
		}
	}
	mutex_unlock(&kf->lock);
	return peer;
}

/* With peer->mutex held: the rail for @addr, made if new; or -1. */
static int kvreg_rail_index(struct kvreg_peer *peer,
			    const struct kvreg_net_addr *addr)
{
	unsigned long flags;
	u32 i;

	lockdep_assert_held(&peer->mutex);
	for (i = 0; i < peer->nr_rails; i++)
		if (kvreg_addr_eq(&peer->rails[i].addr, addr))
			return i;
	if (i == KVREG_DESC_MAX_PATHS)
		return -1;
	peer->rails[i].addr = *addr;
	spin_lock_irqsave(&peer->lock, flags);
	peer->nr_rails = i + 1;
	spin_unlock_irqrestore(&peer->lock, flags);
	return i;
}

/*
 * IMPORT: the region @rr takes each path of @desc (its chunks move from
 * @desc to @rr) as a rail of the file's peer for that endpoint, and each
 * rail not up is connected now. At least one must be: otherwise the
 * first failure is the answer. The others are mended in the background.
 */
int kvreg_peer_import(struct kvreg_file *kf, struct kvreg_desc *desc,
		      u64 device_mask, u32 timeout_ms,
		      struct kvreg_rregion *rr, u32 *rails, u32 *device_index,
		      struct kvreg_error *err)
{
	struct kvreg_error first = {}, e;
	int i, ret = 0, first_ret = 0;
	struct kvreg_peer *peer;
	unsigned long flags;
	bool down = false;
	u32 p, up = 0;

	peer = kvreg_peer_find(kf, desc, device_mask);
	if (!peer)
		peer = kvreg_peer_alloc(kf, desc, device_mask);
	if (!peer) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	*device_index = KVREG_NO_DEVICE_INDEX;
	/* Another IMPORT or a mend may be connecting: a kill ends the wait. */
	if (mutex_lock_killable(&peer->mutex)) {
		kvreg_set_error(err, KVREG_REASON_INTERRUPTED,
				KVREG_NO_DEVICE_INDEX);
		kvreg_peer_put(peer);
		return -EINTR;
	}
	for (p = 0; p < desc->nr_paths; p++) {
		i = kvreg_rail_index(peer, &desc->addrs[p]);
		/* A path named twice is one rail. */
		if (i < 0 || rr->paths[i].chunks)
			continue;
		rr->paths[i] = desc->paths[p];
		desc->paths[p].chunks = NULL;
	}
	for (i = 0; i < peer->nr_rails; i++) {
		struct kvreg_rail *rail = &peer->rails[i];

		if (!rr->paths[i].chunks)
			continue;
		memset(&e, 0, sizeof(e));
		e.device_index = KVREG_NO_DEVICE_INDEX;
		ret = 0;
		if (!rail->excluded && kvreg_rail_down(rail))
			ret = kvreg_rail_connect(peer, i, timeout_ms, NULL, &e);
		if (rail->excluded) {
			/* Its route leaves by a device the mask rules out. */
			if (!e.reason) {
				kvreg_set_error(&e, KVREG_REASON_NO_DEVICE,
						KVREG_NO_DEVICE_INDEX);
				e.usage = device_mask;
				kvreg_set_net_error(&e, e.reason, &rail->addr);
			}
			ret = ret ?: -ENODEV;
		} else if (!kvreg_rail_down(rail)) {
			if (!up++)
				*device_index = rail->conn->dev->index;
			continue;
		} else {
			down = true;
			/* Connected, and lost before it could be used. */
			if (!ret) {
				kvreg_set_error(&e, KVREG_REASON_CONN_LOST,
						KVREG_NO_DEVICE_INDEX);
				kvreg_set_net_error(&e, e.reason, &rail->addr);
				ret = -ENOTCONN;
			}
		}
		if (!first.reason) {
			first = e;
			first.driver_errno = e.driver_errno ?: ret;
			first_ret = ret;
		}
	}
	/* Taken: its rails are mended for it from now on. */
	if (up) {
		spin_lock_irqsave(&peer->lock, flags);
		for (i = 0; i < peer->nr_rails; i++)
			if (rr->paths[i].chunks)
				peer->rails[i].users++;
		spin_unlock_irqrestore(&peer->lock, flags);
	}
	mutex_unlock(&peer->mutex);
	if (!up && !first.reason) {
		/* Every path was already taken by this file's other rails. */
		kvreg_bad_arg(&first, KVREG_ARG_DESCRIPTOR);
		first.limit = KVREG_DESC_MAX_PATHS;
	}
	if (!up) {
		*err = first;
		kvreg_peer_put(peer);
		return first_ret ?: -ENOTCONN;
	}
	if (down)
		kvreg_rail_kick(peer);
	rr->peer = peer;
	*rails = up;
	return 0;
}

/*
 * A rail to carry part of an operation on @rr from @local, with a
 * reference: not one in @tried (a mask of rail indexes), up, with the
 * region's chunks and live local MRs on its device. The one on device
 * @prefer if it qualifies, else the one with the most free SQ slots, ties
 * taken in turn.
 */
struct kvreg_conn *kvreg_rail_get(struct kvreg_rregion *rr,
				  struct kvreg_reg *local, u32 prefer,
				  u32 tried, u32 *railp)
{
	struct kvreg_peer *peer = rr->peer;
	struct kvreg_conn *best = NULL;
	int best_free = INT_MIN;
	unsigned long flags;
	u32 n, k;

	spin_lock_irqsave(&peer->lock, flags);
	for (n = peer->nr_rails, k = 0; k < n; k++) {
		u32 i = (peer->next + k) % n;
		struct kvreg_conn *conn = peer->rails[i].conn;
		int free;

		if ((tried & BIT(i)) || !conn || !rr->paths[i].chunks ||
		    !kvreg_conn_usable(conn) ||
		    !kvreg_local_live_on(local, conn->dev))
			continue;
		free = atomic_read(&conn->submit_free);
		if (conn->dev->index == prefer) {
			best = conn;
			*railp = i;
			break;
		}
		if (free > best_free) {
			best = conn;
			best_free = free;
			*railp = i;
		}
	}
	if (best) {
		kref_get(&best->ref);
		peer->next++;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return best;
}

/**
 * kvreg_rails_none_up - say why kvreg_rail_get() found no rail for @local
 * @rr: the imported region
 * @local: the caller's registration on this side
 * @err: set to the reason
 *
 * A rail that is down is being mended, unless what it needs on this side
 * is gone: when no device of @local is left, no mend can help, and the
 * answer is the device's removal, not a lost connection.
 *
 * Return: -ENODEV (DEVICE_REMOVED, the first of @local's devices) or
 * -ENOTCONN (CONN_LOST, with the address of the region's first rail).
 */
int kvreg_rails_none_up(struct kvreg_rregion *rr, struct kvreg_reg *local,
			struct kvreg_error *err)
{
	u32 i;

	for (i = 0; i < local->nr_devs; i++)
		if (READ_ONCE(local->devs[i].live))
			break;
	if (local->nr_devs && i == local->nr_devs) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED,
				local->devs[0].dev->index);
		return -ENODEV;
	}
	kvreg_set_error(err, KVREG_REASON_CONN_LOST, KVREG_NO_DEVICE_INDEX);
	for (i = 0; i < KVREG_DESC_MAX_PATHS; i++)
		if (rr->paths[i].chunks) {
			kvreg_set_net_error(err, err->reason,
					    &rr->peer->rails[i].addr);
			break;
		}
	return -ENOTCONN;
}

/*
 * SQ slots on each of @conns (rails of @peer), all or none: takers hold
 * the lock, completions only give back, so what was seen is there.
 */
bool kvreg_rail_take_slots(struct kvreg_peer *peer, struct kvreg_conn **conns,
			   const u32 *slots, u32 n)
{
	unsigned long flags;
	bool ok = true;
	u32 i;

	spin_lock_irqsave(&peer->lock, flags);
	for (i = 0; i < n && ok; i++)
		ok = atomic_read(&conns[i]->submit_free) >= (int)slots[i];
	for (i = 0; i < n && ok; i++)
		atomic_sub(slots[i], &conns[i]->submit_free);
	spin_unlock_irqrestore(&peer->lock, flags);
	return ok;
}

/* Whether a rail not in @tried could still carry part of @rr. */
u32 kvreg_rails_left(const struct kvreg_rregion *rr, u32 tried)
{
	struct kvreg_peer *peer = rr->peer;
	u32 i, n = READ_ONCE(peer->nr_rails), left = 0;

	for (i = 0; i < n; i++)
		if (!(tried & BIT(i)) && rr->paths[i].chunks &&
		    !peer->rails[i].excluded)
			left++;
	return left;
}

/* Whether one of @rr's rails goes through local device @dev_index. */
bool kvreg_rail_on_device(const struct kvreg_rregion *rr, u32 dev_index)
{
	struct kvreg_peer *peer = rr->peer;
	unsigned long flags;
	bool found = false;
	u32 i;

	spin_lock_irqsave(&peer->lock, flags);
	for (i = 0; i < peer->nr_rails && !found; i++)
		found = rr->paths[i].chunks && peer->rails[i].conn &&
			peer->rails[i].conn->dev->index == dev_index;
	spin_unlock_irqrestore(&peer->lock, flags);
	return found;
}

/*
 * The file is going: no rail is mended or given new work, and every one
 * is put in the error state, which flushes what is in flight on it.
 */
void kvreg_peer_abort(struct kvreg_peer *peer)
{
	struct kvreg_conn *conns[KVREG_DESC_MAX_PATHS];
	unsigned long flags;
	u32 i, n = 0;

	spin_lock_irqsave(&peer->lock, flags);
	peer->closing = true;
	for (i = 0; i < peer->nr_rails; i++) {
		if (peer->rails[i].conn) {
			conns[n] = peer->rails[i].conn;
			kref_get(&conns[n++]->ref);
		}
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	for (i = 0; i < n; i++) {
		kvreg_conn_abort(conns[i]);
		kvreg_conn_put(conns[i]);
	}
}

/*
 * The file is going: every rail group of it is aborted, those of regions
 * UNIMPORTed whose operations are still in flight included, so that all
 * of its work flushes now instead of waiting on peers, however slowly
 * they answer. One at a time, each held while aborted.
 */
void kvreg_peers_abort(struct kvreg_file *kf)
{
	struct kvreg_peer *peer, *next;

	for (;;) {
		next = NULL;
		spin_lock(&kf->peers_lock);
		list_for_each_entry(peer, &kf->peers, file_node) {
			if (peer->aborted || !kref_get_unless_zero(&peer->ref))
				continue;
			peer->aborted = true;
			next = peer;
			break;
		}
		spin_unlock(&kf->peers_lock);
		if (!next)
			return;
		kvreg_peer_abort(next);
		kvreg_peer_put(next);
	}
}

int kvreg_rails_init(void)
{
	kvreg_rails_wq = alloc_workqueue("kvreg_rails", WQ_UNBOUND, 0);
	return kvreg_rails_wq ? 0 : -ENOMEM;
}

void kvreg_rails_exit(void)
{
	destroy_workqueue(kvreg_rails_wq);
}
