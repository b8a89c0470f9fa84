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
 *
 * And one killed under load: an importer with its SUBMIT queue full,
 * never reaped, killed while a synchronous transfer of its waits in the
 * module (the kernel shows that thread asleep in the TRANSFER ioctl).
 * Its exporter loses the connection, pins, MRs, QPs and cm_ids go back
 * to where they were, and a new importer of the same export moves bytes,
 * checked on both sides. The kill flushes the dead importer's rail; no
 * mend may connect it again (tracepoint kvreg_rail_mend), as the
 * exporter would hold that connection, half made, until its keepalive
 * let it go.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "kvchild.h"
#include "kvexport.h"
#include "kvtrace.h"

#define BIG		(256ULL << 20)
#define TRIES		10
#define ADDR		"192.0.2.1"
#define POOL		(8 * SZ_2M)
#define LOCAL		(4 * SZ_2M)
/*
 * Small enough that the work in flight (a full queue of 128 operations
 * and one transfer) is acknowledged within the QPs' retries on a loaded
 * TCG host: with 64 KiB operations and 2 MiB transfers, 6.12's rail ran
 * out of them beside the debug guest, and its mends left the exporter
 * connections half made, which the CM drops only after a minute.
 */
#define OP_LEN		SZ_4K
#define SYNC_LEN	(256 * 1024UL)
#define NR_OPS		(2 * KVREG_SUBMIT_DEPTH)	/* one SUBMIT's */
#define KEEPALIVE	"/sys/module/kvreg/parameters/keepalive_ms"

