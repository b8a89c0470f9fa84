// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The owner changes its mapping under a registration while transfers on
 * it run: MADV_DONTNEED, MADV_FREE, munmap and mremap of anonymous
 * memory, a hole punched in a memfd and the memfd truncated, memory
 * compacted; and a process with registered THP and hugetlb memory forks.
 * A registration keeps the pages it pinned until DEREGISTER whatever the
 * mapping does (docs/registration.md says what a remote READ returns
 * after each, and this checks it, byte for byte, on both sides): a thread
 * moves bytes through each registration over RDMA all along and checks
 * every READ against its WRITE, and must have moved some after each
 * change. At the end, pins, MRs, charges and VmPin are where they began.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kvtransfer.h"

#define LEN	(16 * SZ_4K)

struct region {
	const char *name;
	uint8_t *p;
	uint64_t len;
	struct kvreg_mr *mr;
	struct kvreg_remote *r;
	uint64_t ep;
};

static struct kvreg *kv;
static uint32_t dev;
/* The mover's own buffers, and the main thread's. */
static uint8_t *mover_buf, *check_buf;
static struct kvreg_mr *mover_mr, *check_mr;

static struct {
	struct region *regions;
	unsigned int nr;
	volatile int stop;
	volatile unsigned long rounds;	/* WRITE + READ of every region */
	const char *failed;
} mover;

static long long vm_pin_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	long long kb = -1;
	char line[256];

	CHECK(f, "/proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %lld kB", &kb) == 1)
			break;
	fclose(f);
	CHECK(kb >= 0, "no VmPin");
	return kb;
}

static void reg_region(struct region *g, const char *name, uint8_t *p,
		       uint64_t len)
{
	struct kvreg_error err;

	g->name = name;
	g->p = p;
	g->len = len;
	CHECK_OK(kvreg_register(kv, p, len, KVREG_ACCESS_ALL, 1ULL << dev,
				&g->mr, &err), &err);
	g->r = kvt_self_import(kv, g->mr, dev, &g->ep);
}

static void unreg_region(struct region *g)
{
	struct kvreg_error err;

	CHECK_OK(kvreg_unimport(kv, g->r, &err), &err);
	CHECK_OK(kvreg_unlisten(kv, g->ep, &err), &err);
	CHECK_OK(kvreg_deregister(kv, g->mr, &err), &err);
}

static void rdma(enum kvreg_transfer_op op, const struct kvreg_mr *local,
		 struct region *g)
{
	struct kvreg_error err;

	CHECK_OK(kvreg_transfer_remote(kv, op, local, 0, g->r, 0, g->len,
				       &err), &err);
}

/* Every round, through every region: a WRITE, then a READ of it back. */
static void *mover_main(void *arg)
{
	struct kvreg_error err;
	uint32_t seed = 0x100;
	unsigned int i;

	(void)arg;
	while (!mover.stop) {
		for (i = 0; i < mover.nr; i++) {
			struct region *g = &mover.regions[i];
			int ret;

			kvt_fill(mover_buf, g->len, ++seed);
			ret = kvreg_transfer_remote(kv, KVREG_OP_WRITE,
						    mover_mr, 0, g->r, 0,
						    g->len, &err);
			if (!ret)
				ret = kvreg_transfer_remote(kv, KVREG_OP_READ,
							    mover_mr, g->len,
							    g->r, 0, g->len,
							    &err);
			if (ret || kvt_mismatch(mover_buf, g->len, g->len,
						seed, 0) >= 0) {
				mover.failed = g->name;
				return NULL;
			}
		}
		mover.rounds++;
	}
	return NULL;
}

/* Two whole rounds of the mover after this point: it ran across. */
static void moved_across(const char *change)
{
	unsigned long start = mover.rounds;
	double t0 = kvt_now();

	while (mover.rounds < start + 2 && !mover.failed &&
	       kvt_now() - t0 < 60)
		usleep(1000);
	CHECK(!mover.failed, "after %s: a READ of %s did not bring back its "
	      "WRITE", change, mover.failed);
	CHECK(mover.rounds >= start + 2, "after %s: the mover moved nothing "
	      "in 60 s", change);
}

/*
 * What the registration holds now: @seed written by RDMA lands in its
 * pages and reads back, whatever the mapping shows.
 */
