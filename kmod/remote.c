// SPDX-License-Identifier: GPL-2.0-only
/*
 * Remote regions: EXPORT writes a registration's descriptor for a peer;
 * IMPORT reads a peer's, connects to its endpoint on each of its paths
 * (or shares the file's rails to it, rails.c) and gives a handle that
 * TRANSFER and SUBMIT take; UNIMPORT drops it. A transfer holds the
 * region, and the region its rails, by reference.
 */
#include <linux/slab.h>

#include "kvreg.h"

#define KVREG_MAX_TIMEOUT_MS	60000

/* The largest descriptor IMPORT reads: a path per slot, @chunks chunks. */
static size_t kvreg_desc_max_size(u64 chunks)
{
	return sizeof(struct kvreg_desc_head) +
	       KVREG_DESC_MAX_PATHS * sizeof(struct kvreg_desc_path) +
	       (size_t)chunks * sizeof(struct kvreg_desc_chunk);
}

static int kvreg_export_check(struct kvreg_file *kf, struct kvreg_export *arg,
			      struct kvreg_endpoint **epp,
			      struct kvreg_reg **regp, struct kvreg_error *err)
{
	struct kvreg_endpoint *ep = kvreg_endpoint_find(kf, arg->endpoint);
	struct kvreg_reg *reg;

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
	*epp = ep;
	*regp = reg;
	return 0;
}

/* What EXPORT puts in a descriptor: a path per device that can serve it. */
struct kvreg_export_paths {
	u32 nr;
	u64 chunks;
	const struct kvreg_export_dev *eds[KVREG_DESC_MAX_PATHS];
	struct kvreg_dev *devs[KVREG_DESC_MAX_PATHS];
	struct kvreg_net_addr addrs[KVREG_DESC_MAX_PATHS];
	/* Whose teardown_rwsem is held, by device index. */
	u32 nr_locked;
	struct kvreg_dev *locked[KVREG_DESC_MAX_PATHS];
};

/*
 * The devices of @ep's live listeners, each once, their teardown_rwsems
 * taken for read in device index order: two EXPORTs whose listeners are
 * in opposite orders, with removals waiting to write, cannot deadlock.
 */
static void kvreg_export_lock_devs(struct kvreg_endpoint *ep,
				   struct kvreg_export_paths *ps)
{
	u32 l, i, j;

	for (l = 0; l < ep->nr_listeners; l++) {
		struct kvreg_dev *kdev = ep->listeners[l]->dev;

		if (!READ_ONCE(ep->listeners[l]->cm_id))
			continue;
		for (i = 0; i < ps->nr_locked; i++)
			if (ps->locked[i]->index >= kdev->index)
				break;
		if (i < ps->nr_locked && ps->locked[i] == kdev)
			continue;
		for (j = ps->nr_locked; j > i; j--)
			ps->locked[j] = ps->locked[j - 1];
		ps->locked[i] = kdev;
		ps->nr_locked++;
	}
	/* A class per position: lockdep sees no recursion, and none is. */
	for (i = 0; i < ps->nr_locked; i++)
		down_read_nested(&ps->locked[i]->teardown_rwsem, i);
}

static bool kvreg_export_locked(const struct kvreg_export_paths *ps,
				const struct kvreg_dev *kdev)
{
	u32 i;

	for (i = 0; i < ps->nr_locked; i++)
		if (ps->locked[i] == kdev)
			return true;
	return false;
}

static void kvreg_export_unlock(struct kvreg_export_paths *ps)
{
	while (ps->nr_locked--)
		up_read(&ps->locked[ps->nr_locked]->teardown_rwsem);
}

/*
 * With ep->mutex held: one path per listener that is up on a device the
 * export has live MRs on, one per device (a device's rkeys are the same
 * whichever of its addresses is used), in listener order. Every device's
 * teardown_rwsem is held for read on return, for kvreg_export_unlock().
 */
static int kvreg_export_lock(struct kvreg_endpoint *ep,
			     struct kvreg_exported *ex,
			     struct kvreg_export_paths *ps,
			     struct kvreg_error *err)
{
	u32 l, p, first_dev = KVREG_NO_DEVICE_INDEX;

