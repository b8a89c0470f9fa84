// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * An exporting peer in a child process, for the tests that import in one
 * guest: the child opens its own file, registers a pool the parent also
 * maps (so the parent can check the bytes a transfer left there), listens,
 * and leaves the descriptor in a page both share. It lives until the
 * parent writes to its command pipe or goes away.
 */
#ifndef KVEXPORT_H
#define KVEXPORT_H

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kvtransfer.h"

struct kvt_exporter {
	size_t desc_size;
	uint8_t desc[16384];
	pid_t pid;
	int cmd;		/* the parent's end */
};

static inline void kvt_exporter_child(struct kvt_exporter *x, uint8_t *pool,
				      uint64_t len, uint32_t dev,
				      const char *addr, int ack, int cmd)
{
	struct kvreg *kv = kvt_open();
	struct kvreg_error err;
	struct kvreg_mr *mr;
	uint64_t ep;
	char byte;

	CHECK_OK(kvreg_register(kv, pool, len, KVREG_ACCESS_ALL, 1ULL << dev,
				&mr, &err), &err);
	CHECK_OK(kvreg_listen(kv, addr, 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep, mr, x->desc, sizeof(x->desc),
			      &x->desc_size, &err), &err);
	CHECK(write(ack, "e", 1) == 1, "ack");
	/* Until the parent says so, or is gone. */
	CHECK(read(cmd, &byte, 1) >= 0, "read");
	kvreg_close(kv);
	exit(T_PASS);
}

/*
 * Start the exporter of @pool (MAP_SHARED, @len bytes) on device @dev;
 * returns once its descriptor is in place. @kv, the parent's file, is
 * closed in the child: the child's registrations are its own.
 */
static inline struct kvt_exporter *kvt_exporter_start(struct kvreg *kv,
						      uint8_t *pool,
						      uint64_t len,
						      uint32_t dev,
						      const char *addr)
{
	struct kvt_exporter *x = mmap(NULL, sizeof(*x), PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ack[2], cmd[2];
	char byte;
	pid_t pid;

	CHECK(x != MAP_FAILED, "mmap");
	CHECK(!pipe(ack) && !pipe(cmd), "pipe");
	/* Not into the shared page: the child would write its 0 there. */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		/* A parent that failed and exited takes its exporter along. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		kvreg_close(kv);
		close(ack[0]);
		close(cmd[1]);
		kvt_exporter_child(x, pool, len, dev, addr, ack[1], cmd[0]);
	}
	close(ack[1]);
	close(cmd[0]);
	CHECK(read(ack[0], &byte, 1) == 1, "the exporter did not start");
	close(ack[0]);
	x->pid = pid;
	x->cmd = cmd[1];
	return x;
}

/*
 * WRITE @len bytes of @mine (registered as @mr) to @r, an import of the
 * exporter's @pool, then READ them back after the exporter's side
 * changed: each checked where it landed, the pool and then @mine.
 */
static inline void kvt_exporter_roundtrip(struct kvreg *kv, uint8_t *pool,
					  uint8_t *mine,
					  const struct kvreg_mr *mr,
					  const struct kvreg_remote *r,
					  uint64_t len, uint32_t seed)
{
	struct kvreg_error err;
	int64_t bad;

	kvt_fill(mine, len, seed);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, mr, 0, r, 0, len,
				       &err), &err);
	bad = kvt_mismatch(pool, 0, len, seed, 0);
	CHECK(bad < 0, "WRITE: the exporter's pool differs at %lld",
	      (long long)bad);
	kvt_fill(pool, len, seed + 1);
	memset(mine, 0, len);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, mr, 0, r, 0, len,
				       &err), &err);
	bad = kvt_mismatch(mine, 0, len, seed + 1, 0);
	CHECK(bad < 0, "READ: differs at %lld", (long long)bad);
}

/* Connections accepted by process @pid, as KVREG_IOC_CONNS lists them. */
static inline unsigned int kvt_passive_of(struct kvreg *kv, pid_t pid)
{
	enum { MAX = 8192 };
	struct kvreg_conn_info *ci = calloc(MAX, sizeof(*ci));
	struct kvreg_error err;
	unsigned int n, i, k = 0;

	CHECK(ci, "calloc");
	CHECK_OK(kvreg_conns(kv, ci, MAX, &n, &err), &err);
	for (i = 0; i < n && i < MAX; i++)
		k += ci[i].pid == (uint32_t)pid &&
		     ci[i].kind == KVREG_CONN_KIND_PASSIVE;
	free(ci);
	return k;
}

/* Tell it to close its file and exit; it must exit cleanly. */
static inline void kvt_exporter_stop(struct kvt_exporter *x)
{
	int status;

	CHECK(write(x->cmd, "q", 1) == 1, "quit");
	CHECK(waitpid(x->pid, &status, 0) == x->pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "the exporter failed");
	close(x->cmd);
}

/* SIGKILL, as a crashing peer: its file is closed by its exit. */
static inline void kvt_exporter_kill(struct kvt_exporter *x)
{
	int status;

	kill(x->pid, SIGKILL);
	CHECK(waitpid(x->pid, &status, 0) == x->pid, "waitpid");
	close(x->cmd);
}

#endif /* KVEXPORT_H */
