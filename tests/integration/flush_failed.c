// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A chain that outlives op_timeout_ms is flushed (the QP to the error
 * state) before its call returns; that modify can fail (a driver's error,
 * a device going). debugfs inject_flush_fail makes the next one fail, as
 * such a driver would, with the chain still running. The chains are a
 * remote TRANSFER's, to a region imported from an exporter in this guest
 * (between two registrations of one file a TRANSFER is a CPU copy, with
 * no chain). Then:
 *  - the TRANSFER still returns at once, OP_TIMEOUT, and the trace shows
 *    the chain still in flight as it did (kvreg_chain_unflushed
 *    running=1): the race this test is about happened;
 *  - the rail is connected again on a new QP, and the old QP is not
 *    destroyed before the old chain ended (kvreg_chain_collected, same
 *    QP); the next TRANSFER moves every byte, checked at the exporter;
 *  - a file closed with such a chain in flight, registrations, import
 *    and all, lets go of all it held: pins, MRs and registrations back
 *    where they were (and libkvreg's handles, which LeakSanitizer
 *    checks), and a new file's TRANSFER moves every byte.
 * The debug kernel's kmemleak and the lane's kernel log check see the
 * chain's wait freed and nothing warned.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "kvexport.h"
#include "kvtrace.h"

#define PARAM	"/sys/module/kvreg/parameters/op_timeout_ms"
#define INJECT	"/sys/kernel/debug/kvreg/inject_flush_fail"
#define LEN	(32ULL << 20)
#define TRIES	8
#define ADDR	"192.0.2.1"
/* How long the rail may take to be connected again, in 100 ms steps. */
#define BACK_STEPS	300

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

/* An importing file: its registration @a, the exporter's pool as @r. */
struct pair {
	struct kvreg *kv;
	struct kvreg_mr *ma;
	struct kvreg_remote *r;
	uint8_t *a, *pool;
	uint32_t dev;
};

