// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * kvreg TRANSFER throughput and latency between two registrations on one
 * device, for the message sizes perftest is run with in the same guest.
 *   bench_xfer DEVICE_INDEX SIZE...
 * Prints "XFER kvreg write|read SIZE GBIT_PER_S LATENCY_US" per size:
 * throughput over back-to-back transfers of 64 MiB in all (64 at least),
 * latency as the median of single transfers (101, or 21 from 1 MiB up,
 * as guest-bench.sh runs perftest).
 */
#include "kvbench.h"
#include "kvtest.h"

#define BUF_LEN		(64ULL << 20)
#define BW_BYTES	(64ULL << 20)
#define LAT_RUNS	101

static void run(struct kvreg *kv, uint32_t dev, enum kvreg_transfer_op op,
		const struct kvreg_mr *a, const struct kvreg_mr *b,
		uint64_t size)
{
	uint64_t n = BW_BYTES / size < 64 ? 64 : BW_BYTES / size, i, off;
	uint64_t runs = size >= (1ULL << 20) ? 21 : LAT_RUNS;
	double lat[LAT_RUNS], t0, elapsed;
	struct kvreg_error err;

	for (i = 0; i < runs; i++) {
		off = (i * size) % (BUF_LEN - size + 1);
		t0 = kvb_now_us();
		CHECK_OK(kvreg_transfer(kv, op, dev, a, off, b, off, size,
					&err), &err);
		lat[i] = kvb_now_us() - t0;
	}
	qsort(lat, runs, sizeof(lat[0]), kvb_cmp_double);

	t0 = kvb_now_us();
	for (i = 0; i < n; i++) {
		off = (i * size) % (BUF_LEN - size + 1);
		CHECK_OK(kvreg_transfer(kv, op, dev, a, off, b, off, size,
					&err), &err);
	}
	elapsed = kvb_now_us() - t0;
	printf("XFER kvreg %s %llu %.3f %.2f\n",
	       op == KVREG_OP_WRITE ? "write" : "read",
	       (unsigned long long)size, n * size * 8 / elapsed / 1e3,
	       lat[runs / 2]);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *a, *b;
	struct kvreg_error err;
	uint32_t dev;
	void *pa, *pb;
	int i;

	CHECK(argc > 2, "usage: bench_xfer DEVICE_INDEX SIZE...");
	dev = atoi(argv[1]);
	pa = kvt_map_anon(BUF_LEN);
	pb = kvt_map_anon(BUF_LEN);
	CHECK_OK(kvreg_register(kv, pa, BUF_LEN, KVREG_ACCESS_ALL,
				1ULL << dev, &a, &err), &err);
	CHECK_OK(kvreg_register(kv, pb, BUF_LEN, KVREG_ACCESS_ALL,
				1ULL << dev, &b, &err), &err);
	for (i = 2; i < argc; i++) {
		uint64_t size = strtoull(argv[i], NULL, 0);

		CHECK(size && size <= BUF_LEN, "size %s", argv[i]);
		run(kv, dev, KVREG_OP_WRITE, a, b, size);
		run(kv, dev, KVREG_OP_READ, a, b, size);
	}
	CHECK_OK(kvreg_deregister(kv, a, &err), &err);
	CHECK_OK(kvreg_deregister(kv, b, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}
