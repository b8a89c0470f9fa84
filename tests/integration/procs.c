// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The host-wide view: every process using kvreg with its usage against its
 * budget, for an admin only.
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kvtest.h"

int main(void)
{
	struct kvreg_proc_info procs[64];
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_error err;
	unsigned int n, i, found = 0;
	int fds[2], status;
	pid_t pid;
	char c;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	CHECK(!pipe(fds), "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct kvreg *mine;
		struct kvreg_mr *mr;
		uint8_t *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		kvreg_close(kv);
		mine = kvt_open();
		p = kvt_map_anon(8 * SZ_4K);
		CHECK_OK(kvreg_set_budget(mine, KVREG_BUDGET_F_MRS, 100, 0,
					  NULL, &err), &err);
		CHECK_OK(kvreg_register(mine, p, 8 * SZ_4K, KVREG_ACCESS_ALL,
					1ULL << devs[0].index, &mr, &err),
			 &err);
		CHECK(write(fds[1], "r", 1) == 1, "pipe");
		for (;;)
			pause();
	}
	CHECK(read(fds[0], &c, 1) == 1, "child did not register");

	CHECK_OK(kvreg_procs(kv, procs, 64, &n, &err), &err);
	for (i = 0; i < n && i < 64; i++) {
		printf("pid %u %s: %llu registrations, %llu/%llu MRs, %llu/%llu "
		       "bytes\n", procs[i].pid, procs[i].comm,
		       (unsigned long long)procs[i].registrations,
		       (unsigned long long)procs[i].mrs,
		       (unsigned long long)procs[i].max_mrs,
		       (unsigned long long)procs[i].pinned_bytes,
		       (unsigned long long)procs[i].max_pinned_bytes);
		if (procs[i].pid != (uint32_t)pid)
			continue;
		CHECK(procs[i].registrations == 1 && procs[i].mrs == 1 &&
		      procs[i].max_mrs == 100 && procs[i].files == 1 &&
		      procs[i].pinned_bytes == 8 * SZ_4K, "child's row");
		found = 1;
	}
	CHECK(found, "child %d not listed", pid);

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);

	/* Not for everyone. */
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct kvreg *mine;

		kvreg_close(kv);
		CHECK(!setgid(65534) && !setuid(65534), "drop privileges");
		mine = kvt_open();
		CHECK_FAILS(kvreg_procs(mine, procs, 64, &n, &err), &err,
			    EPERM, KVREG_REASON_NOT_PERMITTED);
		kvreg_close(mine);
		exit(T_PASS);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "unprivileged child failed");
	kvreg_close(kv);
	return T_PASS;
}
