// SPDX-License-Identifier: GPL-2.0-only
/*
 * Endpoints: a file listens on a local address, in its own network
 * namespace, through the RDMA CM. Connection requests that present the
 * endpoint's secret become connections of that file (conn.c); the secret
 * is random per endpoint and travels only in the descriptors the file
 * exports, so a peer without one cannot connect.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "kvreg.h"

static int kvreg_endpoint_cm_handler(struct rdma_cm_id *id,
				     struct rdma_cm_event *ev)
{
	struct kvreg_endpoint *ep = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* @id is the new connection's; non-zero has the CM drop it. */
		return kvreg_conn_accept(ep->kf, id, ev, ep->secret);
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* The listener: the CM destroys it if release has not. */
		if (cmpxchg(&ep->cm_id, id, NULL) == id)
			return 1;
		return 0;
	default:
		return 0;
	}
}

/* Caller holds kf->lock. */
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
	default:
		return KVREG_REASON_DEVICE_REFUSED;
	}
}

static int kvreg_endpoint_bind(struct kvreg_endpoint *ep,
			       struct kvreg_listen *arg,
			       struct kvreg_error *err)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	int ret;

	if (kvreg_net_sockaddr(&arg->addr, &ss))
		return kvreg_bad_arg(err, KVREG_ARG_NET_ADDRESS);
	id = rdma_create_id(current->nsproxy->net_ns,
			    kvreg_endpoint_cm_handler, ep, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		err->driver_errno = PTR_ERR(id);
		return PTR_ERR(id);
	}
	/* Set now: a DEVICE_REMOVAL may come before rdma_listen() returns. */
	ep->cm_id = id;
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
	ep->dev = kvreg_dev_find(id->device);
	if (!ep->dev) {
		err->reason = KVREG_REASON_NO_RDMA_FOR_ADDRESS;
		ret = -ENODEV;
		goto err_id;
	}
	ret = rdma_listen(id, arg->backlog);
	if (ret) {
		err->reason = kvreg_bind_reason(ret);
		err->driver_errno = ret;
		goto err_dev;
	}
	arg->addr.port = kvreg_bound_port((struct sockaddr *)
					  &id->route.addr.src_addr);
	return 0;

err_dev:
	kvreg_dev_put(ep->dev);
err_id:
	id = xchg(&ep->cm_id, NULL);
	if (id)
		rdma_destroy_id(id);
	return ret;
}

int kvreg_listen(struct kvreg_file *kf, struct kvreg_listen *arg,
		 struct kvreg_error *err)
{
	struct kvreg_endpoint *ep;
	int ret;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved || arg->device_index || arg->endpoint)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	ep->kf = kf;
	kvreg_net_entry_init(&ep->entry, kf, KVREG_CONN_KIND_ENDPOINT);
	get_random_bytes(ep->secret, sizeof(ep->secret));
	ret = kvreg_endpoint_bind(ep, arg, err);
	if (ret) {
		if (err->reason != KVREG_REASON_BAD_ARGUMENT)
			kvreg_set_net_error(err, err->reason, &arg->addr);
		kfree(ep);
		return ret;
	}
	ep->addr = arg->addr;

	mutex_lock(&kf->lock);
	ep->handle = ++kf->next_endpoint;
	list_add_tail(&ep->node, &kf->endpoints);
	mutex_unlock(&kf->lock);
	kvreg_net_list_endpoint(ep);
	arg->endpoint = ep->handle;
	arg->device_index = ep->dev->index;
	return 0;
}

/* kf->closing is set: no connection is accepted once a listener is gone. */
void kvreg_endpoints_release(struct kvreg_file *kf)
{
	struct kvreg_endpoint *ep, *tmp;
	struct rdma_cm_id *id;
	LIST_HEAD(eps);

	mutex_lock(&kf->lock);
	list_splice_init(&kf->endpoints, &eps);
	mutex_unlock(&kf->lock);
	list_for_each_entry_safe(ep, tmp, &eps, node) {
		/* Waits for a CONNECT_REQUEST in its callback: no kf->lock. */
		id = xchg(&ep->cm_id, NULL);
		if (id)
			rdma_destroy_id(id);
		list_del(&ep->node);
		kvreg_net_unlist(&ep->entry);
		kvreg_dev_put(ep->dev);
		kfree(ep);
	}
}
