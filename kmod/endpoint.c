// SPDX-License-Identifier: GPL-2.0-only
/*
 * Endpoints: a file listens on local addresses, in its own network
 * namespace, through the RDMA CM: one address to begin with, more added
 * to the same endpoint (a rail per address, each on the device that owns
 * it). Connection requests that present the secret of one of its exports
 * become connections of that file (conn.c); each export's secret is
 * random and travels only in its descriptors, so a peer without one
 * cannot connect. A connection lives in the PDs of the export whose
 * secret it presented, beside that export's MRs and nothing else
 * (export.c). A listener whose device is removed is not bound again: the
 * rkeys its paths carried died with that device, so a peer must import a
 * descriptor exported anew. UNLISTEN closes an endpoint, REKEY gives each
 * of its exports a new secret; both cut the connections it accepted.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>

#include "kvreg.h"

static int kvreg_listener_cm_handler(struct rdma_cm_id *id,
				     struct rdma_cm_event *ev)
{
	struct kvreg_listener *ln = id->context;
	struct kvreg_endpoint *ep = ln->ep;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* @id is the new connection's; non-zero has the CM drop it. */
		return kvreg_conn_accept(ep, id, ev);
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* The listener: the CM destroys it if release has not. */
		if (cmpxchg(&ln->cm_id, id, NULL) == id)
			return 1;
		return 0;
	default:
		return 0;
	}
}

/*
 * Caller holds kf->lock; the endpoint stays while kf->ep_mutex is held,
 * which whoever uses it past kf->lock must hold.
 */
struct kvreg_endpoint *kvreg_endpoint_find(struct kvreg_file *kf,
					   u64 handle)
{
	struct kvreg_endpoint *ep;

	lockdep_assert_held(&kf->lock);
	list_for_each_entry(ep, &kf->endpoints, node)
		if (ep->handle == handle)
			return ep;
	return NULL;
}

static u16 kvreg_bound_port(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

	if (sa->sa_family == AF_INET6)
		return be16_to_cpu(sin6->sin6_port);
	return be16_to_cpu(sin->sin_port);
}

static u32 kvreg_bind_reason(int ret)
{
	switch (ret) {
	case -EADDRNOTAVAIL:
		return KVREG_REASON_ADDRESS_NOT_LOCAL;
	case -ENODEV:
		return KVREG_REASON_NO_RDMA_FOR_ADDRESS;
	case -EADDRINUSE:
		return KVREG_REASON_ADDRESS_IN_USE;
	case -ENOMEM:
		return KVREG_REASON_NO_KERNEL_MEMORY;
	default:
		return KVREG_REASON_DEVICE_REFUSED;
	}
}

/*
 * Bind and listen on @addr (port included; 0 picks one, written back).
 * On success @ln's @cm_id is set and *@devp holds the device's
 * reference. Its callbacks may run as soon as @cm_id is set.
 */
static int kvreg_listener_bind(struct kvreg_listener *ln,
			       struct kvreg_net_addr *addr, u32 backlog,
			       struct kvreg_dev **devp,
			       struct kvreg_error *err)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	struct kvreg_dev *kdev;
	int ret;

	if (kvreg_net_sockaddr(addr, &ss))
		return kvreg_bad_arg(err, KVREG_ARG_NET_ADDRESS);
	id = rdma_create_id(ln->ep->kf->net, kvreg_listener_cm_handler, ln,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		err->driver_errno = PTR_ERR(id);
		return PTR_ERR(id);
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (ret) {
		err->reason = kvreg_bind_reason(ret);
		err->driver_errno = ret;
		goto err_id;
	}
	/* A wildcard binds no device: the descriptor needs one address. */
	if (!id->device) {
		ret = kvreg_bad_arg(err, KVREG_ARG_NET_ADDRESS);
		goto err_id;
	}
	kdev = kvreg_dev_find(id->device);
	if (!kdev) {
		err->reason = KVREG_REASON_NO_RDMA_FOR_ADDRESS;
		ret = -ENODEV;
		goto err_id;
	}
	/* Set now: a DEVICE_REMOVAL may come before rdma_listen() returns. */
	WRITE_ONCE(ln->cm_id, id);
	/* iWARP allocates per slot: a caller's number is clamped, as ucma's. */
	ret = rdma_listen(id, min_t(u32, backlog, KVREG_MAX_BACKLOG));
	if (ret) {
		err->reason = kvreg_bind_reason(ret);
		err->driver_errno = ret;
		goto err_dev;
	}
	addr->port = kvreg_bound_port((struct sockaddr *)
				      &id->route.addr.src_addr);
	*devp = kdev;
	return 0;

err_dev:
	kvreg_dev_put(kdev);
	id = xchg(&ln->cm_id, NULL);
err_id:
	if (id)
		rdma_destroy_id(id);
	return ret;
}

