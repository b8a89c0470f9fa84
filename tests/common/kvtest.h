/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * Helpers for kvreg test programs. Each test is one program: exit 0 pass,
 * 1 fail, 77 skip (the automake convention liburing uses too).
 */
#ifndef KVTEST_H
#define KVTEST_H

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kvreg.h"

#define T_PASS	0
#define T_FAIL	1
#define T_SKIP	77

#define SZ_4K	4096UL
#define SZ_2M	(2UL << 20)

/* Before any output: a test killed by its timeout shows how far it got. */
__attribute__((constructor)) static void kvt_line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline void kvt_die(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(T_FAIL);
}

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			kvt_die(__FILE__, __LINE__, "check failed: " #cond \
				": " __VA_ARGS__);			\
	} while (0)

/* A libkvreg call that must succeed; prints the formatted error if not. */
#define CHECK_OK(call, errp)						\
	do {								\
		int kvt_ret_ = (call);					\
		if (kvt_ret_) {						\
			char kvt_msg_[512];				\
			kvreg_format_error(errp, kvt_ret_, kvt_msg_,	\
					   sizeof(kvt_msg_));		\
			kvt_die(__FILE__, __LINE__, "%s failed: %d: %s", \
				#call, kvt_ret_, kvt_msg_);		\
		}							\
	} while (0)

/* Seconds on the monotonic clock: for the bounds a test checks. */
static inline double kvt_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * The guest runs 5.10, whose rxe drops a request with a bad rkey rather
 * than NAK it, and which the tests allow for by name.
 */
static inline bool kvt_on_5_10(void)
{
	static int on = -1;
	struct utsname u;

	if (on < 0)
		on = !uname(&u) && !strncmp(u.release, "5.10.", 5);
	return on;
}

/*
 * A bad rkey's refusal once its request was posted: the peer's NAK
 * (REMOTE_ACCESS with IB_WC_REM_ACCESS_ERR, 10), or the connection lost
 * under the posted request: the requester's retries run out
 * (IB_WC_RETRY_EXC_ERR, 12; 5.10's rxe drops such a request rather than
 * NAK it) or it is flushed (5; on 7.2 the peer's disconnect can overtake
 * its NAK). A refusal kvreg made before posting (a connection already
 * known lost, status 0) proves nothing about the key, and is not one.
 */
static inline bool kvt_refused_posted(int ret, const struct kvreg_error *err)
{
	if (ret == -EIO && err->reason == KVREG_REASON_REMOTE_ACCESS &&
	    err->wc_status == 10)
		return true;
	return ret == -ENOTCONN && err->reason == KVREG_REASON_CONN_LOST &&
	       (err->wc_status == 12 || err->wc_status == 5);
}

/*
 * Stricter: the peer's device itself refused it (its NAK), where the
 * device NAKs; on 5.10, whose rxe drops the request, as above.
 */
static inline bool kvt_device_refused(int ret, const struct kvreg_error *err)
{
	if (ret == -EIO && err->reason == KVREG_REASON_REMOTE_ACCESS &&
	    err->wc_status == 10)
		return true;
	return kvt_on_5_10() && kvt_refused_posted(ret, err);
}

static inline void kvt_skip(const char *why)
{
	printf("SKIP: %s\n", why);
	exit(T_SKIP);
}

static inline struct kvreg *kvt_open(void)
{
	struct kvreg_error err;
	struct kvreg *kv;

	CHECK_OK(kvreg_open(&kv, &err), &err);
	return kv;
}

/*
 * Eight pattern bytes: word @n of seed @seed's stream (splitmix64's
 * mixer), so that two seeds share no more bytes than chance gives, at any
 * shift. The earlier one-multiply pattern XORed the seed in twice: every
 * seed below 128 gave the same bytes, and a test could not tell one
 * write from another.
 */
static inline uint64_t kvt_word(uint32_t seed, uint64_t n)
{
	uint64_t z = (n + 1) * 0x9E3779B97F4A7C15ULL +
		     (uint64_t)seed * 0xD1B54A32D192ED03ULL;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* The pattern byte of seed @seed at offset @off. */
static inline uint8_t kvt_byte(uint32_t seed, uint64_t off)
{
	return (uint8_t)(kvt_word(seed, off / 8) >> (off % 8 * 8));
}

/*
 * The pattern a word at a time where the host lays a word's bytes out in
 * the order kvt_byte() numbers them: the guests run under TCG and the
 * tests under ASan, where a byte loop over tens of MiB takes seconds per
 * pass. Elsewhere, and at the unaligned ends, byte by byte; tests/unit/
 * pattern checks that both give the same bytes and the same first offset.
 */
#define KVT_WORDS (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

/*
 * @buf gets the bytes @seed's pattern has at [@seed_off, @seed_off +
 * @len): one pattern laid over a whole pool, written a piece at a time,
 * reads the same from any offset of it (kvt_mismatch() with @seed_off),
 * so a piece that lands at another offset is seen.
 */
static inline void kvt_fill_from(void *buf, uint64_t len, uint32_t seed,
				 uint64_t seed_off)
{
	uint8_t *p = buf;
	uint64_t i = 0, w;

	for (; i < len && (!KVT_WORDS || (seed_off + i) % 8); i++)
		p[i] = kvt_byte(seed, seed_off + i);
	for (; KVT_WORDS && i + 8 <= len; i += 8) {
		w = kvt_word(seed, (seed_off + i) / 8);
		memcpy(p + i, &w, 8);
	}
	for (; i < len; i++)
		p[i] = kvt_byte(seed, seed_off + i);
}

static inline void kvt_fill(void *buf, uint64_t len, uint32_t seed)
{
	kvt_fill_from(buf, len, seed, 0);
}

/* First offset in [off, off+len) where buf differs from the pattern. */
static inline int64_t kvt_mismatch(const void *buf, uint64_t off, uint64_t len,
				   uint32_t seed, uint64_t seed_off)
{
	const uint8_t *p = buf;
	uint64_t i = 0, w, v;

	/* Bytes up to the pattern's next word, then whole words. */
	for (; i < len && (!KVT_WORDS || (seed_off + i) % 8); i++)
		if (p[off + i] != kvt_byte(seed, seed_off + i))
			return (int64_t)(off + i);
	for (; i + 8 <= len; i += 8) {
		w = kvt_word(seed, (seed_off + i) / 8);
		memcpy(&v, p + off + i, 8);
		if (v != w)
			break;
	}
	/* The tail, or the word that differed, to its first byte. */
	for (; i < len; i++)
		if (p[off + i] != kvt_byte(seed, seed_off + i))
			return (int64_t)(off + i);
	return -1;
}

/* xorshift64*: a sequence reproducible from the seed a test prints. */
static inline uint64_t kvt_rnd(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545F4914F6CDD1DULL;
}

static inline void *kvt_map_anon(uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap %llu: %s", (unsigned long long)len,
	      strerror(errno));
	/* Base pages only: the 4 KiB tests must not get THP by chance. */
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 0, len);
	return p;
}

