// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Remote regions: listen, export a registration's descriptor, import a
 * peer's, transfer to and from it. The descriptor is opaque here: the
 * module writes and checks it, so both nodes agree on one format.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "internal.h"

struct kvreg_remote {
	struct kvreg_link link;
	uint64_t handle;
	uint64_t length;
	uint32_t access;
	uint32_t device_index;
	uint32_t rails;
	uint32_t paths;
};

/* "192.0.2.1" or "2001:db8::1" into the module's address. */
static int kvreg_parse_address(const char *address, uint16_t port,
			       struct kvreg_net_addr *out,
			       struct kvreg_error *err)
{
	memset(out, 0, sizeof(*out));
	out->port = port;
	if (inet_pton(AF_INET, address, out->addr) == 1) {
		out->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, address, out->addr) == 1) {
		out->family = AF_INET6;
		return 0;
	}
	kvreg__lib_error(err, KVREG_REASON_BAD_ARGUMENT, -EINVAL);
	if (err)
		err->argument = KVREG_ARG_NET_ADDRESS;
	return -EINVAL;
}

static int kvreg_listen_on(struct kvreg *kv, struct kvreg_listen *arg,
			   const char *address, uint16_t port,
			   uint16_t *bound_port, struct kvreg_error *err)
{
	int ret;

	ret = kvreg_parse_address(address, port, &arg->addr, err);
	if (ret)
		return ret;
	ret = kvreg__call(kv, KVREG_IOC_LISTEN, arg, err);
	if (ret)
		return ret;
	if (bound_port)
		*bound_port = arg->addr.port;
	return 0;
}

int kvreg_listen(struct kvreg *kv, const char *address, uint16_t port,
		 uint64_t *endpoint, uint16_t *bound_port,
		 struct kvreg_error *err)
{
	struct kvreg_listen arg = { .size = sizeof(arg) };
	int ret;

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!address || !endpoint)
		return kvreg__bad_pointer(err);
	ret = kvreg_listen_on(kv, &arg, address, port, bound_port, err);
	if (!ret)
		*endpoint = arg.endpoint;
	return ret;
}

int kvreg_listen_add(struct kvreg *kv, uint64_t endpoint,
		     const char *address, uint16_t port, uint16_t *bound_port,
		     struct kvreg_error *err)
{
	struct kvreg_listen arg = {
		.size = sizeof(arg),
		.flags = KVREG_LISTEN_F_ADD_ADDRESS,
		.endpoint = endpoint,
	};

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!address)
		return kvreg__bad_pointer(err);
	return kvreg_listen_on(kv, &arg, address, port, bound_port, err);
}

int kvreg_export(struct kvreg *kv, uint64_t endpoint,
		 const struct kvreg_mr *mr, void *desc, size_t capacity,
		 size_t *size, struct kvreg_error *err)
{
	struct kvreg_export arg = {
		.size = sizeof(arg),
		.endpoint = endpoint,
		.desc = (uintptr_t)desc,
		.desc_capacity = capacity > UINT32_MAX ? UINT32_MAX :
				 (uint32_t)capacity,
	};
	int ret;

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!mr || !size || (!desc && capacity))
		return kvreg__bad_pointer(err);
	arg.handle = mr->handle;
	ret = kvreg__call(kv, KVREG_IOC_EXPORT, &arg, err);
	/* With ENOSPC too: the size the caller must make room for. */
	*size = arg.desc_size;
	return ret;
}

int kvreg_unexport(struct kvreg *kv, uint64_t endpoint,
		   const struct kvreg_mr *mr, struct kvreg_error *err)
{
	struct kvreg_unexport arg = {
		.size = sizeof(arg),
		.endpoint = endpoint,
	};

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!mr)
		return kvreg__bad_pointer(err);
	arg.handle = mr->handle;
	return kvreg__call(kv, KVREG_IOC_UNEXPORT, &arg, err);
}

int kvreg_unlisten(struct kvreg *kv, uint64_t endpoint,
		   struct kvreg_error *err)
{
	struct kvreg_unlisten arg = {
		.size = sizeof(arg),
		.endpoint = endpoint,
	};

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	return kvreg__call(kv, KVREG_IOC_UNLISTEN, &arg, err);
}

int kvreg_rekey(struct kvreg *kv, uint64_t endpoint, struct kvreg_error *err)
{
	struct kvreg_rekey arg = {
		.size = sizeof(arg),
		.endpoint = endpoint,
	};

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	return kvreg__call(kv, KVREG_IOC_REKEY, &arg, err);
}

int kvreg_import(struct kvreg *kv, const void *desc, size_t size,
		 uint32_t timeout_ms, struct kvreg_remote **remotep,
		 struct kvreg_error *err)
{
	return kvreg_import_devices(kv, desc, size, timeout_ms, 0, remotep,
				    err);
}