/* Three registrations of 8 MiB, then nothing until killed. */
static void holder(void *parent)
{
	struct kvreg_error err;
	struct kvreg_mr *mr;
	struct kvreg *kv;
	int i;

	kvreg_close(parent);
	kv = kvt_open();
	for (i = 0; i < 3; i++) {
		uint8_t *p = kvt_map_anon(4 * SZ_2M);

		CHECK_OK(kvreg_register(kv, p, 4 * SZ_2M, KVREG_ACCESS_ALL, 0,
					&mr, &err), &err);
	}
	kvt_send_byte(kvt_me.ack, 'r');
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

/* What a child of this test is given. */
struct child_job {
	struct kvreg *parent;		/* the parent's file: not the child's */
	uint32_t dev;
	struct kvreg_error *rec;	/* registerer */
	struct kvt_exporter *x;		/* loader */
	struct load_marks *marks;	/* loader */
};

/*
 * Spawn @fn(@arg), which closes the parent's file in it first, and
 * return once it said 'r': it got going.
 */
static pid_t start_child(void (*fn)(void *arg), void *arg)
{
	struct kvt_child c = kvt_spawn(fn, arg, 'r');

	close(c.cmd);
	close(c.ack);
	return c.pid;
}

/*
 * Registers and deregisters BIG in a loop, its record in @rec. Each time
 * in a fresh mapping never touched: the pin faults every page in, and
 * that is most of the call, so that most kills fall where a REGISTER
 * looks for them (GUP and kvreg's pin both stop on a fatal signal).
 */
static void registerer(void *arg)
{
	const struct child_job *job = arg;
	struct kvreg_error *rec = job->rec;
	struct kvreg *kv;

	kvreg_close(job->parent);
	kv = kvt_open();
	kvt_send_byte(kvt_me.ack, 'r');
	for (;;) {
		uint8_t *p = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct kvreg_register reg = {
			.size = sizeof(reg), .error = (uintptr_t)rec,
			.error_size = sizeof(*rec), .length = BIG,
			.access = KVREG_ACCESS_ALL,
			.device_mask = 1ULL << job->dev,
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
	struct child_job job = { .parent = kv, .dev = dev, .rec = rec };
	unsigned int t, interrupted = 0, between = 0;
	struct kvt_snap before = kvt_snap(kv);
	int status;
	pid_t pid;

	CHECK(rec != MAP_FAILED, "mmap");
	for (t = 0; t < TRIES && interrupted < 3; t++) {
		pid = start_child(registerer, &job);
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

/* What a loader had going when it was killed, in memory shared with it. */
struct load_marks {
	atomic_uint submitted;	/* operations SUBMIT took, never reaped */
	atomic_bool refused;	/* SUBMIT took fewer than asked */
	atomic_uint sync_started, sync_done;
	atomic_int sync_tid;	/* the thread that makes them */
};

struct loader {
	struct kvreg *kv;
	struct kvreg_mr *local;
	struct kvreg_remote *r;
	struct load_marks *marks;
};

/* Synchronous WRITEs and READs, back to back, until killed. */
static void *sync_mover(void *arg)
{
	struct loader *l = arg;
	struct kvreg_error err;
	unsigned int i;

	atomic_store(&l->marks->sync_tid, (int)syscall(SYS_gettid));
	for (i = 0;; i++) {
		atomic_fetch_add(&l->marks->sync_started, 1);
		CHECK_OK(kvreg_transfer_remote(l->kv, i % 2 ? KVREG_OP_READ :
					       KVREG_OP_WRITE, l->local, 0,
					       l->r, SZ_2M, SYNC_LEN, &err),
			 &err);
		atomic_fetch_add(&l->marks->sync_done, 1);
	}
	return NULL;
}

/*
 * An importer of @x that keeps a synchronous transfer in flight and
 * submits twice the rail's queue at a time, so that SUBMIT takes fewer
 * than it asks however fast the operations complete (on the debug
 * kernel they completed as fast as 64 at a time were submitted, and the
 * queue filled only once 65536 unreaped completions did); says ready
 * once a synchronous transfer is done too, and goes on; it never reaps.
 */
static void loader(void *arg)
{
	const struct child_job *job = arg;
	struct load_marks *marks = job->marks;
	struct loader l = { .marks = marks };
	uint8_t *mine = kvt_map_anon(LOCAL);
	struct kvreg_op ops[NR_OPS];
	struct kvreg_error err;
	unsigned int acc, i;
	bool said = false;
	pthread_t t;
	int ret;

	kvreg_close(job->parent);
	l.kv = kvt_open();
	CHECK_OK(kvreg_register(l.kv, mine, LOCAL, KVREG_ACCESS_ALL,
				1ULL << job->dev, &l.local, &err), &err);
	CHECK_OK(kvreg_import(l.kv, job->x->desc, job->x->desc_size, 0, &l.r,
			      &err), &err);
	for (i = 0; i < NR_OPS; i++)
		kvreg_op_prep(&ops[i], i % 2 ? KVREG_OP_READ : KVREG_OP_WRITE,
			      l.local, SZ_2M + i % 32 * OP_LEN, l.r,
			      i % 32 * OP_LEN, OP_LEN, i);
	CHECK(!pthread_create(&t, NULL, sync_mover, &l), "pthread_create");
	for (;;) {
		acc = 0;
		ret = kvreg_submit(l.kv, ops, NR_OPS, &acc, &err);
		CHECK(!ret || ret == -EDQUOT || ret == -EAGAIN,
		      "SUBMIT under load: %d reason %u", ret, err.reason);
		atomic_fetch_add(&marks->submitted, acc);
		if (ret || acc < NR_OPS)
			atomic_store(&marks->refused, true);
		if (!said && atomic_load(&marks->refused) &&
		    atomic_load(&marks->sync_done) > 0) {
			kvt_send_byte(kvt_me.ack, 'r');
			said = true;
		}
		if (ret || acc < NR_OPS)
			usleep(1000);
	}
}

/*
 * Until thread @tid of @pid is asleep inside a TRANSFER, as the kernel
 * says of it (/proc/PID/task/TID/syscall names the call a blocked thread
 * is in, and "running" for one that is not blocked): a kill then falls
 * while the module waits for the transfer's completions, not between two
 * calls. Returns how many looks that took.
 */
static unsigned int wait_inside_transfer(pid_t pid, int tid)
{
	unsigned long long nr, fd, cmd;
	unsigned int looks = 0;
	char path[64], line[256];
	double t0 = kvt_now();

	CHECK(tid > 0, "the loader's transfer thread did not say who it is");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, tid);
	while (kvt_now() - t0 < 10.0) {
		FILE *f = fopen(path, "r");

		CHECK(f, "%s: %s", path, strerror(errno));
		looks++;
		if (fgets(line, sizeof(line), f) &&
		    sscanf(line, "%llu %llx %llx", &nr, &fd, &cmd) == 3 &&
		    nr == SYS_ioctl && cmd == KVREG_IOC_TRANSFER) {
			fclose(f);
			return looks;
		}
		fclose(f);
	}
	CHECK(0, "in %u looks over 10 s, the loader's thread was never seen "
	      "inside a TRANSFER", looks);
	return looks;
}

/* Attempts to mend a rail since kvtr_start(), and tracing off. */
static unsigned int count_mends(void)
{
	FILE *f = kvtr_open();
	struct kvtr_event ev;
	unsigned int n = 0;

	while (kvtr_next(f, &ev))
		n += !strcmp(ev.name, "kvreg_rail_mend");
	fclose(f);
	kvtr_stop();
	return n;
}

/*
 * Kill an importer under load; the exporter, the module and a new
 * importer carry on as if it had closed its file.
 */
static void kill_under_load(struct kvreg *kv, uint32_t dev)
{
	struct load_marks *marks = kvt_map_shared(sizeof(*marks));
	uint8_t *pool = kvt_map_shared(POOL), *mine = kvt_map_anon(SZ_2M);
	struct kvt_exporter *x = kvt_exporter_start(kv, pool, POOL, dev, ADDR);
	long qps = kvt_rdma_res("qp"), ids = kvt_rdma_res("cm_id");
	struct kvt_snap before = kvt_snap(kv);
	unsigned int in_flight, submitted, looks, mends;
	double t0, bound_s;
	struct kvreg_error err;
	struct kvreg_remote *r;
	struct child_job job = {
		.parent = kv, .dev = dev, .x = x, .marks = marks,
	};
	struct kvreg_mr *local;
	int status;
	pid_t pid;

	pid = start_child(loader, &job);
	CHECK(kvt_passive_of(kv, x->pid) == 1, "the exporter holds %u "
	      "connections, not the loader's one", kvt_passive_of(kv, x->pid));
	looks = wait_inside_transfer(pid, atomic_load(&marks->sync_tid));
	kvtr_start("kvreg_rail_mend");
	CHECK(!kill(pid, SIGKILL), "kill");
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	      WTERMSIG(status) == SIGKILL, "the loader ended other than by "
	      "the kill: %#x", status);
	/* Read once it is dead: what the loader had going when it died. */
	in_flight = atomic_load(&marks->sync_started) -
		    atomic_load(&marks->sync_done);
	submitted = atomic_load(&marks->submitted);
	CHECK(in_flight == 1 && submitted > 0 && atomic_load(&marks->refused),
	      "not under load at the kill: %u synchronous in flight, %u "
	      "submitted, SUBMIT %s", in_flight, submitted,
	      atomic_load(&marks->refused) ? "full" : "never full");

	/*
	 * Its DREQ lets the exporter go at once; if that was lost, the
	 * exporter's keepalive does, after three of its periods.
	 */
	bound_s = 3 * kvt_read_param(KEEPALIVE) / 1000.0 + 10.0;
	t0 = kvt_now();
	while (kvt_now() - t0 < bound_s && (kvt_passive_of(kv, x->pid) ||
					    kvt_rdma_res("qp") > qps ||
					    kvt_rdma_res("cm_id") > ids))
		usleep(10000);
	t0 = kvt_now() - t0;
	mends = count_mends();
	CHECK(!kvt_passive_of(kv, x->pid), "the exporter still holds the "
	      "dead importer's connection after %.1f s", t0);
	CHECK(!mends, "the killed importer's rail was mended %u times: a "
	      "connection no one would use (let go after %.2f s)", mends, t0);
	CHECK(kvt_rdma_res("qp") <= qps && kvt_rdma_res("cm_id") <= ids,
	      "QPs %ld (%ld before), cm_ids %ld (%ld before)",
	      kvt_rdma_res("qp"), qps, kvt_rdma_res("cm_id"), ids);
	wait_released(kv, &before);
	kvt_check_unchanged(kv, &before, "after an importer under load was "
			    "killed");

	/* The export still serves: bytes both ways, checked both sides. */
	CHECK_OK(kvreg_register(kv, mine, SZ_2M, KVREG_ACCESS_ALL, 1ULL << dev,
				&local, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	kvt_fill(mine, SZ_2M, 0x6B);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r,
				       3 * SZ_2M, SZ_2M, &err), &err);
	CHECK(kvt_mismatch(pool, 3 * SZ_2M, SZ_2M, 0x6B, 0) < 0,
	      "a WRITE after the kill did not land");
	kvt_fill(pool + 5 * SZ_2M, SZ_2M, 0x7C);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, 0, r,
				       5 * SZ_2M, SZ_2M, &err), &err);
	CHECK(kvt_mismatch(mine, 0, SZ_2M, 0x7C, 0) < 0,
	      "a READ after the kill brought other bytes");
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvt_exporter_stop(x);
	printf("an importer killed with a synchronous transfer in flight and "
	       "%u operations submitted, SUBMIT full: its connection gone in "
	       "%.2f s, nothing left; the export still moves bytes (seen "
	       "asleep in the TRANSFER after %u looks)\n", submitted, t0,
	       looks);
	munmap(pool, POOL);
	munmap(mine, SZ_2M);
	munmap(marks, sizeof(*marks));
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvt_snap before;
	struct kvreg_stats during, after;
	int status;
	pid_t pid;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	before = kvt_snap(kv);
	pid = start_child(holder, kv);
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
	kill_under_load(kv, devs[0].index);
	kvreg_close(kv);
	return T_PASS;
}
