// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Register and deregister time with kvreg against rdma-core's
 * ibv_reg_mr/ibv_dereg_mr, on the same devices, buffers and guest run,
 * interleaved, medians of several runs. The peer registers once per
 * device, as verbs users must, from one thread per device at once. The
 * guest is emulated: read the ratios.
 *   bench_reg MAX_MIB REPS [POOL_MIB]
 * POOL_MIB: a huge-page pool of that size on four devices, after the rest.
 * KVREG_BENCH_QUICK set: only the smallest and largest size, touched.
 * Prints one "REG" line per case (kvreg and peer register and deregister
 * medians; touched memory adds kvreg on one CPU and kvreg with helpers,
 * timed in turns), "STAGE" lines with kvreg's own per-stage
 * time (its kvreg_stage tracepoint) and "SCALE" lines; report.sh
 * tabulates them.
 */
#include <infiniband/verbs.h>
#include <pthread.h>

#include "kvbench.h"
#include "kvtest.h"
#include "kvtrace.h"

#define MAX_REPS	15
#define SCALE_REGS	10000

enum backing { BACK_4K, BACK_HUGETLB, BACK_THP, NR_BACKINGS };
static const char *const backing_names[] = { "4KiB", "hugetlb", "THP" };

struct peer {
	struct ibv_pd *pds[KVREG_MAX_DEVICES];
	unsigned int npd;
};

struct sample {
	double reg_ms;
	double dereg_ms;
};

/* A mapping of @len with the backing asked for; faulted in if @touch. */
static void *map_buffer(enum backing b, uint64_t len, bool touch,
			void **raw, uint64_t *raw_len)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	uint8_t *p;
	uint64_t i;

	*raw_len = len + (b == BACK_THP ? SZ_2M : 0);
	if (b == BACK_HUGETLB)
		flags |= MAP_HUGETLB;
	*raw = mmap(NULL, *raw_len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (*raw == MAP_FAILED)
		return NULL;
	p = *raw;
	if (b == BACK_THP) {
		p = (uint8_t *)(((uintptr_t)p + SZ_2M - 1) & ~(SZ_2M - 1));
		CHECK(!madvise(p, len, MADV_HUGEPAGE), "madvise: %s",
		      strerror(errno));
	} else if (b == BACK_4K) {
		madvise(p, len, MADV_NOHUGEPAGE);
	}
	if (touch)
		for (i = 0; i < len; i += SZ_4K)
			p[i] = 1;
	return p;
}

/* The MR page size kvreg chose last: physically contiguous base pages
 * may get more than 4 KiB. */
static unsigned int last_page_shift;

static struct sample time_kvreg(struct kvreg *kv, void *buf, uint64_t len,
				uint64_t mask)
{
	struct kvreg_error err;
	unsigned int nkeys;
	struct kvreg_mr *mr;
	struct sample s;
	double t0 = kvb_now_ms();

	CHECK_OK(kvreg_register(kv, buf, len, KVREG_ACCESS_ALL, mask, &mr,
				&err), &err);
	s.reg_ms = kvb_now_ms() - t0;
	last_page_shift = kvreg_mr_keys(mr, &nkeys)[0].page_shift;
	t0 = kvb_now_ms();
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	s.dereg_ms = kvb_now_ms() - t0;
	return s;
}

/*
 * The peer as a user runs it on several devices: one thread per device,
 * registering at once (Mooncake registers per NIC in parallel). The
 * threads live across samples and meet at barriers, so a sample times the
 * registrations, not thread start-up.
 */
struct verbs_worker {
	pthread_t thread;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	bool dereg;			/* this round: deregister @mr */
};

static struct {
	struct verbs_worker w[KVREG_MAX_DEVICES];
	unsigned int n;			/* threads started */
	void *buf;
	uint64_t len;
	bool quit;
	pthread_barrier_t start, done;
} pool;

