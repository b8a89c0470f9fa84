// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A file closed, or its process killed, with operations in flight on a
 * region it already UNIMPORTed. Those operations hold the region and its
 * rails, but the region is no longer the file's: release must end their
 * work all the same (it aborts every rail group of the file), not wait
 * for the peer to finish it, however slowly the peer answers.
 *
 * The proof is in the events: kvreg_release_abort says how many were
 * still in flight when release began, and kvreg_op_done how each ended.
 * Of those, some end flushed at the close or the kill, instead of all
 * completing, and the pins are back once it returns. Before release
 * aborted rail groups of unimported regions, every one completed.
 *
 * The closed case closes the file right after UNIMPORT. The killed case
 * cannot time its release: a dying process tears its memory down first,
 * and on the debug kernel rxe's loopback in softirq can starve it until
 * every READ has completed. When release found nothing in flight, the
 * race this test is about did not happen; the case is run again.
 */
#include <signal.h>

#include "kvexport.h"
#include "kvtrace.h"

#define POOL		(4 * SZ_2M)
#define OP_LEN		(256 * 1024)
#define OPS		KVREG_SUBMIT_DEPTH
#define ADDR		"192.0.2.1"

#define TRIES		5

/* Submit READs of the whole pool, again and again; drop the region. */
static void submitter(struct kvt_exporter *x, uint32_t dev, int ready,
		      bool close_it)
{
	static struct kvreg_op ops[OPS];
	uint8_t *mine = kvt_map_anon(POOL);
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *local;
	unsigned int acc, i;

	CHECK_OK(kvreg_register(kv, mine, POOL, KVREG_ACCESS_ALL, 1ULL << dev,
				&local, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	for (i = 0; i < OPS; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_READ, local,
			      (i * OP_LEN) % POOL, r, (i * OP_LEN) % POOL,
			      OP_LEN, i);
	CHECK_OK(kvreg_submit(kv, ops, OPS, &acc, &err), &err);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	/* Unreaped, with the region gone: release has them all. */
	if (close_it)
		kvreg_close(kv);
	printf("%u operations of %u KiB in flight on an unimported region\n",
	       acc, OP_LEN / 1024);
	fflush(stdout);
	CHECK(write(ready, &acc, sizeof(acc)) == sizeof(acc), "ready");
}

/*
 * How the unimported region's operations ended: flushed, completed; and
 * how many release found in flight (0: it found none and aborted none).
 */
static void count_ends(unsigned int *at_release, unsigned int *flushed,
		       unsigned int *completed)
{
	struct kvtr_event ev;
	FILE *f;

	kvtr_stop();
	f = kvtr_open();
	*at_release = *flushed = *completed = 0;
	while (kvtr_next(f, &ev)) {
		if (!strcmp(ev.name, "kvreg_release_abort")) {
			*at_release = kvtr_arg(ev.args, "count", 0);
			continue;
		}
		if (strcmp(ev.name, "kvreg_op_done"))
			continue;
		if (kvtr_arg(ev.args, "wc_status", 0) ||
		    strstr(ev.args, "ret=-"))
			(*flushed)++;
		else
			(*completed)++;
	}
	fclose(f);
}

/* One try; false when release found nothing left in flight. */
static bool one_try(struct kvt_exporter *x, uint32_t dev, bool kill_it)
{
	const char *how = kill_it ? "killed" : "closed";
	unsigned int acc = 0, at_release, flushed, completed;
	int64_t pins = kvt_kernel_pins();
	int ready[2], status;
	double t0;
	pid_t pid;

	CHECK(!pipe(ready), "pipe");
	kvtr_start("kvreg_op_done kvreg_release_abort");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		close(ready[0]);
		submitter(x, dev, ready[1], !kill_it);
		if (kill_it)
			pause();
		/* The file goes with the process: nothing is reaped. */
		_exit(T_PASS);
	}
	close(ready[1]);
	CHECK(read(ready[0], &acc, sizeof(acc)) == sizeof(acc),
	      "the submitter failed");
	t0 = kvt_now();
	if (kill_it)
		kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(kill_it ? WIFSIGNALED(status) :
	      WIFEXITED(status) && WEXITSTATUS(status) == T_PASS,
	      "the submitter ended badly: %#x", status);
	count_ends(&at_release, &flushed, &completed);
	printf("%s with %u in flight: release found %u, gone in %.2f s, %u flushed, %u completed\n",
	       how, acc, at_release, kvt_now() - t0, flushed, completed);
	CHECK(flushed + completed == acc, "%u of %u operations ended",
	      flushed + completed, acc);
	CHECK(kvt_kernel_pins() == pins, "%s: %lld pins left", how,
	      (long long)(kvt_kernel_pins() - pins));
	close(ready[0]);
	if (!at_release)
		return false;
	CHECK(flushed > 0,
	      "%s: release found %u operations of the unimported region in flight and every one ran to its end: it waited on the peer",
	      how, at_release);
	return true;
}

static void one_case(struct kvt_exporter *x, uint32_t dev, bool kill_it)
{
	int i;

	for (i = 0; i < TRIES; i++)
		if (one_try(x, dev, kill_it))
			return;
	CHECK(0, "%s: in %d tries, release never began before the operations ended: the race was not run",
	      kill_it ? "killed" : "closed", TRIES);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvt_exporter *x;
	uint8_t *pool;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	pool = mmap(NULL, POOL, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	kvt_fill(pool, POOL, 0x31);
	x = kvt_exporter_start(kv, pool, POOL, devs[0].index, ADDR);
	one_case(x, devs[0].index, false);
	one_case(x, devs[0].index, true);
	kvt_exporter_stop(x);
	kvreg_close(kv);
	return T_PASS;
}