	lockdep_assert_held(&ep->mutex);
	kvreg_export_lock_devs(ep, ps);
	for (l = 0; l < ep->nr_listeners; l++) {
		struct kvreg_listener *ln = ep->listeners[l];
		struct kvreg_dev *kdev = ln->dev;
		const struct kvreg_export_dev *ed;

		if (first_dev == KVREG_NO_DEVICE_INDEX)
			first_dev = kdev->index;
		for (p = 0; p < ps->nr; p++)
			if (ps->devs[p] == kdev)
				break;
		if (p < ps->nr || !READ_ONCE(ln->cm_id) ||
		    !kvreg_export_locked(ps, kdev))
			continue;
		ed = kdev->dead ? NULL : kvreg_exported_on(ex, kdev);
		if (!ed)
			continue;
		ps->eds[ps->nr] = ed;
		ps->devs[ps->nr] = kdev;
		ps->addrs[ps->nr] = ln->addr;
		ps->chunks += ed->nr_mrs;
		ps->nr++;
	}
	if (ps->nr)
		return 0;
	kvreg_set_error(err, KVREG_REASON_NO_DEVICE, first_dev);
	return -ENODEV;
}

int kvreg_export(struct kvreg_file *kf, struct kvreg_export *arg,
		 struct kvreg_error *err)
{
	struct kvreg_export_paths ps = {};
	struct kvreg_endpoint *ep;
	struct kvreg_exported *ex;
	struct kvreg_reg *reg;
	void *blob = NULL;
	size_t size = 0;
	int ret;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved || arg->desc_size)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);

	mutex_lock(&kf->ep_mutex);
	mutex_lock(&kf->lock);
	ret = kvreg_export_check(kf, arg, &ep, &reg, err);
	if (!ret)
		kref_get(&reg->kref);
	mutex_unlock(&kf->lock);
	if (ret)
		goto out_unlock;
	/* Making MRs takes a while: not under kf->lock, which the CM takes. */
	ret = kvreg_exported_get(ep, reg, &ex, err);
	kvreg_reg_put(reg);
	if (ret)
		goto out_unlock;
	mutex_lock(&ep->mutex);
	ret = kvreg_export_lock(ep, ex, &ps, err);
	if (ret)
		goto out_rwsem;
	size = kvreg_desc_size(ps.nr, ps.chunks);
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
	kvreg_desc_build(blob, size, ex, ps.eds, ps.addrs, ps.nr, ex->secret);
out_rwsem:
	kvreg_export_unlock(&ps);
	mutex_unlock(&ep->mutex);
out_unlock:
	mutex_unlock(&kf->ep_mutex);
	if (size)
		arg->desc_size = size;
	if (blob && copy_to_user(u64_to_user_ptr(arg->desc), blob, size)) {
		kvreg_bad_arg(err, KVREG_ARG_POINTER);
		ret = -EFAULT;
	}
	/* It holds the export's secret. */
	if (blob)
		kvfree_sensitive(blob, size);
	return ret;
}

int kvreg_unexport(struct kvreg_file *kf, struct kvreg_unexport *arg,
		   struct kvreg_error *err)
{
	struct kvreg_exported *ex = NULL;
	struct kvreg_endpoint *ep;
	struct kvreg_reg *reg;
	int ret = 0;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);

	mutex_lock(&kf->ep_mutex);
	mutex_lock(&kf->lock);
	ep = kvreg_endpoint_find(kf, arg->endpoint);
	reg = kvreg_reg_lookup(kf, arg->handle);
	mutex_unlock(&kf->lock);
	if (!ep) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_ENDPOINT,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_ENDPOINT;
		ret = -ENOENT;
	} else if (!reg) {
		kvreg_set_error(err, KVREG_REASON_UNKNOWN_HANDLE,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_HANDLE;
		ret = -ENOENT;
	} else {
		/* @reg is compared, not used: ep_mutex keeps its exports. */
		ex = kvreg_exported_find(ep, reg);
		if (!ex) {
			kvreg_set_error(err, KVREG_REASON_NOT_EXPORTED,
					KVREG_NO_DEVICE_INDEX);
			err->argument = KVREG_ARG_HANDLE;
			ret = -ENOENT;
		}
	}
	if (ex)
		kvreg_exported_revoke(ex);
	mutex_unlock(&kf->ep_mutex);
	return ret;
}

