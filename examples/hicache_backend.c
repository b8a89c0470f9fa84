// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * What a hierarchical-cache storage backend does at start-up, with kvreg:
 *
 *  1. check, before allocating anything, that the host KV pool can be
 *     registered (kvreg_preflight);
 *  2. allocate the pool from hugetlb pages, page-first: each KV page holds
 *     the K and V of every layer for its tokens, so one page moves as one
 *     contiguous transfer;
 *  3. register the pool once on every RDMA device;
 *  4. move KV pages through it: write pages from a staging buffer (the
 *     stand-in for the GPU tier) into pool slots, read them back, check;
 *  5. shut down cleanly.
 *
 * Every refusal is printed as libkvreg's sentence, e.g.
 * "RLIMIT_MEMLOCK exceeded: 8 MiB of 8 MiB locked, this registration
 * needs 64 MiB more (ENOMEM); raise the memlock limit ...".
 *
 *   cc hicache_backend.c $(pkg-config --cflags --libs kvreg)
 *   ./a.out [pool MiB] [KV pages to move]
 */
#define _GNU_SOURCE	/* MAP_HUGETLB */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <kvreg.h>

/* A small model's KV layout: 8 layers, 16 tokens a page, 1 KiB a token. */
#define LAYERS		8
#define PAGE_TOKENS	16
#define TOKEN_BYTES	1024
#define KV_PAGE_BYTES	(2ULL * LAYERS * PAGE_TOKENS * TOKEN_BYTES)
#define HUGE_PAGE	(2ULL << 20)

static int fail(const char *what, const struct kvreg_error *err, int ret)
{
	char msg[512];

	kvreg_format_error(err, ret, msg, sizeof(msg));
	fprintf(stderr, "hicache_backend: %s: %s\n", what, msg);
	return 1;
}

static void *alloc_hugetlb(uint64_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Byte i of KV page number page: distinct for every page and offset. */
static uint8_t kv_byte(uint64_t page, uint64_t i)
{
	return (uint8_t)((page * 131 + i * 7 + (i >> 11)) ^ 0x5a);
}

int main(int argc, char **argv)
{
	uint64_t pool_bytes = (argc > 1 ? strtoull(argv[1], NULL, 0) : 32) << 20;
	uint64_t moves = argc > 2 ? strtoull(argv[2], NULL, 0) : 64;
	uint64_t staging_bytes = 4 * KV_PAGE_BYTES, slots, m, i;
	struct kvreg_mr *pool_mr, *staging_mr;
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_error err;
	uint8_t *pool, *staging;
	unsigned int ndev, nkeys;
	struct kvreg *kv;
	int ret;

	pool_bytes = (pool_bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	slots = pool_bytes / KV_PAGE_BYTES;
	ret = kvreg_open(&kv, &err);
	if (ret)
		return fail("open", &err, ret);
	ret = kvreg_devices(kv, devs, KVREG_MAX_DEVICES, &ndev, &err);
	if (ret)
		return fail("devices", &err, ret);

	/* 1. Would it fit? Ask before allocating gigabytes. */
	ret = kvreg_preflight(kv, pool_bytes, 0, KVREG_PREFLIGHT_F_HUGETLB,
			      &err);
	if (ret)
		return fail("pre-flight of the host KV pool", &err, ret);
	printf("pre-flight: %llu MiB on %u device(s) fits every limit\n",
	       (unsigned long long)(pool_bytes >> 20), ndev);

	/* 2. The pool, page-first, from hugetlb. */
	pool = alloc_hugetlb(pool_bytes);
	staging = alloc_hugetlb(HUGE_PAGE);
	if (!pool || !staging) {
		fprintf(stderr, "hicache_backend: cannot allocate %llu MiB of "
			"hugetlb pages: raise /proc/sys/vm/nr_hugepages\n",
			(unsigned long long)((pool_bytes + HUGE_PAGE) >> 20));
		return 1;
	}

	/* 3. Registered once, on every device. */
	ret = kvreg_register(kv, pool, pool_bytes, KVREG_ACCESS_ALL, 0,
			     &pool_mr, &err);
	if (ret)
		return fail("register the host KV pool", &err, ret);
	ret = kvreg_register(kv, staging, staging_bytes, KVREG_ACCESS_ALL, 0,
			     &staging_mr, &err);
	if (ret)
		return fail("register the staging buffer", &err, ret);
	kvreg_mr_keys(pool_mr, &nkeys);
	printf("pool: %llu KV pages of %llu KiB, on %u device(s), %s\n",
	       (unsigned long long)slots,
	       (unsigned long long)(KV_PAGE_BYTES >> 10), nkeys,
	       kvreg_mr_key_at(pool_mr, devs[0].index, 0)->page_shift == 21 ?
	       "2 MiB MR pages" : "small MR pages");

	/* 4. Write-back and load-back, spread over the devices. */
	for (m = 0; m < moves; m++) {
		uint64_t slot = (m * 7919) % slots;
		uint32_t dev = devs[m % ndev].index;

		for (i = 0; i < KV_PAGE_BYTES; i++)
			staging[i] = kv_byte(m, i);
		ret = kvreg_transfer(kv, KVREG_OP_WRITE, dev, staging_mr, 0,
				     pool_mr, slot * KV_PAGE_BYTES,
				     KV_PAGE_BYTES, &err);
		if (ret)
			return fail("write a KV page to the pool", &err, ret);
		memset(staging + KV_PAGE_BYTES, 0, KV_PAGE_BYTES);
		ret = kvreg_transfer(kv, KVREG_OP_READ, dev, staging_mr,
				     KV_PAGE_BYTES, pool_mr,
				     slot * KV_PAGE_BYTES, KV_PAGE_BYTES,
				     &err);
		if (ret)
			return fail("read a KV page back", &err, ret);
		for (i = 0; i < KV_PAGE_BYTES; i++) {
			if (staging[KV_PAGE_BYTES + i] != kv_byte(m, i) ||
			    pool[slot * KV_PAGE_BYTES + i] != kv_byte(m, i)) {
				fprintf(stderr, "hicache_backend: KV page %llu "
					"differs at byte %llu\n",
					(unsigned long long)m,
					(unsigned long long)i);
				return 1;
			}
		}
	}
	printf("moved %llu KV pages (%llu MiB each way) through the pool, "
	       "all bytes checked\n", (unsigned long long)moves,
	       (unsigned long long)((moves * KV_PAGE_BYTES) >> 20));

	/* 5. Shut down: deregistration revokes the keys and unpins. */
	ret = kvreg_deregister(kv, staging_mr, &err);
	if (!ret)
		ret = kvreg_deregister(kv, pool_mr, &err);
	if (ret)
		return fail("deregister", &err, ret);
	kvreg_close(kv);
	munmap(staging, HUGE_PAGE);
	munmap(pool, pool_bytes);
	printf("shut down cleanly\n");
	return 0;
}