/* A listener of @ep on arg->addr: bound, put on @ep, listed. */
static int kvreg_endpoint_add(struct kvreg_endpoint *ep,
			      struct kvreg_listen *arg,
			      struct kvreg_error *err)
{
	struct kvreg_listener *ln;
	struct rdma_cm_id *id;
	struct kvreg_dev *kdev;
	bool full;
	int ret;

	ln = kzalloc(sizeof(*ln), GFP_KERNEL_ACCOUNT);
	if (!ln) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	ln->ep = ep;
	kvreg_net_entry_init(&ln->entry, ep->kf, KVREG_CONN_KIND_ENDPOINT);
	/* Bound without ep->mutex: the CM's own locks come before it. */
	ret = kvreg_listener_bind(ln, &arg->addr, arg->backlog, &kdev, err);
	if (ret) {
		if (err->reason != KVREG_REASON_BAD_ARGUMENT)
			kvreg_set_net_error(err, err->reason, &arg->addr);
		kfree(ln);
		return ret;
	}
	ln->dev = kdev;
	ln->addr = arg->addr;
	ln->entry.device_index = kdev->index;

	mutex_lock(&ep->mutex);
	full = ep->nr_listeners == KVREG_DESC_MAX_PATHS;
	if (!full)
		ep->listeners[ep->nr_listeners++] = ln;
	mutex_unlock(&ep->mutex);
	if (full) {
		id = xchg(&ln->cm_id, NULL);
		if (id)
			rdma_destroy_id(id);
		kvreg_dev_put(kdev);
		kfree(ln);
		kvreg_bad_arg(err, KVREG_ARG_NET_ADDRESS);
		err->limit = KVREG_DESC_MAX_PATHS;
		err->request = KVREG_DESC_MAX_PATHS + 1;
		return -ENOSPC;
	}
	kvreg_net_list_listener(ln);
	arg->device_index = kdev->index;
	return 0;
}

static struct kvreg_endpoint *kvreg_endpoint_alloc(struct kvreg_file *kf)
{
	struct kvreg_endpoint *ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);

	if (!ep)
		return NULL;
	ep->kf = kf;
	mutex_init(&ep->mutex);
	INIT_LIST_HEAD(&ep->exports);
	hash_init(ep->by_secret);
	INIT_LIST_HEAD(&ep->spare_pds);
	hash_init(ep->addr_counts);
	atomic_set(&ep->nr_accepts, 0);
	return ep;
}

/*
 * Caller holds kf->ep_mutex; @ep is off kf->endpoints and closing, so no
 * connection is accepted on it any more. In order: nothing listens, no
 * peer is connected, no key of an export works; then it is freed.
 */
static void kvreg_endpoint_free(struct kvreg_endpoint *ep)
{
	struct rdma_cm_id *ids[KVREG_DESC_MAX_PATHS];
	struct kvreg_exported *ex, *tmp;
	u32 i;

	lockdep_assert_held(&ep->kf->ep_mutex);
	/* Every id not taken by the CM is ours to destroy. */
	mutex_lock(&ep->mutex);
	for (i = 0; i < ep->nr_listeners; i++)
		ids[i] = xchg(&ep->listeners[i]->cm_id, NULL);
	mutex_unlock(&ep->mutex);
	/* Waits for a callback in progress: without kf->lock or ep->mutex. */
	for (i = 0; i < ep->nr_listeners; i++)
		if (ids[i])
			rdma_destroy_id(ids[i]);
	/* Its queued requests take kf->lock and ep->mutex: neither held. */
	kvreg_endpoint_accepts_wait(ep);
	kvreg_endpoint_conns_cut(ep);
	list_for_each_entry_safe(ex, tmp, &ep->exports, ep_node)
		kvreg_exported_revoke(ex);
	for (i = 0; i < ep->nr_listeners; i++) {
		kvreg_net_unlist(&ep->listeners[i]->entry);
		kvreg_dev_put(ep->listeners[i]->dev);
		kfree(ep->listeners[i]);
	}
	/* Every connection was unlisted, each taking its count with it. */
	WARN_ON_ONCE(!hash_empty(ep->addr_counts));
	WARN_ON_ONCE(!hash_empty(ep->by_secret));
	kvreg_pds_release(&ep->spare_pds);
	kvreg_caps_uncharge_endpoint(ep->kf->km);
	mutex_destroy(&ep->mutex);
	kfree(ep);
}