/* Zeroed memory a forked child shares with its parent. */
static inline void *kvt_map_shared(uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap %llu: %s", (unsigned long long)len,
	      strerror(errno));
	return p;
}

static inline uint64_t kvt_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Base pages that are not physically contiguous in address order, so that
 * kvreg must use 4 KiB MR pages (contiguous pages get larger ones). The
 * allocator hands out a mapping's pages in the order they are faulted, so
 * page i * stride (mod pages) is touched i-th: neighbours were faulted
 * stride apart, whichever way (up or down) the allocator walks. A plain
 * reversal is not enough: a descending allocator makes it contiguous.
 * One VMA, not one per page: a mapping of 10,000 VMAs makes every walk
 * of /proc/self/smaps and every pin slow enough to time out under KASAN.
 */
static inline void *kvt_map_anon_scattered(uint64_t len)
{
	uint64_t pages = (len + SZ_4K - 1) / SZ_4K, stride = 3, i;
	uint8_t *p = mmap(NULL, pages * SZ_4K, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap %llu: %s", (unsigned long long)len,
	      strerror(errno));
	madvise(p, pages * SZ_4K, MADV_NOHUGEPAGE);
	while (stride + 1 < pages && kvt_gcd(stride, pages) != 1)
		stride++;
	if (stride + 1 >= pages)
		stride = pages > 1 ? pages - 1 : 1;
	for (i = 0; i < pages; i++)
		p[((i * stride) % pages) * SZ_4K] = 0;
	return p;
}

/* hugetlb 2 MiB pages, or NULL when the guest has none free. */
static inline void *kvt_map_hugetlb(uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	return p;
}

