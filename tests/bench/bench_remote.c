// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The remote data path between two guests, for make bench: the exporter
 * registers a pool (hugetlb when there are pages for it) on both of its
 * devices, listens on an address of each and writes the descriptor; the
 * importer measures, against the perftest runs that
 * tests/bench/pair-bench-side.sh makes between the same guests with the
 * same queue depth (DEPTH, perftest's -t) and message count (msgs_for(),
 * its -n). Each case runs three times; the median goes out:
 *   REMOTE-BW kvreg OP SIZE MB/s         SUBMIT, DEPTH in flight, refilled
 *   REMOTE-CPU kvreg OP SIZE s/GiB       busy CPU of this guest per GiB
 *   REMOTE-RATE kvreg stream|BATCH pages/s  4 KiB pages: refilled to
 *                                        DEPTH, or BATCH per SUBMIT, all
 *                                        reaped before the next
 *   REMOTE-LAT kvreg|kvreg-sync read 4096 us  one 4 KiB READ (a round
 *                                        trip, as ib_read_lat's): SUBMIT +
 *                                        REAP, and kvreg_transfer_remote()
 *   REMOTE-RAILS 1|2 write SIZE MB/s     one rail (device mask) or both
 *   REMOTE-CPU-TARGET kvreg s/GiB        the exporter's busy CPU over the
 *                                        REMOTE-BW cases, per GiB
 *   REMOTE-STAGE stream|64 STAGE us      where a 4 KiB WRITE's time goes,
 *                                        from kvreg's tracepoints: mean
 *                                        per operation of each stage
 * Every transfer's bytes are checked once, at the end, by READ.
 *   bench_remote export DIR
 *   bench_remote import DIR
 */
#include <arpa/inet.h>

#include "kvbench.h"
#include "kvpair.h"
#include "kvtrace.h"

#define POOL	(64ULL << 20)
#define DEPTH	KVREG_SUBMIT_DEPTH	/* = perftest's -t in the same run */
#define MSGS	5000			/* = perftest's -n: its default */
/*
 * Above 64 KiB perftest's default count would move 10 and 40 GB per run
 * over links that carry tens of MB/s: 256 MiB per run there, on both
 * sides (pair-bench-side.sh computes the same).
 */
#define BIG_BYTES	(256ULL << 20)

static unsigned int msgs_for(uint64_t len)
{
	return len <= 65536 ? MSGS : BIG_BYTES / len;
}
#define REPS	3
#define LAT_N	1000			/* = ib_read_lat's default -n */

static const char *const addrs[2] = { "192.0.2.1", "198.51.100.1" };

static uint8_t *map_pool(bool *huge)
{
	uint8_t *p = kvt_map_hugetlb(POOL);

	*huge = p != NULL;
	return p ? p : kvt_map_anon(POOL);
}

static int exporter(const char *dir)
{
	struct kvreg *kv = kvt_open();
	uint8_t desc[65536], b[16];
	struct kvreg_error err;
	double cpu0, cpu;
	char line[64];
	struct kvreg_mr *mr;
	uint8_t *pool;
	uint64_t ep;
	bool huge;
	size_t n;

	pool = map_pool(&huge);
	kvt_fill(pool, POOL, 0x31);
	CHECK_OK(kvreg_register(kv, pool, POOL, KVREG_ACCESS_ALL, 0, &mr, &err),
		 &err);
	CHECK_OK(kvreg_listen(kv, addrs[0], 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_listen_add(kv, ep, addrs[1], 0, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &n, &err), &err);
	put_file(dir, "bench-desc", desc, n);
	printf("exporter: %s pool of %llu MiB on both devices\n",
	       huge ? "hugetlb" : "4 KiB", (unsigned long long)(POOL >> 20));
	/* This guest's CPU over the importer's throughput cases. */
	get_file_within(dir, "cpu-begin", b, sizeof(b), 600);
	cpu0 = kvb_busy_s();
	get_file_within(dir, "cpu-end", b, sizeof(b), 3600);
	cpu = kvb_busy_s() - cpu0;
	snprintf(line, sizeof(line), "%.6f", cpu);
	put_file(dir, "cpu-target", line, strlen(line));
	get_file_within(dir, "bench-done", b, sizeof(b), 3600);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}

/*
 * @count operations of @len bytes, at most @depth in flight, @batch per
 * SUBMIT; @whole: each batch reaped whole before the next (as a cache's
 * batch_set waits), else the queue kept full. Offsets cycle through the
 * pool. Seconds taken.
 */
static double run_ops(struct kvreg *kv, struct kvreg_mr *local,
		      struct kvreg_remote *r, enum kvreg_transfer_op opc,
		      uint64_t len, unsigned int count, unsigned int batch,
		      unsigned int depth, bool whole)
{
	struct kvreg_completion comp[256];
	struct kvreg_op ops[256];
	struct kvreg_error err;
	unsigned int sent = 0, done = 0, inflight = 0, i, acc, got;
	uint64_t slots = POOL / len;
	double t0 = kvb_now_us();

	while (done < count) {
		unsigned int want = count - sent;

		if (want > batch)
			want = batch;
		if (inflight + want > depth)
			want = inflight < depth ? depth - inflight : 0;
		for (i = 0; i < want; i++) {
			uint64_t off = ((sent + i) % slots) * len;

			kvreg_op_prep(&ops[i], opc, local, off, r, off, len,
				      sent + i);
		}
		if (want) {
			int ret = kvreg_submit(kv, ops, want, &acc, &err);

			CHECK(!ret || ret == -EAGAIN, "submit: %d reason %u",
			      ret, err.reason);
			sent += acc;
			inflight += acc;
		}
		CHECK_OK(kvreg_reap(kv, comp, 256, whole ? inflight : 1,
				    30000, &got, &err), &err);
		CHECK(got, "no completion in 30 s");
		for (i = 0; i < got; i++)
			CHECK(!comp[i].status, "op %llu: %d",
			      (unsigned long long)comp[i].user_data,
			      comp[i].status);
		done += got;
		inflight -= got;
	}
	return (kvb_now_us() - t0) / 1e6;
}

struct result {
	double mbps;		/* median of REPS */
	double cpu_s_per_gib;	/* this guest's, median of REPS */
};

/* @count operations of @len, DEPTH in flight, REPS times. */
static struct result stream(struct kvreg *kv, struct kvreg_mr *local,
			    struct kvreg_remote *r, enum kvreg_transfer_op opc,
			    uint64_t len, unsigned int count)
{
	double mbps[REPS], cpu[REPS], gib = (double)count * len / (1 << 30);
	struct result res;
	int i;

	for (i = 0; i < REPS; i++) {
		double c0 = kvb_busy_s();
		double s = run_ops(kv, local, r, opc, len, count, DEPTH, DEPTH,
				   false);

		cpu[i] = (kvb_busy_s() - c0) / gib;
		mbps[i] = (double)count * len / s / 1e6;
	}
	res.mbps = kvb_median(mbps, REPS);
	res.cpu_s_per_gib = kvb_median(cpu, REPS);
	return res;
}

/* 4 KiB pages per second, median of REPS: @batch 0 streams. */
static double page_rate(struct kvreg *kv, struct kvreg_mr *local,
			struct kvreg_remote *r, unsigned int batch)
{
	double v[REPS];
	int i;

	for (i = 0; i < REPS; i++)
		v[i] = MSGS / run_ops(kv, local, r, KVREG_OP_WRITE, SZ_4K,
				      MSGS, batch ? batch : DEPTH,
				      batch ? batch : DEPTH, batch != 0);
	return kvb_median(v, REPS);
}

static double lat_submit(struct kvreg *kv, struct kvreg_mr *local,
			 struct kvreg_remote *r)
{
	static double v[LAT_N];
	int i;

	for (i = 0; i < LAT_N; i++) {
		double t0 = kvb_now_us();

		run_ops(kv, local, r, KVREG_OP_READ, SZ_4K, 1, 1, 1, true);
		v[i] = kvb_now_us() - t0;
	}
	return kvb_median(v, LAT_N);
}

static double lat_sync(struct kvreg *kv, struct kvreg_mr *local,
		       struct kvreg_remote *r)
{
	static double v[LAT_N];
	struct kvreg_error err;
	int i;

	for (i = 0; i < LAT_N; i++) {
		double t0 = kvb_now_us();

		CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, 0, r,
					       0, SZ_4K, &err), &err);
		v[i] = kvb_now_us() - t0;
	}
	return kvb_median(v, LAT_N);
}

