// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * op_timeout_ms bounds each chain of a TRANSFER: with it at 1 ms (one
 * jiffy), an 8 MiB chain, which no rxe moves that fast, is refused
 * -ETIMEDOUT with OP_TIMEOUT and the bound as the limit; its work
 * requests are flushed, not left running. The device's QP recovers: the
 * same TRANSFER with the bound restored moves every byte, and nothing is
 * left pinned or registered after.
 */
#include <sys/mman.h>

#include "kvtransfer.h"

#define PARAM	"/sys/module/kvreg/parameters/op_timeout_ms"
#define LEN	(32ULL << 20)
#define TRIES	8

static unsigned long long saved_timeout;
static pid_t parent;

static void restore_timeout(void)
{
	if (getpid() == parent && saved_timeout)
		kvt_write_param(PARAM, saved_timeout);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *ma, *mb;
	struct kvreg_error err;
	struct kvt_snap before;
	unsigned int tries, done = 0;
	uint8_t *a, *b;
	int ret = 0;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	a = kvt_map_anon(LEN);
	b = kvt_map_anon(LEN);
	kvt_fill(a, LEN, 0x51);
	before = kvt_snap(kv);
	CHECK_OK(kvreg_register(kv, a, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &ma, &err), &err);
	CHECK_OK(kvreg_register(kv, b, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &mb, &err), &err);

	parent = getpid();
	saved_timeout = kvt_read_param(PARAM);
	atexit(restore_timeout);
	kvt_write_param(PARAM, 1);
	/*
	 * A chain short enough may finish while it is posted, before the
	 * wait begins; 32 MiB is four chains, and each try is another four.
	 */
	for (tries = 1; tries <= TRIES; tries++) {
		ret = kvreg_transfer(kv, KVREG_OP_WRITE, devs[0].index, ma, 0,
				     mb, 0, LEN, &err);
		if (ret)
			break;
		done++;
	}
	CHECK(ret, "%u transfers of %llu MiB, none timed out at 1 ms a chain",
	      TRIES, (unsigned long long)(LEN >> 20));
	CHECK(ret == -ETIMEDOUT && err.reason == KVREG_REASON_OP_TIMEOUT &&
	      err.limit >= 1 && err.limit <= 20 &&
	      err.device_index == devs[0].index,
	      "a chain past op_timeout_ms: %d reason %u limit %llu device %u",
	      ret, err.reason, (unsigned long long)err.limit,
	      err.device_index);
	printf("op_timeout_ms 1: try %u of a %llu MiB WRITE timed out (limit "
	       "%llu ms)\n", tries, (unsigned long long)(LEN >> 20),
	       (unsigned long long)err.limit);

	kvt_write_param(PARAM, saved_timeout);
	memset(b, 0, LEN);
	kvt_xfer(kv, KVREG_OP_WRITE, devs[0].index, ma, 0, mb, 0, LEN);
	CHECK(kvt_mismatch(b, 0, LEN, 0x51, 0) < 0,
	      "after the timeout, WRITE mismatch at %lld",
	      (long long)kvt_mismatch(b, 0, LEN, 0x51, 0));
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	kvt_check_unchanged(kv, &before, "after the timeout");
	kvreg_close(kv);
	printf("the QP recovered: %llu MiB moved and checked; %u transfers "
	       "beat the 1 ms bound first\n", (unsigned long long)(LEN >> 20),
	       done);
	return T_PASS;
}