/* Caller holds kf->ep_mutex: @handle's endpoint, taken off the file. */
static struct kvreg_endpoint *kvreg_endpoint_take(struct kvreg_file *kf,
						  u64 handle)
{
	struct kvreg_endpoint *ep;

	mutex_lock(&kf->lock);
	ep = kvreg_endpoint_find(kf, handle);
	if (ep) {
		/* A connection request from now on is refused. */
		ep->closing = true;
		list_del(&ep->node);
	}
	mutex_unlock(&kf->lock);
	return ep;
}

static int kvreg_unknown_endpoint(struct kvreg_error *err)
{
	kvreg_set_error(err, KVREG_REASON_UNKNOWN_ENDPOINT,
			KVREG_NO_DEVICE_INDEX);
	err->argument = KVREG_ARG_ENDPOINT;
	return -ENOENT;
}

int kvreg_unlisten(struct kvreg_file *kf, u64 handle, struct kvreg_error *err)
{
	struct kvreg_endpoint *ep;

	mutex_lock(&kf->ep_mutex);
	ep = kvreg_endpoint_take(kf, handle);
	if (ep)
		kvreg_endpoint_free(ep);
	mutex_unlock(&kf->ep_mutex);
	return ep ? 0 : kvreg_unknown_endpoint(err);
}

/*
 * New secrets for every export: descriptors exported before cannot
 * connect, and the connections made with the old ones are cut, so no
 * holder of an old descriptor keeps a way in.
 */
int kvreg_rekey(struct kvreg_file *kf, u64 handle, struct kvreg_error *err)
{
	struct kvreg_endpoint *ep;

	mutex_lock(&kf->ep_mutex);
	mutex_lock(&kf->lock);
	ep = kvreg_endpoint_find(kf, handle);
	mutex_unlock(&kf->lock);
	if (ep) {
		kvreg_exports_rekey(ep);
		/* An accept that found an old secret is listed, then cut. */
		kvreg_endpoint_conns_cut(ep);
	}
	mutex_unlock(&kf->ep_mutex);
	return ep ? 0 : kvreg_unknown_endpoint(err);
}

/* Another address for an endpoint of @kf. Caller holds kf->ep_mutex. */
static int kvreg_listen_more(struct kvreg_file *kf, struct kvreg_listen *arg,
			     struct kvreg_error *err)
{
	struct kvreg_endpoint *ep;

	mutex_lock(&kf->lock);
	ep = kvreg_endpoint_find(kf, arg->endpoint);
	mutex_unlock(&kf->lock);
	if (!ep)
		return kvreg_unknown_endpoint(err);
	return kvreg_endpoint_add(ep, arg, err);
}

static int kvreg_listen_new(struct kvreg_file *kf, struct kvreg_listen *arg,
			    struct kvreg_error *err)
{
	struct kvreg_endpoint *ep;
	int ret;

	ret = kvreg_caps_charge_endpoint(kf->km, err);
	if (ret)
		return ret;
	ep = kvreg_endpoint_alloc(kf);
	if (!ep) {
		kvreg_caps_uncharge_endpoint(kf->km);
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	/* Numbered first: its listener is listed with the handle. */
	mutex_lock(&kf->lock);
	ep->handle = ++kf->next_endpoint;
	mutex_unlock(&kf->lock);
	ret = kvreg_endpoint_add(ep, arg, err);
	if (ret) {
		ep->closing = true;
		kvreg_endpoint_free(ep);
		return ret;
	}

	mutex_lock(&kf->lock);
	list_add_tail(&ep->node, &kf->endpoints);
	mutex_unlock(&kf->lock);
	arg->endpoint = ep->handle;
	return 0;
}

int kvreg_listen(struct kvreg_file *kf, struct kvreg_listen *arg,
		 struct kvreg_error *err)
{
	bool more = arg->flags & KVREG_LISTEN_F_ADD_ADDRESS;
	int ret;

	if (arg->flags & ~KVREG_LISTEN_F_ADD_ADDRESS)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved || arg->device_index)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	if (!more && arg->endpoint)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	mutex_lock(&kf->ep_mutex);
	ret = more ? kvreg_listen_more(kf, arg, err) :
	      kvreg_listen_new(kf, arg, err);
	mutex_unlock(&kf->ep_mutex);
	return ret;
}

/* kf->closing is set: no connection is accepted once a listener is gone. */
void kvreg_endpoints_release(struct kvreg_file *kf)
{
	struct kvreg_endpoint *ep, *tmp;
	LIST_HEAD(eps);

	mutex_lock(&kf->ep_mutex);
	mutex_lock(&kf->lock);
	list_splice_init(&kf->endpoints, &eps);
	mutex_unlock(&kf->lock);
	list_for_each_entry_safe(ep, tmp, &eps, node) {
		list_del(&ep->node);
		kvreg_endpoint_free(ep);
	}
	mutex_unlock(&kf->ep_mutex);
}
