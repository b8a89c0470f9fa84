// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host-wide list of endpoints and connections, for KVREG_IOC_CONNS
 * (`kvregctl conns`): who owns each, its addresses, its state, and the
 * operations it carried. An entry is listed once its addresses are known
 * and unlisted before what it belongs to is freed, so that a reader under
 * kvreg_net_lock may look through it at its endpoint or connection.
 */
#include <linux/cred.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>

#include "kvreg.h"

/* Protects kvreg_net_entries and every entry's @node. */
static DEFINE_MUTEX(kvreg_net_lock);
static LIST_HEAD(kvreg_net_entries);

void kvreg_net_addr_of(struct kvreg_net_addr *a, const struct sockaddr *sa)
{
	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		a->family = AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, sizeof(sin->sin_addr));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		a->family = AF_INET6;
		a->port = ntohs(sin6->sin6_port);
		a->scope_id = sin6->sin6_scope_id;
		memcpy(a->addr, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
	}
}

void kvreg_net_entry_init(struct kvreg_net_entry *e, struct kvreg_file *kf,
			  u32 kind)
{
	INIT_LIST_HEAD(&e->node);
	e->kind = kind;
	e->tgid = kf->km->tgid;
	e->uid = kf->uid;
	memcpy(e->comm, kf->km->comm, sizeof(e->comm));
}

/* A listener, once bound: @local is its address, port included. */
void kvreg_net_list_listener(struct kvreg_listener *ln)
{
	ln->entry.local = ln->addr;
	ln->entry.endpoint = ln->ep->handle;
	mutex_lock(&kvreg_net_lock);
	list_add_tail(&ln->entry.node, &kvreg_net_entries);
	mutex_unlock(&kvreg_net_lock);
}

/* A connection, once the CM has given @id its addresses. */
void kvreg_net_list_conn(struct kvreg_conn *conn, struct rdma_cm_id *id)
{
	struct kvreg_net_entry *e = &conn->entry;

	kvreg_net_addr_of(&e->local, (void *)&id->route.addr.src_addr);
	kvreg_net_addr_of(&e->peer, (void *)&id->route.addr.dst_addr);
	mutex_lock(&kvreg_net_lock);
	list_add_tail(&e->node, &kvreg_net_entries);
	mutex_unlock(&kvreg_net_lock);
}

/* Before what @e belongs to is freed; a no-op if it was never listed. */
void kvreg_net_unlist(struct kvreg_net_entry *e)
{
	mutex_lock(&kvreg_net_lock);
	list_del_init(&e->node);
	mutex_unlock(&kvreg_net_lock);
}

/* @nr_ops operations are about to be posted on @e's connection. */
void kvreg_net_start(struct kvreg_net_entry *e, u32 nr_ops)
{
	atomic_add(nr_ops, &e->inflight);
}

/* From the CQ's softirq too: one operation of @e's connection ended. */
void kvreg_net_count(struct kvreg_net_entry *e, u64 bytes, u32 wc_status,
		     bool ok)
{
	atomic_dec(&e->inflight);
	atomic64_inc(&e->ops);
	if (ok) {
		atomic64_add(bytes, &e->bytes);
		return;
	}
	atomic64_inc(&e->ops_failed);
	WRITE_ONCE(e->last_wc_status, wc_status);
}

/* From the CQ's softirq: @nr_ops of @e's connection ended well at once. */
void kvreg_net_count_ok(struct kvreg_net_entry *e, u32 nr_ops, u64 bytes)
{
	atomic_sub(nr_ops, &e->inflight);
	atomic64_add(nr_ops, &e->ops);
	atomic64_add(bytes, &e->bytes);
}

static void kvreg_net_fill(const struct kvreg_net_entry *e,
			   struct kvreg_conn_info *ci)
{
	const struct kvreg_listener *ln;
	const struct kvreg_conn *conn;
	const struct kvreg_peer *peer;

	memset(ci, 0, sizeof(*ci));
	ci->pid = e->tgid;
	ci->uid = from_kuid_munged(current_user_ns(), e->uid);
	memcpy(ci->comm, e->comm, sizeof(ci->comm));
	ci->kind = e->kind;
	ci->local = e->local;
	ci->peer = e->peer;
	ci->endpoint = e->endpoint;
	ci->inflight = max(atomic_read(&e->inflight), 0);
	ci->ops = atomic64_read(&e->ops);
	ci->ops_failed = atomic64_read(&e->ops_failed);
	ci->bytes = atomic64_read(&e->bytes);
	ci->last_wc_status = READ_ONCE(e->last_wc_status);
	ci->failovers = atomic64_read(&e->failovers);
	if (e->kind == KVREG_CONN_KIND_ENDPOINT) {
		/* Its device removed: down until it is bound again. */
		ln = container_of(e, struct kvreg_listener, entry);
		ci->state = READ_ONCE(ln->cm_id) ? KVREG_CONN_STATE_LISTENING :
			    KVREG_CONN_STATE_LOST;
		ci->device_index = READ_ONCE(e->device_index);
		return;
	}
	conn = container_of(e, struct kvreg_conn, entry);
	ci->device_index = conn->dev->index;
	/* A rail's peer unlists its connections before it is freed. */
	peer = READ_ONCE(conn->rail_peer);
	if (peer) {
		ci->rail_group = peer->id;
		ci->rail = READ_ONCE(conn->rail);
		ci->rails = READ_ONCE(peer->nr_rails);
		ci->mend_reason = READ_ONCE(peer->rails[ci->rail].mend_reason);
		ci->mend_errno = READ_ONCE(peer->rails[ci->rail].mend_errno);
	}
	/* Once up, @ready falls only with its QP in the error state. */
	if (READ_ONCE(conn->lost))
		ci->state = KVREG_CONN_STATE_LOST;
	else if (!READ_ONCE(conn->established))
		ci->state = KVREG_CONN_STATE_CONNECTING;
	else if (READ_ONCE(conn->q.ready))
		ci->state = KVREG_CONN_STATE_ESTABLISHED;
	else
		ci->state = KVREG_CONN_STATE_LOST;
}

static bool kvreg_net_visible(const struct kvreg_net_entry *e, bool admin)
{
	return admin || uid_eq(e->uid, current_euid());
}

int kvreg_net_conns(struct kvreg_conns *arg, struct kvreg_error *err)
{
	bool admin = capable(CAP_SYS_ADMIN);
	struct kvreg_net_entry *e;
	struct kvreg_conn_info *infos;
	u32 n = 0, room, copied;
	int ret;

	/* Snapshot under the lock, copy to the caller without it. */
	mutex_lock(&kvreg_net_lock);
	list_for_each_entry(e, &kvreg_net_entries, node)
		n += kvreg_net_visible(e, admin);
	room = min(n, arg->capacity);
	infos = kvcalloc(max(room, 1U), sizeof(*infos), GFP_KERNEL);
	if (!infos) {
		mutex_unlock(&kvreg_net_lock);
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	copied = 0;
	list_for_each_entry(e, &kvreg_net_entries, node) {
		if (!kvreg_net_visible(e, admin))
			continue;
		if (copied < room)
			kvreg_net_fill(e, &infos[copied++]);
	}
	mutex_unlock(&kvreg_net_lock);

	ret = kvreg_copy_list(arg->entries, arg->entry_size, &arg->count,
			      infos, sizeof(*infos), copied, n, err);
	kvfree(infos);
	return ret;
}
