// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Memory that changes under a registration. A registration holds the
 * pages it pinned, whatever the process does to its mapping afterwards;
 * the device goes on reading and writing those pages. Each case below
 * changes the mapping, then checks by RDMA, through an export of the
 * registration imported back, what docs/registration.md ("Memory that
 * changes under a registration") says a remote READ returns and where a
 * remote WRITE lands, and that DEREGISTER gives every pin back:
 *
 *   MADV_DONTNEED, a memfd hole punched, a memfd truncated: the process
 *   gets new zeroed pages, the device keeps the old ones;
 *   MADV_FREE, compaction: nothing changes, both see the same bytes;
 *   MADV_FREE, then reclaim in a memory cgroup at its limit: the pinned
 *   pages stay, both see the same bytes, and their charge goes with
 *   DEREGISTER;
 *   munmap and mremap while transfers run on the range: every transfer
 *   completes with its bytes; after mremap the new address is the same
 *   pages;
 *   fork with THP and hugetlb memory registered: the parent keeps the
 *   pinned pages, the child gets copies (hugetlb: from 5.11 on; 5.10
 *   gives the parent the copy, which the test checks as documented).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "kvtransfer.h"

#define LEN		(2 * SZ_2M)
#define MOVER_ROUNDS	16	/* round trips on each side of the change */
#define MOVER_LEN	(256 * 1024UL)	/* each way, each round trip */
#define CG		"/sys/fs/cgroup"
#define MEM_CG		CG "/kvreg-memory-changes"

static struct kvreg *kv;
static uint32_t dev;
static uint8_t *win;		/* where READs land, WRITEs come from */
static struct kvreg_mr *win_mr;

/* A registration of [p, p + len), exported and imported back. */
struct subject {
	uint8_t *p;
	uint64_t len;
	struct kvreg_mr *mr;
	struct kvreg_remote *r;
	uint64_t ep;
};

static void subject_open(struct subject *s, uint8_t *p, uint64_t len)
{
	struct kvreg_error err;

	s->p = p;
	s->len = len;
	CHECK_OK(kvreg_register(kv, p, len, KVREG_ACCESS_ALL, 1ULL << dev,
				&s->mr, &err), &err);
	s->r = kvt_self_import(kv, s->mr, dev, &s->ep);
}

static void subject_close(struct subject *s)
{
	struct kvreg_error err;

	CHECK_OK(kvreg_unimport(kv, s->r, &err), &err);
	CHECK_OK(kvreg_unlisten(kv, s->ep, &err), &err);
	CHECK_OK(kvreg_deregister(kv, s->mr, &err), &err);
}

/* What the device reads at [off, off + len) must be @seed's bytes. */
static void remote_holds(const struct subject *s, uint64_t off, uint64_t len,
			 uint32_t seed, const char *what)
{
	struct kvreg_error err;
	int64_t bad;

	memset(win, 0, len);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, win_mr, 0, s->r, off,
				       len, &err), &err);
	bad = kvt_mismatch(win, 0, len, seed, off);
	CHECK(bad < 0, "%s: a remote READ at %llu differs at byte %lld", what,
	      (unsigned long long)off, (long long)bad);
}

/* [off, off + len) of @p gets its part of @seed's pattern over @p. */
static void fill_at(uint8_t *p, uint64_t off, uint64_t len, uint32_t seed)
{
	kvt_fill_from(p + off, len, seed, off);
}

static void remote_write(const struct subject *s, uint64_t off, uint64_t len,
			 uint32_t seed)
{
	struct kvreg_error err;

	kvt_fill_from(win, len, seed, off);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, win_mr, 0, s->r, off,
				       len, &err), &err);
}

