// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * What a KV-cache store does with kvreg: one hugetlb pool, registered once
 * on every RDMA device, KV pages moved through it and verified, and the
 * pool released.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kvreg.h"

#define POOL_BYTES	(64UL << 20)
#define KV_PAGE		(256UL << 10)

static int fail(const char *what, const struct kvreg_error *err, int ret)
{
	char msg[512];

	kvreg_format_error(err, ret, msg, sizeof(msg));
	fprintf(stderr, "demo: %s: %s\n", what, msg);
	return 1;
}

static void show_stats(struct kvreg *kv, const char *when)
{
	struct kvreg_stats st;

	if (kvreg_stats(kv, &st, NULL))
		return;
	printf("stats %-28s registrations %llu, pinned pages %llu, MRs %llu\n",
	       when, (unsigned long long)st.registrations,
	       (unsigned long long)st.pinned_pages,
	       (unsigned long long)st.mrs);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_mr *pool_mr, *staging_mr;
	const struct kvreg_key *keys;
	struct kvreg_error err;
	unsigned int ndev, nkeys, d, i;
	unsigned char *pool, *staging;
	struct kvreg *kv;
	int ret;

	ret = kvreg_open(&kv, &err);
	if (ret)
		return fail("open", &err, ret);
	ret = kvreg_devices(kv, devs, KVREG_MAX_DEVICES, &ndev, &err);
	if (ret)
		return fail("devices", &err, ret);

	pool = mmap(NULL, POOL_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	staging = mmap(NULL, POOL_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (pool == MAP_FAILED || staging == MAP_FAILED) {
		perror("demo: hugetlb mmap (set vm.nr_hugepages)");
		return 1;
	}
	memset(pool, 0, POOL_BYTES);
	memset(staging, 0, POOL_BYTES);

	show_stats(kv, "before registering:");
	ret = kvreg_register(kv, pool, POOL_BYTES, KVREG_ACCESS_ALL, 0,
			     &pool_mr, &err);
	if (ret)
		return fail("register pool", &err, ret);
	ret = kvreg_register(kv, staging, POOL_BYTES, KVREG_ACCESS_ALL, 0,
			     &staging_mr, &err);
	if (ret)
		return fail("register staging", &err, ret);
	keys = kvreg_mr_keys(pool_mr, &nkeys);
	printf("KV pool: %lu MiB of hugetlb memory at %p, pinned once and "
	       "mapped on %u device(s), no MR made:\n", POOL_BYTES >> 20,
	       (void *)pool, ndev);
	for (i = 0; i < nkeys; i++)
		printf("  device %u  addr %#llx  length %llu  an export's MRs "
		       "there: %u of %u KiB pages\n", keys[i].device_index,
		       (unsigned long long)keys[i].iova,
		       (unsigned long long)keys[i].length, keys[i].mrs,
		       (1U << keys[i].page_shift) >> 10);
	show_stats(kv, "after registering:");

	/*
	 * Each device's turn moves a different set of KV pages into the
	 * pool. Between two registrations of one file a TRANSFER is a CPU
	 * copy between their pinned pages; act two moves them by RDMA.
	 */
	for (d = 0; d < ndev; d++) {
		uint32_t dev = devs[d].index;
		unsigned long moved = 0, page;

		for (page = d; page * KV_PAGE < POOL_BYTES; page += ndev) {
			unsigned long off = page * KV_PAGE;

			memset(staging + off, (int)(0x40 + page % 191), KV_PAGE);
			ret = kvreg_transfer(kv, KVREG_OP_WRITE, dev, staging_mr,
					     off, pool_mr, off, KV_PAGE, &err);
			if (ret)
				return fail("transfer", &err, ret);
			moved++;
		}
		printf("device %u (%s): %lu KV pages of %lu KiB copied into "
		       "the pool\n", dev, devs[d].name, moved, KV_PAGE >> 10);
	}
	for (i = 0; i < POOL_BYTES; i++) {
		if (pool[i] != (unsigned char)(0x40 + (i / KV_PAGE) % 191)) {
			fprintf(stderr, "demo: byte %u of the pool is wrong\n", i);
			return 1;
		}
	}
	printf("verified: all %lu MiB of the pool hold the bytes sent\n",
	       POOL_BYTES >> 20);

	ret = kvreg_deregister(kv, staging_mr, &err);
	if (!ret)
		ret = kvreg_deregister(kv, pool_mr, &err);
	if (ret)
		return fail("deregister", &err, ret);
	show_stats(kv, "after deregistering:");
	kvreg_close(kv);
	return 0;
}
