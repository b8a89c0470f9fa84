// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A hierarchical cache's remote storage tier, with kvreg, on two nodes.
 *
 * store (node A): a pool of fixed-size KV page slots in hugetlb memory,
 *   registered once for remote access on every RDMA device, an endpoint
 *   on one address per NIC (a rail each), and its descriptor published
 *   on the control plane. It serves until told to stop, or killed.
 *
 * backend (node B): the operations sglang's HiCache storage interface
 *   has, over the store's pool: batch_set(keys, pages) WRITEs host KV
 *   pages into slots, batch_get(keys, pages) READs them back,
 *   batch_exists(keys) counts how many keys, from the first, are
 *   stored. The host pool is page-first (each KV page holds K and V of
 *   every layer for its tokens) and registered once; a batch is one
 *   SUBMIT and its completions, one status per key. The key to slot
 *   index is the backend's own (a real tier keeps it in its metadata
 *   service); the slots are the store's.
 *
 * The control plane is a directory both nodes see (a real deployment
 * uses etcd, redis or HTTP): the store writes DIR/store.desc.
 *
 *   hicache_remote store DIR ADDR [ADDR...]
 *   hicache_remote backend DIR [demo]
 * With demo, the backend shows its rails (kvreg_conns), asks for the
 * store to be killed (DIR/kill-store) and waits for DIR/store-killed,
 * then shows what its next operations got.
 */
#define _GNU_SOURCE	/* MAP_HUGETLB */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <kvreg.h>

/* The layout of hicache_backend.c: 8 layers, 16 tokens, 1 KiB a token. */
#define LAYERS		8
#define PAGE_TOKENS	16
#define TOKEN_BYTES	1024
#define KV_PAGE_BYTES	(2ULL * LAYERS * PAGE_TOKENS * TOKEN_BYTES)
#define SLOTS		128	/* in the store: 32 MiB */
#define HOST_PAGES	128	/* in the backend's host pool */
#define BATCH		64
#define HUGE_PAGE	(2ULL << 20)
#define WAIT_S		600

static int fail(const char *what, const struct kvreg_error *err, int ret)
{
	char msg[512];

	kvreg_format_error(err, ret, msg, sizeof(msg));
	fprintf(stderr, "hicache_remote: %s: %s\n", what, msg);
	return 1;
}

/* hugetlb when there are pages for it, else base pages. */
static void *alloc_pool(uint64_t bytes)
{
	uint64_t len = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);

	if (p == MAP_FAILED)
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

