// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A /dev/kvreg file belongs to the process that opened it: a fork child
 * (or a receiver of the fd) is refused with its own reason, so budgets
 * and memlock charges cannot be escaped. The child's own file works, with
 * a budget of its own, and the parent's registrations are untouched.
 */
#include <sys/wait.h>

#include "kvtransfer.h"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvt_snap before;
	struct kvreg_error err;
	struct kvreg_mr *mr, *peer;
	int status;
	uint32_t dev;
	pid_t pid;
	uint8_t *p, *b;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	p = kvt_map_anon(8 * SZ_4K);
	b = kvt_map_anon(8 * SZ_4K);
	before = kvt_snap(kv);
	CHECK_OK(kvreg_register(kv, p, 8 * SZ_4K, KVREG_ACCESS_ALL, 1ULL << dev,
				&mr, &err), &err);

	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct kvreg_mr *child_mr;
		struct kvreg *mine;
		struct kvreg_stats st;

		CHECK_FAILS(kvreg_register(kv, b, SZ_4K, KVREG_ACCESS_ALL, 0,
					   &child_mr, &err),
			    &err, EPERM, KVREG_REASON_FOREIGN_PROCESS);
		CHECK(err.usage == (uint64_t)getppid(), "owner %llu",
		      (unsigned long long)err.usage);
		CHECK_FAILS(kvreg_deregister(kv, mr, &err), &err, EPERM,
			    KVREG_REASON_FOREIGN_PROCESS);
		CHECK_FAILS(kvreg_transfer(kv, KVREG_OP_WRITE, dev, mr, 0, mr,
					   0, 1, &err),
			    &err, EPERM, KVREG_REASON_FOREIGN_PROCESS);
		/* STATS too: the parent's usage is not the child's to read. */
		CHECK_FAILS(kvreg_stats(kv, &st, &err), &err, EPERM,
			    KVREG_REASON_FOREIGN_PROCESS);
		mine = kvt_open();
		st = kvt_stats(mine);
		CHECK(st.proc_mrs == 0, "child starts with %llu MRs",
		      (unsigned long long)st.proc_mrs);
		CHECK_OK(kvreg_register(mine, b, SZ_4K, KVREG_ACCESS_ALL, 0,
					&child_mr, &err), &err);
		CHECK_OK(kvreg_deregister(mine, child_mr, &err), &err);
		kvreg_close(mine);
		/* The parent's context, copied by fork, frees its handles. */
		kvreg_close(kv);
		exit(T_PASS);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "child failed");

	/* The parent's registration still moves data. */
	CHECK_OK(kvreg_register(kv, b, 8 * SZ_4K, KVREG_ACCESS_ALL, 1ULL << dev,
				&peer, &err), &err);
	kvt_fill(p, 8 * SZ_4K, 0x29);
	kvt_xfer(kv, KVREG_OP_WRITE, dev, mr, 0, peer, 0, 8 * SZ_4K);
	CHECK(kvt_mismatch(b, 0, 8 * SZ_4K, 0x29, 0) < 0, "parent transfer");
	CHECK_OK(kvreg_deregister(kv, peer, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvt_check_unchanged(kv, &before, "after fork");
	kvreg_close(kv);
	return T_PASS;
}
