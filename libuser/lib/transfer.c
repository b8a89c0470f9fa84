// SPDX-License-Identifier: MIT OR GPL-2.0-only
#include <errno.h>

#include "internal.h"

static int kvreg_do_transfer(struct kvreg *kv, struct kvreg_transfer *arg,
			     const struct kvreg_mr *local,
			     struct kvreg_error *err)
{
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!local)
		return kvreg__bad_pointer(err);
	arg->size = sizeof(*arg);
	arg->local_handle = local->handle;
	return kvreg__call(kv, KVREG_IOC_TRANSFER, arg, err);
}

int kvreg_transfer(struct kvreg *kv, enum kvreg_transfer_op op,
		   uint32_t device_index,
		   const struct kvreg_mr *local, uint64_t local_offset,
		   const struct kvreg_mr *remote, uint64_t remote_offset,
		   uint64_t length, struct kvreg_error *err)
{
	struct kvreg_transfer arg = {
		.opcode = op,
		.device_index = device_index,
		.local_offset = local_offset,
		.remote_handle = remote ? remote->handle : KVREG_HANDLE_NONE,
		.remote_offset = remote_offset,
		.length = length,
	};

	return kvreg_do_transfer(kv, &arg, local, err);
}
