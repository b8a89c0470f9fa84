// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A process killed with SIGKILL while it holds registrations leaves
 * nothing behind: the pinned-page count and MR count return to where they
 * were.
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "kvtransfer.h"

static void child(int ready_fd)
{
	struct kvreg *kv = kvt_open();
	struct kvreg_error err;
	struct kvreg_mr *mr;
	int i;

	for (i = 0; i < 3; i++) {
		uint8_t *p = kvt_map_anon(4 * SZ_2M);

		CHECK_OK(kvreg_register(kv, p, 4 * SZ_2M, KVREG_ACCESS_ALL, 0,
					&mr, &err), &err);
	}
	CHECK(write(ready_fd, "r", 1) == 1, "pipe");
	for (;;)
		pause();
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvt_snap before;
	struct kvreg_stats during, after;
	int fds[2], status, waited_ms = 0;
	pid_t pid;
	char c;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	before = kvt_snap(kv);
	CHECK(!pipe(fds), "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		/* A failing parent must not leave it holding registrations. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		child(fds[1]);
	}
	close(fds[1]);
	CHECK(read(fds[0], &c, 1) == 1, "child died before registering");
	kvt_check_pinned(kv, &before, 3 * 4 * SZ_2M / SZ_4K, "child");
	during = kvt_stats(kv);
	CHECK(during.registrations - before.st.registrations == 3,
	      "child registrations");

	CHECK(!kill(pid, SIGKILL), "kill");
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status),
	      "child not killed");
	/* The fd is released as the process exits; allow for that. */
	do {
		after = kvt_stats(kv);
		if (after.pinned_pages == before.st.pinned_pages &&
		    kvt_kernel_pins() == before.kernel_pins)
			break;
		usleep(10000);
		waited_ms += 10;
	} while (waited_ms < 10000);
	kvt_check_unchanged(kv, &before, "after kill -9");
	printf("kill -9 released %llu pinned pages and %llu MRs\n",
	       (unsigned long long)(during.pinned_pages - after.pinned_pages),
	       (unsigned long long)(during.mrs - after.mrs));
	kvreg_close(kv);
	return T_PASS;
}