static void verbs_one(struct verbs_worker *w)
{
	if (w->dereg) {
		CHECK(!ibv_dereg_mr(w->mr), "ibv_dereg_mr");
		w->mr = NULL;
		return;
	}
	w->mr = ibv_reg_mr(w->pd, pool.buf, pool.len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	CHECK(w->mr, "ibv_reg_mr: %s", strerror(errno));
}

static void *verbs_thread(void *arg)
{
	struct verbs_worker *w = arg;

	for (;;) {
		pthread_barrier_wait(&pool.start);
		if (pool.quit)
			return NULL;
		verbs_one(w);
		pthread_barrier_wait(&pool.done);
	}
}

/* Workers for devices 1..@ndev-1; device 0 is the caller's. */
static void verbs_pool_start(struct peer *peer, unsigned int ndev)
{
	unsigned int i;

	pthread_barrier_init(&pool.start, NULL, ndev);
	pthread_barrier_init(&pool.done, NULL, ndev);
	for (i = 0; i < ndev; i++)
		pool.w[i].pd = peer->pds[i];
	for (i = 1; i < ndev; i++)
		CHECK(!pthread_create(&pool.w[i].thread, NULL, verbs_thread,
				      &pool.w[i]), "pthread_create");
	pool.n = ndev - 1;
}

static void verbs_pool_stop(void)
{
	unsigned int i;

	if (!pool.n)
		return;
	pool.quit = true;
	pthread_barrier_wait(&pool.start);
	for (i = 1; i <= pool.n; i++)
		pthread_join(pool.w[i].thread, NULL);
	pthread_barrier_destroy(&pool.start);
	pthread_barrier_destroy(&pool.done);
	pool.n = 0;
	pool.quit = false;
}

/* Every device's thread does one round; ms from start to the last done. */
static double verbs_round(unsigned int ndev, bool dereg)
{
	double t0 = kvb_now_ms();
	unsigned int i;

	for (i = 0; i < ndev; i++)
		pool.w[i].dereg = dereg;
	if (ndev > 1)
		pthread_barrier_wait(&pool.start);
	verbs_one(&pool.w[0]);
	if (ndev > 1)
		pthread_barrier_wait(&pool.done);
	return kvb_now_ms() - t0;
}

static struct sample time_verbs(struct peer *peer, unsigned int ndev,
				void *buf, uint64_t len)
{
	struct sample s;

	if (pool.n + 1 != ndev) {
		verbs_pool_stop();
		if (ndev > 1)
			verbs_pool_start(peer, ndev);
	}
	pool.w[0].pd = peer->pds[0];
	pool.buf = buf;
	pool.len = len;
	s.reg_ms = verbs_round(ndev, false);
	s.dereg_ms = verbs_round(ndev, true);
	return s;
}

static struct ibv_pd *open_pd(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	CHECK(list, "ibv_get_device_list: %s", strerror(errno));
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	CHECK(ctx, "verbs device %s not found (ib_uverbs loaded?)", name);
	return ibv_alloc_pd(ctx);
}

#define THREADS_PARAM	"/sys/module/kvreg/parameters/max_threads"

/* kvreg on the calling CPU only: what parallel pinning buys. */
static struct sample time_kvreg_1cpu(struct kvreg *kv, void *buf,
				     uint64_t len, uint64_t mask)
{
	unsigned long long threads = kvt_read_param(THREADS_PARAM);
	struct sample s;

	kvt_write_param(THREADS_PARAM, 1);
	s = time_kvreg(kv, buf, len, mask);
	kvt_write_param(THREADS_PARAM, threads);
	return s;
}

static void stages_reset(void)
{
	kvtr_start("kvreg_stage");
}

/*
 * kvreg's per-stage time of the case just run, per registration, from
 * its kvreg_stage events, in the stages' order of first appearance.
 */
static void stages_print(const char *tag, const char *label, int regs)
{
	char names[32][32];
	double ns[32] = { 0 };
	struct kvtr_event ev;
	unsigned int n = 0, i;
	FILE *f;

	kvtr_stop();
	f = kvtr_open();
	while (kvtr_next(f, &ev)) {
		char name[32];

		if (strcmp(ev.name, "kvreg_stage") ||
		    sscanf(ev.args, " stage=%31s", name) != 1)
			continue;
		for (i = 0; i < n && strcmp(names[i], name); i++)
			;
		if (i == n && n == 32)
			continue;
		if (i == n)
			strcpy(names[n++], name);
		ns[i] += kvtr_arg(ev.args, "ns", 0);
	}
	fclose(f);
	for (i = 0; i < n; i++)
		printf("%s %s %s %.3f\n", tag, label, names[i],
		       ns[i] / 1e6 / regs);
}

/*
 * The stages of @regs more registrations of the case, apart from the
 * timed ones: with kvreg_stage on, each stage reads the clock twice and
 * writes an event, which the peer never pays (a 4 KiB registration has
 * ten of them).
 */
static void stages_profile(struct kvreg *kv, enum backing b, uint64_t len,
			   bool touch, void *buf, uint64_t mask,
			   const char *label, int regs)
{
	int i;

	stages_reset();
	for (i = 0; i < regs; i++) {
		void *p = buf, *own_raw = NULL;
		uint64_t own_len = 0;

		if (!touch) {
			p = map_buffer(b, len, false, &own_raw, &own_len);
			CHECK(p, "mmap %s: %s", label, strerror(errno));
		}
		time_kvreg(kv, p, len, mask);
		if (own_raw)
			munmap(own_raw, own_len);
	}
	stages_print("STAGE", label, regs);
}

/*
 * One case: kvreg and the peer alternate, each on a buffer of its own
 * when the memory must be untouched (a registration faults pages in).
 * Small buffers repeat inside a sample so the clock can see them.
 */
static void bench_case(struct kvreg *kv, struct peer *peer, uint64_t mask,
		       unsigned int ndev, enum backing b, uint64_t len,
		       bool touch, int reps)
{
	int inner = len <= SZ_2M ? 32 : 1, r, i;
	double kr[MAX_REPS], kd[MAX_REPS], vr[MAX_REPS], vd[MAX_REPS];
	double sr[MAX_REPS], sd[MAX_REPS], hr[MAX_REPS], hd[MAX_REPS];
	/* Every touched size: helpers must never make one slower. */
	bool one_cpu = touch;
	void *buf = NULL, *raw = NULL;
	uint64_t raw_len = 0;
	char label[96];

	snprintf(label, sizeof(label), "%s %llu %u %s", backing_names[b],
		 (unsigned long long)len, ndev,
		 touch ? "touched" : "untouched");
	if (touch) {
		buf = map_buffer(b, len, true, &raw, &raw_len);
		if (!buf) {
			printf("SKIP %s: no memory for the buffer\n", label);
			return;
		}
	}
	for (r = 0; r < reps; r++) {
		struct sample k = { 0 }, v = { 0 }, s;

		for (i = 0; i < 2 * inner; i++) {
			bool kvreg_turn = (i + r) % 2 == 0;
			void *p = buf, *own_raw = NULL;
			uint64_t own_len = 0;

			if (!touch) {
				p = map_buffer(b, len, false, &own_raw,
					       &own_len);
				CHECK(p, "mmap %s: %s", label,
				      strerror(errno));
			}
			if (kvreg_turn) {
				s = time_kvreg(kv, p, len, mask);
				k.reg_ms += s.reg_ms / inner;
				k.dereg_ms += s.dereg_ms / inner;
			} else {
				s = time_verbs(peer, ndev, p, len);
				v.reg_ms += s.reg_ms / inner;
				v.dereg_ms += s.dereg_ms / inner;
			}
			if (own_raw)
				munmap(own_raw, own_len);
		}
		kr[r] = k.reg_ms;
		kd[r] = k.dereg_ms;
		vr[r] = v.reg_ms;
		vd[r] = v.dereg_ms;
	}
	stages_profile(kv, b, len, touch, buf, mask, label, reps * inner);
	printf("PAGESHIFT %s %u\n", label, last_page_shift);
	/*
	 * Helpers against one CPU, in turns and with no peer in between:
	 * the peer's runs above leave caches and TLBs cold for whoever
	 * comes next, which is not what helpers are to be judged on.
	 */
	if (one_cpu) {
		for (r = 0; r < reps; r++) {
			struct sample s = { 0 }, h = { 0 }, one;

			for (i = 0; i < 2 * inner; i++) {
				if ((i + r) % 2) {
					one = time_kvreg_1cpu(kv, buf, len,
							      mask);
					s.reg_ms += one.reg_ms / inner;
					s.dereg_ms += one.dereg_ms / inner;
				} else {
					one = time_kvreg(kv, buf, len, mask);
					h.reg_ms += one.reg_ms / inner;
					h.dereg_ms += one.dereg_ms / inner;
				}
			}
			sr[r] = s.reg_ms;
			sd[r] = s.dereg_ms;
			hr[r] = h.reg_ms;
			hd[r] = h.dereg_ms;
		}
	}
	printf("REG %s %.4f %.4f %.4f %.4f", label, kvb_median(kr, reps),
	       kvb_median(kd, reps), kvb_median(vr, reps), kvb_median(vd, reps));
	if (one_cpu)
		printf(" %.4f %.4f %.4f %.4f", kvb_median(sr, reps),
		       kvb_median(sd, reps), kvb_median(hr, reps),
		       kvb_median(hd, reps));
	printf("\n");
	fflush(stdout);
	if (raw)
		munmap(raw, raw_len);
}

/*
 * What an EXPORT costs: the registration's pages registered again, as
 * MRs of the export's PD (a PD and QP made by an EXPORT before the timed
 * ones, which each UNEXPORT leaves for the next EXPORT), against the
 * registration itself and ibv_reg_mr of the same buffer, in turns.
 * UNEXPORT is the revocation.
 */
static void bench_export(struct kvreg *kv, struct peer *peer, uint32_t dev,
			 enum backing b, uint64_t len, int reps)
{
	double ex[MAX_REPS], un[MAX_REPS], kr[MAX_REPS], vr[MAX_REPS];
	static uint8_t desc[1 << 20];
	struct kvreg_error err;
	char label[64];
	struct kvreg_mr *mr;
	void *raw = NULL, *buf;
	uint64_t raw_len = 0, ep;
	size_t size;
	double t0;
	int r;

	buf = map_buffer(b, len, true, &raw, &raw_len);
	if (!buf) {
		printf("SKIP export %s %llu: no memory for the buffer\n",
		       backing_names[b], (unsigned long long)len);
		return;
	}
	CHECK_OK(kvreg_listen(kv, "192.0.2.1", 0, &ep, NULL, &err), &err);
	for (r = 0; r < reps; r++) {
		kr[r] = time_kvreg(kv, buf, len, 1ULL << dev).reg_ms;
		vr[r] = time_verbs(peer, 1, buf, len).reg_ms;
		CHECK_OK(kvreg_register(kv, buf, len, KVREG_ACCESS_ALL,
					1ULL << dev, &mr, &err), &err);
		if (!r) {
			CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc),
					      &size, &err), &err);
			CHECK_OK(kvreg_unexport(kv, ep, mr, &err), &err);
		}
		t0 = kvb_now_ms();
		CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &size,
				      &err), &err);
		ex[r] = kvb_now_ms() - t0;
		t0 = kvb_now_ms();
		CHECK_OK(kvreg_unexport(kv, ep, mr, &err), &err);
		un[r] = kvb_now_ms() - t0;
		CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	}
	/* Its stages, from exports of their own (see stages_profile()). */
	stages_reset();
	for (r = 0; r < reps; r++) {
		CHECK_OK(kvreg_register(kv, buf, len, KVREG_ACCESS_ALL,
					1ULL << dev, &mr, &err), &err);
		CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &size,
				      &err), &err);
		CHECK_OK(kvreg_unexport(kv, ep, mr, &err), &err);
		CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	}
	snprintf(label, sizeof(label), "%s %llu", backing_names[b],
		 (unsigned long long)len);
	stages_print("EXPORT-STAGE", label, reps);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
	/* EXPORT backing len: export, unexport, register, ibv_reg_mr (ms). */
	printf("EXPORT %s %llu %.4f %.4f %.4f %.4f\n", backing_names[b],
	       (unsigned long long)len, kvb_median(ex, reps),
	       kvb_median(un, reps), kvb_median(kr, reps),
	       kvb_median(vr, reps));
	fflush(stdout);
	munmap(raw, raw_len);
}

