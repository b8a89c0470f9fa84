// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Batches to a peer without waiting: 256 KV pages in one SUBMIT, in 4 KiB,
 * 64 KiB and 2 MiB pages across MR boundaries, reaped after poll() said
 * the file is readable; every completion once, with its user_data, and the
 * bytes checked. A full queue accepts fewer and never blocks; a bad
 * operation stops the batch where it is; an operation on a peer killed
 * with SIGKILL mid-batch completes with the reason, in bounded time; a
 * file closed with work in flight frees everything. 64 pages in one call
 * go out as one chain of 64 work requests, one doorbell (kvreg's
 * kvreg_chain_post tracepoint counts them). SUBMIT finds its handles
 * without the file's lock: one thread submits while another swaps both
 * handles for new ones and drops the old, and every operation is either
 * refused as an unknown handle or completes, its bytes where they belong.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "kvexport.h"
#include "kvtrace.h"

#define LEN	(8ULL << 20)
#define ADDR	"192.0.2.1"

/* Reap until @want completions came, each once; returns them by user_data. */
static void reap_all(struct kvreg *kv, unsigned int want, bool *seen,
		     unsigned int nseen, int want_status)
{
	struct kvreg_completion comp[64];
	struct kvreg_error err;
	unsigned int got = 0, n, i;
	struct pollfd pfd = { .fd = kvreg_fd(kv), .events = POLLIN };

	while (got < want) {
		/* The file says when there is something to reap. */
		CHECK(poll(&pfd, 1, 20000) == 1 && (pfd.revents & POLLIN),
		      "poll: %u of %u completions after 20 s", got, want);
		CHECK_OK(kvreg_reap(kv, comp, 64, 0, 0, &n, &err), &err);
		for (i = 0; i < n; i++) {
			uint64_t id = comp[i].user_data;

			CHECK(id < nseen && !seen[id], "completion %llu twice "
			      "or unknown", (unsigned long long)id);
			seen[id] = true;
			if (want_status)
				CHECK(comp[i].status == want_status,
				      "op %llu: status %d, want %d",
				      (unsigned long long)id, comp[i].status,
				      want_status);
			else
				CHECK(!comp[i].status && comp[i].bytes,
				      "op %llu failed: %d reason %u",
				      (unsigned long long)id, comp[i].status,
				      comp[i].error.reason);
		}
		got += n;
	}
	CHECK_OK(kvreg_reap(kv, comp, 64, 0, 0, &n, &err), &err);
	CHECK(n == 0, "%u completions more than submitted", n);
}

/* Submit all of @ops, reaping when the queue is full. */
static void submit_all(struct kvreg *kv, struct kvreg_op *ops,
		       unsigned int n, bool *seen)
{
	unsigned int done = 0, acc, reaped = 0, full = 0;
	struct kvreg_completion comp[64];
	struct kvreg_error err;
	int ret;

	while (done < n) {
		ret = kvreg_submit(kv, ops + done, n - done, &acc, &err);
		if (ret == -EAGAIN) {
			/* Full for this operation: its requests do not fit. */
			CHECK(err.reason == KVREG_REASON_QUEUE_FULL &&
			      err.limit == KVREG_SUBMIT_DEPTH &&
			      err.usage <= err.limit && err.request &&
			      err.usage + err.request > err.limit,
			      "EAGAIN: reason %u, %llu of %llu slots taken, "
			      "%llu wanted", err.reason,
			      (unsigned long long)err.usage,
			      (unsigned long long)err.limit,
			      (unsigned long long)err.request);
			full++;
		} else {
			CHECK_OK(ret, &err);
		}
		/* What one call accepts is posted as it ends: never more. */
		CHECK(acc <= KVREG_SUBMIT_DEPTH, "one SUBMIT took %u, the "
		      "queue holds %d", acc, KVREG_SUBMIT_DEPTH);
		if (acc < n - done)
			full++;
		done += acc;
		if (done < n) {
			unsigned int got, i;

			CHECK_OK(kvreg_reap(kv, comp, 64, 1, 10000, &got, &err),
				 &err);
			for (i = 0; i < got; i++) {
				CHECK(!comp[i].status, "op failed: %d",
				      comp[i].status);
				seen[comp[i].user_data] = true;
			}
			reaped += got;
		}
	}
	reap_all(kv, n - reaped, seen, n, 0);
	if (full)
		printf("    the queue was full %u time(s) on the way\n", full);
}

