// SPDX-License-Identifier: MIT OR GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

int kvreg__ioctl(const struct kvreg *kv, unsigned long cmd, void *arg)
{
	return ioctl(kv->fd, cmd, arg) ? -errno : 0;
}

void kvreg__error_init(struct kvreg_error *err)
{
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

void kvreg__error_out(struct kvreg_error *dst, const struct kvreg_error *src)
{
	if (dst)
		*dst = *src;
}