static void registration_holds(struct region *g, uint32_t seed)
{
	kvt_fill(check_buf, g->len, seed);
	rdma(KVREG_OP_WRITE, check_mr, g);
	memset(check_buf, 0, g->len);
	rdma(KVREG_OP_READ, check_mr, g);
	CHECK(kvt_mismatch(check_buf, 0, g->len, seed, 0) < 0,
	      "%s: a READ after a WRITE brought back other bytes", g->name);
}

/* A remote READ of @g brings @seed. */
static void reads_as(struct region *g, uint32_t seed, const char *what)
{
	int64_t bad;

	memset(check_buf, 0, g->len);
	rdma(KVREG_OP_READ, check_mr, g);
	bad = kvt_mismatch(check_buf, 0, g->len, seed, 0);
	CHECK(bad < 0, "%s: %s: a remote READ differs at byte %lld", g->name,
	      what, (long long)bad);
}

static bool all_zero(const uint8_t *p, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static int memfd(uint64_t len)
{
	int fd = (int)syscall(SYS_memfd_create, "kvreg-memory-changes", 0);

	CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	CHECK(!ftruncate(fd, (off_t)len), "ftruncate: %s", strerror(errno));
	return fd;
}

static void mapping_changes(void)
{
	enum { DONTNEED, FREE, UNMAP, REMAP, PUNCH, TRUNCATE, NR };
	static const char *const names[NR] = {
		"MADV_DONTNEED", "MADV_FREE", "munmap", "mremap",
		"a punched memfd", "a truncated memfd",
	};
	struct region g[NR];
	int fd_punch = memfd(LEN), fd_trunc = memfd(LEN);
	pthread_t t;
	uint8_t *moved;
	unsigned int i;

	for (i = 0; i < NR; i++) {
		uint8_t *p;

		if (i == PUNCH || i == TRUNCATE) {
			p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
				 i == PUNCH ? fd_punch : fd_trunc, 0);
			CHECK(p != MAP_FAILED, "mmap memfd: %s",
			      strerror(errno));
		} else {
			p = kvt_map_anon(LEN);
		}
		reg_region(&g[i], names[i], p, LEN);
	}
	mover.regions = g;
	mover.nr = NR;
	CHECK(!pthread_create(&t, NULL, mover_main, NULL), "pthread_create");
	moved_across("the start");

	CHECK(!madvise(g[DONTNEED].p, LEN, MADV_DONTNEED), "MADV_DONTNEED");
	moved_across(names[DONTNEED]);
	CHECK(!madvise(g[FREE].p, LEN, MADV_FREE), "MADV_FREE: %s",
	      strerror(errno));
	moved_across(names[FREE]);
	CHECK(!munmap(g[UNMAP].p, LEN), "munmap");
	moved_across(names[UNMAP]);
	moved = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(moved != MAP_FAILED, "mmap");
	CHECK(mremap(g[REMAP].p, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED,
		     moved) == moved, "mremap: %s", strerror(errno));
	moved_across(names[REMAP]);
	CHECK(!fallocate(fd_punch, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			 0, LEN), "punch: %s", strerror(errno));
	moved_across(names[PUNCH]);
	CHECK(!ftruncate(fd_trunc, 0), "ftruncate: %s", strerror(errno));
	moved_across(names[TRUNCATE]);
	CHECK(!kvt_put("/proc/sys/vm/compact_memory", "1"),
	      "compact_memory: %s", strerror(errno));
	moved_across("compaction");
	mover.stop = 1;
	pthread_join(t, NULL);
	CHECK(!mover.failed, "a READ of %s did not bring back its WRITE",
	      mover.failed);
	printf("%lu rounds through six registrations across six changes "
	       "and a compaction\n", mover.rounds);

	/*
	 * Each registration still holds its own pages; what the owner's
	 * mapping shows now, and whether the owner's writes reach them,
	 * depends on the change.
	 */
	for (i = 0; i < NR; i++)
		registration_holds(&g[i], 0x200 + i);

	/* Zapped: the owner faults in new zero pages; its writes stay there. */
	CHECK(all_zero(g[DONTNEED].p, LEN), "MADV_DONTNEED: the owner does "
	      "not see zeros");
	kvt_fill(g[DONTNEED].p, LEN, 0x300);
	reads_as(&g[DONTNEED], 0x200 + DONTNEED, "after the owner wrote");
	/* Pinned pages are never freed lazily: the owner still has them. */
	CHECK(kvt_mismatch(g[FREE].p, 0, LEN, 0x200 + FREE, 0) < 0,
	      "MADV_FREE: the owner lost the registration's bytes");
	kvt_fill(g[FREE].p, LEN, 0x301);
	reads_as(&g[FREE], 0x301, "after the owner wrote");
	/* Moved, not copied: the owner's new address maps the same pages. */
	CHECK(kvt_mismatch(moved, 0, LEN, 0x200 + REMAP, 0) < 0,
	      "mremap: the moved mapping does not show the registration");
	kvt_fill(moved, LEN, 0x303);
	reads_as(&g[REMAP], 0x303, "after the owner wrote at its new address");
	/* Punched: the file has new pages, the registration its old ones. */
	CHECK(all_zero(g[PUNCH].p, LEN), "punch: the owner does not see "
	      "zeros");
	kvt_fill(g[PUNCH].p, LEN, 0x304);
	reads_as(&g[PUNCH], 0x200 + PUNCH, "after the owner wrote");
	/* Truncated: the owner may not touch it (SIGBUS); the pins hold. */
	reads_as(&g[TRUNCATE], 0x200 + TRUNCATE, "after truncation");

	for (i = 0; i < NR; i++)
		unreg_region(&g[i]);
	printf("after each: the registration kept its pages; the owner's "
	       "writes reached them after MADV_FREE and mremap only\n");
	close(fd_punch);
	close(fd_trunc);
}