/*
 * Where the time of @count 4 KiB WRITEs goes (@batch 0 streams), from
 * kvreg's tracepoints: within SUBMIT, each step of each operation, then
 * the posting; from the doorbell to the completion's softirq (the wire
 * and both devices); from there to the REAP that returned it. Means per
 * operation, in microseconds; "wrs_per_doorbell" is a count.
 */
static void profile(struct kvreg *kv, struct kvreg_mr *local,
		    struct kvreg_remote *r, unsigned int batch,
		    unsigned int count)
{
	enum { RESOLVE, RAILS, RESERVE, POST, WIRE, REAP, NR };
	static const char *const names[NR] = {
		"submit_resolve", "submit_rails", "submit_reserve",
		"submit_post", "post_to_completion", "completion_to_reap",
	};
	double *posted = calloc(count, sizeof(double));
	double *done_at = calloc(count, sizeof(double));
	unsigned long long *fifo = calloc(count, sizeof(*fifo));
	unsigned long long *pending = calloc(count, sizeof(*pending));
	unsigned int head = 0, tail = 0, npend = 0, i, doorbells = 0;
	double sum[NR] = { 0 }, last = 0, wall, wrs = 0;
	const char *label = batch ? "64" : "stream";
	struct kvtr_event ev;
	FILE *f;

	CHECK(posted && done_at && fifo && pending, "profile: no memory");
	kvtr_start("kvreg_submit kvreg_op_step kvreg_chain_post "
		   "kvreg_submit_done kvreg_op_done kvreg_reap_done");
	wall = run_ops(kv, local, r, KVREG_OP_WRITE, SZ_4K, count,
		       batch ? batch : DEPTH, batch ? batch : DEPTH,
		       batch != 0);
	f = kvtr_open();
	while (kvtr_next(f, &ev)) {
		unsigned long long ud = kvtr_arg(ev.args, "user_data", ~0ULL);

		if (!strcmp(ev.name, "kvreg_submit")) {
			last = ev.us;
		} else if (!strcmp(ev.name, "kvreg_op_step") && ud < count) {
			int step = strstr(ev.args, "step=resolve") ? RESOLVE :
				   strstr(ev.args, "step=rails") ? RAILS :
				   RESERVE;

			sum[step] += ev.us - last;
			last = ev.us;
			if (step == RESERVE && npend < count)
				pending[npend++] = ud;
		} else if (!strcmp(ev.name, "kvreg_chain_post")) {
			doorbells++;
			wrs += kvtr_arg(ev.args, "wrs", 0);
		} else if (!strcmp(ev.name, "kvreg_submit_done")) {
			sum[POST] += npend ? ev.us - last : 0;
			for (i = 0; i < npend; i++)
				posted[pending[i]] = ev.us;
			npend = 0;
		} else if (!strcmp(ev.name, "kvreg_op_done") && ud < count) {
			done_at[ud] = ev.us;
			if (tail < count)
				fifo[tail++] = ud;
		} else if (!strcmp(ev.name, "kvreg_reap_done")) {
			unsigned long long n = kvtr_arg(ev.args, "count", 0);

			for (; n && head < tail; n--, head++)
				sum[REAP] += ev.us - done_at[fifo[head]];
		}
	}
	fclose(f);
	kvtr_stop();
	/* A completion may come before its SUBMIT returns: none then. */
	for (i = 0; i < count; i++)
		if (done_at[i] > posted[i] && posted[i] > 0)
			sum[WIRE] += done_at[i] - posted[i];
	for (i = 0; i < NR; i++)
		printf("REMOTE-STAGE %s %s %.2f\n", label, names[i],
		       sum[i] / count);
	printf("REMOTE-STAGE %s total %.2f\n", label, wall * 1e6 / count);
	printf("REMOTE-STAGE %s wrs_per_doorbell %.1f\n", label,
	       doorbells ? wrs / doorbells : 0);
	free(posted);
	free(done_at);
	free(fifo);
	free(pending);
}

