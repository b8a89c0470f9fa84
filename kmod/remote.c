// SPDX-License-Identifier: GPL-2.0-only
/*
 * Remote regions: EXPORT writes a registration's descriptor for a peer;
 * IMPORT reads a peer's, connects to its endpoint (or shares the file's
 * connection to it) and gives a handle that TRANSFER takes with
 * KVREG_TRANSFER_F_REMOTE_REGION; UNIMPORT drops it. A transfer holds the
 * region, and the region its connection, by reference.
 */
#include <linux/slab.h>

#include "kvreg.h"

/* The largest descriptor IMPORT reads: a path per slot, every chunk. */
#define KVREG_DESC_MAX_SIZE						\
	(sizeof(struct kvreg_desc_head) +				\
	 KVREG_DESC_MAX_PATHS * sizeof(struct kvreg_desc_path) +	\
	 (size_t)KVREG_DESC_MAX_CHUNKS * sizeof(struct kvreg_desc_chunk))
#define KVREG_MAX_TIMEOUT_MS	60000

static int kvreg_export_check(struct kvreg_file *kf, struct kvreg_export *arg,
			      struct kvreg_endpoint **epp,
			      struct kvreg_reg_dev **rdp,
			      struct kvreg_error *err)
{
	struct kvreg_endpoint *ep = kvreg_endpoint_find(kf, arg->endpoint);
	struct kvreg_reg *reg;
	u32 i;

	lockdep_assert_held(&kf->lock);
	if (!ep) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_ENDPOINT,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_ENDPOINT;
		return -ENOENT;
	}
	reg = kvreg_reg_lookup(kf, arg->handle);
	if (!reg) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_HANDLE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_HANDLE;
		return -ENOENT;
	}
	/* Only what was registered for it is reachable from the network. */
	if (!(reg->access & (KVREG_ACCESS_REMOTE_READ |
			     KVREG_ACCESS_REMOTE_WRITE))) {
		kvreg_set_error(err, KVREG_REASON_ACCESS_DENIED,
				KVREG_NO_DEVICE_INDEX);
		err->request = KVREG_ACCESS_REMOTE_READ |
			       KVREG_ACCESS_REMOTE_WRITE;
		err->usage = reg->access;
		return -EACCES;
	}
	for (i = 0; i < reg->nr_devs; i++) {
		if (reg->devs[i].dev == ep->dev) {
			*epp = ep;
			*rdp = &reg->devs[i];
			return 0;
		}
	}
	kvreg_set_error(err, KVREG_REASON_NO_DEVICE, ep->dev->index);
	return -ENODEV;
}

int kvreg_export(struct kvreg_file *kf, struct kvreg_export *arg,
		 struct kvreg_error *err)
{
	struct kvreg_endpoint *ep;
	struct kvreg_reg_dev *rd;
	struct kvreg_dev *kdev;
	void *blob = NULL;
	size_t size = 0;
	int ret;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved || arg->desc_size)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);

	mutex_lock(&kf->lock);
	ret = kvreg_export_check(kf, arg, &ep, &rd, err);
	if (ret)
		goto out_unlock;
	kdev = ep->dev;
	down_read(&kdev->teardown_rwsem);
	if (kdev->dead || !READ_ONCE(rd->live) || !READ_ONCE(ep->cm_id)) {
		kvreg_set_error(err, KVREG_REASON_DEVICE_REMOVED, kdev->index);
		ret = -ENODEV;
		goto out_rwsem;
	}
	size = kvreg_desc_size(rd->nr_mrs);
	if (arg->desc_capacity < size) {
		kvreg_bad_arg(err, KVREG_ARG_DESCRIPTOR);
		err->request = size;
		err->limit = arg->desc_capacity;
		ret = -ENOSPC;
		goto out_rwsem;
	}
	blob = kvmalloc(size, GFP_KERNEL);
	if (!blob) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		ret = -ENOMEM;
		goto out_rwsem;
	}
	kvreg_desc_build(blob, size, rd->reg, rd, &ep->addr, ep->secret);
out_rwsem:
	up_read(&kdev->teardown_rwsem);
out_unlock:
	mutex_unlock(&kf->lock);
	if (size)
		arg->desc_size = size;
	if (blob && copy_to_user(u64_to_user_ptr(arg->desc), blob, size)) {
		kvreg_bad_arg(err, KVREG_ARG_POINTER);
		ret = -EFAULT;
	}
	kvfree(blob);
	return ret;
}

static void kvreg_rregion_release(struct kref *ref)
{
	struct kvreg_rregion *rr = container_of(ref, struct kvreg_rregion, ref);

	if (rr->conn)
		kvreg_conn_put(rr->conn);
	kvfree(rr->chunks);
	kfree(rr);
}

void kvreg_rregion_put(struct kvreg_rregion *rr)
{
	kref_put(&rr->ref, kvreg_rregion_release);
}

/* Caller holds kf->lock. With a reference, or NULL. */
struct kvreg_rregion *kvreg_rregion_get(struct kvreg_file *kf, u64 handle)
{
	struct kvreg_rregion *rr;

	lockdep_assert_held(&kf->lock);
	if (handle > U32_MAX)
		return NULL;
	rr = xa_load(&kf->remotes, handle);
	if (rr)
		kref_get(&rr->ref);
	return rr;
}