static bool all_zero(const uint8_t *p, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * madvise(@advice) over a registered range. MADV_DONTNEED drops the
 * process's mapping of the pages, not the registration's pin: the process
 * faults in zeroed pages, the device keeps the old ones, and the two no
 * longer meet (@detached). MADV_FREE leaves a pinned page where it is
 * (reclaim does not discard a page with references beyond its mappings):
 * both see every byte.
 */
static void advised(int advice, const char *what, bool detached,
		    uint32_t seed)
{
	uint8_t *p = kvt_map_anon(LEN);
	struct subject s;
	bool seen;

	fill_at(p, 0, LEN, seed);
	subject_open(&s, p, LEN);
	CHECK(!madvise(p, LEN, advice), "%s: %s", what, strerror(errno));
	CHECK(all_zero(p, LEN) == detached, "%s: the process %s", what,
	      detached ? "still sees its bytes" : "lost its bytes");
	remote_holds(&s, 0, LEN, seed, what);
	fill_at(p, 0, SZ_2M, seed + 1);
	remote_holds(&s, 0, SZ_2M, detached ? seed : seed + 1, what);
	remote_write(&s, SZ_2M, SZ_2M, seed + 2);
	seen = kvt_mismatch(p, SZ_2M, SZ_2M, seed + 2, SZ_2M) < 0;
	CHECK(seen != detached && (seen || all_zero(p + SZ_2M, SZ_2M)),
	      "%s: a remote WRITE %s the process's pages", what,
	      detached ? "reached" : "did not reach");
	remote_holds(&s, SZ_2M, SZ_2M, seed + 2, what);
	subject_close(&s);
	munmap(p, LEN);
}

/* The number a memory cgroup file holds. */
static uint64_t cg_value(const char *file)
{
	char path[128];

	snprintf(path, sizeof(path), MEM_CG "/%s", file);
	return kvt_read_param(path);
}

static void cg_set_max(uint64_t bytes)
{
	char text[32];

	if (bytes == UINT64_MAX)
		snprintf(text, sizeof(text), "max");
	else
		snprintf(text, sizeof(text), "%llu", (unsigned long long)bytes);
	CHECK(!kvt_put(MEM_CG "/memory.max", text), "memory.max %s: %s",
	      text, strerror(errno));
}

static void cg_join(const char *procs)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	CHECK(!kvt_put(procs, pid), "join %s: %s", procs, strerror(errno));
}

static uint64_t zero_pages(const uint8_t *p, uint64_t len)
{
	uint64_t off, n = 0;

	for (off = 0; off < len; off += SZ_4K)
		n += all_zero(p + off, SZ_4K);
	return n;
}

/*
 * A memory cgroup brought to its limit while a registered range is
 * lazily freed (MADV_FREE), beside a range that is not registered. The
 * limit is set below what the cgroup holds, so that reclaim must take
 * what it can: the unregistered range's pages, which it discards (the
 * proof that it ran), and not the registration's, which are pinned, so
 * the process and the device go on sharing every byte. Transfers run
 * with the cgroup at its limit; once the registration is gone, so is
 * its charge.
 */
static void reclaimed(void)
{
	uint64_t base, held, discarded, at_limit;
	char text[256] = "";
	struct subject s;
	uint8_t *p, *spare;
	FILE *f;

	if (access(CG "/cgroup.controllers", F_OK))
		CHECK(!mount("none", CG, "cgroup2", 0, NULL), "mount cgroup2: %s",
		      strerror(errno));
	f = fopen(CG "/cgroup.controllers", "r");
	CHECK(f && fgets(text, sizeof(text), f), "read cgroup.controllers");
	fclose(f);
	CHECK(strstr(text, "memory"), "no memory cgroup controller: %s", text);
	CHECK(!kvt_put(CG "/cgroup.subtree_control", "+memory"),
	      "enable the memory controller: %s", strerror(errno));
	CHECK(!mkdir(MEM_CG, 0755) || errno == EEXIST, "mkdir %s: %s", MEM_CG,
	      strerror(errno));
	cg_join(MEM_CG "/cgroup.procs");
	base = cg_value("memory.current");

	/* Faulted in, and so charged, from inside the cgroup. */
	p = kvt_map_anon(LEN);
	spare = kvt_map_anon(LEN);
	fill_at(p, 0, LEN, 0x91);
	fill_at(spare, 0, LEN, 0x92);
	subject_open(&s, p, LEN);
	CHECK(!madvise(p, LEN, MADV_FREE) && !madvise(spare, LEN, MADV_FREE),
	      "MADV_FREE: %s", strerror(errno));
	held = cg_value("memory.current");
	/*
	 * Three quarters of the spare range must go: the kernel reclaims
	 * to the new limit as it is written (and calls the OOM killer only
	 * if it cannot), taking no more than it needs, and the rest of
	 * what the cgroup holds is the registration's or cannot be taken.
	 */
	cg_set_max(held - 3 * LEN / 4);
	at_limit = cg_value("memory.current");
	/* Freed first, the registered range is what reclaim meets first. */
	CHECK(kvt_mismatch(p, 0, LEN, 0x91, 0) < 0, "reclaim: the process "
	      "lost the bytes of its registered, lazily freed range (%llu of "
	      "%llu pages zero)", (unsigned long long)zero_pages(p, LEN),
	      (unsigned long long)(LEN / SZ_4K));
	discarded = zero_pages(spare, LEN);
	CHECK(discarded >= LEN / 2 / SZ_4K, "reclaim discarded %llu of the "
	      "%llu lazily freed pages not registered: it did not run",
	      (unsigned long long)discarded,
	      (unsigned long long)(LEN / SZ_4K));
	remote_holds(&s, 0, LEN, 0x91, "reclaim under MADV_FREE");

	/* At the limit: the two still share pages, both ways. */
	fill_at(p, 0, SZ_2M, 0x93);
	remote_holds(&s, 0, SZ_2M, 0x93, "at the cgroup's limit");
	remote_write(&s, SZ_2M, SZ_2M, 0x94);
	CHECK(kvt_mismatch(p, SZ_2M, SZ_2M, 0x94, SZ_2M) < 0, "at the "
	      "cgroup's limit, the process does not see a remote WRITE");
	CHECK(cg_value("memory.current") <= held - 3 * LEN / 4,
	      "the cgroup holds %llu bytes over its limit of %llu",
	      (unsigned long long)cg_value("memory.current"),
	      (unsigned long long)(held - 3 * LEN / 4));

	cg_set_max(UINT64_MAX);
	subject_close(&s);
	munmap(p, LEN);
	munmap(spare, LEN);
	/* A pin left would keep its page, and the page its charge. */
	CHECK(cg_value("memory.current") < base + LEN / 2,
	      "the cgroup still holds %llu bytes, %llu before the case",
	      (unsigned long long)cg_value("memory.current"),
	      (unsigned long long)base);
	cg_join(CG "/cgroup.procs");
	CHECK(!rmdir(MEM_CG), "rmdir %s: %s", MEM_CG, strerror(errno));
	printf("reclaim under MADV_FREE: %llu of %llu unregistered pages "
	       "discarded, the registered ones kept; the cgroup at %llu of "
	       "%llu bytes\n", (unsigned long long)discarded,
	       (unsigned long long)(LEN / SZ_4K),
	       (unsigned long long)at_limit,
	       (unsigned long long)(held - 3 * LEN / 4));
}

