// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Register and deregister time of one buffer with kvreg against
 * rdma-core's ibv_reg_mr on the same devices, in the same guest run. The
 * guest is emulated: read the ratios, not the milliseconds.
 *   bench_reg [MiB] [repetitions]
 */
#include <infiniband/verbs.h>
#include <time.h>

#include "kvtest.h"

struct timing {
	double reg_ms;
	double dereg_ms;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void keep_min(struct timing *best, struct timing t)
{
	if (!best->reg_ms || t.reg_ms < best->reg_ms)
		best->reg_ms = t.reg_ms;
	if (!best->dereg_ms || t.dereg_ms < best->dereg_ms)
		best->dereg_ms = t.dereg_ms;
}

static struct timing time_kvreg(struct kvreg *kv, void *buf, uint64_t len,
				uint64_t mask)
{
	struct kvreg_error err;
	struct kvreg_mr *mr;
	struct timing t;
	double t0 = now_ms();

	CHECK_OK(kvreg_register(kv, buf, len, KVREG_ACCESS_ALL, mask, &mr,
				&err), &err);
	t.reg_ms = now_ms() - t0;
	t0 = now_ms();
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	t.dereg_ms = now_ms() - t0;
	return t;
}

/* ibv_reg_mr once per device, as a verbs user must: it pins each time. */
static struct timing time_verbs(struct ibv_pd **pds, unsigned int npd,
				void *buf, uint64_t len)
{
	struct ibv_mr *mrs[KVREG_MAX_DEVICES];
	struct timing t;
	unsigned int i;
	double t0 = now_ms();

	for (i = 0; i < npd; i++) {
		mrs[i] = ibv_reg_mr(pds[i], buf, len, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ);
		CHECK(mrs[i], "ibv_reg_mr: %s", strerror(errno));
	}
	t.reg_ms = now_ms() - t0;
	t0 = now_ms();
	for (i = 0; i < npd; i++)
		CHECK(!ibv_dereg_mr(mrs[i]), "ibv_dereg_mr");
	t.dereg_ms = now_ms() - t0;
	return t;
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

static void bench(struct kvreg *kv, struct ibv_pd **pds,
		  const struct kvreg_device_info *devs, unsigned int ndev,
		  const char *backing, void *buf, uint64_t len, int reps)
{
	unsigned int nsets[2] = { 1, ndev }, s;
	int r;

	for (s = 0; s < (ndev > 1 ? 2U : 1U); s++) {
		struct timing k = { 0 }, v = { 0 };
		uint64_t mask = 0;
		unsigned int d;

		for (d = 0; d < nsets[s]; d++)
			mask |= 1ULL << devs[d].index;
		for (r = 0; r < reps; r++) {
			keep_min(&k, time_kvreg(kv, buf, len, mask));
			keep_min(&v, time_verbs(pds, nsets[s], buf, len));
		}
		printf("BENCH %-8s %4llu MiB %u device(s): kvreg reg %8.1f ms "
		       "dereg %8.1f ms | ibv_reg_mr reg %8.1f ms dereg %8.1f ms "
		       "| ratio reg %.2f dereg %.2f\n", backing,
		       (unsigned long long)(len >> 20), nsets[s], k.reg_ms,
		       k.dereg_ms, v.reg_ms, v.dereg_ms, k.reg_ms / v.reg_ms,
		       k.dereg_ms / v.dereg_ms);
	}
}

int main(int argc, char **argv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	uint64_t len = (argc > 1 ? strtoull(argv[1], NULL, 0) : 1024) << 20;
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	struct ibv_pd *pds[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	unsigned int ndev, d;
	void *buf;

	ndev = kvt_devices(kv, devs);
	if (!ndev)
		kvt_skip("no RDMA device");
	for (d = 0; d < ndev; d++)
		pds[d] = open_pd(devs[d].name);

	buf = kvt_map_anon(len);
	bench(kv, pds, devs, ndev, "4KiB", buf, len, reps);
	munmap(buf, len);

	buf = kvt_map_hugetlb(len);
	if (!buf)
		kvt_skip("not enough hugetlb pages");
	bench(kv, pds, devs, ndev, "hugetlb", buf, len, reps);
	munmap(buf, len);
	kvreg_close(kv);
	return T_PASS;
}
