// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The same buffer registered twice is one registration with two
 * references (pinned once); deregistration drops one at a time. A partial
 * overlap is refused with the existing range, unless asked for.
 */
#include "kvtransfer.h"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *first, *again, *part, *other, *peer;
	const struct kvreg_key *k1, *k2;
	struct kvt_snap before;
	struct kvreg_error err;
	struct kvreg_query q;
	unsigned int n1, n2;
	uint64_t first_handle;
	uint8_t *p, *b;
	uint32_t dev;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	p = kvt_map_anon(16 * SZ_4K);
	b = kvt_map_anon(16 * SZ_4K);
	before = kvt_snap(kv);

	CHECK_OK(kvreg_register(kv, p, 16 * SZ_4K, KVREG_ACCESS_ALL, 0, &first,
				&err), &err);
	CHECK_OK(kvreg_register(kv, p, 16 * SZ_4K, KVREG_ACCESS_ALL, 0, &again,
				&err), &err);
	CHECK(kvreg_mr_handle(again) == kvreg_mr_handle(first),
	      "handles %llu and %llu",
	      (unsigned long long)kvreg_mr_handle(first),
	      (unsigned long long)kvreg_mr_handle(again));
	CHECK(kvreg_mr_flags(again) & KVREG_REG_OUT_DUPLICATE, "flag");
	CHECK(kvreg_mr_refs(again) == 2, "refs %u", kvreg_mr_refs(again));
	k1 = kvreg_mr_keys(first, &n1);
	k2 = kvreg_mr_keys(again, &n2);
	CHECK(n1 == n2 && !memcmp(k1, k2, n1 * sizeof(*k1)), "same keys");
	kvt_check_pinned(kv, &before, 16, "two registrations of one buffer");

	/* Partial overlap: refused, naming the registration it hits. */
	CHECK_FAILS(kvreg_register(kv, p + SZ_4K, 2 * SZ_4K, KVREG_ACCESS_ALL,
				   0, &part, &err),
		    &err, EEXIST, KVREG_REASON_OVERLAP);
	CHECK(err.address == (uintptr_t)p && err.limit == 16 * SZ_4K &&
	      err.usage == kvreg_mr_handle(first), "existing range reported");
	/* Same range, other access: not the same registration either. */
	CHECK_FAILS(kvreg_register(kv, p, 16 * SZ_4K, KVREG_ACCESS_REMOTE_READ,
				   0, &other, &err),
		    &err, EEXIST, KVREG_REASON_OVERLAP);
	CHECK_OK(kvreg_register_flags(kv, p + SZ_4K, 2 * SZ_4K,
				      KVREG_ACCESS_ALL, 0,
				      KVREG_REG_F_ALLOW_OVERLAP, &part, &err),
		 &err);
	CHECK(kvreg_mr_handle(part) != kvreg_mr_handle(first), "own handle");

	/* One deregistration leaves it registered and working. */
	CHECK_OK(kvreg_deregister(kv, again, &err), &err);
	CHECK_OK(kvreg_query(kv, kvreg_mr_handle(first), &q, NULL, 0, &err),
		 &err);
	CHECK(q.refs == 1, "refs %u after one deregister", q.refs);
	CHECK_OK(kvreg_register(kv, b, 16 * SZ_4K, KVREG_ACCESS_ALL,
				1ULL << dev, &peer, &err), &err);
	kvt_fill(p, 16 * SZ_4K, 0x44);
	kvt_xfer(kv, KVREG_OP_WRITE, dev, first, 0, peer, 0, 16 * SZ_4K);
	CHECK(kvt_mismatch(b, 0, 16 * SZ_4K, 0x44, 0) < 0, "still registered");
	first_handle = kvreg_mr_handle(first);
	CHECK_OK(kvreg_deregister(kv, first, &err), &err);
	CHECK_FAILS(kvreg_query(kv, first_handle, &q, NULL, 0, &err), &err,
		    ENOENT, KVREG_REASON_UNKNOWN_HANDLE);

	CHECK_OK(kvreg_deregister(kv, part, &err), &err);
	CHECK_OK(kvreg_deregister(kv, peer, &err), &err);
	kvt_check_unchanged(kv, &before, "after overlaps");
	kvreg_close(kv);
	return T_PASS;
}
