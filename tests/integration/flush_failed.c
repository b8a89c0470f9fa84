// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A chain that outlives op_timeout_ms is flushed (the QP to the error
 * state) before its call returns; that modify can fail (a driver's error,
 * a device going). debugfs inject_flush_fail makes the next one fail, as
 * such a driver would, with the chain still running. Then:
 *  - the TRANSFER still returns at once, OP_TIMEOUT, and the trace shows
 *    the chain still in flight as it did (kvreg_chain_unflushed
 *    running=1): the race this test is about happened;
 *  - the next TRANSFER on that device waits for the old chain's end
 *    first (kvreg_chain_collected, same QP), then moves every byte;
 *  - a file closed with such a chain still in flight, registrations
 *    and all, lets go of all it held: pins, MRs and registrations back
 *    where they were (and libkvreg's handles, which LeakSanitizer
 *    checks), and a new file's TRANSFER moves every byte.
 * The debug kernel's kmemleak and the lane's kernel log check see the
 * chain's wait freed and nothing warned.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "kvtrace.h"
#include "kvtransfer.h"

#define PARAM	"/sys/module/kvreg/parameters/op_timeout_ms"
#define INJECT	"/sys/kernel/debug/kvreg/inject_flush_fail"
#define LEN	(32ULL << 20)
#define TRIES	8

static unsigned long long saved_timeout;
static pid_t parent;

static void restore(void)
{
	if (getpid() != parent)
		return;
	if (saved_timeout)
		kvt_write_param(PARAM, saved_timeout);
	kvt_write_param(INJECT, 0);
}

struct pair {
	struct kvreg *kv;
	struct kvreg_mr *ma, *mb;
	uint8_t *a, *b;
	uint32_t dev;
};

static struct pair pair_open(uint32_t dev, int seed)
{
	struct pair p = { .kv = kvt_open(), .dev = dev };
	struct kvreg_error err;

	p.a = kvt_map_anon(LEN);
	p.b = kvt_map_anon(LEN);
	kvt_fill(p.a, LEN, seed);
	CHECK_OK(kvreg_register(p.kv, p.a, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&p.ma, &err), &err);
	CHECK_OK(kvreg_register(p.kv, p.b, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&p.mb, &err), &err);
	return p;
}

/*
 * With op_timeout_ms at 1 and the next flush failing: WRITEs until one
 * times out (a chain short enough may end while it is posted), which
 * must be OP_TIMEOUT with the injection taken.
 */
static void time_out_unflushed(struct pair *p)
{
	struct kvreg_error err;
	unsigned int tries;
	int ret = 0;

	kvt_write_param(INJECT, 1);
	kvt_write_param(PARAM, 1);
	for (tries = 1; tries <= TRIES; tries++) {
		ret = kvreg_transfer(p->kv, KVREG_OP_WRITE, p->dev, p->ma, 0,
				     p->mb, 0, LEN, &err);
		if (ret)
			break;
	}
	kvt_write_param(PARAM, saved_timeout);
	CHECK(ret, "%u transfers of %llu MiB, none timed out at 1 ms a chain",
	      TRIES, (unsigned long long)(LEN >> 20));
	CHECK(ret == -ETIMEDOUT && err.reason == KVREG_REASON_OP_TIMEOUT,
	      "a late chain whose flush failed: %d reason %u, want "
	      "-ETIMEDOUT OP_TIMEOUT", ret, err.reason);
	CHECK(kvt_read_param(INJECT) == 0, "the failed flush was not "
	      "reached: %s still %llu", INJECT, kvt_read_param(INJECT));
}

static void xfer_checked(struct pair *p, int seed, const char *when)
{
	int64_t bad;

	memset(p->b, 0, LEN);
	kvt_xfer(p->kv, KVREG_OP_WRITE, p->dev, p->ma, 0, p->mb, 0, LEN);
	bad = kvt_mismatch(p->b, 0, LEN, seed, 0);
	CHECK(bad < 0, "%s: WRITE mismatch at %lld", when, (long long)bad);
}