/* A live connection of @kf to the endpoint @desc names, with a reference. */
static struct kvreg_conn *kvreg_find_conn(struct kvreg_file *kf,
					  const struct kvreg_desc *desc)
{
	struct kvreg_rregion *rr;
	unsigned long id;

	lockdep_assert_held(&kf->lock);
	xa_for_each(&kf->remotes, id, rr) {
		struct kvreg_conn *conn = rr->conn;

		/* A QP in error (a refused key, a lost peer) is not reused. */
		if (!READ_ONCE(conn->lost) && READ_ONCE(conn->q.ready) &&
		    conn->peer.family == desc->family &&
		    conn->peer.port == desc->port &&
		    !memcmp(conn->peer.addr, desc->addr, sizeof(desc->addr)) &&
		    !memcmp(conn->secret, desc->secret, KVREG_SECRET_LEN)) {
			kref_get(&conn->ref);
			return conn;
		}
	}
	return NULL;
}

static int kvreg_import_check(struct kvreg_import *arg,
			      struct kvreg_error *err)
{
	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved || arg->remote || arg->length || arg->access ||
	    arg->device_index)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	if (!arg->desc_size || arg->desc_size > KVREG_DESC_MAX_SIZE) {
		/* request above limit: too large; zero: nothing given. */
		kvreg_bad_arg(err, KVREG_ARG_DESCRIPTOR);
		err->request = arg->desc_size;
		err->limit = KVREG_DESC_MAX_SIZE;
		return -EINVAL;
	}
	if (arg->timeout_ms > KVREG_MAX_TIMEOUT_MS) {
		kvreg_bad_arg(err, KVREG_ARG_TIMEOUT);
		err->request = arg->timeout_ms;
		err->limit = KVREG_MAX_TIMEOUT_MS;
		return -EINVAL;
	}
	return 0;
}

int kvreg_import(struct kvreg_file *kf, struct kvreg_import *arg,
		 struct kvreg_error *err)
{
	u32 timeout = arg->timeout_ms ?: KVREG_CONNECT_TIMEOUT_MS;
	struct kvreg_desc desc = {};
	struct kvreg_rregion *rr;
	struct kvreg_conn *conn;
	void *blob;
	u32 handle;
	int ret;

	ret = kvreg_import_check(arg, err);
	if (ret)
		return ret;
	blob = vmemdup_user(u64_to_user_ptr(arg->desc), arg->desc_size);
	if (IS_ERR(blob)) {
		ret = PTR_ERR(blob);
		if (ret == -EFAULT) {
			kvreg_bad_arg(err, KVREG_ARG_POINTER);
			return -EFAULT;
		}
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return ret;
	}
	ret = kvreg_desc_parse(blob, arg->desc_size, &desc, err);
	kvfree(blob);
	if (ret)
		return ret;

	rr = kzalloc(sizeof(*rr), GFP_KERNEL_ACCOUNT);
	if (!rr) {
		kvfree(desc.chunks);
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	kref_init(&rr->ref);
	rr->length = desc.length;
	rr->access = desc.access;
	rr->nr_chunks = desc.nr_chunks;
	rr->chunks = desc.chunks;

	mutex_lock(&kf->lock);
	conn = kvreg_find_conn(kf, &desc);
	mutex_unlock(&kf->lock);
	/* Connecting takes seconds at worst: not under the file's lock. */
	if (!conn)
		conn = kvreg_conn_connect(kf, &desc, timeout, err);
	if (IS_ERR(conn)) {
		ret = PTR_ERR(conn);
		goto err_free;
	}
	rr->conn = conn;

	mutex_lock(&kf->lock);
	ret = xa_alloc(&kf->remotes, &handle, rr, xa_limit_32b, GFP_KERNEL);
	mutex_unlock(&kf->lock);
	if (ret) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		goto err_free;
	}
	rr->handle = handle;
	arg->remote = handle;
	arg->length = rr->length;
	arg->access = rr->access;
	arg->device_index = conn->dev->index;
	return 0;

err_free:
	kvreg_rregion_put(rr);
	return ret;
}

int kvreg_unimport(struct kvreg_file *kf, u64 handle, struct kvreg_error *err)
{
	struct kvreg_rregion *rr = NULL;

	mutex_lock(&kf->lock);
	if (handle && handle <= U32_MAX)
		rr = xa_erase(&kf->remotes, handle);
	mutex_unlock(&kf->lock);
	if (!rr) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_HANDLE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_HANDLE;
		return -ENOENT;
	}
	/* The last region of a connection closes it: not under kf->lock. */
	kvreg_rregion_put(rr);
	return 0;
}

/* The chunk holding region offset @offset, which is below rr->length. */
const struct kvreg_rchunk *kvreg_rregion_chunk(const struct kvreg_rregion *rr,
					       u64 offset)
{
	u32 lo = 0, hi = rr->nr_chunks;

	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (rr->chunks[mid].start <= offset)
			lo = mid;
		else
			hi = mid;
	}
	return &rr->chunks[lo];
}

void kvreg_remotes_release(struct kvreg_file *kf)
{
	struct kvreg_rregion *rr;
	unsigned long id;

	xa_for_each(&kf->remotes, id, rr) {
		xa_erase(&kf->remotes, id);
		kvreg_rregion_put(rr);
	}
	xa_destroy(&kf->remotes);
}
