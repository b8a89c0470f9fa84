// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * An RDMA device removed under remote work: during a synchronous
 * TRANSFER of 64 MiB to an imported region, during a loop of IMPORTs,
 * and while a lost rail is being mended. Removal does not wait behind a
 * long transfer (it stops at its next chain), every call returns: 0 or a
 * named reason, never a hang; the debug kernel's KASAN and lockdep watch
 * the teardown. Each step requires that its race happened: a transfer
 * under way when the removal began, imports both made and refused, a
 * mend that had run and failed. The device is added back after each step.
 *   removal_remote NETDEV_OF_THE_SECOND_DEVICE [BOUND_S]
 * BOUND_S (20 by default) bounds the removal and each answer. Under KASAN
 * and TCG a removal during a stream of transfers took 98 s, ending just
 * after the stream did: rxe's unregistration waits for the packets it is
 * still processing before it asks kvreg (which then stops at the next
 * chain). So no transfer is started once the removal has begun.
 */
#include <pthread.h>
#include <signal.h>

#include "kvexport.h"

#define BIG		(64ULL << 20)
#define ADDR		"198.51.100.1"	/* the second device's */
static double bound_s = 20.0;

static const char *netdev;
static char rxe[KVREG_DEVICE_NAME_MAX];
static pid_t test_pid;

/* The device on @netdev, by name: its index changes when it comes back. */
static uint32_t second_device(struct kvreg *kv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	unsigned int n = kvt_devices(kv, devs);

	CHECK(n >= 2, "needs two RDMA devices, found %u", n);
	if (!rxe[0])
		snprintf(rxe, sizeof(rxe), "%s", devs[1].name);
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(devs[i].name, rxe))
			return devs[i].index;
	CHECK(0, "%s is not back", rxe);
	return 0;
}

static double remove_device(void)
{
	char cmd[128];
	double t0 = kvt_now();

	snprintf(cmd, sizeof(cmd), "rdma link delete %s", rxe);
	kvt_run(cmd);
	return kvt_now() - t0;
}

/*
 * At a failed test's exit too: the tests after this one need the device.
 * Adding one that is there fails, harmlessly.
 */
static void add_back(void)
{
	char cmd[160];

	if (getpid() != test_pid || !rxe[0])
		return;
	snprintf(cmd, sizeof(cmd),
		 "rdma link add %s type rxe netdev %s 2>/dev/null", rxe,
		 netdev);
	if (system(cmd))
		return;
}

static void add_device(struct kvreg *kv)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rdma link add %s type rxe netdev %s", rxe,
		 netdev);
	kvt_run(cmd);
	second_device(kv);
	/* The port comes up and its address is usable again. */
	usleep(500 * 1000);
}

/* What removal may answer a remote call with. */
static bool named(uint32_t reason)
{
	switch (reason) {
	case KVREG_REASON_DEVICE_REMOVED:
	case KVREG_REASON_CONN_LOST:
	case KVREG_REASON_CONN_TIMEOUT:
	case KVREG_REASON_CONN_REJECTED:
	case KVREG_REASON_CONN_NO_LISTENER:
	case KVREG_REASON_NO_DEVICE:
	case KVREG_REASON_NO_RDMA_FOR_ADDRESS:
	case KVREG_REASON_ADDRESS_UNRESOLVED:
	case KVREG_REASON_ROUTE_UNRESOLVED:
	case KVREG_REASON_DEVICE_NOT_ACTIVE:
		return true;
	default:
		return false;
	}
}

struct worker {
	struct kvreg *kv;
	struct kvreg_mr *local;
	struct kvreg_remote *remote;
	struct kvt_exporter *x;
	volatile int stop, done;
	volatile int in_call;		/* inside a TRANSFER now */
	int ok, failed, ret;
	struct kvreg_error err;
	double started_at, failed_at;	/* the last call's */
};

/*
 * Synchronous 64 MiB WRITEs until one fails, or until the one in flight
 * when the removal began has returned.
 */
static void *transfers(void *p)
{
	struct worker *w = p;

	for (;;) {
		w->started_at = kvt_now();
		w->in_call = 1;
		w->ret = kvreg_transfer_remote(w->kv, KVREG_OP_WRITE, w->local,
					       0, w->remote, 0, BIG, &w->err);
		w->in_call = 0;
		if (w->ret)
			break;
		w->ok++;
		if (w->stop)
			break;
	}
	w->failed_at = kvt_now();
	w->done = 1;
	return NULL;
}

