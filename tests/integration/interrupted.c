// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A TRANSFER cut short by SIGKILL says INTERRUPTED: the module writes the
 * error record before the call returns to the dying process, so a child
 * whose record lies in memory it shares with this process leaves the
 * reason behind. The child moves 32 MiB between its registrations in a
 * loop until it is killed; its record must then say INTERRUPTED (or
 * nothing, where the kill fell between two calls) and never another
 * reason, and the child's registrations, pins and MRs go with it.
 */
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kvtest.h"

#define LEN	(32ULL << 20)
#define TRIES	10

/* Loops TRANSFERs with its record in @rec until killed; never returns. */
static void mover(uint32_t dev, struct kvreg_error *rec, int ready)
{
	struct kvreg *kv = kvt_open();
	uint8_t *a = kvt_map_anon(LEN), *b = kvt_map_anon(LEN);
	struct kvreg_mr *ma, *mb;
	struct kvreg_error err;

	CHECK_OK(kvreg_register(kv, a, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&ma, &err), &err);
	CHECK_OK(kvreg_register(kv, b, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&mb, &err), &err);
	CHECK(write(ready, "r", 1) == 1, "ready");
	for (;;) {
		struct kvreg_transfer tr = {
			.size = sizeof(tr), .error = (uintptr_t)rec,
			.error_size = sizeof(*rec), .opcode = KVREG_OP_WRITE,
			.device_index = dev,
			.local_handle = kvreg_mr_handle(ma),
			.remote_handle = kvreg_mr_handle(mb), .length = LEN,
		};

		CHECK(!ioctl(kvreg_fd(kv), KVREG_IOC_TRANSFER, &tr),
		      "TRANSFER before the kill: %s reason %u",
		      strerror(errno), rec->reason);
	}
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	unsigned int t, interrupted = 0, between = 0;
	struct kvreg_error *rec;
	struct kvt_snap before;
	int ready[2], status;
	char byte;
	pid_t pid;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	rec = mmap(NULL, sizeof(*rec), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(rec != MAP_FAILED, "mmap");
	before = kvt_snap(kv);
	for (t = 0; t < TRIES && interrupted < 3; t++) {
		CHECK(!pipe(ready), "pipe");
		pid = fork();
		CHECK(pid >= 0, "fork");
		if (!pid) {
			kvreg_close(kv);
			close(ready[0]);
			mover(devs[0].index, rec, ready[1]);
		}
		close(ready[1]);
		CHECK(read(ready[0], &byte, 1) == 1, "the mover did not start");
		close(ready[0]);
		/* Some TRANSFERs in, the child almost always inside one. */
		usleep(300 * 1000);
		CHECK(!kill(pid, SIGKILL), "kill");
		CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
		      WTERMSIG(status) == SIGKILL,
		      "the mover ended other than by the kill: status %#x",
		      status);
		CHECK(rec->reason == KVREG_REASON_INTERRUPTED ||
		      rec->reason == KVREG_REASON_NONE,
		      "a TRANSFER cut by SIGKILL: reason %u errno %d", rec->reason,
		      rec->driver_errno);
		interrupted += rec->reason == KVREG_REASON_INTERRUPTED;
		between += rec->reason == KVREG_REASON_NONE;
		kvt_check_unchanged(kv, &before, "after the mover was killed");
	}
	CHECK(interrupted, "%u kills, none inside a TRANSFER", t);
	printf("%u movers killed: %u records say INTERRUPTED, %u fell between "
	       "calls; nothing left of them\n", t, interrupted, between);
	kvreg_close(kv);
	return T_PASS;
}
