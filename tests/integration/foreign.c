// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A /dev/kvreg file belongs to the process that opened it: a fork child
 * (or a receiver of the fd) is refused with its own reason, so budgets
 * and memlock charges cannot be escaped; every command is tried, by
 * number, and only the four that concern no process answer. The child's own file works, with
 * a budget of its own, and the parent's registrations are untouched.
 */
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "kvtransfer.h"

/* The calls that concern no process: any holder of the fd may ask. */
static const unsigned int open_to_all[] = {
	KVREG_IOC_DEVICES, KVREG_IOC_FEATURES, KVREG_IOC_PROCS,
	KVREG_IOC_CONNS,
};

/*
 * Every command the module knows, found by trying every number (so a
 * command added later is tried too), from a process that is not the
 * file's: each refuses with FOREIGN_PROCESS naming the owner, before it
 * reads anything of its struct, but the four above, which answer.
 */
static void try_every_command(int fd, pid_t owner)
{
	unsigned int nr, i, known = 0, refused = 0;

	for (nr = 1; nr < 0x100; nr++) {
		unsigned int cmd = _IO(KVREG_IOC_MAGIC, nr);
		/* The head every struct starts with; the rest zero. */
		union {
			struct kvreg_deregister head;
			uint8_t bytes[KVREG_MAX_ARG_SIZE];
		} arg;
		struct kvreg_error err;
		bool anyone = false;
		int ret;

		memset(&arg, 0, sizeof(arg));
		memset(&err, 0, sizeof(err));
		arg.head.size = sizeof(arg);
		arg.head.error = (uintptr_t)&err;
		arg.head.error_size = sizeof(err);
		ret = ioctl(fd, cmd, &arg) ? -errno : 0;
		if (ret == -ENOTTY)
			continue;
		known++;
		for (i = 0; i < sizeof(open_to_all) / sizeof(open_to_all[0]);
		     i++)
			anyone |= cmd == open_to_all[i];
		if (anyone) {
			CHECK(err.reason != KVREG_REASON_FOREIGN_PROCESS,
			      "command %#x, which concerns no process, refused "
			      "a foreign one", nr);
			continue;
		}
		CHECK(ret == -EPERM &&
		      err.reason == KVREG_REASON_FOREIGN_PROCESS &&
		      err.usage == (uint64_t)owner,
		      "command %#x from a foreign process: %d, reason %u, "
		      "owner %llu; want -EPERM FOREIGN_PROCESS %d", nr, ret,
		      err.reason, (unsigned long long)err.usage, (int)owner);
		refused++;
	}
	/* Today's 19 commands; a new one only raises the count. */
	CHECK(known >= 19 && refused == known - 4, "%u commands known, %u "
	      "refused to a foreign process", known, refused);
	printf("every command from a foreign process: %u of %u refused, "
	       "FOREIGN_PROCESS with the owner's pid; DEVICES, FEATURES, "
	       "PROCS and CONNS answered\n", refused, known);
}

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
		try_every_command(kvreg_fd(kv), getppid());
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