static void batch(struct kvreg *kv, struct kvreg_mr *local, uint8_t *mine,
		  struct kvreg_remote *r, uint8_t *pool, uint64_t page,
		  unsigned int count, uint64_t skew)
{
	struct kvreg_op *ops = calloc(count, sizeof(*ops));
	bool *seen = calloc(count, sizeof(*seen));
	unsigned int i;
	double t;

	CHECK(ops && seen, "calloc");
	CHECK(count * page + skew <= LEN, "batch too large");
	kvt_fill(mine, LEN, (uint32_t)page);
	memset(pool, 0, LEN);
	/* Pages at odd offsets: pieces cross both sides' MR boundaries. */
	for (i = 0; i < count; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_WRITE, local, skew + i * page,
			      r, skew + i * page, page, i);
	t = kvt_now();
	submit_all(kv, ops, count, seen);
	t = kvt_now() - t;
	CHECK(kvt_mismatch(pool, skew, count * page, (uint32_t)page, skew) < 0,
	      "batched WRITE of %u x %llu: pool differs at %lld", count,
	      (unsigned long long)page,
	      (long long)kvt_mismatch(pool, skew, count * page,
				      (uint32_t)page, skew));
	CHECK(!pool[skew - 1] && !pool[skew + count * page],
	      "batched WRITE overran");
	printf("WRITE %u x %llu bytes in batches: %.0f pages/s\n", count,
	       (unsigned long long)page, count / t);

	memset(seen, 0, count * sizeof(*seen));
	kvt_fill(pool, LEN, (uint32_t)page + 1);
	memset(mine, 0, LEN);
	for (i = 0; i < count; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_READ, local, skew + i * page,
			      r, skew + i * page, page, i);
	submit_all(kv, ops, count, seen);
	CHECK(kvt_mismatch(mine, skew, count * page, (uint32_t)page + 1,
			   skew) < 0, "batched READ differs");
	free(seen);
	free(ops);
}

/*
 * One SUBMIT of 64 pages on an idle queue: one doorbell carrying all 64
 * work requests, and every byte where it belongs.
 */
static void one_doorbell(struct kvreg *kv, struct kvreg_mr *local,
			 uint8_t *mine, struct kvreg_remote *r, uint8_t *pool)
{
	unsigned int acc, doorbells = 0, wrs = 0, i;
	struct kvreg_op ops[64];
	struct kvtr_event ev;
	struct kvreg_error err;
	bool seen[64] = { 0 };
	FILE *f;

	kvt_fill(mine, LEN, 0x64);
	memset(pool, 0, LEN);
	for (i = 0; i < 64; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_WRITE, local, i * SZ_4K, r,
			      i * SZ_4K, SZ_4K, i);
	kvtr_start("kvreg_chain_post");
	CHECK_OK(kvreg_submit(kv, ops, 64, &acc, &err), &err);
	CHECK(acc == 64, "an idle queue took %u of 64", acc);
	reap_all(kv, 64, seen, 64, 0);
	kvtr_stop();
	f = kvtr_open();
	while (kvtr_next(f, &ev)) {
		if (strcmp(ev.name, "kvreg_chain_post"))
			continue;
		CHECK(kvtr_arg(ev.args, "ret", 1) == 0, "a post failed: %s",
		      ev.args);
		doorbells++;
		wrs += kvtr_arg(ev.args, "wrs", 0);
	}
	fclose(f);
	CHECK(doorbells == 1 && wrs == 64,
	      "64 pages in one SUBMIT: %u doorbells for %u work requests",
	      doorbells, wrs);
	CHECK(kvt_mismatch(pool, 0, 64 * SZ_4K, 0x64, 0) < 0,
	      "the chained WRITEs differ at %lld",
	      (long long)kvt_mismatch(pool, 0, 64 * SZ_4K, 0x64, 0));
	printf("64 pages in one SUBMIT: one doorbell, 64 work requests, "
	       "every byte checked\n");
}

