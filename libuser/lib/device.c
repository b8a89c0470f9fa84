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
	ret = kvreg__call(kv, KVREG_IOC_DEVICES, &arg, err);
	if (!ret && count)
		*count = arg.count;
	return ret;
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
	ret = kvreg__call(kv, KVREG_IOC_SET_BUDGET, &arg, err);
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
	ret = kvreg__call(kv, KVREG_IOC_PROCS, &arg, err);
	if (!ret && count)
		*count = arg.count;
	return ret;
}

int kvreg_conns(struct kvreg *kv, struct kvreg_conn_info *conns,
		unsigned int capacity, unsigned int *count,
		struct kvreg_error *err)
{
	struct kvreg_conns arg = {
		.size = sizeof(arg),
		.capacity = conns ? capacity : 0,
		.entry_size = sizeof(*conns),
		.entries = (uintptr_t)conns,
	};
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	ret = kvreg__call(kv, KVREG_IOC_CONNS, &arg, err);
	if (!ret && count)
		*count = arg.count;
	return ret;
}

int kvreg_stats(struct kvreg *kv, struct kvreg_stats *stats,
		struct kvreg_error *err)
{
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!stats)
		return kvreg__bad_pointer(err);
	memset(stats, 0, sizeof(*stats));
	stats->size = sizeof(*stats);
	ret = kvreg__call(kv, KVREG_IOC_STATS, stats, err);
	return ret;
}

int kvreg_features(struct kvreg *kv, uint64_t *features,
		   struct kvreg_error *err)
{
	struct kvreg_features arg = { .size = sizeof(arg) };
	int ret;

	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (!features)
		return kvreg__bad_pointer(err);
	ret = kvreg__call(kv, KVREG_IOC_FEATURES, &arg, err);
	if (!ret)
		*features = arg.features;
	return ret;
}