/*
 * A memfd's pages punched out, or truncated away, leave its page cache:
 * the process's mapping gets new zeroed pages (the truncated file first
 * grown back), the device keeps the pinned ones.
 */
static void memfd_cut(bool truncate)
{
	const char *what = truncate ? "ftruncate" : "a hole punched";
	int fd = memfd_create("kvreg-memory-changes", 0);
	struct subject s;
	uint8_t *p;

	CHECK(fd >= 0 && !ftruncate(fd, LEN), "memfd: %s", strerror(errno));
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	fill_at(p, 0, LEN, 0x31);
	subject_open(&s, p, LEN);
	if (truncate)
		CHECK(!ftruncate(fd, 0) && !ftruncate(fd, LEN),
		      "ftruncate: %s", strerror(errno));
	else
		CHECK(!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 0, SZ_2M), "fallocate: %s", strerror(errno));
	CHECK(all_zero(p, SZ_2M), "%s: the process still sees bytes", what);
	remote_holds(&s, 0, LEN, 0x31, what);
	fill_at(p, 0, SZ_2M, 0x32);
	remote_holds(&s, 0, SZ_2M, 0x31, what);
	if (!truncate) {
		/* The rest of the file was not touched: still one memory. */
		fill_at(p, SZ_2M, SZ_2M, 0x33);
		remote_holds(&s, SZ_2M, SZ_2M, 0x33, "beside the hole");
	}
	subject_close(&s);
	munmap(p, LEN);
	close(fd);
}

/*
 * Compaction migrates movable pages; a long-term pin is not movable, so
 * the process and the device still share every page.
 */
static void compaction(void)
{
	uint8_t *p = kvt_map_anon_scattered(LEN);
	struct subject s;

	fill_at(p, 0, LEN, 0x41);
	subject_open(&s, p, LEN);
	CHECK(!kvt_put("/proc/sys/vm/compact_memory", "1"),
	      "compact_memory: %s", strerror(errno));
	fill_at(p, 0, SZ_2M, 0x42);
	remote_holds(&s, 0, SZ_2M, 0x42, "after compaction");
	remote_holds(&s, SZ_2M, LEN - SZ_2M, 0x41, "after compaction");
	subject_close(&s);
	munmap(p, LEN);
}

