// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The start-up pre-flight: would a registration of this size succeed now?
 * Answered from the module's own counters, in the order the module checks
 * them, with the reason and numbers the registration would fail with.
 */
#include <errno.h>
#include <stdbool.h>

#include "internal.h"

#define KVREG_SZ_2M	(2ULL << 20)

/*
 * MRs one device needs for @pages pages of @per_mr a MR, counted for the
 * worst case: an MR that fills up inside a run leaves its last page to
 * the next (as the module's plan mirrors ib_sg_to_pages()).
 */
static uint64_t kvreg_mrs_needed(uint32_t per_mr, uint64_t pages)
{
	uint64_t per = per_mr > 1 ? per_mr - 1 : 1;

	return pages <= per + 1 ? 1 : (pages + per - 1) / per;
}

static int kvreg_preflight_fail(struct kvreg_error *err, uint32_t reason,
				int errnum, uint32_t device_index,
				uint64_t limit, uint64_t usage,
				uint64_t request)
{
	kvreg__lib_error(err, reason, errnum);
	if (err) {
		err->device_index = device_index;
		err->limit = limit;
		err->usage = usage;
		err->request = request;
	}
	return errnum;
}

/* used + add > limit, without wrapping for a huge add. */
static bool kvreg_exceeds(uint64_t used, uint64_t add, uint64_t limit)
{
	return add > limit || used > limit - add;
}

static bool kvreg_chosen(const struct kvreg_device_info *dev, uint64_t mask)
{
	return !mask || (dev->index < 64 && (mask & (1ULL << dev->index)));
}

/*
 * Pinned bytes: RLIMIT_MEMLOCK, then the process, then the host. The
 * module charges whole pages and holds RLIMIT_MEMLOCK in pages.
 */
static int kvreg_preflight_bytes(const struct kvreg_stats *st,
				 uint64_t length, struct kvreg_error *err)
{
	const uint32_t none = KVREG_NO_DEVICE_INDEX;
	const uint64_t host_used = st->host_pinned_bytes;
	const uint64_t memlock = st->memlock_limit == KVREG_UNLIMITED ?
				 KVREG_UNLIMITED :
				 st->memlock_limit / st->page_size *
				 st->page_size;

	if (st->memlock_limit == 0)
		return kvreg_preflight_fail(err, KVREG_REASON_MEMLOCK_ZERO,
					    -EPERM, none, 0, 0, length);
	if (st->memlock_limit != KVREG_UNLIMITED &&
	    kvreg_exceeds(st->memlock_used, length, memlock))
		return kvreg_preflight_fail(err,
					    KVREG_REASON_MEMLOCK_EXCEEDED,
					    -ENOMEM, none, st->memlock_limit,
					    st->memlock_used, length);
	if (kvreg_exceeds(st->proc_pinned_bytes, length,
			  st->proc_max_pinned_bytes))
		return kvreg_preflight_fail(err,
					    KVREG_REASON_PROC_BYTES_BUDGET,
					    -EDQUOT, none,
					    st->proc_max_pinned_bytes,
					    st->proc_pinned_bytes, length);
	if (kvreg_exceeds(host_used, length, st->host_max_pinned_bytes))
		return kvreg_preflight_fail(err, KVREG_REASON_HOST_CEILING,
					    -EDQUOT, none,
					    st->host_max_pinned_bytes,
					    host_used, length);
	return 0;
}

int kvreg_preflight(struct kvreg *kv, uint64_t length, uint64_t device_mask,
		    uint32_t flags, struct kvreg_error *err)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	const bool huge = flags & KVREG_PREFLIGHT_F_HUGETLB;
	uint64_t need_mrs = 0, page, pages;
	struct kvreg_stats st;
	unsigned int n, i, chosen = 0;
	int ret;

	kvreg__error_init(err);
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NOT_OPEN, -EBADF);
	if (flags & ~KVREG_PREFLIGHT_F_HUGETLB) {
		kvreg__lib_error(err, KVREG_REASON_BAD_ARGUMENT, -EINVAL);
		if (err)
			err->argument = KVREG_ARG_FLAGS;
		return -EINVAL;
	}
	/* Registering nothing always succeeds, with no keys. */
	if (!length)
		return 0;
	ret = kvreg_devices(kv, devs, KVREG_MAX_DEVICES, &n, err);
	if (!ret)
		ret = kvreg_stats(kv, &st, err);
	if (ret)
		return ret;
	/* The module's page size, not this library's guess at it. */
	page = huge ? KVREG_SZ_2M : st.page_size;
	pages = length / page + !!(length % page);
	if (n > KVREG_MAX_DEVICES)
		n = KVREG_MAX_DEVICES;
	for (i = 0; i < n; i++) {
		if (!kvreg_chosen(&devs[i], device_mask))
			continue;
		chosen++;
		if (devs[i].port_state != 4 ||
		    !(devs[i].flags & KVREG_DEVICE_F_READY))
			return kvreg_preflight_fail(err,
					KVREG_REASON_DEVICE_NOT_ACTIVE,
					-ENETDOWN, devs[i].index, 0, 0, 0);
		need_mrs += kvreg_mrs_needed(huge ? devs[i].mr_pages_huge :
					     devs[i].mr_pages_base, pages);
	}
	if (!chosen)
		return kvreg_preflight_fail(err, KVREG_REASON_NO_DEVICE,
					    -ENODEV, KVREG_NO_DEVICE_INDEX,
					    0, 0, 0);
	/* What the module charges a page-aligned buffer of this length. */
	ret = kvreg_preflight_bytes(&st, length > UINT64_MAX - st.page_size ?
				    UINT64_MAX : (length + st.page_size - 1) /
				    st.page_size * st.page_size, err);
	if (ret)
		return ret;
	if (kvreg_exceeds(st.proc_mrs, need_mrs, st.proc_max_mrs))
		return kvreg_preflight_fail(err, KVREG_REASON_PROC_MR_BUDGET,
					    -EDQUOT, KVREG_NO_DEVICE_INDEX,
					    st.proc_max_mrs, st.proc_mrs,
					    need_mrs);
	for (i = 0; i < n; i++) {
		uint64_t mrs = kvreg_mrs_needed(huge ? devs[i].mr_pages_huge :
						devs[i].mr_pages_base, pages);

		if (kvreg_chosen(&devs[i], device_mask) &&
		    kvreg_exceeds(devs[i].mrs_in_use, mrs, devs[i].mr_limit))
			return kvreg_preflight_fail(err,
					KVREG_REASON_DEVICE_MR_RESERVE,
					-ENOSPC, devs[i].index,
					devs[i].mr_limit, devs[i].mrs_in_use,
					mrs);
	}
	return 0;
}
