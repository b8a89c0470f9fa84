// SPDX-License-Identifier: MIT OR GPL-2.0-only
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

int kvreg__ioctl(const struct kvreg *kv, unsigned long cmd, void *arg)
{
	return ioctl(kv->fd, cmd, arg) ? -errno : 0;
}

void kvreg__error_init(struct kvreg_error *err)
{
	if (!err)
		return;
	memset(err, 0, sizeof(*err));
	err->device_index = KVREG_NO_DEVICE_INDEX;
}

int kvreg__lib_error(struct kvreg_error *err, uint32_t reason, int errnum)
{
	if (err) {
		kvreg__error_init(err);
		err->reason = reason;
	}
	return errnum;
}

int kvreg__bad_pointer(struct kvreg_error *err)
{
	kvreg__lib_error(err, KVREG_REASON_BAD_ARGUMENT, -EINVAL);
	if (err)
		err->argument = KVREG_ARG_POINTER;
	return -EINVAL;
}

void kvreg__error_out(struct kvreg_error *dst, const struct kvreg_error *src)
{
	if (dst)
		*dst = *src;
}

/*
 * A failure the kernel gave no reason for: the ioctl never reached kvreg
 * (the fd was closed, or now names another file), or was refused before
 * the record could be read. Every failure leaves with a reason.
 */
static void kvreg__errno_reason(const struct kvreg *kv, int ret,
				struct kvreg_error *err)
{
	switch (ret) {
	case -EBADF:
	case -ENOTTY:
		kvreg__lib_error(err, KVREG_REASON_BAD_FD, ret);
		if (err)
			err->usage = (uint64_t)kv->fd;
		break;
	case -ENOMEM:
		kvreg__lib_error(err, KVREG_REASON_NO_KERNEL_MEMORY, ret);
		break;
	case -EFAULT:
		kvreg__bad_pointer(err);
		break;
	default:
		/* EINVAL, E2BIG: the struct itself was refused. */
		kvreg__lib_error(err, KVREG_REASON_BAD_ARGUMENT, ret);
		if (err)
			err->argument = KVREG_ARG_SIZE;
		break;
	}
}

/* Where every argument struct keeps its error pointer and its size. */
#define KVREG_HEAD_ERROR	offsetof(struct kvreg_register, error)
#define KVREG_HEAD_ERROR_SIZE	offsetof(struct kvreg_register, error_size)
_Static_assert(KVREG_HEAD_ERROR == 8 && KVREG_HEAD_ERROR_SIZE == 16,
	       "the head of every argument struct");

int kvreg__call(const struct kvreg *kv, unsigned long cmd, void *arg,
		struct kvreg_error *err)
{
	/* The library's own record: the caller's may be NULL. */
	struct kvreg_error kerr;
	uint64_t where = (uintptr_t)&kerr;
	uint32_t room = sizeof(kerr);
	int ret;

	kvreg__error_init(&kerr);
	memcpy((char *)arg + KVREG_HEAD_ERROR, &where, sizeof(where));
	memcpy((char *)arg + KVREG_HEAD_ERROR_SIZE, &room, sizeof(room));
	ret = kvreg__ioctl(kv, cmd, arg);
	/* The caller's struct must not keep a pointer to this frame. */
	memset((char *)arg + KVREG_HEAD_ERROR, 0, sizeof(where));
	memset((char *)arg + KVREG_HEAD_ERROR_SIZE, 0, sizeof(room));
	kvreg__error_out(err, &kerr);
	if (ret && kerr.reason == KVREG_REASON_NONE)
		kvreg__errno_reason(kv, ret, err);
	return ret;
}