/* Round trips through the device on @s while the main thread acts. */
struct mover {
	const struct subject *s;
	uint8_t *buf;		/* registered as mr, this thread's own */
	struct kvreg_mr *mr;
	atomic_uint rounds;
	atomic_bool stop;
	unsigned int until;	/* rounds to go on after stop is set */
};

static void *mover(void *arg)
{
	struct mover *m = arg;
	struct kvreg_error err;
	unsigned int i, after = 0;

	for (i = 0; !atomic_load(&m->stop) || after++ < m->until; i++) {
		uint32_t seed = 0x5000 + i;
		uint64_t off = (i % (LEN / MOVER_LEN)) * MOVER_LEN;

		kvt_fill_from(m->buf, MOVER_LEN, seed, off);
		CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, m->mr, 0,
					       m->s->r, off, MOVER_LEN, &err),
			 &err);
		memset(m->buf, 0, MOVER_LEN);
		CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, m->mr, 0,
					       m->s->r, off, MOVER_LEN, &err),
			 &err);
		CHECK(kvt_mismatch(m->buf, 0, MOVER_LEN, seed, off) < 0,
		      "round %u: the READ did not bring the WRITE's bytes", i);
		atomic_fetch_add(&m->rounds, 1);
	}
	return NULL;
}

static void mover_start(struct mover *m, pthread_t *t, const struct subject *s)
{
	struct kvreg_error err;

	memset(m, 0, sizeof(*m));
	m->s = s;
	m->until = MOVER_ROUNDS;
	m->buf = kvt_map_anon(MOVER_LEN);
	CHECK_OK(kvreg_register(kv, m->buf, MOVER_LEN, KVREG_ACCESS_ALL,
				1ULL << dev, &m->mr, &err), &err);
	CHECK(!pthread_create(t, NULL, mover, m), "pthread_create");
	while (atomic_load(&m->rounds) < MOVER_ROUNDS)
		usleep(1000);
}

/* Returns the rounds made before @m was told to stop. */
static unsigned int mover_stop(struct mover *m, pthread_t t)
{
	unsigned int before = atomic_load(&m->rounds);
	struct kvreg_error err;

	atomic_store(&m->stop, true);
	CHECK(!pthread_join(t, NULL), "pthread_join");
	CHECK_OK(kvreg_deregister(kv, m->mr, &err), &err);
	munmap(m->buf, MOVER_LEN);
	return before;
}

/*
 * munmap under transfers: the registration holds the pages, so every
 * transfer before and after it completes with its bytes; DEREGISTER then
 * releases what the process no longer maps.
 */
static void unmap_running(void)
{
	uint8_t *p = kvt_map_anon(LEN);
	unsigned int before, at;
	struct mover m;
	struct subject s;
	pthread_t t;

	subject_open(&s, p, LEN);
	mover_start(&m, &t, &s);
	at = atomic_load(&m.rounds);
	CHECK(!munmap(p, LEN), "munmap: %s", strerror(errno));
	before = mover_stop(&m, t);
	CHECK(atomic_load(&m.rounds) >= before + MOVER_ROUNDS && at > 0,
	      "munmap: the transfers did not run on both sides of it");
	remote_write(&s, 0, SZ_2M, 0x61);
	remote_holds(&s, 0, SZ_2M, 0x61, "after munmap");
	subject_close(&s);
	printf("munmap: %u round trips while it was unmapped, %u before\n",
	       atomic_load(&m.rounds) - at, at);
}

/*
 * mremap moves the mapping, pages and all: at its new address the
 * process and the device still share them.
 */
