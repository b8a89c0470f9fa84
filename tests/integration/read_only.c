// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A registration that only lets peers READ must still read what its owner
 * writes after registering. Pinned for reading alone, memory never
 * written is the shared zero page (4 KiB or huge), and memory a child
 * shares since fork() is the child's page too: the owner's next write
 * moves the owner to a new page while the device keeps the old, and a
 * remote READ returns zeros or the bytes from before. kmod/vma.c says how
 * kvreg pins to avoid it. Each way is tried with base pages and with THP:
 * register REMOTE_READ only, export, import back, write as the owner,
 * READ over RDMA; the bytes read, the owner's and a child's own copy are
 * checked, and the pins, MRs and charges are back where they started.
 */
#include "kvchild.h"
#include "kvtransfer.h"

#define BASE_LEN	(64 * SZ_4K)
#define THP_LEN		(2 * SZ_2M)

struct kind {
	const char *name;
	uint64_t len;
	bool thp;
};

static const struct kind kinds[] = {
	{ "base pages", BASE_LEN, false },
	{ "THP", THP_LEN, true },
};

/* Mapped and never touched: the first read of it maps the zero page. */
static uint8_t *map_untouched(const struct kind *k)
{
	uint8_t *raw = mmap(NULL, k->len + SZ_2M, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *p;

	CHECK(raw != MAP_FAILED, "mmap: %s", strerror(errno));
	p = (uint8_t *)(((uintptr_t)raw + SZ_2M - 1) & ~(SZ_2M - 1));
	CHECK(!madvise(p, k->len, k->thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE),
	      "madvise: %s", strerror(errno));
	return p;
}

/* What a child keeps: its copy of @mem, which must still hold @seed. */
struct copy {
	const uint8_t *mem;
	uint64_t len;
	uint32_t seed;
};

static struct copy copy;

/* Forked with the memory as it is; checks its copy when told to. */
static void keep_copy(void *arg)
{
	const struct copy *c = arg;

	kvt_send_byte(kvt_me.ack, 'k');
	kvt_recv_byte(kvt_me.cmd);
	CHECK(kvt_mismatch(c->mem, 0, c->len, c->seed, 0) < 0,
	      "the child's copy changed: the owner's writes reached it");
	exit(T_PASS);
}

static struct kvt_child spawn_keeper(uint8_t *mem, uint64_t len,
				     uint32_t seed)
{
	copy = (struct copy){ .mem = mem, .len = len, .seed = seed };
	return kvt_spawn(keep_copy, &copy, 'k');
}

/* The child still holds what it was forked with. */
static void child_kept(struct kvt_child *c)
{
	kvt_send_byte(c->cmd, 'c');
	kvt_reap(c);
}

/*
 * @mem registered for remote READs only; the owner writes @seed into it
 * after the pin; a READ over RDMA into @dst must bring exactly that.
 */
static void read_after_write(struct kvreg *kv, uint32_t dev, uint8_t *mem,
			     uint8_t *dst, const struct kvreg_mr *mdst,
			     uint64_t len, uint32_t seed, const char *what,
			     struct kvt_child *fork_after_pin)
{
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_mr *mr;
	int64_t bad;
	uint64_t ep;

	CHECK_OK(kvreg_register(kv, mem, len, KVREG_ACCESS_REMOTE_READ,
				1ULL << dev, &mr, &err), &err);
	r = kvt_self_import(kv, mr, dev, &ep);
	/* After the pin: the child shares what is pinned. */
	if (fork_after_pin)
		*fork_after_pin = spawn_keeper(mem, len, seed ^ 0x5A5A);
	kvt_fill(mem, len, seed);
	memset(dst, 0, len);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, mdst, 0, r, 0, len,
				       &err), &err);
	bad = kvt_mismatch(dst, 0, len, seed, 0);
	CHECK(bad < 0,
	      "%s: a remote READ after the owner wrote returned %#x at byte "
	      "%lld, the owner has %#x there: the pin holds another page",
	      what, bad < 0 ? 0 : dst[bad], (long long)bad,
	      bad < 0 ? 0 : mem[bad]);
	CHECK(kvt_mismatch(mem, 0, len, seed, 0) < 0,
	      "%s: the owner's bytes changed", what);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	printf("%s: %llu bytes read back as written\n", what,
	       (unsigned long long)len);
}

static void try_kind(struct kvreg *kv, uint32_t dev, const struct kind *k)
{
	struct kvt_snap before = kvt_snap(kv);
	struct kvt_child child;
	struct kvreg_error err;
	struct kvreg_mr *mdst;
	uint8_t *dst, *mem;
	char what[96];

	dst = kvt_map_anon(k->len);
	CHECK_OK(kvreg_register(kv, dst, k->len, KVREG_ACCESS_LOCAL_WRITE,
				1ULL << dev, &mdst, &err), &err);

	/* Never written: a pin for reading would take the zero page. */
	mem = map_untouched(k);
	CHECK(mem[0] == 0 && mem[k->len - 1] == 0, "fresh memory not zero");
	snprintf(what, sizeof(what), "%s never written", k->name);
	read_after_write(kv, dev, mem, dst, mdst, k->len, 0x31, what, NULL);
	if (k->thp)
		printf("%s: %llu bytes THP after the writes\n", what,
		       (unsigned long long)kvt_thp_bytes(mem, k->len));

	/* Shared with a child since before the registration. */
	mem = map_untouched(k);
	kvt_fill(mem, k->len, 0x42 ^ 0x5A5A);
	child = spawn_keeper(mem, k->len, 0x42 ^ 0x5A5A);
	snprintf(what, sizeof(what), "%s shared with a child, then registered",
		 k->name);
	read_after_write(kv, dev, mem, dst, mdst, k->len, 0x42, what, NULL);
	child_kept(&child);

	/* Registered, then shared with a child. */
	mem = map_untouched(k);
	kvt_fill(mem, k->len, 0x53 ^ 0x5A5A);
	snprintf(what, sizeof(what), "%s registered, then shared with a child",
		 k->name);
	read_after_write(kv, dev, mem, dst, mdst, k->len, 0x53, what, &child);
	child_kept(&child);

	CHECK_OK(kvreg_deregister(kv, mdst, &err), &err);
	kvt_check_unchanged(kv, &before, k->name);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	unsigned int i;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		try_kind(kv, devs[0].index, &kinds[i]);
	kvreg_close(kv);
	printf("PASS\n");
	return T_PASS;
}