static void path_of(char *buf, size_t n, const char *dir, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

/* Whole or not at all, as the other node sees it. */
static int publish(const char *dir, const char *name, const void *data,
		   size_t size)
{
	char tmp[512], path[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.%s", dir, name);
	path_of(path, sizeof(path), dir, name);
	f = fopen(tmp, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) ||
	    rename(tmp, path)) {
		perror(tmp);
		return -1;
	}
	return 0;
}

static size_t wait_for(const char *dir, const char *name, void *data,
		       size_t cap)
{
	char path[512];
	size_t n = 0;
	FILE *f = NULL;
	int i;

	path_of(path, sizeof(path), dir, name);
	for (i = 0; i < WAIT_S * 10 && !f; i++) {
		f = fopen(path, "r");
		if (!f)
			usleep(100 * 1000);
	}
	if (!f) {
		fprintf(stderr, "hicache_remote: %s never came\n", path);
		return 0;
	}
	n = fread(data, 1, cap, f);
	fclose(f);
	return n ? n : 1;
}

static int store(const char *dir, char **addrs, int naddrs)
{
	uint64_t bytes = SLOTS * KV_PAGE_BYTES, endpoint;
	static uint8_t desc[1 << 16];
	struct kvreg_error err;
	struct kvreg_mr *mr;
	struct kvreg *kv;
	uint8_t *slots;
	size_t size;
	char b[8];
	int i, ret;

	ret = kvreg_open(&kv, &err);
	if (ret)
		return fail("open /dev/kvreg", &err, ret);
	slots = alloc_pool(bytes);
	if (!slots) {
		perror("mmap");
		return 1;
	}
	ret = kvreg_register(kv, slots, bytes, KVREG_ACCESS_ALL, 0, &mr, &err);
	if (ret)
		return fail("register the slots", &err, ret);
	ret = kvreg_listen(kv, addrs[0], 0, &endpoint, NULL, &err);
	if (ret)
		return fail("listen", &err, ret);
	for (i = 1; i < naddrs; i++) {
		ret = kvreg_listen_add(kv, endpoint, addrs[i], 0, NULL, &err);
		if (ret)
			return fail("listen on another NIC", &err, ret);
	}
	ret = kvreg_export(kv, endpoint, mr, desc, sizeof(desc), &size, &err);
	if (ret)
		return fail("export the slots", &err, ret);
	if (publish(dir, "store.desc", desc, size))
		return 1;
	printf("store: %d slots of %llu KiB, registered once, on %d "
	       "address(es); descriptor published (%zu bytes)\n", SLOTS,
	       KV_PAGE_BYTES >> 10, naddrs, size);
	fflush(stdout);
	/* Serves without doing anything: the backend's NICs do the work. */
	if (!wait_for(dir, "backend.done", b, sizeof(b)))
		return 1;
	ret = kvreg_deregister(kv, mr, &err);
	if (ret)
		return fail("deregister", &err, ret);
	kvreg_close(kv);
	printf("store: done\n");
	return 0;
}

struct backend {
	struct kvreg *kv;
	struct kvreg_remote *slots;	/* the store's pool */
	struct kvreg_mr *host_mr;	/* the host pool, page-first */
	uint8_t *host;
	uint64_t keys[SLOTS];		/* by slot; 0: free */
	unsigned int used;
};

static int slot_of(const struct backend *b, uint64_t key)
{
	unsigned int i;

	for (i = 0; i < b->used; i++)
		if (b->keys[i] == key)
			return (int)i;
	return -1;
}

/*
 * One batch: op i moves host page pages[i] and slot slots[i]. One SUBMIT
 * (again for what a full queue left), then every completion; status[i]
 * is 0 or -errno, and the first failure's reason is printed.
 */
static int run_batch(struct backend *b, enum kvreg_transfer_op opc,
		     const int *slots, const unsigned int *pages,
		     unsigned int n, int *status)
{
	struct kvreg_completion comp[BATCH];
	struct kvreg_op ops[BATCH];
	unsigned int i, sent = 0, done = 0, acc, got;
	struct kvreg_error err;
	int ret, reported = 0;

	for (i = 0; i < n; i++)
		kvreg_op_prep(&ops[i], opc, b->host_mr,
			      pages[i] * KV_PAGE_BYTES, b->slots,
			      slots[i] * KV_PAGE_BYTES, KV_PAGE_BYTES, i);
	while (done < n) {
		if (sent < n) {
			ret = kvreg_submit(b->kv, ops + sent, n - sent, &acc,
					   &err);
			if (ret && ret != -EAGAIN) {
				/* Refused before posting: each says so. */
				for (i = sent; i < n; i++)
					status[i] = ret;
				fail("submit", &err, ret);
				n = sent;
				continue;
			}
			sent += acc;
		}
		if (done == sent)
			continue;
		ret = kvreg_reap(b->kv, comp, BATCH, 1, 30000, &got, &err);
		if (ret)
			return fail("reap", &err, ret);
		for (i = 0; i < got; i++) {
			status[comp[i].user_data] = comp[i].status;
			if (comp[i].status && !reported++)
				fail(opc == KVREG_OP_WRITE ? "a WRITE" :
				     "a READ", &comp[i].error, comp[i].status);
		}
		done += got;
	}
	return 0;
}

/* HiCache's batch_set: keys[i] gets host page pages[i]. Keys stored. */
static unsigned int batch_set(struct backend *b, const uint64_t *keys,
			      const unsigned int *pages, unsigned int n)
{
	int slots[BATCH], status[BATCH];
	unsigned int i, stored = 0;

	for (i = 0; i < n; i++) {
		slots[i] = slot_of(b, keys[i]);
		if (slots[i] < 0 && b->used < SLOTS)
			slots[i] = (int)b->used++;
		/* No slot left: the tier is full; a real one evicts. */
		if (slots[i] < 0)
			return stored;
		b->keys[slots[i]] = 0;
	}
	if (run_batch(b, KVREG_OP_WRITE, slots, pages, n, status))
		return 0;
	/* A key exists once its page has arrived, not before. */
	for (i = 0; i < n; i++) {
		if (!status[i]) {
			b->keys[slots[i]] = keys[i];
			stored++;
		}
	}
	return stored;
}

/* HiCache's batch_get: host page pages[i] gets keys[i]'s. Keys read. */
static unsigned int batch_get(struct backend *b, const uint64_t *keys,
			      const unsigned int *pages, unsigned int n)
{
	int slots[BATCH], status[BATCH];
	unsigned int i, got = 0;

	for (i = 0; i < n; i++) {
		slots[i] = slot_of(b, keys[i]);
		if (slots[i] < 0)
			return 0;
	}
	if (run_batch(b, KVREG_OP_READ, slots, pages, n, status))
		return 0;
	for (i = 0; i < n; i++)
		got += !status[i];
	return got;
}

/* HiCache's batch_exists: how many keys, from the first, are stored. */
static unsigned int batch_exists(const struct backend *b, const uint64_t *keys,
				 unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && slot_of(b, keys[i]) >= 0; i++)
		;
	return i;
}

static void show_rails(struct kvreg *kv)
{
	static const char *const states[] = { "?", "LISTENING", "CONNECTING",
					      "ESTABLISHED", "LOST" };
	struct kvreg_conn_info ci[32];
	struct kvreg_error err;
	unsigned int n, i;
	char ip[64];

	if (kvreg_conns(kv, ci, 32, &n, &err))
		return;
	printf("backend: its rails (kvregctl conns shows the same):\n");
	for (i = 0; i < n && i < 32; i++) {
		if (ci[i].pid != (uint32_t)getpid() ||
		    ci[i].kind != KVREG_CONN_KIND_ACTIVE)
			continue;
		inet_ntop(ci[i].peer.family, ci[i].peer.addr, ip, sizeof(ip));
		printf("  rail %u/%u to %s:%u on device %u: %s, %llu ops, "
		       "%llu bytes, %llu failovers\n", ci[i].rail, ci[i].rails,
		       ip, ci[i].peer.port, ci[i].device_index,
		       states[ci[i].state < 5 ? ci[i].state : 0],
		       (unsigned long long)ci[i].ops,
		       (unsigned long long)ci[i].bytes,
		       (unsigned long long)ci[i].failovers);
	}
}