/* IMPORT and UNIMPORT until told to stop; every failure named. */
static void *imports(void *p)
{
	struct worker *w = p;
	struct kvreg_remote *r;
	struct kvreg_error err;
	int ret;

	while (!w->stop) {
		ret = kvreg_import(w->kv, w->x->desc, w->x->desc_size, 1000, &r,
				   &err);
		if (!ret) {
			w->ok++;
			CHECK_OK(kvreg_unimport(w->kv, r, &err), &err);
			continue;
		}
		w->failed++;
		if (!named(err.reason)) {
			w->ret = ret;
			w->err = err;
			break;
		}
	}
	w->done = 1;
	return NULL;
}

static void join_within(pthread_t t, struct worker *w, double bound,
			const char *what)
{
	double t0 = kvt_now();

	while (!w->done && kvt_now() - t0 < bound)
		usleep(20 * 1000);
	CHECK(w->done, "%s: no answer %.0f s after the device went", what,
	      bound);
	CHECK(!pthread_join(t, NULL), "join");
}

static void during_transfer(struct kvreg *kv)
{
	uint8_t *pool = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint8_t *mine = kvt_map_anon(BIG);
	uint32_t dev = second_device(kv);
	struct worker w = { .kv = kv };
	struct kvt_exporter *x;
	struct kvreg_error err;
	double took;
	char m[512];
	double t0;
	pthread_t t;

	CHECK(pool != MAP_FAILED, "mmap");
	x = kvt_exporter_start(kv, pool, BIG, dev, ADDR);
	CHECK_OK(kvreg_register(kv, mine, BIG, KVREG_ACCESS_ALL, 1ULL << dev,
				&w.local, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &w.remote, &err),
		 &err);
	kvt_fill(mine, BIG, 0x91);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, w.local, 0,
				       w.remote, 0, BIG, &err), &err);
	CHECK(kvt_mismatch(pool, 0, BIG, 0x91, 0) < 0, "before removal");

	CHECK(!pthread_create(&t, NULL, transfers, &w), "thread");
	usleep(300 * 1000);
	/*
	 * Inside a transfer, not between two: the debug kernel's removal
	 * once began in the 70 ms from one to the next.
	 */
	for (t0 = kvt_now(); !w.in_call; usleep(1000))
		CHECK(kvt_now() - t0 < 10, "no transfer began in 10 s");
	w.stop = 1;
	t0 = kvt_now();
	took = remove_device();
	join_within(t, &w, bound_s, "a 64 MiB TRANSFER");
	/* The race: the last transfer began before the removal, ended after. */
	CHECK(w.started_at < t0 && w.failed_at > t0, "no transfer was under "
	      "way when the removal began: the last ran %.2f to %.2f s, the "
	      "removal began at %.2f s", w.started_at, w.failed_at, t0);
	kvreg_format_error(&w.err, w.ret, m, sizeof(m));
	printf("removal during 64 MiB transfers took %.2f s; %d done, then: "
	       "%s\n", took, w.ok, w.ret ? m : "none cut");
	/*
	 * Or a work completion in error that rxe gave before kvreg was
	 * told: under KASAN it failed to allocate a packet for a device on
	 * its way out (LOC_QP_OP_ERR), and said so in the kernel log.
	 */
	CHECK(!w.ret || named(w.err.reason) ||
	      w.err.reason == KVREG_REASON_TRANSFER_FAILED,
	      "the transfer cut by removal: %s", m);
	CHECK(took < bound_s, "removal waited %.1f s", took);
	CHECK_OK(kvreg_unimport(kv, w.remote, &err), &err);
	CHECK_OK(kvreg_deregister(kv, w.local, &err), &err);
	kvt_exporter_stop(x);
	munmap(pool, BIG);
	munmap(mine, BIG);
	add_device(kv);
}