/* Reserve hugetlb pages for one case, or give them back with 0. */
static bool hugetlb_reserve(uint64_t len)
{
	unsigned long long want = len ? len / SZ_2M + 2 : 0;

	kvt_write_param("/proc/sys/vm/nr_hugepages", want);
	return kvt_read_param("/proc/sys/vm/nr_hugepages") >= want;
}

/* hugetlb pages for one case, or a SKIP line and none. */
static bool hugetlb_ready(uint64_t len)
{
	if (hugetlb_reserve(len))
		return true;
	printf("SKIP hugetlb %llu: pages not free\n", (unsigned long long)len);
	hugetlb_reserve(0);
	return false;
}

/* What the guest could still give a buffer, from /proc/meminfo. */
static uint64_t mem_available(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	CHECK(f, "open /proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

/*
 * A KV-cache host pool as users have them: @len of huge pages (hugetlb,
 * then THP) on @ndev devices, touched, where the guest has the memory.
 */
static void bench_pool(struct kvreg *kv, struct peer *peer, uint64_t mask,
		       unsigned int ndev, uint64_t len)
{
	enum backing b;

	for (b = BACK_HUGETLB; b <= BACK_THP; b++) {
		if (mem_available() < len + (1ULL << 30)) {
			printf("SKIP %s %llu: the guest has %llu MiB available\n",
			       backing_names[b], (unsigned long long)len,
			       (unsigned long long)(mem_available() >> 20));
			continue;
		}
		if (b == BACK_HUGETLB && !hugetlb_ready(len))
			continue;
		bench_case(kv, peer, mask, ndev, b, len, true, 3);
		if (b == BACK_HUGETLB)
			hugetlb_reserve(0);
	}
}

/*
 * The 10,000th registration must cost what the first did: time each of
 * SCALE_REGS live 4 KiB registrations and compare the first and last 500.
 */
static void bench_scale(struct kvreg *kv, uint64_t mask)
{
	static struct kvreg_mr *mrs[SCALE_REGS];
	double t[SCALE_REGS], first[500], last[500], t0, dereg;
	uint64_t len = (uint64_t)SCALE_REGS * SZ_4K;
	struct kvreg_error err;
	void *raw;
	uint64_t raw_len;
	uint8_t *buf = map_buffer(BACK_4K, len, true, &raw, &raw_len);
	int i;

	CHECK(buf, "mmap: %s", strerror(errno));
	for (i = 0; i < SCALE_REGS; i++) {
		t0 = kvb_now_ms();
		CHECK_OK(kvreg_register(kv, buf + (uint64_t)i * SZ_4K, SZ_4K,
					KVREG_ACCESS_ALL, mask, &mrs[i], &err),
			 &err);
		t[i] = kvb_now_ms() - t0;
	}
	t0 = kvb_now_ms();
	for (i = 0; i < SCALE_REGS; i++)
		CHECK_OK(kvreg_deregister(kv, mrs[i], &err), &err);
	dereg = (kvb_now_ms() - t0) / SCALE_REGS;
	memcpy(first, t, sizeof(first));
	memcpy(last, t + SCALE_REGS - 500, sizeof(last));
	printf("SCALE live_regs %d first500_ms %.4f last500_ms %.4f "
	       "dereg_avg_ms %.4f\n", SCALE_REGS, kvb_median(first, 500),
	       kvb_median(last, 500), dereg);
	munmap(raw, raw_len);
}

int main(int argc, char **argv)
{
	static const uint64_t sizes[] = {
		SZ_4K, SZ_2M, 64ULL << 20, 1ULL << 30, 4ULL << 30,
	};
	uint64_t max_len = (argc > 1 ? strtoull(argv[1], NULL, 0) : 1024) << 20;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	uint64_t pool_len = (argc > 3 ? strtoull(argv[3], NULL, 0) : 0) << 20;
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	unsigned int ndev, d, nsets[2], s;
	struct peer peer = { 0 };
	struct kvreg *kv = kvt_open();
	int quick = getenv("KVREG_BENCH_QUICK") != NULL;
	size_t z;
	int b, touch;

	CHECK(reps > 0 && reps <= MAX_REPS, "1 to %d repetitions", MAX_REPS);
	ndev = kvt_devices(kv, devs);
	if (!ndev)
		kvt_skip("no RDMA device");
	for (d = 0; d < ndev; d++)
		peer.pds[d] = open_pd(devs[d].name);
	nsets[0] = 1;
	nsets[1] = ndev < 4 ? ndev : 4;

	for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		uint64_t len = sizes[z];

		if (len > max_len)
			break;
		/* Quick: the smallest and largest size, touched only. */
		if (quick && len != SZ_4K && (z + 1 < sizeof(sizes) /
		    sizeof(sizes[0]) && sizes[z + 1] <= max_len))
			continue;
		for (b = 0; b < NR_BACKINGS; b++) {
			/* A huge page backs 2 MiB or more, not one 4 KiB. */
			if (b != BACK_4K && len < SZ_2M)
				continue;
			if (b == BACK_HUGETLB && !hugetlb_ready(len))
				continue;
			for (s = 0; s < (nsets[1] > 1 ? 2U : 1U); s++) {
				uint64_t mask = 0;

				for (d = 0; d < nsets[s]; d++)
					mask |= 1ULL << devs[d].index;
				for (touch = 1; touch >= quick; touch--)
					bench_case(kv, &peer, mask, nsets[s],
						   b, len, touch,
						   len >= (1ULL << 30) &&
						   reps > 3 ? 3 : reps);
			}
			if (b == BACK_HUGETLB)
				hugetlb_reserve(0);
		}
	}
	if (pool_len && !quick) {
		uint64_t mask = 0;

		for (d = 0; d < nsets[1]; d++)
			mask |= 1ULL << devs[d].index;
		bench_pool(kv, &peer, mask, nsets[1], pool_len);
	}
	for (b = 0; b < NR_BACKINGS; b++) {
		uint64_t len = max_len < (1ULL << 30) ? max_len : 1ULL << 30;

		if (b == BACK_THP || (b == BACK_HUGETLB && !hugetlb_ready(len)))
			continue;
		bench_export(kv, &peer, devs[0].index, b, len,
			     reps > 3 ? 3 : reps);
		if (b == BACK_HUGETLB)
			hugetlb_reserve(0);
	}
	bench_scale(kv, 1ULL << devs[0].index);
	verbs_pool_stop();
	kvreg_close(kv);
	return T_PASS;
}