static void kvreg_rregion_release(struct kref *ref)
{
	struct kvreg_rregion *rr = container_of(ref, struct kvreg_rregion, ref);

	if (rr->peer)
		kvreg_peer_leave(rr->peer, rr);
	kvreg_rpaths_free(rr->paths, KVREG_DESC_MAX_PATHS);
	if (rr->km)
		kvreg_caps_uncharge_import(rr->km, rr->charged_chunks);
	kfree_rcu(rr, rcu);
}

void kvreg_rregion_put(struct kvreg_rregion *rr)
{
	kref_put(&rr->ref, kvreg_rregion_release);
}

/*
 * With a reference, or NULL; without kf->lock, as SUBMIT looks up every
 * operation's region. One that UNIMPORT has taken out is not found.
 */
struct kvreg_rregion *kvreg_rregion_get(struct kvreg_file *kf, u64 handle)
{
	struct kvreg_rregion *rr;

	if (handle > U32_MAX)
		return NULL;
	rcu_read_lock();
	rr = xa_load(&kf->remotes, handle);
	if (rr && !kref_get_unless_zero(&rr->ref))
		rr = NULL;
	rcu_read_unlock();
	return rr;
}

static int kvreg_import_check(struct kvreg_import *arg, u64 max_chunks,
			      struct kvreg_error *err)
{
	size_t max_size = kvreg_desc_max_size(max_chunks);

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved || arg->remote || arg->length || arg->access ||
	    arg->device_index || arg->rails || arg->paths)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	/* Refused before it is copied: the copy alone could be 200 MiB. */
	if (arg->desc_size > max_size) {
		kvreg_set_error(err, KVREG_REASON_DESC_CHUNK_LIMIT,
				KVREG_NO_DEVICE_INDEX);
		err->argument = KVREG_ARG_DESCRIPTOR;
		err->request = (arg->desc_size - kvreg_desc_max_size(0)) /
			       sizeof(struct kvreg_desc_chunk);
		err->limit = max_chunks;
		return -E2BIG;
	}
	if (!arg->desc_size) {
		kvreg_bad_arg(err, KVREG_ARG_DESCRIPTOR);
		err->limit = max_size;
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

/*
 * A process over its import caps is refused on the descriptor's claim,
 * read from its head and path table alone, before the blob (up to
 * 200 MiB) is copied and parsed. A claim the parse refuses anyway (not
 * ours, another version, no path or too many, more chunks than the blob
 * or max_desc_chunks allows) is left to it, so its reason stays the
 * precise one; so is a fault, which the copy reports.
 */
static int kvreg_import_precheck(struct kvreg_file *kf,
				 const struct kvreg_import *arg,
				 u64 max_chunks, struct kvreg_error *err)
{
	struct kvreg_desc_path paths[KVREG_DESC_MAX_PATHS];
	const void __user *desc = u64_to_user_ptr(arg->desc);
	struct kvreg_desc_head head;
	u32 nr_paths;
	size_t at;
	u64 chunks;

	if (arg->desc_size < sizeof(head) ||
	    copy_from_user(&head, desc, sizeof(head)))
		return 0;
	at = le16_to_cpu(head.head_size);
	nr_paths = le16_to_cpu(head.nr_paths);
	if (le32_to_cpu(head.magic) != KVREG_DESC_MAGIC ||
	    le16_to_cpu(head.version) != KVREG_DESC_VERSION ||
	    at < sizeof(head) || at > arg->desc_size || !nr_paths ||
	    nr_paths > KVREG_DESC_MAX_PATHS ||
	    arg->desc_size - at < nr_paths * sizeof(paths[0]))
		return 0;
	if (copy_from_user(paths, desc + at, nr_paths * sizeof(paths[0])))
		return 0;
	chunks = kvreg_desc_claimed_chunks(paths, nr_paths, arg->desc_size -
					   at - nr_paths * sizeof(paths[0]));
	/* U64_MAX, more than the blob holds, is over max_chunks too. */
	if (!chunks || chunks > max_chunks)
		return 0;
	return kvreg_caps_check_import(kf->km, chunks, err);
}

static int kvreg_import_desc(struct kvreg_file *kf, struct kvreg_import *arg,
			     struct kvreg_desc *desc, struct kvreg_error *err)
{
	u32 timeout = arg->timeout_ms ?: KVREG_CONNECT_TIMEOUT_MS;
	u64 max_chunks = min_t(u64, READ_ONCE(kvreg_max_desc_chunks),
			       (u64)KVREG_DESC_MAX_PATHS *
			       KVREG_DESC_MAX_CHUNKS);
	struct kvreg_rregion *rr;
	u32 handle, rails, dev;
	void *blob;
	int ret;

	ret = kvreg_import_check(arg, max_chunks, err);
	if (ret)
		return ret;
	ret = kvreg_import_precheck(kf, arg, max_chunks, err);
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
	ret = kvreg_desc_parse(blob, arg->desc_size, max_chunks, desc, err);
	kvfree_sensitive(blob, arg->desc_size);
	if (ret)
		return ret;

	rr = kzalloc(sizeof(*rr), GFP_KERNEL_ACCOUNT);
	if (!rr) {
		kvreg_rpaths_free(desc->paths, desc->nr_paths);
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	kref_init(&rr->ref);
	/* Charged for every chunk it may keep, before it connects. */
	ret = kvreg_caps_charge_import(kf->km, desc->nr_chunks, err);
	if (ret) {
		kvreg_rpaths_free(desc->paths, desc->nr_paths);
		kfree(rr);
		return ret;
	}
	rr->km = kf->km;
	rr->charged_chunks = desc->nr_chunks;
	rr->length = desc->length;
	rr->access = desc->access;
	/* Connecting takes seconds at worst: not under the file's lock. */
	ret = kvreg_peer_import(kf, desc, arg->device_mask, timeout, rr,
				&rails, &dev, err);
	/* What the region did not take: paths that became no rail. */
	kvreg_rpaths_free(desc->paths, desc->nr_paths);
	if (ret)
		goto err_free;

	/* From @rr while it is the caller's alone: UNIMPORT may follow. */
	arg->length = rr->length;
	arg->access = rr->access;
	/* Whole, handle included, before a lookup can find it. */
	mutex_lock(&kf->lock);
	ret = xa_alloc(&kf->remotes, &handle, NULL, xa_limit_32b,
		       GFP_KERNEL_ACCOUNT);
	if (!ret) {
		rr->handle = handle;
		xa_store(&kf->remotes, handle, rr, GFP_KERNEL_ACCOUNT);
	}
	mutex_unlock(&kf->lock);
	if (ret) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		goto err_free;
	}
	arg->remote = handle;
	arg->device_index = dev;
	arg->rails = rails;
	arg->paths = desc->nr_paths;
	return 0;

err_free:
	kvreg_rregion_put(rr);
	return ret;
}

/*
 * The descriptor's secret lets its holder in to the export: no copy of
 * it outlives the call but the rails' own (rails.c).
 */
int kvreg_import(struct kvreg_file *kf, struct kvreg_import *arg,
		 struct kvreg_error *err)
{
	struct kvreg_desc desc = {};
	int ret = kvreg_import_desc(kf, arg, &desc, err);

	memzero_explicit(desc.secret, sizeof(desc.secret));
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

/* The chunk holding region offset @offset, below the region's length. */
const struct kvreg_rchunk *kvreg_rpath_chunk(const struct kvreg_rpath *path,
					     u64 offset)
{
	u32 lo = 0, hi = path->nr_chunks;

	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (path->chunks[mid].start <= offset)
			lo = mid;
		else
			hi = mid;
	}
	return &path->chunks[lo];
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
