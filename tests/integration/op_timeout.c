// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * op_timeout_ms bounds each chain of a remote TRANSFER: with it at 1 ms
 * (one jiffy), an 8 MiB chain to a region imported from an exporter in
 * this guest, which no rxe moves that fast, is refused -ETIMEDOUT with
 * OP_TIMEOUT and the bound as the limit; its work requests are flushed,
 * not left running. The rail is connected again: the same TRANSFER with
 * the bound restored moves every byte (checked at the exporter), and
 * nothing is left pinned, registered or charged after. (Between two
 * registrations of one file a TRANSFER is a CPU copy: no chain to bound.)
 */
#include <sys/mman.h>

#include "kvexport.h"

#define PARAM	"/sys/module/kvreg/parameters/op_timeout_ms"
#define LEN	(32ULL << 20)
#define TRIES	8
#define ADDR	"192.0.2.1"
/* How long the rail may take to be connected again, in 100 ms steps. */
#define BACK_STEPS	300

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
	unsigned int tries, done = 0, step;
	struct kvt_exporter *x;
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvt_snap before;
	struct kvreg_mr *ma;
	uint8_t *a, *pool;
	uint32_t dev;
	int ret = 0;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	a = kvt_map_anon(LEN);
	pool = kvt_map_shared(LEN);
	kvt_fill(a, LEN, 0x51);
	x = kvt_exporter_start(kv, pool, LEN, dev, ADDR);
	before = kvt_snap(kv);
	CHECK_OK(kvreg_register(kv, a, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&ma, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);

	parent = getpid();
	saved_timeout = kvt_read_param(PARAM);
	atexit(restore_timeout);
	kvt_write_param(PARAM, 1);
	/*
	 * A chain short enough may finish while it is posted, before the
	 * wait begins; 32 MiB is four chains, and each try is another four.
	 */
	for (tries = 1; tries <= TRIES; tries++) {
		ret = kvreg_transfer_remote(kv, KVREG_OP_WRITE, ma, 0, r, 0,
					    LEN, &err);
		if (ret)
			break;
		done++;
	}
	CHECK(ret, "%u transfers of %llu MiB, none timed out at 1 ms a chain",
	      TRIES, (unsigned long long)(LEN >> 20));
	CHECK(ret == -ETIMEDOUT && err.reason == KVREG_REASON_OP_TIMEOUT &&
	      err.limit >= 1 && err.limit <= 20 && err.device_index == dev,
	      "a chain past op_timeout_ms: %d reason %u limit %llu device %u",
	      ret, err.reason, (unsigned long long)err.limit,
	      err.device_index);
	printf("op_timeout_ms 1: try %u of a %llu MiB WRITE timed out (limit "
	       "%llu ms)\n", tries, (unsigned long long)(LEN >> 20),
	       (unsigned long long)err.limit);

	kvt_write_param(PARAM, saved_timeout);
	memset(pool, 0, LEN);
	for (step = 0; step < BACK_STEPS; step++) {
		ret = kvreg_transfer_remote(kv, KVREG_OP_WRITE, ma, 0, r, 0,
					    LEN, &err);
		if (!ret)
			break;
		CHECK(ret == -ENOTCONN && err.reason == KVREG_REASON_CONN_LOST,
		      "after the timeout: %d reason %u while the rail came "
		      "back", ret, err.reason);
		usleep(100 * 1000);
	}
	CHECK(!ret, "the rail was not back in %d s", BACK_STEPS / 10);
	CHECK(kvt_mismatch(pool, 0, LEN, 0x51, 0) < 0,
	      "after the timeout, WRITE mismatch at %lld",
	      (long long)kvt_mismatch(pool, 0, LEN, 0x51, 0));
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	kvt_check_unchanged(kv, &before, "after the timeout");
	kvt_exporter_stop(x);
	kvreg_close(kv);
	printf("the rail connected again: %llu MiB moved and checked; %u "
	       "transfers beat the 1 ms bound first\n",
	       (unsigned long long)(LEN >> 20), done);
	return T_PASS;
}
