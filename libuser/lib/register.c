// SPDX-License-Identifier: MIT OR GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Room for a key per device the module can have: QUERY is never needed. */
static struct kvreg_mr *kvreg_mr_alloc(unsigned int nkeys)
{
	return calloc(1, sizeof(struct kvreg_mr) +
		      (size_t)nkeys * sizeof(struct kvreg_key));
}

int kvreg_register(struct kvreg *kv, const void *addr, uint64_t length,
		   uint32_t access, uint64_t device_mask,
		   struct kvreg_mr **mrp, struct kvreg_error *err)
{
	return kvreg_register_flags(kv, addr, length, access, device_mask, 0,
				    mrp, err);
}

int kvreg_register_flags(struct kvreg *kv, const void *addr, uint64_t length,
			 uint32_t access, uint64_t device_mask, uint32_t flags,
			 struct kvreg_mr **mrp, struct kvreg_error *err)
{
	struct kvreg_register arg = {
		.size = sizeof(arg),
		.flags = flags,
		.addr = (uintptr_t)addr,
		.length = length,
		.access = access,
		.key_size = sizeof(struct kvreg_key),
		.device_mask = device_mask,
		.keys_capacity = KVREG_MAX_DEVICES,
	};
	struct kvreg_mr *mr, *fitted;
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!mrp)
		return kvreg__bad_pointer(err);
	*mrp = NULL;
	mr = kvreg_mr_alloc(KVREG_MAX_DEVICES);
	if (!mr)
		return kvreg__lib_error(err, KVREG_REASON_NO_MEMORY, -ENOMEM);
	arg.keys = (uintptr_t)mr->keys;
	ret = kvreg__call(kv, KVREG_IOC_REGISTER, &arg, err);
	if (ret) {
		free(mr);
		return ret;
	}
	mr->handle = arg.handle;
	mr->addr = arg.addr;
	mr->length = arg.length;
	mr->out_flags = arg.out_flags;
	mr->refs = arg.refs;
	/* A key per device it is live on: the room was enough. */
	mr->nkeys = arg.nkeys < KVREG_MAX_DEVICES ? arg.nkeys :
						    KVREG_MAX_DEVICES;
	/* Only as large as its keys; a failure keeps the larger one. */
	fitted = realloc(mr, sizeof(*mr) +
			 (size_t)mr->nkeys * sizeof(struct kvreg_key));
	if (fitted)
		mr = fitted;
	kvreg__handle_add(kv, &mr->link);
	*mrp = mr;
	return 0;
}

int kvreg_deregister(struct kvreg *kv, struct kvreg_mr *mr,
		     struct kvreg_error *err)
{
	struct kvreg_deregister arg = { .size = sizeof(arg) };
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!mr)
		return kvreg__bad_pointer(err);
	arg.handle = mr->handle;
	ret = kvreg__call(kv, KVREG_IOC_DEREGISTER, &arg, err);
	if (!ret) {
		kvreg__handle_del(kv, &mr->link);
		free(mr);
	}
	return ret;
}

int kvreg_query(struct kvreg *kv, uint64_t handle, struct kvreg_query *info,
		struct kvreg_key *keys, unsigned int capacity,
		struct kvreg_error *err)
{
	struct kvreg_query arg = {
		.size = sizeof(arg),
		.handle = handle,
		.keys = (uintptr_t)keys,
		.keys_capacity = keys ? capacity : 0,
		.key_size = sizeof(struct kvreg_key),
	};
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	ret = kvreg__call(kv, KVREG_IOC_QUERY, &arg, err);
	if (!ret && info)
		*info = arg;
	return ret;
}

uint64_t kvreg_mr_handle(const struct kvreg_mr *mr)
{
	return mr ? mr->handle : KVREG_HANDLE_NONE;
}

uint32_t kvreg_mr_flags(const struct kvreg_mr *mr)
{
	return mr ? mr->out_flags : 0;
}

uint32_t kvreg_mr_refs(const struct kvreg_mr *mr)
{
	return mr ? mr->refs : 0;
}

const struct kvreg_key *kvreg_mr_keys(const struct kvreg_mr *mr,
				      unsigned int *nkeys)
{
	if (nkeys)
		*nkeys = mr ? mr->nkeys : 0;
	return mr ? mr->keys : NULL;
}

const struct kvreg_key *kvreg_mr_key_at(const struct kvreg_mr *mr,
					uint32_t device_index,
					uint64_t offset)
{
	uint64_t va;
	unsigned int i;

	if (!mr || offset >= mr->length)
		return NULL;
	va = mr->addr + offset;
	for (i = 0; i < mr->nkeys; i++) {
		const struct kvreg_key *k = &mr->keys[i];

		if (k->device_index == device_index && va >= k->iova &&
		    va - k->iova < k->length)
			return k;
	}
	return NULL;
}