#define SWAP_PAGES	16
#define SWAPS		60

struct swap_race {
	struct kvreg *kv;
	_Atomic uint64_t local, remote;
	atomic_uint submits;
	atomic_bool done;
	unsigned int accepted, refused, completed;
};

/* Submits what the handles name now, and reaps; until the swapper ends. */
static void *swap_submitter(void *arg)
{
	struct swap_race *sr = arg;
	struct kvreg_completion comp[SWAP_PAGES];
	struct kvreg_op ops[SWAP_PAGES] = { 0 };
	unsigned int inflight = 0, acc, n, i;
	struct kvreg_error err;
	bool wait;
	int ret;

	while (!atomic_load(&sr->done) || inflight) {
		wait = atomic_load(&sr->done) ||
		       inflight + SWAP_PAGES > KVREG_SUBMIT_DEPTH;
		if (!wait) {
			uint64_t l = atomic_load(&sr->local);
			uint64_t r = atomic_load(&sr->remote);

			for (i = 0; i < SWAP_PAGES; i++)
				ops[i] = (struct kvreg_op){
					.opcode = KVREG_OP_WRITE,
					.local_handle = l,
					.local_offset = i * SZ_4K,
					.remote = r,
					.remote_offset = i * SZ_4K,
					.length = SZ_4K,
					.user_data = i,
				};
			ret = kvreg_submit(sr->kv, ops, SWAP_PAGES, &acc, &err);
			if (ret) {
				CHECK(ret == -ENOENT && err.reason ==
				      KVREG_REASON_UNKNOWN_HANDLE &&
				      err.argument == KVREG_ARG_HANDLE,
				      "SUBMIT beside a swap: %d reason %u",
				      ret, err.reason);
				sr->refused++;
			}
			inflight += acc;
			sr->accepted += acc;
			atomic_fetch_add(&sr->submits, 1);
		}
		if (!inflight)
			continue;
		CHECK_OK(kvreg_reap(sr->kv, comp, SWAP_PAGES, wait, 10000, &n,
				    &err), &err);
		CHECK(n || !wait, "nothing completed within 10 s");
		for (i = 0; i < n; i++)
			CHECK(!comp[i].status, "an operation whose handle was "
			      "dropped meanwhile failed: %d reason %u",
			      comp[i].status, comp[i].error.reason);
		inflight -= n;
		sr->completed += n;
	}
	return NULL;
}

/* Until the submitter has made two more SUBMITs: the swaps meet them. */
static void swap_wait_submits(struct swap_race *sr, unsigned int since)
{
	double t0 = kvt_now();

	while (atomic_load(&sr->submits) < since + 2) {
		CHECK(kvt_now() - t0 < 10, "no SUBMIT within 10 s");
		usleep(100);
	}
}

/*
 * New handles for the same memory and the same region, then the old ones
 * dropped: the connection stays, as the new region shares it. Lengths
 * alternate, so each REGISTER is a registration of its own, not one more
 * reference to the last.
 */
