// SPDX-License-Identifier: MIT OR GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "internal.h"

int kvreg_devices(struct kvreg *kv, struct kvreg_device_info *devices,
		  unsigned int capacity, unsigned int *count,
		  struct kvreg_error *err)
{
	struct kvreg_devices arg = {
		.size = sizeof(arg),
		.capacity = devices ? capacity : 0,
		.entry_size = sizeof(*devices),
		.entries = (uintptr_t)devices,
	};
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	ret = kvreg__ioctl(kv, KVREG_IOC_DEVICES, &arg);
	if (ret)
		return kvreg__lib_error(err, KVREG_REASON_BAD_ARGUMENT, ret);
	if (count)
		*count = arg.count;
	if (err)
		kvreg__error_init(err);
	return 0;
}

int kvreg_set_budget(struct kvreg *kv, uint32_t flags, uint64_t max_mrs,
		     uint64_t max_pinned_bytes, struct kvreg_budget *now,
		     struct kvreg_error *err)
{
	struct kvreg_budget arg = {
		.size = sizeof(arg),
		.flags = flags,
		.max_mrs = max_mrs,
		.max_pinned_bytes = max_pinned_bytes,
	};
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	ret = kvreg__ioctl(kv, KVREG_IOC_SET_BUDGET, &arg);
	kvreg__error_out(err, &arg.error);
	if (now)
		*now = arg;
	return ret;
}

int kvreg_procs(struct kvreg *kv, struct kvreg_proc_info *procs,
		unsigned int capacity, unsigned int *count,
		struct kvreg_error *err)
{
	struct kvreg_procs arg = {
		.size = sizeof(arg),
		.capacity = procs ? capacity : 0,
		.entry_size = sizeof(*procs),
		.entries = (uintptr_t)procs,
	};
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	ret = kvreg__ioctl(kv, KVREG_IOC_PROCS, &arg);
	if (ret)
		return kvreg__lib_error(err, ret == -EPERM ?
					KVREG_REASON_NOT_PERMITTED :
					KVREG_REASON_BAD_ARGUMENT, ret);
	if (count)
		*count = arg.count;
	if (err)
		kvreg__error_init(err);
	return 0;
}

int kvreg_stats(struct kvreg *kv, struct kvreg_stats *stats,
		struct kvreg_error *err)
{
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!stats)
		return kvreg__lib_error(err, KVREG_REASON_BAD_ARGUMENT,
					-EINVAL);
	memset(stats, 0, sizeof(*stats));
	stats->size = sizeof(*stats);
	ret = kvreg__ioctl(kv, KVREG_IOC_STATS, stats);
	if (ret)
		return kvreg__lib_error(err, KVREG_REASON_BAD_ARGUMENT, ret);
	if (err)
		kvreg__error_init(err);
	return 0;
}