static void pair_close(struct pair *p)
{
	kvreg_close(p->kv);
	munmap(p->a, LEN);
	munmap(p->b, LEN);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *watch = kvt_open();
	unsigned long long qpn_unflushed = 0, qpn_collected = 0;
	unsigned int unflushed = 0, running = 0, collected = 0;
	struct kvreg_error err;
	struct kvtr_event ev;
	struct kvt_snap before;
	int status = 0;
	struct pair p;
	pid_t child;
	FILE *tf;

	if (!kvt_devices(watch, devs))
		kvt_skip("no RDMA device");
	if (access(INJECT, W_OK))
		kvt_skip("no " INJECT " (debugfs not mounted?)");
	parent = getpid();
	saved_timeout = kvt_read_param(PARAM);
	atexit(restore);
	before = kvt_snap(watch);

	/* The call returns with its chain in flight; the next waits for it. */
	p = pair_open(devs[0].index, 0x61);
	kvtr_start("kvreg_chain_unflushed kvreg_chain_collected");
	time_out_unflushed(&p);
	xfer_checked(&p, 0x61, "after a chain whose flush failed");
	CHECK_OK(kvreg_deregister(p.kv, p.mb, &err), &err);
	CHECK_OK(kvreg_deregister(p.kv, p.ma, &err), &err);
	pair_close(&p);
	kvt_check_unchanged(watch, &before, "after the chain was collected");

	/*
	 * A file closed with the chain in flight, its registrations and
	 * all: the file is released, the QP's drain ends the chain, and
	 * kvreg_close() frees the handles (LeakSanitizer checks it as the
	 * child exits).
	 */
	child = fork();
	CHECK(child >= 0, "fork");
	if (!child) {
		p = pair_open(devs[0].index, 0x62);
		time_out_unflushed(&p);
		pair_close(&p);
		exit(T_PASS);
	}
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "the process that closed its file "
	      "with the chain in flight failed: status %#x", status);
	kvtr_stop();
	kvt_check_unchanged(watch, &before, "after a close with an unflushed "
			    "chain in flight");
	p = pair_open(devs[0].index, 0x63);
	xfer_checked(&p, 0x63, "a new file after that close");
	CHECK_OK(kvreg_deregister(p.kv, p.mb, &err), &err);
	CHECK_OK(kvreg_deregister(p.kv, p.ma, &err), &err);
	pair_close(&p);
	kvt_check_unchanged(watch, &before, "at the end");
	kvreg_close(watch);

	tf = kvtr_open();
	while (kvtr_next(tf, &ev)) {
		if (!strcmp(ev.name, "kvreg_chain_unflushed")) {
			unflushed++;
			running += kvtr_arg(ev.args, "running", 0) == 1;
			if (!qpn_unflushed)
				qpn_unflushed = kvtr_arg(ev.args, "qpn", 0);
		} else if (!strcmp(ev.name, "kvreg_chain_collected")) {
			collected++;
			qpn_collected = kvtr_arg(ev.args, "qpn", 1);
		}
	}
	fclose(tf);
	/* Both calls returned with their chain still running. */
	CHECK(unflushed == 2 && running == 2, "%u unflushed chains traced, "
	      "%u still running as their call returned; want 2 and 2",
	      unflushed, running);
	/* The first was waited for by the next chain; the second by close. */
	CHECK(collected == 1 && qpn_collected == qpn_unflushed,
	      "%u collections traced (QP %llu), want 1 on QP %llu",
	      collected, qpn_collected, qpn_unflushed);
	printf("a chain whose flush failed: its TRANSFER returned while it "
	       "ran, the next waited for it on QP %llu and moved %llu MiB, "
	       "checked\n", qpn_unflushed, (unsigned long long)(LEN >> 20));
	printf("a file closed with such a chain in flight let go of "
	       "everything, handles included; a new file moved %llu MiB, checked\n",
	       (unsigned long long)(LEN >> 20));
	return T_PASS;
}
