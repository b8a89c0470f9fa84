// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A failure on the second device undoes the first device and the pin:
 * pinned pages, MRs and registrations are where they were. The failure
 * is injected through debugfs (root only, not ABI), after the device is
 * fully set up, and reads as the driver refusing with EIO.
 */
#include "kvtransfer.h"

#define INJECT "/sys/kernel/debug/kvreg/inject_fail_mask"

static void inject(uint64_t mask)
{
	FILE *f = fopen(INJECT, "w");

	if (!f)
		kvt_skip("no " INJECT " (debugfs not mounted?)");
	CHECK(fprintf(f, "%#llx\n", (unsigned long long)mask) > 0 &&
	      !fclose(f), "write " INJECT);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES], after_devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	const uint64_t len = 3 * SZ_2M + 7 * SZ_4K;
	struct kvt_snap before;
	struct kvreg_stats after;
	struct kvreg_mr *ma, *mb;
	struct kvreg_error err;
	unsigned int ndev, d;
	uint8_t *a, *b;

	ndev = kvt_devices(kv, devs);
	if (ndev < 2)
		kvt_skip("needs two RDMA devices");
	a = kvt_map_anon(len);
	b = kvt_map_anon(len);
	before = kvt_snap(kv);

	inject(1ULL << devs[1].index);
	CHECK_FAILS(kvreg_register(kv, a, len, KVREG_ACCESS_ALL, 0, &ma, &err),
		    &err, EIO, KVREG_REASON_DEVICE_REFUSED);
	inject(0);
	CHECK(err.device_index == devs[1].index && err.driver_errno == -EIO,
	      "failed on device %u (%d), want %u", err.device_index,
	      err.driver_errno, devs[1].index);
	CHECK(!ma, "no registration handed out on failure");

	kvt_check_unchanged(kv, &before, "after the failed REGISTER");
	after = kvt_stats(kv);
	CHECK(after.file_registrations == 0, "a registration survived");
	CHECK(kvt_devices(kv, after_devs) == ndev, "device count changed");
	for (d = 0; d < ndev; d++)
		CHECK(after_devs[d].mrs_in_use == devs[d].mrs_in_use,
		      "device %u MRs %llu -> %llu", devs[d].index,
		      (unsigned long long)devs[d].mrs_in_use,
		      (unsigned long long)after_devs[d].mrs_in_use);

	/* And the same registration works once the fault is gone. */
	CHECK_OK(kvreg_register(kv, a, len, KVREG_ACCESS_ALL, 0, &ma, &err),
		 &err);
	CHECK_OK(kvreg_register(kv, b, len, KVREG_ACCESS_ALL, 0, &mb, &err),
		 &err);
	kvt_fill(a, len, 0x77);
	kvt_xfer(kv, KVREG_OP_WRITE, devs[1].index, ma, 0, mb, 0, len);
	CHECK(kvt_mismatch(b, 0, len, 0x77, 0) < 0, "WRITE after rollback");
	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	kvt_check_unchanged(kv, &before, "after DEREGISTER");
	kvreg_close(kv);
	return T_PASS;
}
