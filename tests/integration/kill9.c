// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A process killed with SIGKILL while it holds registrations leaves
 * nothing behind: the pinned-page count and MR count return to where they
 * were.
 *
 * And one killed inside REGISTER, while it pins or fast-registers a
 * large buffer: the call says INTERRUPTED in the error record, which
 * lies in memory this process shares, before it returns to the dying
 * process, and the half-made registration leaves nothing either. The
 * record is the proof that the kill fell inside the call; a kill between
 * two calls leaves it empty, and is made again.
 */
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "kvtransfer.h"

#define BIG		(256ULL << 20)
#define TRIES		10

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

/* The fd is released as the process exits; allow for that. */
static void wait_released(struct kvreg *kv, const struct kvt_snap *before)
{
	int waited_ms = 0;

	while (waited_ms < 10000 &&
	       (kvt_stats(kv).pinned_pages != before->st.pinned_pages ||
		kvt_kernel_pins() != before->kernel_pins)) {
		usleep(10000);
		waited_ms += 10;
	}
}

/*
 * Registers and deregisters BIG in a loop, its record in @rec. Each time
 * in a fresh mapping never touched: the pin faults every page in, and
 * that is most of the call, so that most kills fall where a REGISTER
 * looks for them (GUP and kvreg's pin both stop on a fatal signal).
 */
static void registerer(uint32_t dev, struct kvreg_error *rec, int ready)
{
	struct kvreg *kv = kvt_open();

	CHECK(write(ready, "r", 1) == 1, "ready");
	for (;;) {
		uint8_t *p = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct kvreg_register reg = {
			.size = sizeof(reg), .error = (uintptr_t)rec,
			.error_size = sizeof(*rec), .length = BIG,
			.access = KVREG_ACCESS_ALL, .device_mask = 1ULL << dev,
		};
		struct kvreg_deregister dereg = {
			.size = sizeof(dereg), .error = (uintptr_t)rec,
			.error_size = sizeof(*rec),
		};

		CHECK(p != MAP_FAILED, "mmap");
		madvise(p, BIG, MADV_NOHUGEPAGE);
		reg.addr = (uintptr_t)p;
		memset(rec, 0, sizeof(*rec));
		CHECK(!ioctl(kvreg_fd(kv), KVREG_IOC_REGISTER, &reg),
		      "REGISTER before the kill: %s reason %u",
		      strerror(errno), rec->reason);
		dereg.handle = reg.handle;
		memset(rec, 0, sizeof(*rec));
		CHECK(!ioctl(kvreg_fd(kv), KVREG_IOC_DEREGISTER, &dereg),
		      "DEREGISTER before the kill: %s reason %u",
		      strerror(errno), rec->reason);
		munmap(p, BIG);
	}
}

/*
 * Kill registerers until three records say INTERRUPTED (the kill fell
 * inside a REGISTER), each leaving nothing behind.
 */
static void kill_inside_register(struct kvreg *kv, uint32_t dev)
{
	struct kvreg_error *rec = mmap(NULL, sizeof(*rec),
				       PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned int t, interrupted = 0, between = 0;
	struct kvt_snap before = kvt_snap(kv);
	int ready[2], status;
	char byte;
	pid_t pid;

	CHECK(rec != MAP_FAILED, "mmap");
	for (t = 0; t < TRIES && interrupted < 3; t++) {
		CHECK(!pipe(ready), "pipe");
		pid = fork();
		CHECK(pid >= 0, "fork");
		if (!pid) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			kvreg_close(kv);
			close(ready[0]);
			registerer(dev, rec, ready[1]);
		}
		close(ready[1]);
		CHECK(read(ready[0], &byte, 1) == 1,
		      "the registerer did not start");
		close(ready[0]);
		/* A few calls in: most of the time goes to pinning. */
		usleep((200 + 50 * t) * 1000);
		CHECK(!kill(pid, SIGKILL), "kill");
		CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
		      WTERMSIG(status) == SIGKILL,
		      "the registerer ended other than by the kill: %#x",
		      status);
		CHECK(rec->reason == KVREG_REASON_INTERRUPTED ||
		      rec->reason == KVREG_REASON_NONE,
		      "a REGISTER cut by SIGKILL: reason %u errno %d",
		      rec->reason, rec->driver_errno);
		interrupted += rec->reason == KVREG_REASON_INTERRUPTED;
		between += rec->reason == KVREG_REASON_NONE;
		wait_released(kv, &before);
		kvt_check_unchanged(kv, &before,
				    "after a registerer was killed");
	}
	CHECK(interrupted, "%u kills, none inside a REGISTER", t);
	printf("%u registerers of %llu MiB killed: %u records say "
	       "INTERRUPTED, %u fell between calls; nothing left of them\n",
	       t, BIG >> 20, interrupted, between);
	munmap(rec, sizeof(*rec));
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvt_snap before;
	struct kvreg_stats during, after;
	int fds[2], status;
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
	wait_released(kv, &before);
	after = kvt_stats(kv);
	kvt_check_unchanged(kv, &before, "after kill -9");
	printf("kill -9 released %llu pinned pages and %llu MRs\n",
	       (unsigned long long)(during.pinned_pages - after.pinned_pages),
	       (unsigned long long)(during.mrs - after.mrs));

	kill_inside_register(kv, devs[0].index);
	kvreg_close(kv);
	return T_PASS;
}
