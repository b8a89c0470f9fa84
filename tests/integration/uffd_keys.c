// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A REGISTER whose key buffer is on a userfaultfd page that nobody
 * fills stalls in the copy of its keys for as long as the fault is held.
 * That stall is the caller's alone: it holds no lock the RDMA CM's
 * callbacks take. While it lasts, a peer's IMPORT of the same file's
 * export and one of another file's both connect within their timeout
 * and move bytes; then the fault is served and REGISTER returns the keys
 * QUERY gives.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "kvchild.h"
#include "kvtransfer.h"

#define LEN		(4 * SZ_2M)
#define ADDR		"192.0.2.1"
#define TIMEOUT_MS	5000
#define DESC_MAX	(16 * 1024)

struct ctl {
	size_t desc_size[2];
	uint8_t desc[2][DESC_MAX];
};

static struct ctl *ctl;

struct stalled {
	int fd;
	struct kvreg_register arg;
	struct kvreg_error err;
	int ret;
	volatile int done;
};

static void *register_stalled(void *p)
{
	struct stalled *s = p;

	s->ret = ioctl(s->fd, KVREG_IOC_REGISTER, &s->arg) ? -errno : 0;
	s->done = 1;
	return NULL;
}

/* What a peer does: import descriptor @which, WRITE and READ a page. */
static void importer(void *arg)
{
	int which = *(int *)arg;
	struct kvreg *kv = kvt_open();
	uint8_t *mine = kvt_map_anon(SZ_4K);
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_mr *local;
	double t0;

	CHECK_OK(kvreg_register(kv, mine, SZ_4K, KVREG_ACCESS_ALL, 0, &local,
				&err), &err);
	kvt_send_byte(kvt_me.ack, 'r');
	kvt_recv_byte(kvt_me.cmd);
	t0 = kvt_now();
	CHECK_OK(kvreg_import(kv, ctl->desc[which], ctl->desc_size[which],
			      TIMEOUT_MS, &r, &err), &err);
	kvt_fill(mine, SZ_4K, 0x30 + which);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0,
				       SZ_4K, &err), &err);
	memset(mine, 0, SZ_4K);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, 0, r, 0,
				       SZ_4K, &err), &err);
	CHECK(kvt_mismatch(mine, 0, SZ_4K, 0x30 + which, 0) < 0,
	      "the bytes read back");
	printf("import of file %c's export: connected and moved a page in "
	       "%.2f s\n", 'A' + which, kvt_now() - t0);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	kvreg_close(kv);
	kvt_send_byte(kvt_me.ack, 'd');
	/* Not exit(): the files open before the fork are the parent's. */
	_exit(T_PASS);
}

static struct kvreg_mr *export(struct kvreg *kv, uint8_t *pool, uint32_t dev,
			       int which)
{
	struct kvreg_error err;
	struct kvreg_mr *mr;
	uint64_t ep;

	CHECK_OK(kvreg_register(kv, pool, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&mr, &err), &err);
	CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep, mr, ctl->desc[which], DESC_MAX,
			      &ctl->desc_size[which], &err), &err);
	return mr;
}