static void during_imports(struct kvreg *kv)
{
	uint8_t *pool = mmap(NULL, SZ_2M, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct worker w = { .kv = kv };
	char m[512];
	pthread_t t;

	CHECK(pool != MAP_FAILED, "mmap");
	w.x = kvt_exporter_start(kv, pool, SZ_2M, second_device(kv), ADDR);
	CHECK(!pthread_create(&t, NULL, imports, &w), "thread");
	usleep(500 * 1000);
	remove_device();
	usleep(1500 * 1000);
	w.stop = 1;
	join_within(t, &w, bound_s, "IMPORT");
	kvreg_format_error(&w.err, w.ret, m, sizeof(m));
	CHECK(!w.ret, "an IMPORT during removal: %s", m);
	CHECK(w.ok && w.failed, "%d imports, %d failed: removal came "
	      "before or after all of them", w.ok, w.failed);
	printf("IMPORT loop across removal: %d imported, %d refused, each "
	       "with a named reason\n", w.ok, w.failed);
	kvt_exporter_stop(w.x);
	munmap(pool, SZ_2M);
	add_device(kv);
}

/*
 * Why the last mend of this process's lost rail failed, once one did
 * (0 while none has): the rail is being mended.
 */
static uint32_t mend_failed(struct kvreg *kv)
{
	enum { MAX = 64 };
	struct kvreg_conn_info ci[MAX];
	struct kvreg_error err;
	unsigned int n, i;
	uint32_t reason = 0;

	CHECK_OK(kvreg_conns(kv, ci, MAX, &n, &err), &err);
	for (i = 0; i < n && i < MAX; i++)
		if (ci[i].pid == (uint32_t)getpid() &&
		    ci[i].kind == KVREG_CONN_KIND_ACTIVE &&
		    ci[i].state == KVREG_CONN_STATE_LOST && ci[i].mend_reason)
			reason = ci[i].mend_reason;
	return reason;
}

static void during_mend(struct kvreg *kv)
{
	uint8_t *pool = mmap(NULL, SZ_2M, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint8_t *mine = kvt_map_anon(SZ_2M);
	uint32_t dev = second_device(kv);
	struct kvt_exporter *x;
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_mr *local;
	uint32_t mending = 0;
	char m[512];
	double t0;
	int ret;

	CHECK(pool != MAP_FAILED, "mmap");
	x = kvt_exporter_start(kv, pool, SZ_2M, dev, ADDR);
	CHECK_OK(kvreg_register(kv, mine, SZ_2M, KVREG_ACCESS_ALL, 1ULL << dev,
				&local, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	/* Its rail is lost, and mended (in vain) every 250 ms to 4 s. */
	kvt_exporter_kill(x);
	/* The race: a mend has run and failed, and goes on, at the removal. */
	t0 = kvt_now();
	while (!(mending = mend_failed(kv)) && kvt_now() - t0 < bound_s)
		usleep(100 * 1000);
	CHECK(mending, "no mend of the lost rail had run %.0f s after its "
	      "exporter was killed", bound_s);
	remove_device();
	sleep(2);
	ret = kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0, SZ_4K,
				    &err);
	kvreg_format_error(&err, ret, m, sizeof(m));
	/*
	 * No mend can bring the rail back on a device that is gone: the
	 * answer is the removal, not a lost connection to wait out.
	 */
	CHECK(ret == -ENODEV && err.reason == KVREG_REASON_DEVICE_REMOVED &&
	      err.device_index == dev, "a transfer from a registration whose "
	      "only device was removed while its rail was being mended: %s, "
	      "want DEVICE_REMOVED of device %u", m, dev);
	printf("removal during a mend (its last try: %s), then: %s\n",
	       kvreg_strerror(mending), m);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	munmap(pool, SZ_2M);
	add_device(kv);
}

int main(int argc, char **argv)
{
	struct kvreg *kv = kvt_open();
	struct kvt_snap before;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		kvt_skip("usage: removal_remote NETDEV [BOUND_S]");
	netdev = argv[1];
	if (argc > 2)
		bound_s = atof(argv[2]);
	second_device(kv);
	test_pid = getpid();
	atexit(add_back);
	before = kvt_snap(kv);
	during_transfer(kv);
	during_imports(kv);
	during_mend(kv);
	kvt_check_unchanged(kv, &before, "after three removals");
	kvreg_close(kv);
	return T_PASS;
}