/* The index of the device named @name. */
static uint32_t device_named(struct kvreg *kv, const char *name)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	unsigned int n = kvt_devices(kv, devs), i;

	for (i = 0; i < n; i++)
		if (!strcmp(devs[i].name, name))
			return devs[i].index;
	CHECK(0, "no device %s", name);
	return 0;
}

static int importer(const char *dir)
{
	static const uint64_t sizes[] = { SZ_4K, 64 * 1024, SZ_2M, 8ULL << 20 };
	static const unsigned int batches[] = { 1, 16, 64, 256 };
	struct kvreg *kv = kvt_open();
	static uint8_t desc[65536];
	struct kvreg_remote *r, *one;
	struct kvreg_error err;
	struct kvreg_mr *local;
	unsigned int i, op;
	double gib = 0;
	char cpu[64];
	uint8_t *mine;
	bool huge;
	size_t n;

	mine = map_pool(&huge);
	kvt_fill(mine, POOL, 0x32);
	CHECK_OK(kvreg_register(kv, mine, POOL, KVREG_ACCESS_ALL, 0, &local,
				&err), &err);
	n = get_file(dir, "bench-desc", desc, sizeof(desc));
	CHECK_OK(kvreg_import(kv, desc, n, 0, &r, &err), &err);
	/* The same pool through rxe0 alone: one rail. */
	CHECK_OK(kvreg_import_devices(kv, desc, n, 0,
				      1ULL << device_named(kv, "rxe0"), &one,
				      &err), &err);
	printf("importer: %u rails, and %u with the device mask\n",
	       kvreg_remote_rails(r), kvreg_remote_rails(one));
	CHECK(kvreg_remote_rails(r) == 2 && kvreg_remote_rails(one) == 1,
	      "rails: %u and %u", kvreg_remote_rails(r),
	      kvreg_remote_rails(one));

	put_file(dir, "cpu-begin", "1", 1);
	for (op = KVREG_OP_WRITE; op <= KVREG_OP_READ; op++)
		for (i = 0; i < 4; i++) {
			unsigned int count = msgs_for(sizes[i]);
			struct result res = stream(kv, local, one, op,
						   sizes[i], count);
			const char *name = op == KVREG_OP_WRITE ? "write" :
								   "read";

			printf("REMOTE-BW kvreg %s %llu %.1f\n", name,
			       (unsigned long long)sizes[i], res.mbps);
			printf("REMOTE-CPU kvreg %s %llu %.4f\n", name,
			       (unsigned long long)sizes[i],
			       res.cpu_s_per_gib);
			gib += REPS * (double)count * sizes[i] / (1 << 30);
		}
	put_file(dir, "cpu-end", "1", 1);
	n = get_file_within(dir, "cpu-target", cpu, sizeof(cpu) - 1, 60);
	cpu[n] = 0;
	printf("REMOTE-CPU-TARGET kvreg %.4f\n", atof(cpu) / gib);
	printf("REMOTE-RATE kvreg stream %.0f\n", page_rate(kv, local, one, 0));
	for (i = 0; i < 4; i++)
		printf("REMOTE-RATE kvreg %u %.0f\n", batches[i],
		       page_rate(kv, local, one, batches[i]));
	profile(kv, local, one, 0, MSGS);
	profile(kv, local, one, 64, MSGS);
	printf("REMOTE-LAT kvreg read 4096 %.1f\n", lat_submit(kv, local, one));
	printf("REMOTE-LAT kvreg-sync read 4096 %.1f\n",
	       lat_sync(kv, local, one));
	printf("REMOTE-RAILS 1 write %llu %.1f\n", 2ULL << 20,
	       stream(kv, local, one, KVREG_OP_WRITE, SZ_2M,
		      msgs_for(SZ_2M)).mbps);
	printf("REMOTE-RAILS 2 write %llu %.1f\n", 2ULL << 20,
	       stream(kv, local, r, KVREG_OP_WRITE, SZ_2M,
		      msgs_for(SZ_2M)).mbps);
	printf("REMOTE-RAILS 1 write %llu %.1f\n", 64ULL << 10,
	       stream(kv, local, one, KVREG_OP_WRITE, 64 * 1024, MSGS).mbps);
	printf("REMOTE-RAILS 2 write %llu %.1f\n", 64ULL << 10,
	       stream(kv, local, r, KVREG_OP_WRITE, 64 * 1024, MSGS).mbps);

	/* What was written last is the whole of @mine: READ it back. */
	kvt_fill(mine, POOL, 0x33);
	run_ops(kv, local, r, KVREG_OP_WRITE, SZ_2M, POOL / SZ_2M, DEPTH,
		DEPTH, false);
	memset(mine, 0, POOL);
	run_ops(kv, local, r, KVREG_OP_READ, SZ_2M, POOL / SZ_2M, DEPTH,
		DEPTH, false);
	CHECK(kvt_mismatch(mine, 0, POOL, 0x33, 0) < 0,
	      "the pool read back differs at %lld",
	      (long long)kvt_mismatch(mine, 0, POOL, 0x33, 0));
	printf("importer: %llu MiB written over both rails and read back, "
	       "every byte checked\n", (unsigned long long)(POOL >> 20));
	CHECK_OK(kvreg_unimport(kv, one, &err), &err);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvreg_close(kv);
	put_file(dir, "bench-done", "1", 1);
	return T_PASS;
}

int main(int argc, char **argv)
{
	return kvp_roles(argc, argv, exporter, importer);
}