/* The userfaultfd and its one page, registered for missing faults. */
static int uffd_page(void **page)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		kvt_skip("userfaultfd not available");
	CHECK(!ioctl(fd, UFFDIO_API, &api), "UFFDIO_API: %s", strerror(errno));
	*page = mmap(NULL, SZ_4K, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(*page != MAP_FAILED, "mmap");
	reg.range.start = (uintptr_t)*page;
	reg.range.len = SZ_4K;
	CHECK(!ioctl(fd, UFFDIO_REGISTER, &reg), "UFFDIO_REGISTER: %s",
	      strerror(errno));
	return fd;
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_query q = { 0 };
	struct stalled s = { 0 };
	struct kvt_child peers[2];
	struct uffd_msg msg;
	struct kvreg_mr *mr[2];
	struct kvreg *kv[2];
	struct kvreg_error err;
	struct kvreg_key *keys;
	uint8_t *pool[2], *buf;
	pthread_t thread;
	int uffd, i, which[2] = { 0, 1 };
	void *page;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(ctl != MAP_FAILED, "mmap");
	kv[0] = kvt_open();
	kv[1] = kvt_open();
	if (!kvt_devices(kv[0], devs))
		kvt_skip("no RDMA device");
	for (i = 0; i < 2; i++) {
		pool[i] = kvt_map_anon(LEN);
		mr[i] = export(kv[i], pool[i], devs[0].index, i);
	}
	uffd = uffd_page(&page);
	/*
	 * Forked before the stall (a fork would wait on the held fault), and
	 * after the page is registered: a child's copy of it is not.
	 */
	for (i = 0; i < 2; i++)
		peers[i] = kvt_spawn(importer, &which[i], 'r');

	buf = kvt_map_anon(SZ_2M);
	s.fd = kvreg_fd(kv[0]);
	s.arg.size = sizeof(s.arg);
	s.arg.error = (uintptr_t)&s.err;
	s.arg.error_size = sizeof(s.err);
	s.arg.access = KVREG_ACCESS_ALL;
	s.arg.addr = (uintptr_t)buf;
	s.arg.length = SZ_2M;
	s.arg.keys = (uintptr_t)page;
	s.arg.key_size = sizeof(struct kvreg_key);
	s.arg.keys_capacity = SZ_4K / sizeof(struct kvreg_key);
	CHECK(!pthread_create(&thread, NULL, register_stalled, &s), "thread");

	/* The kernel's copy of the keys is the fault. */
	{
		struct pollfd pfd = { .fd = uffd, .events = POLLIN };

		CHECK(poll(&pfd, 1, 30000) == 1, "REGISTER never touched its "
		      "key buffer");
		CHECK(read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		      msg.event == UFFD_EVENT_PAGEFAULT, "not a page fault");
	}
	printf("REGISTER is held in the copy of its keys\n");

	/* Each within its own timeout, the first to the stalled file. */
	for (i = 0; i < 2; i++)
		CHECK(kvt_ask(&peers[i], 'g') == 'd', "import of file %c",
		      'A' + i);
	for (i = 0; i < 2; i++)
		kvt_reap(&peers[i]);
	CHECK(!s.done, "REGISTER returned while its fault was held");

	{
		static uint8_t zero[SZ_4K] __attribute__((aligned(4096)));
		struct uffdio_copy cp = {
			.dst = (uintptr_t)page,
			.src = (uintptr_t)zero,
			.len = SZ_4K,
		};

		CHECK(!ioctl(uffd, UFFDIO_COPY, &cp), "UFFDIO_COPY: %s",
		      strerror(errno));
	}
	CHECK(!pthread_join(thread, NULL), "join");
	CHECK(!s.ret, "REGISTER after the fault: %d, reason %u", s.ret,
	      s.err.reason);
	CHECK(s.arg.nkeys > 0 && s.arg.handle, "REGISTER: %u keys",
	      s.arg.nkeys);

	/* The keys it wrote once the page came are the registration's. */
	keys = calloc(s.arg.nkeys, sizeof(*keys));
	CHECK(keys, "calloc");
	CHECK_OK(kvreg_query(kv[0], s.arg.handle, &q, keys, s.arg.nkeys,
			     &err), &err);
	CHECK(q.nkeys == s.arg.nkeys &&
	      !memcmp(keys, page, s.arg.nkeys * sizeof(*keys)),
	      "the keys REGISTER wrote differ from QUERY's");
	printf("REGISTER returned its %u keys once the fault was served\n",
	       s.arg.nkeys);
	free(keys);
	close(uffd);
	for (i = 0; i < 2; i++) {
		CHECK_OK(kvreg_deregister(kv[i], mr[i], &err), &err);
		kvreg_close(kv[i]);
	}
	return T_PASS;
}
