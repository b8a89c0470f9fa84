// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A second process for tests that need one (an exporter, a hostile peer,
 * a third party): forked, told what to do a byte at a time on one pipe,
 * answering a byte at a time on another. A child that dies closes its
 * ends, so the parent's next read fails instead of waiting forever.
 */
#ifndef KVCHILD_H
#define KVCHILD_H

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kvtest.h"

struct kvt_child {
	pid_t pid;
	int cmd;	/* the parent writes; the child reads kvt_me.cmd */
	int ack;	/* the parent reads; the child writes kvt_me.ack */
};

/* In a child: its own ends. */
static struct kvt_child kvt_me __attribute__((unused));

static inline void kvt_send_byte(int fd, char c)
{
	CHECK(write(fd, &c, 1) == 1, "pipe write: %s", strerror(errno));
}

static inline char kvt_recv_byte(int fd)
{
	char c = 0;

	CHECK(read(fd, &c, 1) == 1, "pipe read: %s", strerror(errno));
	return c;
}

/* Fork @fn(@arg); it sends @ready on kvt_me.ack once set up, and exits. */
static inline struct kvt_child kvt_spawn(void (*fn)(void *arg), void *arg,
					 char ready)
{
	int cmd[2], ack[2];
	struct kvt_child c;

	CHECK(!pipe2(cmd, O_CLOEXEC) && !pipe2(ack, O_CLOEXEC), "pipe");
	c.pid = fork();
	CHECK(c.pid >= 0, "fork");
	if (!c.pid) {
		/* A parent that failed and exited takes its children along. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(cmd[1]);
		close(ack[0]);
		kvt_me.cmd = cmd[0];
		kvt_me.ack = ack[1];
		fn(arg);
		exit(T_FAIL);	/* @fn exits itself */
	}
	close(cmd[0]);
	close(ack[1]);
	c.cmd = cmd[1];
	c.ack = ack[0];
	CHECK(kvt_recv_byte(c.ack) == ready, "child did not start");
	return c;
}

/* Send @cmd, return the child's answer. */
static inline char kvt_ask(struct kvt_child *c, char cmd)
{
	kvt_send_byte(c->cmd, cmd);
	return kvt_recv_byte(c->ack);
}

/* The child must exit with T_PASS. */
static inline void kvt_reap(struct kvt_child *c)
{
	int status;

	CHECK(waitpid(c->pid, &status, 0) == c->pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "child %d failed", (int)c->pid);
	close(c->cmd);
	close(c->ack);
}

/*
 * @fn(@i, @arg) for every @i below @n, each in a process of its own, all
 * at once; every one must exit T_PASS. For attacks that each wait out a
 * timeout (5.10's rxe drops a request it refuses, so there a refusal is
 * the attacker's retries running out): overlapped, the wait is paid @n
 * times fewer, and every attack is still made. A child makes its own
 * kvreg file and verbs objects; what it checks of the parent's memory
 * must be MAP_SHARED.
 */
static inline void kvt_fan_out(int n, void (*fn)(int i, void *arg),
			       void *arg)
{
	pid_t pids[64];
	int i, status, failed = 0;

	CHECK(n > 0 && n <= 64, "a fan-out of %d", n);
	fflush(NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		CHECK(pids[i] >= 0, "fork: %s", strerror(errno));
		if (!pids[i]) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			fn(i, arg);
			fflush(NULL);
			_exit(T_PASS);
		}
	}
	for (i = 0; i < n; i++)
		if (waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != T_PASS)
			failed++;
	CHECK(!failed, "%d of %d children failed", failed, n);
}

#endif /* KVCHILD_H */
