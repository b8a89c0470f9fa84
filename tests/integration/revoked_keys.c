// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Deregistered keys are dead in the device: an RDMA WRITE addressed by the
 * old rkey and address fails with a remote access error and the memory is
 * not touched. The QP recovers for the next transfer.
 */
#include "kvtransfer.h"

#define IB_WC_WR_FLUSH_ERR	5
#define IB_WC_REM_ACCESS_ERR	10

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	const uint64_t len = 64 * SZ_4K;
	struct kvreg_mr *ma, *mb, *mc;
	const struct kvreg_key *kb;
	struct kvreg_error err;
	uint64_t old_iova, old_handle;
	uint32_t old_rkey, dev;
	uint8_t *a, *b, *c;
	unsigned int n;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	a = kvt_map_anon(len);
	b = kvt_map_anon(len);
	c = kvt_map_anon(len);
	CHECK_OK(kvreg_register(kv, a, len, KVREG_ACCESS_ALL, 1ULL << dev, &ma,
				&err), &err);
	CHECK_OK(kvreg_register(kv, b, len, KVREG_ACCESS_ALL, 1ULL << dev, &mb,
				&err), &err);
	kb = kvreg_mr_keys(mb, &n);
	CHECK(n == 1, "one MR expected, got %u", n);
	old_rkey = kb->rkey;
	old_iova = kb->iova;
	old_handle = kvreg_mr_handle(mb);

	/* The raw path works while the key is live... */
	kvt_fill(a, len, 0x31);
	CHECK_OK(kvreg_transfer_raw(kv, KVREG_OP_WRITE, dev, ma, 0, old_iova,
				    old_rkey, len, &err), &err);
	CHECK(kvt_mismatch(b, 0, len, 0x31, 0) < 0, "raw WRITE with live key");

	/* ...and fails once it is deregistered. */
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	memset(b, 0, len);
	CHECK_FAILS(kvreg_transfer_raw(kv, KVREG_OP_WRITE, dev, ma, 0, old_iova,
				       old_rkey, len, &err),
		    &err, EIO, KVREG_REASON_TRANSFER_FAILED);
	/*
	 * The responder's refusal, or (the QP is connected to itself, so
	 * the responder's error moves the requester to the error state too)
	 * its flush, which rxe on 6.12 sometimes reports first; either way
	 * nothing below may have been written.
	 */
	CHECK(err.wc_status == IB_WC_REM_ACCESS_ERR ||
	      err.wc_status == IB_WC_WR_FLUSH_ERR,
	      "work completion status %u, want remote access error",
	      err.wc_status);
	for (uint64_t i = 0; i < len; i++)
		CHECK(!b[i], "revoked key wrote byte %llu", (unsigned long long)i);

	/* The handle is gone too. */
	CHECK_FAILS(kvreg_query(kv, old_handle, NULL, NULL, 0, &err),
		    &err, ENOENT, KVREG_REASON_UNKNOWN_HANDLE);

	/* The QP was left in error by the failure: the next one works. */
	CHECK_OK(kvreg_register(kv, c, len, KVREG_ACCESS_ALL, 1ULL << dev, &mc,
				&err), &err);
	kvt_fill(a, len, 0x32);
	kvt_xfer(kv, KVREG_OP_WRITE, dev, ma, 0, mc, 0, len);
	CHECK(kvt_mismatch(c, 0, len, 0x32, 0) < 0, "WRITE after recovery");
	CHECK_OK(kvreg_deregister(kv, mc, &err), &err);
	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}