/* A 2 MiB aligned anonymous mapping asking for THP, faulted in. */
static inline void *kvt_map_thp(uint64_t len)
{
	uint8_t *raw = mmap(NULL, len + SZ_2M, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *p;

	CHECK(raw != MAP_FAILED, "mmap: %s", strerror(errno));
	p = (uint8_t *)(((uintptr_t)raw + SZ_2M - 1) & ~(SZ_2M - 1));
	CHECK(!madvise(p, len, MADV_HUGEPAGE), "madvise: %s", strerror(errno));
	memset(p, 0, len);
	return p;
}

/* Bytes of [p, p+len) backed by transparent huge pages, from smaps. */
static inline uint64_t kvt_thp_bytes(const void *p, uint64_t len)
{
	uintptr_t start = (uintptr_t)p, lo, hi;
	uint64_t kb = 0, total = 0;
	int in_range = 0;
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in_range = lo < start + len && hi > start;
		else if (in_range &&
			 sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			total += kb * 1024;
	}
	fclose(f);
	return total;
}

static inline struct kvreg_stats kvt_stats(struct kvreg *kv)
{
	struct kvreg_error err;
	struct kvreg_stats st;

	CHECK_OK(kvreg_stats(kv, &st, &err), &err);
	return st;
}

static inline unsigned int kvt_devices(struct kvreg *kv,
				       struct kvreg_device_info *devs)
{
	struct kvreg_error err;
	unsigned int n;

	CHECK_OK(kvreg_devices(kv, devs, KVREG_MAX_DEVICES, &n, &err), &err);
	return n;
}

/*
 * Pages pinned with FOLL_PIN and not yet released, host-wide, as the kernel
 * itself counts them (/proc/vmstat). This does not trust kvreg's counter.
 */
static inline int64_t kvt_kernel_pins(void)
{
	long long acquired = -1, released = -1, v;
	char name[64];
	FILE *f;
	int fd;

	/* Fold every CPU's pending deltas first, or the counts lag. */
	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	CHECK(fd >= 0 && write(fd, "1", 1) == 1,
	      "/proc/sys/vm/stat_refresh: %s", strerror(errno));
	close(fd);
	f = fopen("/proc/vmstat", "r");
	CHECK(f, "/proc/vmstat: %s", strerror(errno));
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acquired = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			released = v;
	}
	fclose(f);
	CHECK(acquired >= 0 && released >= 0, "no FOLL_PIN counters");
	return acquired - released;
}

/* kvreg's and the kernel's view of what is held, at one moment. */
struct kvt_snap {
	struct kvreg_stats st;
	int64_t kernel_pins;
};

static inline struct kvt_snap kvt_snap(struct kvreg *kv)
{
	struct kvt_snap s = { .st = kvt_stats(kv) };

	s.kernel_pins = kvt_kernel_pins();
	return s;
}

/* Nothing pinned, registered or created since @before, by either count. */
static inline void kvt_check_unchanged(struct kvreg *kv,
				       const struct kvt_snap *before,
				       const char *when)
{
	struct kvt_snap now = kvt_snap(kv);

	CHECK(now.st.pinned_pages == before->st.pinned_pages &&
	      now.kernel_pins == before->kernel_pins &&
	      now.st.mrs == before->st.mrs &&
	      now.st.registrations == before->st.registrations,
	      "%s: left behind: kvreg pinned %llu -> %llu, kernel pins "
	      "%lld -> %lld, MRs %llu -> %llu, registrations %llu -> %llu",
	      when, (unsigned long long)before->st.pinned_pages,
	      (unsigned long long)now.st.pinned_pages,
	      (long long)before->kernel_pins, (long long)now.kernel_pins,
	      (unsigned long long)before->st.mrs,
	      (unsigned long long)now.st.mrs,
	      (unsigned long long)before->st.registrations,
	      (unsigned long long)now.st.registrations);
	/* And this process's caps: nothing charged is left either. */
	CHECK(now.st.proc_endpoints == before->st.proc_endpoints &&
	      now.st.proc_imports == before->st.proc_imports &&
	      now.st.proc_import_chunks == before->st.proc_import_chunks &&
	      now.st.file_unreaped == before->st.file_unreaped,
	      "%s: left charged: endpoints %llu -> %llu, imports %llu -> "
	      "%llu, imported chunks %llu -> %llu, unreaped %u -> %u", when,
	      (unsigned long long)before->st.proc_endpoints,
	      (unsigned long long)now.st.proc_endpoints,
	      (unsigned long long)before->st.proc_imports,
	      (unsigned long long)now.st.proc_imports,
	      (unsigned long long)before->st.proc_import_chunks,
	      (unsigned long long)now.st.proc_import_chunks,
	      before->st.file_unreaped, now.st.file_unreaped);
}

/* Both counts grew by exactly @pages since @before. */
/*
 * kvreg counts pinned memory in base pages; the kernel counts pins, and
 * kvreg pins hugetlb memory once per huge page: @kernel_pins differs
 * from @pages there (kvt_expected_pins()).
 */