int kvreg_import_devices(struct kvreg *kv, const void *desc, size_t size,
			 uint32_t timeout_ms, uint64_t device_mask,
			 struct kvreg_remote **remotep,
			 struct kvreg_error *err)
{
	/* A module from before rails takes it, the new fields being 0. */
	struct kvreg_import arg = {
		.size = sizeof(arg),
		.desc = (uintptr_t)desc,
		.timeout_ms = timeout_ms,
		.device_mask = device_mask,
	};
	struct kvreg_remote *r;
	int ret;

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!desc || !remotep)
		return kvreg__bad_pointer(err);
	*remotep = NULL;
	if (size > UINT32_MAX) {
		kvreg__lib_error(err, KVREG_REASON_BAD_ARGUMENT, -EINVAL);
		if (err)
			err->argument = KVREG_ARG_DESCRIPTOR;
		return -EINVAL;
	}
	arg.desc_size = (uint32_t)size;
	r = calloc(1, sizeof(*r));
	if (!r)
		return kvreg__lib_error(err, KVREG_REASON_NO_MEMORY, -ENOMEM);
	ret = kvreg__call(kv, KVREG_IOC_IMPORT, &arg, err);
	if (ret) {
		free(r);
		return ret;
	}
	r->handle = arg.remote;
	r->length = arg.length;
	r->access = arg.access;
	r->device_index = arg.device_index;
	/* A module from before rails: one connection, one path. */
	r->rails = arg.size >= KVREG_IMPORT_SIZE_VER1 ? arg.rails : 1;
	r->paths = arg.size >= KVREG_IMPORT_SIZE_VER1 ? arg.paths : 1;
	kvreg__handle_add(kv, &r->link);
	*remotep = r;
	return 0;
}

int kvreg_unimport(struct kvreg *kv, struct kvreg_remote *remote,
		   struct kvreg_error *err)
{
	struct kvreg_unimport arg = { .size = sizeof(arg) };
	int ret;

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!remote)
		return kvreg__bad_pointer(err);
	arg.remote = remote->handle;
	ret = kvreg__call(kv, KVREG_IOC_UNIMPORT, &arg, err);
	/* Gone from the module, or never there: either way, freed here. */
	if (!ret || ret == -ENOENT) {
		kvreg__handle_del(kv, &remote->link);
		free(remote);
	}
	return ret;
}

uint64_t kvreg_remote_handle(const struct kvreg_remote *remote)
{
	return remote ? remote->handle : KVREG_HANDLE_NONE;
}

uint64_t kvreg_remote_length(const struct kvreg_remote *remote)
{
	return remote ? remote->length : 0;
}

uint32_t kvreg_remote_access(const struct kvreg_remote *remote)
{
	return remote ? remote->access : 0;
}

uint32_t kvreg_remote_device(const struct kvreg_remote *remote)
{
	return remote ? remote->device_index : KVREG_NO_DEVICE_INDEX;
}

uint32_t kvreg_remote_rails(const struct kvreg_remote *remote)
{
	return remote ? remote->rails : 0;
}

uint32_t kvreg_remote_paths(const struct kvreg_remote *remote)
{
	return remote ? remote->paths : 0;
}

int kvreg_transfer_remote(struct kvreg *kv, enum kvreg_transfer_op op,
			  const struct kvreg_mr *local, uint64_t local_offset,
			  const struct kvreg_remote *remote,
			  uint64_t remote_offset, uint64_t length,
			  struct kvreg_error *err)
{
	struct kvreg_transfer arg = {
		.size = sizeof(arg),
		.flags = KVREG_TRANSFER_F_REMOTE_REGION,
		.opcode = op,
		.local_offset = local_offset,
		.remote_offset = remote_offset,
		.length = length,
	};

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!local || !remote)
		return kvreg__bad_pointer(err);
	arg.local_handle = local->handle;
	arg.remote_handle = remote->handle;
	arg.device_index = remote->device_index;
	return kvreg__call(kv, KVREG_IOC_TRANSFER, &arg, err);
}

void kvreg_op_prep(struct kvreg_op *op, enum kvreg_transfer_op opcode,
		   const struct kvreg_mr *local, uint64_t local_offset,
		   const struct kvreg_remote *remote, uint64_t remote_offset,
		   uint64_t length, uint64_t user_data)
{
	memset(op, 0, sizeof(*op));
	op->opcode = opcode;
	op->local_handle = local ? local->handle : KVREG_HANDLE_NONE;
	op->local_offset = local_offset;
	op->remote = remote ? remote->handle : KVREG_HANDLE_NONE;
	op->remote_offset = remote_offset;
	op->length = length;
	op->user_data = user_data;
}

int kvreg_submit(struct kvreg *kv, const struct kvreg_op *ops,
		 unsigned int count, unsigned int *accepted,
		 struct kvreg_error *err)
{
	struct kvreg_submit arg = {
		.size = sizeof(arg),
		.op_size = sizeof(*ops),
		.ops = (uintptr_t)ops,
		.count = count,
	};
	int ret;

	kvreg__error_init(err);
	if (accepted)
		*accepted = 0;
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!accepted || (!ops && count))
		return kvreg__bad_pointer(err);
	ret = kvreg__call(kv, KVREG_IOC_SUBMIT, &arg, err);
	*accepted = arg.accepted;
	return ret;
}

int kvreg_reap(struct kvreg *kv, struct kvreg_completion *completions,
	       unsigned int capacity, unsigned int min_complete,
	       uint32_t timeout_ms, unsigned int *count,
	       struct kvreg_error *err)
{
	struct kvreg_reap arg = {
		.size = sizeof(arg),
		.entry_size = sizeof(*completions),
		.entries = (uintptr_t)completions,
		.capacity = capacity,
		.min_complete = min_complete,
		.timeout_ms = timeout_ms,
	};
	int ret;

	kvreg__error_init(err);
	if (count)
		*count = 0;
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!count || (!completions && capacity))
		return kvreg__bad_pointer(err);
	ret = kvreg__call(kv, KVREG_IOC_REAP, &arg, err);
	*count = arg.count;
	return ret;
}