/* A KV page no other page shares: key @key's bytes. */
static void fill_page(uint8_t *p, uint64_t key)
{
	uint64_t i, x = key * 0x9E3779B97F4A7C15ULL;

	for (i = 0; i < KV_PAGE_BYTES; i += 8, x = x * 6364136223846793005ULL +
						   1442695040888963407ULL)
		memcpy(p + i, &x, 8);
}

static int backend(const char *dir, int demo)
{
	uint64_t keys[BATCH], bytes = HOST_PAGES * KV_PAGE_BYTES;
	unsigned int pages[BATCH], back[BATCH], i, n;
	static uint8_t desc[1 << 16];
	static struct backend b;
	struct kvreg_error err;
	uint8_t *want;
	size_t size;
	int ret;

	ret = kvreg_open(&b.kv, &err);
	if (ret)
		return fail("open /dev/kvreg", &err, ret);
	b.host = alloc_pool(bytes);
	want = malloc(KV_PAGE_BYTES);
	if (!b.host || !want) {
		perror("host pool");
		return 1;
	}
	ret = kvreg_register(b.kv, b.host, bytes, KVREG_ACCESS_ALL, 0,
			     &b.host_mr, &err);
	if (ret)
		return fail("register the host pool", &err, ret);
	size = wait_for(dir, "store.desc", desc, sizeof(desc));
	if (!size)
		return 1;
	ret = kvreg_import(b.kv, desc, size, 0, &b.slots, &err);
	if (ret)
		return fail("import the store's slots", &err, ret);
	printf("backend: the store's %llu slots imported, %u of %u rails up\n",
	       (unsigned long long)(kvreg_remote_length(b.slots) /
				    KV_PAGE_BYTES),
	       kvreg_remote_rails(b.slots), kvreg_remote_paths(b.slots));

	/* Pages 0..63 of the host pool are "prefill output", keys 1..64. */
	for (i = 0; i < BATCH; i++) {
		keys[i] = 1000 + i;
		pages[i] = i;
		back[i] = BATCH + i;
		fill_page(b.host + i * KV_PAGE_BYTES, keys[i]);
	}
	n = batch_exists(&b, keys, BATCH);
	printf("backend: batch_exists before: %u of %u\n", n, BATCH);
	n = batch_set(&b, keys, pages, BATCH);
	printf("backend: batch_set: %u of %u KV pages stored\n", n, BATCH);
	if (n != BATCH)
		return 1;
	n = batch_exists(&b, keys, BATCH);
	printf("backend: batch_exists after: %u of %u\n", n, BATCH);
	if (n != BATCH)
		return 1;
	memset(b.host + BATCH * KV_PAGE_BYTES, 0, BATCH * KV_PAGE_BYTES);
	n = batch_get(&b, keys, back, BATCH);
	printf("backend: batch_get: %u of %u KV pages read back\n", n, BATCH);
	for (i = 0; i < BATCH; i++) {
		fill_page(want, keys[i]);
		if (memcmp(b.host + back[i] * KV_PAGE_BYTES, want,
			   KV_PAGE_BYTES)) {
			fprintf(stderr, "hicache_remote: key %llu came back "
				"different\n", (unsigned long long)keys[i]);
			return 1;
		}
	}
	printf("backend: every byte of %u KV pages came back as written\n",
	       BATCH);
	if (n != BATCH)
		return 1;

	if (demo) {
		char m[8];

		show_rails(b.kv);
		printf("backend: now the store's process is killed\n");
		fflush(stdout);
		if (publish(dir, "kill-store", "1", 1) ||
		    !wait_for(dir, "store-killed", m, sizeof(m)))
			return 1;
		n = batch_get(&b, keys, back, 8);
		printf("backend: after the store died, batch_get: %u of 8 read "
		       "(the reason is above)\n", n);
		show_rails(b.kv);
	}
	ret = kvreg_unimport(b.kv, b.slots, &err);
	if (ret)
		return fail("unimport", &err, ret);
	ret = kvreg_deregister(b.kv, b.host_mr, &err);
	if (ret)
		return fail("deregister", &err, ret);
	kvreg_close(b.kv);
	free(want);
	if (!demo && publish(dir, "backend.done", "1", 1))
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && !strcmp(argv[1], "store"))
		return store(argv[2], argv + 3, argc - 3);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "backend"))
		return backend(argv[2], argc == 4 && !strcmp(argv[3], "demo"));
	fprintf(stderr, "usage: hicache_remote store DIR ADDR [ADDR...]\n"
		"       hicache_remote backend DIR [demo]\n");
	return 2;
}