static inline void kvt_check_pins(struct kvreg *kv,
				  const struct kvt_snap *before,
				  uint64_t pages, uint64_t kernel_pins,
				  const char *when)
{
	struct kvt_snap now = kvt_snap(kv);

	CHECK(now.st.pinned_pages - before->st.pinned_pages == pages &&
	      now.kernel_pins - before->kernel_pins == (int64_t)kernel_pins,
	      "%s: want %llu pages pinned by %llu pins: kvreg says %llu "
	      "pages, kernel says %lld pins", when, (unsigned long long)pages,
	      (unsigned long long)kernel_pins,
	      (unsigned long long)(now.st.pinned_pages -
				   before->st.pinned_pages),
	      (long long)(now.kernel_pins - before->kernel_pins));
}

static inline void kvt_check_pinned(struct kvreg *kv,
				    const struct kvt_snap *before,
				    uint64_t pages, const char *when)
{
	kvt_check_pins(kv, before, pages, pages, when);
}

/* Whether [p, p + 1) lies in a hugetlb mapping of 2 MiB pages. */
static inline bool kvt_is_hugetlb(const void *p)
{
	uintptr_t addr = (uintptr_t)p, lo, hi;
	unsigned long kb;
	int in_range = 0;
	bool huge = false;
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in_range = lo <= addr && addr < hi;
		else if (in_range &&
			 sscanf(line, "KernelPageSize: %lu kB", &kb) == 1)
			huge = kb == 2048;
	}
	fclose(f);
	return huge;
}

/* The pins kvreg takes for [p, p + len): per huge page on hugetlb. */
static inline uint64_t kvt_expected_pins(const void *p, uint64_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;

	uint64_t blocks = ((hi + SZ_2M - 1) / SZ_2M) - lo / SZ_2M;

	/* hugetlb, and THP mapped whole by PMDs: one pin per 2 MiB. */
	if (kvt_is_hugetlb(p) || kvt_thp_bytes(p, len) >= blocks * SZ_2M)
		return blocks;
	return ((hi + SZ_4K - 1) / SZ_4K) - lo / SZ_4K;
}

/* Lines of 'rdma res show KIND': what the rdma tool lists. */
static inline long kvt_rdma_res_tool(const char *kind)
{
	char cmd[64], line[512];
	int status;
	long n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma res show %s 2>/dev/null", kind);
	f = popen(cmd, "r");
	CHECK(f, "popen");
	while (fgets(line, sizeof(line), f))
		n++;
	/* A count from a command that failed would make every bound pass. */
	status = pclose(f);
	CHECK(status == 0, "'rdma res show %s' failed: status %#x", kind,
	      status);
	return n;
}

/* The attributes nested in @a's payload, one after another. */
#define KVT_NLA_FOR_EACH(pos, a)					\
	for (pos = (struct nlattr *)((char *)(a) + NLA_HDRLEN);		\
	     (char *)pos + NLA_HDRLEN <= (char *)(a) + (a)->nla_len &&	\
	     pos->nla_len >= NLA_HDRLEN &&				\
	     (char *)pos + pos->nla_len <= (char *)(a) + (a)->nla_len;	\
	     pos = (struct nlattr *)((char *)pos + NLA_ALIGN(pos->nla_len)))

/* @kind's count in one device's RDMA_NLDEV_CMD_RES_GET answer. */
static inline long kvt_rdma_res_of_dev(const struct nlmsghdr *h,
				       const char *kind)
{
	const struct nlattr *top = (const struct nlattr *)NLMSG_DATA(h);
	int left = (int)h->nlmsg_len - NLMSG_HDRLEN;
	struct nlattr *entry, *field;

	for (; left >= NLA_HDRLEN && top->nla_len >= NLA_HDRLEN &&
	       top->nla_len <= left;
	     left -= NLA_ALIGN(top->nla_len),
	     top = (const struct nlattr *)((const char *)top +
					   NLA_ALIGN(top->nla_len))) {
		if ((top->nla_type & NLA_TYPE_MASK) !=
		    RDMA_NLDEV_ATTR_RES_SUMMARY)
			continue;
		KVT_NLA_FOR_EACH(entry, top) {
			const char *name = NULL;
			uint64_t curr = 0;
			int have = 0;

			KVT_NLA_FOR_EACH(field, entry) {
				void *v = (char *)field + NLA_HDRLEN;

				switch (field->nla_type & NLA_TYPE_MASK) {
				case RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME:
					name = v;
					break;
				case RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR:
					memcpy(&curr, v, sizeof(curr));
					have = 1;
					break;
				}
			}
			if (name && have && !strcmp(name, kind))
				return (long)curr;
		}
	}
	return 0;
}

