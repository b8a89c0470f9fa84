// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * One side of a remote-region test between two guests on one link: the
 * exporter registers a 4 KiB-page pool and a hugetlb pool, listens and
 * writes their descriptors to a directory both guests share (their
 * control plane); the importer reads them, READs what the exporter wrote
 * and WRITEs its own bytes back, in 4 KiB, 64 KiB and 2 MiB pages, then
 * the same with 4 KiB pages in batches of 64 (SUBMIT and REAP): each pass
 * with bytes of its own, READ back after it; the exporter checks the
 * last. The importer also reports kvreg's throughput for
 * tests/guest/pair-side.sh to set against perftest's.
 *   remote_pair export DIR ADDR
 *   remote_pair import DIR
 */
#include "kvpair.h"

#define LEN	(8ULL << 20)
#define HUGE	(8ULL << 20)

/*
 * Each pool: the exporter fills it with seed, the importer writes the
 * upper half four times, pass i with seed + 1 + i at the same offsets,
 * and reads each back: the last pass's bytes stay.
 */
#define PASSES	4

static void check_upper(const uint8_t *p, uint64_t len, uint32_t seed,
			const char *what)
{
	int64_t bad = kvt_mismatch(p, len / 2, len / 2, seed + PASSES,
				   len / 2);

	CHECK(bad < 0, "%s: the importer's bytes differ at %lld", what,
	      (long long)bad);
	bad = kvt_mismatch(p, 0, len / 2, seed, 0);
	CHECK(bad < 0, "%s: the lower half changed at %lld", what,
	      (long long)bad);
}

static int exporter(const char *dir, const char *addr)
{
	struct kvreg *kv = kvt_open();
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	uint8_t *pool = kvt_map_anon_scattered(LEN), *huge, desc[65536];
	struct kvreg_mr *mr, *hmr = NULL;
	struct kvreg_error err;
	uint64_t ep;
	size_t n;
	char done[16];

	CHECK(kvt_devices(kv, devs), "no RDMA device");
	/* pair-side.sh reserves the pages: a guest without them is broken. */
	huge = kvt_map_hugetlb(HUGE);
	CHECK(huge, "no %llu MiB of hugetlb pages: the guest reserves them",
	      (unsigned long long)(HUGE >> 20));
	kvt_fill(pool, LEN, 0xE1);
	CHECK_OK(kvreg_register(kv, pool, LEN, KVREG_ACCESS_ALL, 0, &mr, &err),
		 &err);
	CHECK_OK(kvreg_listen(kv, addr, 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &n, &err), &err);
	put_file(dir, "desc-4k", desc, n);
	{
		kvt_fill(huge, HUGE, 0xE7);
		CHECK_OK(kvreg_register(kv, huge, HUGE, KVREG_ACCESS_ALL, 0,
					&hmr, &err), &err);
		CHECK_OK(kvreg_export(kv, ep, hmr, desc, sizeof(desc), &n,
				      &err), &err);
		put_file(dir, "desc-huge", desc, n);
	}
	printf("exporter: listening on %s, descriptors written\n", addr);
	get_file(dir, "done-import", done, sizeof(done));
	check_upper(pool, LEN, 0xE1, "4 KiB pool");
	if (huge)
		check_upper(huge, HUGE, 0xE7, "hugetlb pool");
	printf("exporter: the importer's WRITEs arrived, every byte checked\n");
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	if (hmr)
		CHECK_OK(kvreg_deregister(kv, hmr, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}

/* READ the lower half, WRITE the upper half, in pages of @page bytes. */
static double move(struct kvreg *kv, struct kvreg_mr *local,
		   struct kvreg_remote *r, uint64_t len, uint64_t page,
		   enum kvreg_transfer_op op)
{
	uint64_t off, base = op == KVREG_OP_READ ? 0 : len / 2;
	struct kvreg_error err;
	double t0 = kvt_now();

	for (off = base; off < base + len / 2; off += page)
		CHECK_OK(kvreg_transfer_remote(kv, op, local, off, r, off,
					       page, &err), &err);
	return kvt_now() - t0;
}

/* The same in batches of @batch pages: one SUBMIT, then REAP them all. */
static double move_batched(struct kvreg *kv, struct kvreg_mr *local,
			   struct kvreg_remote *r, uint64_t len, uint64_t page,
			   unsigned int batch, enum kvreg_transfer_op op)
{
	uint64_t off, base = op == KVREG_OP_READ ? 0 : len / 2;
	struct kvreg_completion comp[64];
	struct kvreg_op ops[64];
	struct kvreg_error err;
	unsigned int i, n, acc, got;
	double t0 = kvt_now();

	CHECK(batch <= 64, "batch %u", batch);
	for (off = base; off < base + len / 2; off += (uint64_t)n * page) {
		n = (unsigned int)((base + len / 2 - off) / page);
		if (n > batch)
			n = batch;
		for (i = 0; i < n; i++)
			kvreg_op_prep(&ops[i], op, local, off + i * page, r,
				      off + i * page, page, i);
		CHECK_OK(kvreg_submit(kv, ops, n, &acc, &err), &err);
		CHECK(acc == n, "accepted %u of %u", acc, n);
		for (got = 0; got < n; ) {
			unsigned int k;

			CHECK_OK(kvreg_reap(kv, comp, 64, n - got, 30000, &k,
					    &err), &err);
			CHECK(k, "no completion in 30 s");
			for (i = 0; i < k; i++)
				CHECK(!comp[i].status, "op %llu: %d",
				      (unsigned long long)comp[i].user_data,
				      comp[i].status);
			got += k;
		}
	}
	return kvt_now() - t0;
}

/*
 * The upper half as the exporter's pool holds it, READ back in 2 MiB
 * pieces: pass @pass's bytes, every one of them.
 */
static void check_pass(struct kvreg *kv, struct kvreg_mr *local,
		       struct kvreg_remote *r, uint8_t *mine, uint64_t len,
		       uint32_t seed, unsigned int pass, const char *name)
{
	struct kvreg_error err;
	uint64_t off;
	int64_t bad;

	memset(mine + len / 2, 0, len / 2);
	for (off = len / 2; off < len; off += SZ_2M)
		CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, off, r,
					       off, SZ_2M, &err), &err);
	bad = kvt_mismatch(mine, len / 2, len / 2, seed + 1 + pass, len / 2);
	CHECK(bad < 0, "%s: WRITE pass %u did not land: the pool differs at "
	      "%lld", name, pass, (long long)bad);
}