static struct pair pair_open(struct kvt_exporter *x, uint8_t *pool,
			     uint32_t dev, int seed)
{
	struct pair p = { .kv = kvt_open(), .pool = pool, .dev = dev };
	struct kvreg_error err;

	p.a = kvt_map_anon(LEN);
	kvt_fill(p.a, LEN, seed);
	CHECK_OK(kvreg_register(p.kv, p.a, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&p.ma, &err), &err);
	CHECK_OK(kvreg_import(p.kv, x->desc, x->desc_size, 0, &p.r, &err),
		 &err);
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
		ret = kvreg_transfer_remote(p->kv, KVREG_OP_WRITE, p->ma, 0,
					    p->r, 0, LEN, &err);
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

/*
 * Every byte of @p->a to the pool, once the rail is back: until then the
 * region says CONN_LOST, and nothing else.
 */
static void xfer_checked(struct pair *p, int seed, const char *when)
{
	struct kvreg_error err;
	unsigned int step;
	int64_t bad;
	int ret = -1;

	memset(p->pool, 0, LEN);
	for (step = 0; step < BACK_STEPS; step++) {
		ret = kvreg_transfer_remote(p->kv, KVREG_OP_WRITE, p->ma, 0,
					    p->r, 0, LEN, &err);
		if (!ret)
			break;
		CHECK(ret == -ENOTCONN && err.reason == KVREG_REASON_CONN_LOST,
		      "%s: %d reason %u while the rail came back", when, ret,
		      err.reason);
		usleep(100 * 1000);
	}
	CHECK(!ret, "%s: the rail was not back in %d s", when,
	      BACK_STEPS / 10);
	bad = kvt_mismatch(p->pool, 0, LEN, seed, 0);
	CHECK(bad < 0, "%s: WRITE mismatch at %lld", when, (long long)bad);
}

static void pair_close(struct pair *p)
{
	kvreg_close(p->kv);
	munmap(p->a, LEN);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *watch = kvt_open();
	unsigned long long qpn_unflushed[2] = {}, qpn_collected[2] = {};
	unsigned int unflushed = 0, running = 0, collected = 0, i;
	struct kvreg_error err;
	struct kvt_exporter *x;
	struct kvtr_event ev;
	struct kvt_snap before;
	int status = 0;
	struct pair p;
	uint8_t *pool;
	uint32_t dev;
	pid_t child;
	FILE *tf;

	if (!kvt_devices(watch, devs))
		kvt_skip("no RDMA device");
	if (access(INJECT, W_OK))
		kvt_skip("no " INJECT " (debugfs not mounted?)");
	parent = getpid();
	saved_timeout = kvt_read_param(PARAM);
	atexit(restore);
	dev = devs[0].index;
	pool = kvt_map_shared(LEN);
	x = kvt_exporter_start(watch, pool, LEN, dev, ADDR);
	before = kvt_snap(watch);

	/* The call returns with its chain in flight; the QP waits for it. */
	p = pair_open(x, pool, dev, 0x61);
	kvtr_start("kvreg_chain_unflushed kvreg_chain_collected");
	time_out_unflushed(&p);
	xfer_checked(&p, 0x61, "after a chain whose flush failed");
	CHECK_OK(kvreg_unimport(p.kv, p.r, &err), &err);
	CHECK_OK(kvreg_deregister(p.kv, p.ma, &err), &err);
	pair_close(&p);
	kvt_check_unchanged(watch, &before, "after the chain was collected");

	/*
	 * A file closed with the chain in flight, its registration, import
	 * and all: the file is released, the QP's drain ends the chain, and
	 * kvreg_close() frees the handles (LeakSanitizer checks it as the
	 * child exits).
	 */
	child = fork();
	CHECK(child >= 0, "fork");
	if (!child) {
		p = pair_open(x, pool, dev, 0x62);
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
	p = pair_open(x, pool, dev, 0x63);
	xfer_checked(&p, 0x63, "a new file after that close");
	CHECK_OK(kvreg_unimport(p.kv, p.r, &err), &err);
	CHECK_OK(kvreg_deregister(p.kv, p.ma, &err), &err);
	pair_close(&p);
	kvt_check_unchanged(watch, &before, "at the end");
	kvt_exporter_stop(x);
	kvreg_close(watch);

	tf = kvtr_open();
	while (kvtr_next(tf, &ev)) {
		if (!strcmp(ev.name, "kvreg_chain_unflushed")) {
			running += kvtr_arg(ev.args, "running", 0) == 1;
			if (unflushed < 2)
				qpn_unflushed[unflushed] =
					kvtr_arg(ev.args, "qpn", 0);
			unflushed++;
		} else if (!strcmp(ev.name, "kvreg_chain_collected")) {
			if (collected < 2)
				qpn_collected[collected] =
					kvtr_arg(ev.args, "qpn", 1);
			collected++;
		}
	}
	fclose(tf);
	/* Both calls returned with their chain still running. */
	CHECK(unflushed == 2 && running == 2, "%u unflushed chains traced, "
	      "%u still running as their call returned; want 2 and 2",
	      unflushed, running);
	/* Each QP's end saw its own chain end first. */
	CHECK(collected == 2, "%u collections traced, want 2", collected);
	for (i = 0; i < 2; i++)
		CHECK(qpn_collected[i] == qpn_unflushed[i],
		      "chain %u: unflushed on QP %llu, collected on QP %llu",
		      i, qpn_unflushed[i], qpn_collected[i]);
	printf("a chain whose flush failed: its TRANSFER returned while it "
	       "ran, QP %llu waited for it before it went, and the rail "
	       "connected again moved %llu MiB, checked\n", qpn_unflushed[0],
	       (unsigned long long)(LEN >> 20));
	printf("a file closed with such a chain in flight let go of "
	       "everything, handles included; a new file moved %llu MiB, checked\n",
	       (unsigned long long)(LEN >> 20));
	return T_PASS;
}