/*
 * A process with registered THP and hugetlb memory forks: the child's
 * writes stay in its copy, the parent's reach the registration.
 */
static void fork_huge(void)
{
	uint8_t *huge = kvt_map_hugetlb(2 * SZ_2M);
	struct region g[2];
	unsigned int i;
	pid_t pid;
	int status;

	CHECK(huge, "no hugetlb page free");
	reg_region(&g[0], "THP", kvt_map_thp(2 * SZ_2M), 2 * SZ_2M);
	reg_region(&g[1], "hugetlb", huge, 2 * SZ_2M);
	CHECK(kvt_thp_bytes(g[0].p, g[0].len) == g[0].len,
	      "the THP registration is not THP (%llu bytes)",
	      (unsigned long long)kvt_thp_bytes(g[0].p, g[0].len));
	for (i = 0; i < 2; i++)
		registration_holds(&g[i], 0x400 + i);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		for (i = 0; i < 2; i++) {
			if (kvt_mismatch(g[i].p, 0, g[i].len, 0x400 + i, 0) >= 0)
				_exit(2);
			kvt_fill(g[i].p, g[i].len, 0x500 + i);
			if (kvt_mismatch(g[i].p, 0, g[i].len, 0x500 + i, 0) >= 0)
				_exit(3);
		}
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      !WEXITSTATUS(status), "the child's copy was wrong (status %#x)",
	      status);
	for (i = 0; i < 2; i++) {
		reads_as(&g[i], 0x400 + i, "after the child wrote its copy");
		CHECK(kvt_mismatch(g[i].p, 0, g[i].len, 0x400 + i, 0) < 0,
		      "%s: the child's writes reached the parent", g[i].name);
		kvt_fill(g[i].p, g[i].len, 0x600 + i);
		reads_as(&g[i], 0x600 + i, "after the parent wrote, "
			 "having forked");
		unreg_region(&g[i]);
	}
	printf("fork with THP and hugetlb registered: the child's writes stayed "
	       "in its copy, the parent's reached the registration\n");
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_error err;
	struct kvt_snap before;
	long long pin_before;

	kv = kvt_open();
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	before = kvt_snap(kv);
	pin_before = vm_pin_kib();
	mover_buf = kvt_map_anon(2 * 2 * SZ_2M);
	check_buf = kvt_map_anon(2 * SZ_2M);
	CHECK_OK(kvreg_register(kv, mover_buf, 2 * 2 * SZ_2M,
				KVREG_ACCESS_LOCAL_WRITE, 1ULL << dev,
				&mover_mr, &err), &err);
	CHECK_OK(kvreg_register(kv, check_buf, 2 * SZ_2M,
				KVREG_ACCESS_LOCAL_WRITE, 1ULL << dev,
				&check_mr, &err), &err);

	mapping_changes();
	fork_huge();

	CHECK_OK(kvreg_deregister(kv, mover_mr, &err), &err);
	CHECK_OK(kvreg_deregister(kv, check_mr, &err), &err);
	kvt_check_unchanged(kv, &before, "after every change");
	CHECK(vm_pin_kib() == pin_before, "VmPin %lld KiB, was %lld",
	      vm_pin_kib(), pin_before);
	kvreg_close(kv);
	printf("PASS\n");
	return T_PASS;
}