static void import_pool(struct kvreg *kv, const char *dir, const char *name,
			uint32_t seed)
{
	static uint8_t desc[65536];
	size_t n = get_file(dir, name, desc, sizeof(desc));
	uint64_t pages[] = { SZ_4K, 64 * 1024, SZ_2M }, len;
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_mr *local;
	uint8_t *mine;
	unsigned int i;

	CHECK(n, "%s: an empty descriptor", name);
	CHECK_OK(kvreg_import(kv, desc, n, 0, &r, &err), &err);
	len = kvreg_remote_length(r);
	mine = kvt_map_anon_scattered(len);
	CHECK_OK(kvreg_register(kv, mine, len, KVREG_ACCESS_ALL,
				1ULL << kvreg_remote_device(r), &local, &err),
		 &err);
	for (i = 0; i < 3; i++) {
		double rt, wt;

		memset(mine, 0, len);
		rt = move(kv, local, r, len, pages[i], KVREG_OP_READ);
		CHECK(kvt_mismatch(mine, 0, len / 2, seed, 0) < 0,
		      "%s: READ in %llu-byte pages differs at %lld", name,
		      (unsigned long long)pages[i],
		      (long long)kvt_mismatch(mine, 0, len / 2, seed, 0));
		kvt_fill(mine, len, seed + 1 + i);
		wt = move(kv, local, r, len, pages[i], KVREG_OP_WRITE);
		check_pass(kv, local, r, mine, len, seed, i, name);
		/* For pair-side.sh: MB/s of each, by page size. */
		printf("kvreg-bw %s %llu read %.1f write %.1f\n", name,
		       (unsigned long long)pages[i],
		       (double)(len / 2) / rt / 1e6,
		       (double)(len / 2) / wt / 1e6);
	}
	/* 4 KiB pages in batches of 64, as a cache moves KV pages. */
	{
		double rt, wt;

		memset(mine, 0, len);
		rt = move_batched(kv, local, r, len, SZ_4K, 64, KVREG_OP_READ);
		CHECK(kvt_mismatch(mine, 0, len / 2, seed, 0) < 0,
		      "%s: batched READ differs", name);
		kvt_fill(mine, len, seed + PASSES);
		wt = move_batched(kv, local, r, len, SZ_4K, 64,
				  KVREG_OP_WRITE);
		check_pass(kv, local, r, mine, len, seed, PASSES - 1, name);
		printf("kvreg-bw %s 4096x64 read %.1f write %.1f\n", name,
		       (double)(len / 2) / rt / 1e6,
		       (double)(len / 2) / wt / 1e6);
	}
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	munmap(mine, len);
	printf("%s: READ and WRITE of %llu bytes in 4 KiB, 64 KiB and 2 MiB "
	       "pages, checked\n", name, (unsigned long long)len);
}

static int importer(const char *dir)
{
	struct kvreg *kv = kvt_open();

	import_pool(kv, dir, "desc-4k", 0xE1);
	import_pool(kv, dir, "desc-huge", 0xE7);
	kvreg_close(kv);
	put_file(dir, "done-import", "ok", 2);
	return T_PASS;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "export"))
		return exporter(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "import"))
		return importer(argv[2]);
	fprintf(stderr, "usage: remote_pair export DIR ADDR | import DIR\n");
	return T_FAIL;
}