/*
 * The kernel's count of RDMA objects of @kind (qp, cm_id) over every
 * device: the summary 'rdma res' prints, asked of RDMA netlink directly.
 * Under KASAN one run of the rdma tool costs 0.8 s, and the tests ask
 * hundreds of times.
 */
static inline long kvt_rdma_res_netlink(const char *kind)
{
	struct nlmsghdr req = {
		.nlmsg_len = NLMSG_LENGTH(0),
		.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV,
					       RDMA_NLDEV_CMD_RES_GET),
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.nlmsg_seq = 1,
	};
	char buf[65536] __attribute__((aligned(8)));
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	long total = 0;
	ssize_t got;
	int done = 0;

	CHECK(fd >= 0, "RDMA netlink socket: %s", strerror(errno));
	CHECK(send(fd, &req, req.nlmsg_len, 0) == (ssize_t)req.nlmsg_len,
	      "RDMA netlink request: %s", strerror(errno));
	while (!done) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		got = recv(fd, buf, sizeof(buf), 0);
		CHECK(got > 0, "RDMA netlink answer: %s",
		      got ? strerror(errno) : "closed");
		for (; NLMSG_OK(h, got); h = NLMSG_NEXT(h, got)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			CHECK(h->nlmsg_type != NLMSG_ERROR,
			      "RDMA netlink refused the resource dump: %d",
			      ((struct nlmsgerr *)NLMSG_DATA(h))->error);
			total += kvt_rdma_res_of_dev(h, kind);
		}
	}
	close(fd);
	return total;
}

/*
 * The kernel's count of RDMA objects of @kind (qp, cm_id): every user's
 * objects, kvreg's among them. Read over netlink; the first read of each
 * kind in a process is held against what the rdma tool lists, so the
 * two cannot drift apart unseen (read again while objects come and go).
 */
static inline long kvt_rdma_res(const char *kind)
{
	static char checked[4][16];
	long before, tool, after;
	int i, tries;

	for (i = 0; i < 4 && checked[i][0]; i++)
		if (!strcmp(checked[i], kind))
			return kvt_rdma_res_netlink(kind);
	for (tries = 0; tries < 20; tries++) {
		before = kvt_rdma_res_netlink(kind);
		tool = kvt_rdma_res_tool(kind);
		after = kvt_rdma_res_netlink(kind);
		if (before == after && tool == after)
			break;
		usleep(100 * 1000);
	}
	CHECK(before == after && tool == after,
	      "RDMA objects of kind %s: netlink counts %ld, the rdma tool "
	      "lists %ld", kind, after, tool);
	if (i < 4)
		snprintf(checked[i], sizeof(checked[i]), "%s", kind);
	return after;
}

/* User-space verbs need the uverbs device (built in on debug). */
static inline void kvt_uverbs(void)
{
	if (system("modprobe ib_uverbs 2>/dev/null") != 0)
		printf("modprobe ib_uverbs failed: built in, I hope\n");
}

/* A shell command the test needs to succeed (rdma, ip). */
static inline void kvt_run(const char *cmd)
{
	CHECK(system(cmd) == 0, "%s", cmd);
}

/* Write @text to a sysfs, debugfs, procfs or cgroup file: 0 or -1. */
static inline int kvt_put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static inline unsigned long long kvt_read_param(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	CHECK(f && fscanf(f, "%llu", &v) == 1, "read %s", path);
	fclose(f);
	return v;
}

static inline void kvt_write_param(const char *path, unsigned long long v)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu\n", v);
	CHECK(!kvt_put(path, text), "write %s", path);
}

/* Expect a failure with this errno and reason. */
#define CHECK_FAILS(call, errp, want_errno, want_reason)		\
	do {								\
		int kvt_r_ = (call);					\
		char kvt_m_[512];					\
		kvreg_format_error(errp, kvt_r_, kvt_m_, sizeof(kvt_m_)); \
		CHECK(kvt_r_ == -(want_errno) &&			\
		      (errp)->reason == (want_reason),			\
		      "%s: got %d reason %u (%s), want %d reason %u",	\
		      #call, kvt_r_, (errp)->reason, kvt_m_,		\
		      -(want_errno), (unsigned int)(want_reason));	\
		printf("refused as expected: %s\n", kvt_m_);		\
	} while (0)

#endif