static void remap_running(void)
{
	uint8_t *p = kvt_map_anon(LEN), *to, *q;
	unsigned int at, before;
	struct mover m;
	struct subject s;
	pthread_t t;

	to = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(to != MAP_FAILED, "mmap: %s", strerror(errno));
	subject_open(&s, p, LEN);
	mover_start(&m, &t, &s);
	at = atomic_load(&m.rounds);
	q = mremap(p, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	CHECK(q == to, "mremap: %s", strerror(errno));
	before = mover_stop(&m, t);
	CHECK(atomic_load(&m.rounds) >= before + MOVER_ROUNDS && at > 0,
	      "mremap: the transfers did not run on both sides of it");
	fill_at(q, 0, SZ_2M, 0x71);
	remote_holds(&s, 0, SZ_2M, 0x71, "mremap, the process writes");
	remote_write(&s, SZ_2M, SZ_2M, 0x72);
	CHECK(kvt_mismatch(q, SZ_2M, SZ_2M, 0x72, SZ_2M) < 0, "mremap: the "
	      "process does not see a remote WRITE at the new address");
	subject_close(&s);
	munmap(q, LEN);
	printf("mremap: %u round trips around the move\n",
	       atomic_load(&m.rounds));
}

/*
 * fork with @p registered: the parent keeps the pinned pages (the kernel
 * copies a pinned page for the child at fork) and the child gets a copy
 * of the bytes then. 5.10 does so for THP but not hugetlb (5.11's
 * "hugetlb: do early cow when page pinned on src mm"): there the parent's
 * first write after the fork moves it to a copy of its own.
 */
static void forked(uint8_t *p, uint64_t len, const char *kind,
		   bool parent_keeps)
{
	int to_child[2], from_child[2], status;
	struct subject s;
	char byte = 0;
	pid_t pid;

	fill_at(p, 0, len, 0x81);
	subject_open(&s, p, len);
	CHECK(!pipe(to_child) && !pipe(from_child), "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		/* Written by the parent and the device meanwhile: not here. */
		CHECK(read(to_child[0], &byte, 1) == 1, "read");
		byte = kvt_mismatch(p, 0, len, 0x81, 0) < 0 ? 'k' : 'x';
		CHECK(write(from_child[1], &byte, 1) == 1, "write");
		_exit(T_PASS);
	}
	fill_at(p, 0, SZ_2M, 0x82);
	if (parent_keeps) {
		remote_holds(&s, 0, SZ_2M, 0x82, kind);
		remote_write(&s, len - SZ_2M, SZ_2M, 0x83);
		CHECK(kvt_mismatch(p, len - SZ_2M, SZ_2M, 0x83,
				   len - SZ_2M) < 0,
		      "%s after fork: the parent does not see a remote WRITE",
		      kind);
	} else {
		remote_holds(&s, 0, SZ_2M, 0x81, kind);
	}
	CHECK(write(to_child[1], "c", 1) == 1, "write");
	CHECK(read(from_child[0], &byte, 1) == 1 && byte == 'k',
	      "%s after fork: the child saw the parent's or the device's "
	      "writes", kind);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "the child failed");
	close(to_child[0]);
	close(to_child[1]);
	close(from_child[0]);
	close(from_child[1]);
	subject_close(&s);
	printf("fork with %s registered: the %s keeps the pinned pages\n",
	       kind, parent_keeps ? "parent" : "child (5.10)");
}

static bool kernel_before(int major, int minor)
{
	struct utsname u;
	int a, b;

	CHECK(!uname(&u) && sscanf(u.release, "%d.%d", &a, &b) == 2, "uname");
	return a < major || (a == major && b < minor);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_error err;
	struct kvt_snap before;
	uint8_t *thp, *huge;

	kv = kvt_open();
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	win = kvt_map_anon(LEN);
	CHECK_OK(kvreg_register(kv, win, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&win_mr, &err), &err);
	before = kvt_snap(kv);

	advised(MADV_DONTNEED, "MADV_DONTNEED", true, 0x11);
	kvt_check_unchanged(kv, &before, "after MADV_DONTNEED");
	advised(MADV_FREE, "MADV_FREE", false, 0x21);
	kvt_check_unchanged(kv, &before, "after MADV_FREE");
	reclaimed();
	kvt_check_unchanged(kv, &before, "after reclaim in a memory cgroup");
	memfd_cut(false);
	kvt_check_unchanged(kv, &before, "after a hole punched");
	memfd_cut(true);
	kvt_check_unchanged(kv, &before, "after ftruncate");
	compaction();
	kvt_check_unchanged(kv, &before, "after compaction");
	unmap_running();
	kvt_check_unchanged(kv, &before, "after munmap");
	remap_running();
	kvt_check_unchanged(kv, &before, "after mremap");

	thp = kvt_map_thp(LEN);
	CHECK(kvt_thp_bytes(thp, LEN) == LEN, "THP: %llu of %llu bytes",
	      (unsigned long long)kvt_thp_bytes(thp, LEN),
	      (unsigned long long)LEN);
	forked(thp, LEN, "THP", true);
	kvt_check_unchanged(kv, &before, "after fork with THP");
	huge = kvt_map_hugetlb(LEN);
	CHECK(huge, "no hugetlb pages: %s", strerror(errno));
	forked(huge, LEN, "hugetlb", !kernel_before(5, 11));
	munmap(huge, LEN);
	kvt_check_unchanged(kv, &before, "after fork with hugetlb");

	CHECK_OK(kvreg_deregister(kv, win_mr, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}