static void lookup_races(struct kvreg *kv, struct kvt_exporter *x,
			 uint8_t *mine, uint8_t *pool, int dev)
{
	struct swap_race sr = { .kv = kv };
	struct kvreg_remote *r, *r_old;
	struct kvreg_mr *l, *l_old;
	struct kvreg_error err;
	pthread_t thread;
	unsigned int i;

	kvt_fill(mine, SWAP_PAGES * SZ_4K, 0x5a);
	memset(pool, 0, SWAP_PAGES * SZ_4K);
	CHECK_OK(kvreg_register_flags(kv, mine, SWAP_PAGES * SZ_4K,
				      KVREG_ACCESS_ALL, 1ULL << dev,
				      KVREG_REG_F_ALLOW_OVERLAP, &l, &err),
		 &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	atomic_store(&sr.local, kvreg_mr_handle(l));
	atomic_store(&sr.remote, kvreg_remote_handle(r));
	CHECK(!pthread_create(&thread, NULL, swap_submitter, &sr),
	      "pthread_create");
	for (i = 0; i < SWAPS; i++) {
		swap_wait_submits(&sr, atomic_load(&sr.submits));
		l_old = l;
		r_old = r;
		CHECK_OK(kvreg_register_flags(kv, mine,
					      SWAP_PAGES * SZ_4K + !(i & 1),
					      KVREG_ACCESS_ALL, 1ULL << dev,
					      KVREG_REG_F_ALLOW_OVERLAP, &l,
					      &err), &err);
		CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err),
			 &err);
		atomic_store(&sr.local, kvreg_mr_handle(l));
		atomic_store(&sr.remote, kvreg_remote_handle(r));
		CHECK_OK(kvreg_unimport(kv, r_old, &err), &err);
		CHECK_OK(kvreg_deregister(kv, l_old, &err), &err);
	}
	atomic_store(&sr.done, true);
	CHECK(!pthread_join(thread, NULL), "pthread_join");
	CHECK(sr.accepted && sr.completed == sr.accepted,
	      "%u accepted, %u completed", sr.accepted, sr.completed);
	CHECK(kvt_mismatch(pool, 0, SZ_4K, 0x5a, 0) < 0,
	      "the first page differs at %lld",
	      (long long)kvt_mismatch(pool, 0, SZ_4K, 0x5a, 0));
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, l, &err), &err);
	printf("%u handle swaps beside %u SUBMITs: %u operations completed, "
	       "%u SUBMITs refused as unknown handles\n", SWAPS,
	       atomic_load(&sr.submits), sr.completed, sr.refused);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open(), *kv2;
	struct kvreg_completion comp[4];
	struct kvt_exporter *x;
	int status;
	struct kvreg_op ops[300];
	struct kvreg_remote *r, *r2;
	struct kvreg_mr *local, *l2;
	struct kvt_snap before;
	struct kvreg_error err;
	unsigned int acc, n, i;
	uint8_t *pool, *mine;
	double t0;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	if (!kvreg_has_feature(kv, KVREG_FEATURE_SUBMIT))
		kvt_skip("module without KVREG_FEATURE_SUBMIT");
	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	mine = kvt_map_anon_scattered(LEN);
	before = kvt_snap(kv);
	x = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);

	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &local, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	batch(kv, local, mine, r, pool, SZ_4K, 256, 3);
	batch(kv, local, mine, r, pool, 64 * 1024, 64, SZ_4K + 5);
	batch(kv, local, mine, r, pool, SZ_2M, 3, 1);
	one_doorbell(kv, local, mine, r, pool);
	lookup_races(kv, x, mine, pool, devs[0].index);

	/*
	 * More than the queue holds, in one call: as many accepted as had
	 * room as the call went (completions free slots meanwhile), and no
	 * wait for the rest.
	 */
	for (i = 0; i < 300; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_WRITE, local, i * SZ_4K, r,
			      i * SZ_4K, SZ_4K, i);
	CHECK_OK(kvreg_submit(kv, ops, 300, &acc, &err), &err);
	/*
	 * An idle queue and one call: exactly the depth is accepted, since
	 * nothing the call accepted goes out (or completes) before it ends.
	 */
	CHECK(acc == KVREG_SUBMIT_DEPTH, "an idle queue of %d took %u of 300 "
	      "in one call", KVREG_SUBMIT_DEPTH, acc);
	/* At once again: what is still in flight leaves no more room. */
	{
		bool *seen = calloc(600, sizeof(*seen));
		unsigned int acc2;
		int ret = kvreg_submit(kv, ops + acc, 300 - acc, &acc2, &err);

		if (ret) {
			CHECK(ret == -EAGAIN &&
			      err.reason == KVREG_REASON_QUEUE_FULL &&
			      err.limit == KVREG_SUBMIT_DEPTH && !acc2,
			      "a full queue: %d reason %u limit %llu", ret,
			      err.reason, (unsigned long long)err.limit);
			printf("    then a full queue: refused, QUEUE_FULL\n");
		} else {
			CHECK(acc2 <= KVREG_SUBMIT_DEPTH, "took %u more", acc2);
		}
		printf("300 operations, a queue of %d: %u accepted in one "
		       "call, %u in the next\n", KVREG_SUBMIT_DEPTH, acc, acc2);
		reap_all(kv, acc + acc2, seen, 300, 0);
		free(seen);
	}

	/* A bad operation stops the batch there: two taken, then refused. */
	kvreg_op_prep(&ops[2], KVREG_OP_WRITE, local, 0, r, LEN - 1, 2, 2);
	CHECK_OK(kvreg_submit(kv, ops, 3, &acc, &err), &err);
	CHECK(acc == 2, "accepted %u, want 2", acc);
	CHECK_FAILS(kvreg_submit(kv, ops + 2, 1, &acc, &err), &err, ERANGE,
		    KVREG_REASON_OUT_OF_RANGE);
	CHECK(acc == 0 && err.argument == KVREG_ARG_REMOTE_OFFSET, "side %u",
	      err.argument);
	CHECK_OK(kvreg_reap(kv, comp, 4, 2, 10000, &n, &err), &err);
	CHECK(n == 2 && !comp[0].status && !comp[1].status, "%u reaped", n);

	/*
	 * Closed with work in flight, in a child so the library's handles
	 * need no freeing: the kernel frees everything, nothing is reaped.
	 */
	{
		pid_t child = fork();

		CHECK(child >= 0, "fork");
		if (!child) {
			kvreg_close(kv);
			kv2 = kvt_open();
			CHECK_OK(kvreg_register(kv2, mine, LEN, KVREG_ACCESS_ALL,
						1ULL << devs[0].index, &l2,
						&err), &err);
			CHECK_OK(kvreg_import(kv2, x->desc, x->desc_size, 0,
					      &r2, &err), &err);
			for (i = 0; i < 64; i++)
				kvreg_op_prep(&ops[i], KVREG_OP_READ, l2,
					      i * SZ_4K, r2, i * SZ_4K, SZ_4K,
					      i);
			CHECK_OK(kvreg_submit(kv2, ops, 64, &acc, &err), &err);
			kvreg_close(kv2);
			printf("a file closed with %u operations in flight\n",
			       acc);
			fflush(stdout);
			_exit(T_PASS);
		}
		CHECK(waitpid(child, &status, 0) == child &&
		      WIFEXITED(status) && WEXITSTATUS(status) == T_PASS,
		      "the closing child failed");
	}

	/* The peer killed mid-batch: each completes with the reason. */
	/* 64 KiB each: long enough in flight for the kill to land. */
	for (i = 0; i < 128; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_READ, local, i * 65536ULL, r,
			      i * 65536ULL, 65536, i);
	CHECK_OK(kvreg_submit(kv, ops, 128, &acc, &err), &err);
	kvt_exporter_kill(x);
	t0 = kvt_now();
	{
		struct kvreg_completion big[128];
		unsigned int got = 0, lost = 0;

		while (got < acc) {
			CHECK_OK(kvreg_reap(kv, big, 128, 1, 15000, &n, &err),
				 &err);
			CHECK(n, "no completion within 15 s of the kill");
			for (i = 0; i < n; i++)
				if (big[i].status) {
					CHECK(big[i].status == -ENOTCONN &&
					      big[i].error.reason ==
					      KVREG_REASON_CONN_LOST,
					      "status %d reason %u",
					      big[i].status,
					      big[i].error.reason);
					lost++;
				}
			got += n;
		}
		printf("peer killed with %u in flight: all completed in "
		       "%.1f s, %u with 'connection to the peer lost'\n", acc,
		       kvt_now() - t0, lost);
		CHECK(kvt_now() - t0 <= 10.5, "took %.1f s", kvt_now() - t0);
	}
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvt_check_unchanged(kv, &before, "after the batches");
	kvreg_close(kv);
	return T_PASS;
}
