/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * One batch through SUBMIT and REAP that must succeed whole, as the rail
 * tests move their slices: submitted again where the queue was full,
 * reaped until every operation is in, each one's error spelled out if it
 * failed.
 */
#ifndef KVBATCH_H
#define KVBATCH_H

#include "kvtest.h"

#define KVT_BATCH_MAX	256

/*
 * @n operations of @opc, each of @len: operation i moves local
 * @local_off + i * @len to remote @remote_off + i * @len. Every one must
 * complete successfully, each within 20 s of the last.
 */
static inline void kvt_batch(struct kvreg *kv, struct kvreg_mr *local,
			     uint64_t local_off, struct kvreg_remote *r,
			     uint64_t remote_off, enum kvreg_transfer_op opc,
			     uint64_t len, unsigned int n)
{
	struct kvreg_completion comp[KVT_BATCH_MAX];
	struct kvreg_op ops[KVT_BATCH_MAX];
	unsigned int i, done = 0, sent = 0, acc, got;
	struct kvreg_error err;
	char m[512];
	int ret;

	CHECK(n <= KVT_BATCH_MAX, "batch of %u: more than %u", n,
	      KVT_BATCH_MAX);
	for (i = 0; i < n; i++)
		kvreg_op_prep(&ops[i], opc, local, local_off + i * len, r,
			      remote_off + i * len, len, i);
	while (done < n) {
		if (sent < n) {
			ret = kvreg_submit(kv, ops + sent, n - sent, &acc,
					   &err);
			CHECK(!ret || (ret == -EAGAIN &&
				       err.reason == KVREG_REASON_QUEUE_FULL),
			      "submit: %d reason %u", ret, err.reason);
			sent += acc;
		}
		CHECK_OK(kvreg_reap(kv, comp, KVT_BATCH_MAX, 1, 20000, &got,
				    &err), &err);
		CHECK(got, "no completion within 20 s");
		for (i = 0; i < got; i++) {
			kvreg_format_error(&comp[i].error, comp[i].status, m,
					   sizeof(m));
			CHECK(!comp[i].status, "op %llu: %s",
			      (unsigned long long)comp[i].user_data, m);
		}
		done += got;
	}
}

#endif /* KVBATCH_H */
