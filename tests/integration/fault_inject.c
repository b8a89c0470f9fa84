// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Fail every allocation that open, REGISTER, TRANSFER, DEREGISTER,
 * LISTEN, EXPORT, UNEXPORT, REKEY, UNLISTEN, a remote TRANSFER, SUBMIT,
 * UNIMPORT and close (with a connection up) make, one at a time (/proc/thread-self/fail-nth walks n upward
 * until the call no longer reaches the n-th allocation). Each failure must
 * come back as a clean error with a reason, and leave pinned pages (kvreg's
 * count and the kernel's), the process budget, the memlock charge and the
 * device MR counts exactly where they were. The reason must be the one
 * an allocation failure gives in that call, and the points reached no
 * fewer than the debug kernel has. Needs a kernel with
 * CONFIG_FAULT_INJECTION, FAILSLAB and FAIL_PAGE_ALLOC (the debug kernel).
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "kvtransfer.h"

#define DBG "/sys/kernel/debug"
#define MAX_POINTS 5000

/*
 * Opened once: opening it again would itself allocate, and so consume
 * the failure it is meant to report.
 */
static int nth_fd = -1;

static void fail_nth(int n)
{
	char text[16];
	int len = snprintf(text, sizeof(text), "%d", n);

	CHECK(pwrite(nth_fd, text, (size_t)len, 0) == len, "fail-nth");
}

/* 0 once the armed failure was injected; what is left otherwise. */
static int fail_nth_left(void)
{
	char text[16] = "";

	CHECK(pread(nth_fd, text, sizeof(text) - 1, 0) > 0, "read fail-nth");
	fail_nth(0);
	return atoi(text);
}

/* Everything a call could leave behind, as kvreg and the kernel see it. */
struct state {
	struct kvt_snap snap;
	struct kvreg_stats st;
	uint64_t dev_mrs[KVREG_MAX_DEVICES];
};

static struct state state_of(struct kvreg *kv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct state s = { .snap = kvt_snap(kv), .st = kvt_stats(kv) };
	unsigned int n = kvt_devices(kv, devs), i;

	for (i = 0; i < n; i++)
		s.dev_mrs[devs[i].index] = devs[i].mrs_in_use;
	return s;
}

static void same_state(struct kvreg *kv, const struct state *before,
		       const char *what, int n)
{
	struct state now = state_of(kv);
	char when[96];
	int i;

	snprintf(when, sizeof(when), "%s, allocation %d failed", what, n);
	kvt_check_unchanged(kv, &before->snap, when);
	CHECK(now.st.proc_mrs == before->st.proc_mrs &&
	      now.st.proc_pinned_bytes == before->st.proc_pinned_bytes &&
	      now.st.memlock_used == before->st.memlock_used,
	      "%s: budget %llu MRs %llu bytes, memlock %llu (was %llu %llu %llu)",
	      when, (unsigned long long)now.st.proc_mrs,
	      (unsigned long long)now.st.proc_pinned_bytes,
	      (unsigned long long)now.st.memlock_used,
	      (unsigned long long)before->st.proc_mrs,
	      (unsigned long long)before->st.proc_pinned_bytes,
	      (unsigned long long)before->st.memlock_used);
	for (i = 0; i < KVREG_MAX_DEVICES; i++)
		CHECK(now.dev_mrs[i] == before->dev_mrs[i],
		      "%s: device %d MRs %llu, was %llu", when, i,
		      (unsigned long long)now.dev_mrs[i],
		      (unsigned long long)before->dev_mrs[i]);
}

/*
 * Between arming and reading back there is nothing but the call under
 * test: raw syscalls on structs already in memory, so no allocation of
 * the library's, ASan's or a page fault's takes the armed failure.
 */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* Where the module writes why a call failed. */
static struct kvreg_error rec;

enum call { C_REGISTER, C_TRANSFER, C_LISTEN, C_REVOKE, C_REMOTE,
	    C_SUBMIT, C_NR };
static const char *const call_names[C_NR] = {
	"register", "transfer", "listen", "revocation", "remote transfer",
	"submit",
};
/*
 * The reasons a failed allocation may come back as, per call: kvreg's or
 * the kernel's own allocation (NO_KERNEL_MEMORY), or the driver's, where
 * the call makes MRs (DEVICE_EXHAUSTED). Never anything that would send
 * the user after a limit or a peer that is not the cause.
 */
static const uint32_t allowed[C_NR][4] = {
	[C_REGISTER] = { KVREG_REASON_NO_KERNEL_MEMORY,
			 KVREG_REASON_DEVICE_EXHAUSTED },
	[C_TRANSFER] = { KVREG_REASON_NO_KERNEL_MEMORY },
	[C_LISTEN] = { KVREG_REASON_NO_KERNEL_MEMORY,
		       KVREG_REASON_DEVICE_EXHAUSTED },
	[C_REVOKE] = { KVREG_REASON_NO_KERNEL_MEMORY,
		       KVREG_REASON_DEVICE_EXHAUSTED },
	[C_REMOTE] = { KVREG_REASON_NO_KERNEL_MEMORY },
	[C_SUBMIT] = { KVREG_REASON_NO_KERNEL_MEMORY },
};
static unsigned int seen_reasons[C_NR][64];

/* An injected failure of call @c: a failure, with one of its reasons. */
static void failed_as(enum call c, int ret)
{
	unsigned int i;

	CHECK(ret < 0 && rec.reason && rec.reason < 64,
	      "%s failed (%d) with reason %u", call_names[c], ret, rec.reason);
	seen_reasons[c][rec.reason]++;
	for (i = 0; i < 4 && allowed[c][i]; i++)
		if (rec.reason == allowed[c][i])
			return;
	CHECK(0, "%s: a failed allocation came back as %s (reason %u, "
	      "errno %d)", call_names[c], kvreg_strerror(rec.reason),
	      rec.reason, ret);
}

static void print_reasons(void)
{
	unsigned int c, r;

	for (c = 0; c < C_NR; c++)
		for (r = 0; r < 64; r++)
			if (seen_reasons[c][r])
				printf("    %s: %u x %s\n", call_names[c],
				       seen_reasons[c][r], kvreg_strerror(r));
}

static struct kvreg_register reg_arg(void *buf, uint64_t len, uint64_t mask)
{
	return (struct kvreg_register) {
		.size = sizeof(struct kvreg_register),
		.error = (uintptr_t)&rec, .error_size = sizeof(rec),
		.addr = (uintptr_t)buf, .length = len,
		.access = KVREG_ACCESS_ALL, .device_mask = mask,
	};
}

static void dereg(int fd, uint64_t handle)
{
	struct kvreg_deregister d = { .size = sizeof(d), .handle = handle };

	CHECK(!xioctl(fd, KVREG_IOC_DEREGISTER, &d), "deregister");
}

static int points_open(void)
{
	int n, fd, left;

	for (n = 1; n < MAX_POINTS; n++) {
		fail_nth(n);
		fd = open(KVREG_DEVICE_PATH, O_RDWR);
		left = fail_nth_left();
		if (fd >= 0)
			close(fd);
		else
			CHECK(errno == ENOMEM, "open: %s", strerror(errno));
		if (left > 0)
			return n - 1;
	}
	CHECK(0, "open: more than %d allocations", MAX_POINTS);
	return 0;
}

static int points_register(struct kvreg *kv, uint8_t *buf, uint64_t len)
{
	struct state before = state_of(kv);
	int fd = kvreg_fd(kv), n, ret, left;
	struct kvreg_register r;

	for (n = 1; n < MAX_POINTS; n++) {
		r = reg_arg(buf, len, 0);
		fail_nth(n);
		ret = xioctl(fd, KVREG_IOC_REGISTER, &r);
		left = fail_nth_left();
		if (ret) {
			failed_as(C_REGISTER, ret);
			same_state(kv, &before, "register", n);
		} else {
			dereg(fd, r.handle);
			same_state(kv, &before, "register then deregister", n);
		}
		if (left > 0)
			return n - 1;
	}
	CHECK(0, "register: more than %d allocations", MAX_POINTS);
	return 0;
}

static int points_deregister(struct kvreg *kv, uint8_t *buf, uint64_t len)
{
	struct state before = state_of(kv);
	int fd = kvreg_fd(kv), n, ret, left;
	struct kvreg_deregister d = { .size = sizeof(d) };
	struct kvreg_register r;

	for (n = 1; n < MAX_POINTS; n++) {
		r = reg_arg(buf, len, 0);
		CHECK(!xioctl(fd, KVREG_IOC_REGISTER, &r), "register");
		d.handle = r.handle;
		fail_nth(n);
		/* Release cannot fail: whatever fails inside, all goes. */
		ret = xioctl(fd, KVREG_IOC_DEREGISTER, &d);
		left = fail_nth_left();
		CHECK(!ret, "deregister failed: %d", ret);
		same_state(kv, &before, "deregister", n);
		if (left > 0)
			return n - 1;
	}
	CHECK(0, "deregister: more than %d allocations", MAX_POINTS);
	return 0;
}

static int points_transfer(struct kvreg *kv, uint8_t *a, uint8_t *b,
			   uint64_t len, uint32_t dev)
{
	int fd = kvreg_fd(kv), n, ret, left;
	struct kvreg_register ra = reg_arg(a, len, 1ULL << dev);
	struct kvreg_register rb = reg_arg(b, len, 1ULL << dev);
	struct kvreg_transfer t;
	struct state before;

	CHECK(!xioctl(fd, KVREG_IOC_REGISTER, &ra) &&
	      !xioctl(fd, KVREG_IOC_REGISTER, &rb), "register");
	before = state_of(kv);
	for (n = 1; n < MAX_POINTS; n++) {
		t = (struct kvreg_transfer) {
			.size = sizeof(t), .opcode = KVREG_OP_WRITE,
			.error = (uintptr_t)&rec, .error_size = sizeof(rec),
			.device_index = dev, .local_handle = ra.handle,
			.remote_handle = rb.handle, .length = len,
		};
		kvt_fill(a, len, (uint32_t)n);
		memset(b, 0, len);
		fail_nth(n);
		ret = xioctl(fd, KVREG_IOC_TRANSFER, &t);
		left = fail_nth_left();
		if (ret)
			failed_as(C_TRANSFER, ret);
		else
			CHECK(kvt_mismatch(b, 0, len, (uint32_t)n, 0) < 0,
			      "transfer succeeded with wrong bytes");
		same_state(kv, &before, "transfer", n);
		/* Whatever failed, the next transfer works. */
		CHECK(!xioctl(fd, KVREG_IOC_TRANSFER, &t),
		      "transfer after failure %d", n);
		CHECK(kvt_mismatch(b, 0, len, (uint32_t)n, 0) < 0,
		      "bytes after failure %d", n);
		if (left > 0)
			break;
	}
	CHECK(n < MAX_POINTS, "transfer: more than %d allocations", MAX_POINTS);
	dereg(fd, rb.handle);
	dereg(fd, ra.handle);
	return n - 1;
}

/* The last close releases registrations on every device. */
static int points_close(struct kvreg *kv, uint8_t *a, uint8_t *b,
			uint64_t len)
{
	struct state before = state_of(kv);
	struct kvreg_register r;
	int n, fd, left;

	for (n = 1; n < MAX_POINTS; n++) {
		fd = open(KVREG_DEVICE_PATH, O_RDWR);
		CHECK(fd >= 0, "open");
		r = reg_arg(a, len, 0);
		CHECK(!xioctl(fd, KVREG_IOC_REGISTER, &r), "register a");
		r = reg_arg(b, len, 0);
		CHECK(!xioctl(fd, KVREG_IOC_REGISTER, &r), "register b");
		fail_nth(n);
		close(fd);
		left = fail_nth_left();
		same_state(kv, &before, "close", n);
		if (left > 0)
			return n - 1;
	}
	CHECK(0, "close: more than %d allocations", MAX_POINTS);
	return 0;
}

/*
 * The remote side: an exporting file (endpoint and registration) and a
 * descriptor of it, set up once; the importing files come and go.
 */
struct exporter {
	int fd;
	uint64_t handle;
	uint8_t desc[4096];
	uint32_t desc_size;
};

/*
 * The exporter lets go of a dropped connection shortly after: at once
 * with a DREQ, within its keepalive and the retry limit (about 4 s)
 * when the DREQ was lost, as it is when its allocation fails here.
 */
static void no_more_res(long qps, long ids, const char *when, int n)
{
	int i;

	for (i = 0; i < 200 && (kvt_rdma_res("qp") > qps ||
				kvt_rdma_res("cm_id") > ids); i++)
		usleep(100 * 1000);
	CHECK(kvt_rdma_res("qp") <= qps && kvt_rdma_res("cm_id") <= ids,
	      "%s, allocation %d failed: %ld QPs (had %ld), %ld cm_ids (had "
	      "%ld)", when, n, kvt_rdma_res("qp"), qps, kvt_rdma_res("cm_id"),
	      ids);
}

static struct kvreg_listen listen_arg(void)
{
	struct kvreg_listen l = {
		.size = sizeof(l),
		.error = (uintptr_t)&rec, .error_size = sizeof(rec),
		.addr = { .family = AF_INET, .addr = { 192, 0, 2, 1 } },
	};

	return l;
}

static struct kvreg_import import_arg(struct exporter *e)
{
	struct kvreg_import im = {
		.size = sizeof(im),
		.error = (uintptr_t)&rec, .error_size = sizeof(rec),
		.desc = (uintptr_t)e->desc, .desc_size = e->desc_size,
	};

	return im;
}

static void unimport(int fd, uint64_t remote)
{
	struct kvreg_unimport u = { .size = sizeof(u), .remote = remote };

	CHECK(!xioctl(fd, KVREG_IOC_UNIMPORT, &u), "unimport");
}

static void exporter_up(struct exporter *e, uint8_t *buf, uint64_t len,
			uint32_t dev)
{
	struct kvreg_register r = reg_arg(buf, len, 1ULL << dev);
	struct kvreg_listen l = listen_arg();
	struct kvreg_export x = { .size = sizeof(x) };

	e->fd = open(KVREG_DEVICE_PATH, O_RDWR);
	CHECK(e->fd >= 0, "open");
	CHECK(!xioctl(e->fd, KVREG_IOC_REGISTER, &r), "register");
	e->handle = r.handle;
	CHECK(!xioctl(e->fd, KVREG_IOC_LISTEN, &l), "listen");
	x.endpoint = l.endpoint;
	x.handle = r.handle;
	x.desc = (uintptr_t)e->desc;
	x.desc_capacity = sizeof(e->desc);
	CHECK(!xioctl(e->fd, KVREG_IOC_EXPORT, &x), "export");
	e->desc_size = x.desc_size;
}

static int points_listen_export(struct kvreg *kv, uint8_t *buf,
				uint64_t len)
{
	struct state before = state_of(kv);
	long qps = kvt_rdma_res("qp"), ids = kvt_rdma_res("cm_id");
	struct kvreg_export x;
	struct kvreg_listen l;
	struct kvreg_register r;
	uint8_t desc[4096];
	int n, fd, ret, left;

	for (n = 1; n < MAX_POINTS; n++) {
		fd = open(KVREG_DEVICE_PATH, O_RDWR);
		CHECK(fd >= 0, "open");
		r = reg_arg(buf, len, 0);
		CHECK(!xioctl(fd, KVREG_IOC_REGISTER, &r), "register");
		l = listen_arg();
		x = (struct kvreg_export) {
			.size = sizeof(x), .handle = r.handle,
			.error = (uintptr_t)&rec, .error_size = sizeof(rec),
			.desc = (uintptr_t)desc, .desc_capacity = sizeof(desc),
		};
		fail_nth(n);
		ret = xioctl(fd, KVREG_IOC_LISTEN, &l);
		left = fail_nth_left();
		/*
		 * The first EXPORT through an endpoint makes the export's PD
		 * and QP: rxe's QP creation fails its own way (see
		 * points_revoke()), so EXPORT is swept there, where it takes
		 * the PD and QP the UNEXPORT before it left free.
		 */
		fail_nth(0);
		if (ret)
			failed_as(C_LISTEN, ret);
		x.endpoint = l.endpoint;
		if (!ret)
			CHECK(!xioctl(fd, KVREG_IOC_EXPORT, &x), "export");
		close(fd);
		same_state(kv, &before, "listen, export", n);
		no_more_res(qps, ids, "listen, export", n);
		if (left > 0)
			return n - 1;
	}
	CHECK(0, "listen: more than %d allocations", MAX_POINTS);
	return 0;
}

/*
 * Revoking and granting again: UNEXPORT, EXPORT anew (new keys and
 * secret), REKEY and UNLISTEN in turn, each failure point of them: a
 * failure says why, and the close leaves nothing behind. The export's
 * PD and QP are made by the first EXPORT, before the sweep, and the
 * UNEXPORT leaves them, connectionless, for the EXPORT anew: rxe's own
 * error path for a QP it failed to create (6.1) deletes a timer it never
 * set up, which trips lockdep, as IMPORT's would (see
 * points_remote_transfer()).
 */
static int points_revoke(struct kvreg *kv, uint8_t *buf, uint64_t len)
{
	struct state before = state_of(kv);
	long qps = kvt_rdma_res("qp"), ids = kvt_rdma_res("cm_id");
	struct kvreg_unlisten ul;
	struct kvreg_unexport u;
	struct kvreg_export x;
	struct kvreg_listen l;
	struct kvreg_rekey k;
	struct kvreg_register r;
	uint8_t desc[4096];
	int n, fd, ret, left;

	for (n = 1; n < MAX_POINTS; n++) {
		fd = open(KVREG_DEVICE_PATH, O_RDWR);
		CHECK(fd >= 0, "open");
		r = reg_arg(buf, len, 0);
		CHECK(!xioctl(fd, KVREG_IOC_REGISTER, &r), "register");
		l = listen_arg();
		CHECK(!xioctl(fd, KVREG_IOC_LISTEN, &l), "listen");
		x = (struct kvreg_export) {
			.size = sizeof(x), .handle = r.handle,
			.endpoint = l.endpoint,
			.error = (uintptr_t)&rec, .error_size = sizeof(rec),
			.desc = (uintptr_t)desc, .desc_capacity = sizeof(desc),
		};
		CHECK(!xioctl(fd, KVREG_IOC_EXPORT, &x), "export");
		x.desc_size = 0;
		u = (struct kvreg_unexport) {
			.size = sizeof(u), .endpoint = l.endpoint,
			.handle = r.handle,
			.error = (uintptr_t)&rec, .error_size = sizeof(rec),
		};
		k = (struct kvreg_rekey) {
			.size = sizeof(k), .endpoint = l.endpoint,
			.error = (uintptr_t)&rec, .error_size = sizeof(rec),
		};
		ul = (struct kvreg_unlisten) {
			.size = sizeof(ul), .endpoint = l.endpoint,
			.error = (uintptr_t)&rec, .error_size = sizeof(rec),
		};
		fail_nth(n);
		ret = xioctl(fd, KVREG_IOC_UNEXPORT, &u);
		if (!ret)
			ret = xioctl(fd, KVREG_IOC_EXPORT, &x);
		if (!ret)
			ret = xioctl(fd, KVREG_IOC_REKEY, &k);
		if (!ret)
			ret = xioctl(fd, KVREG_IOC_UNLISTEN, &ul);
		left = fail_nth_left();
		if (ret)
			failed_as(C_REVOKE, ret);
		close(fd);
		same_state(kv, &before, "unexport, export, rekey, unlisten",
			   n);
		no_more_res(qps, ids, "unexport, export, rekey, unlisten", n);
		if (left > 0)
			return n - 1;
	}
	CHECK(0, "revoke: more than %d allocations", MAX_POINTS);
	return 0;
}

/*
 * A remote WRITE through an imported region: each failure leaves nothing,
 * and the next one works. IMPORT itself is not swept: the allocations it
 * makes are mostly rxe's QP creation, whose own error path in 6.1 (a
 * timer deleted before it was set up) trips lockdep and turns it off for
 * the rest of the run. IMPORT's refusals are tested in 'remote' and
 * fuzzed.
 */
static int points_remote_transfer(struct kvreg *kv, struct exporter *e,
				  uint8_t *mine, uint8_t *pool, uint64_t len,
				  uint32_t dev)
{
	int fd = open(KVREG_DEVICE_PATH, O_RDWR), n, ret, left;
	struct kvreg_register r = reg_arg(mine, len, 1ULL << dev);
	struct kvreg_import im = import_arg(e);
	struct kvreg_transfer t;
	struct state before;

	CHECK(fd >= 0, "open");
	CHECK(!xioctl(fd, KVREG_IOC_REGISTER, &r), "register");
	CHECK(!xioctl(fd, KVREG_IOC_IMPORT, &im), "import");
	before = state_of(kv);
	for (n = 1; n < MAX_POINTS; n++) {
		t = (struct kvreg_transfer) {
			.size = sizeof(t), .opcode = KVREG_OP_WRITE,
			.flags = KVREG_TRANSFER_F_REMOTE_REGION,
			.error = (uintptr_t)&rec, .error_size = sizeof(rec),
			.device_index = im.device_index,
			.local_handle = r.handle, .remote_handle = im.remote,
			.length = len,
		};
		kvt_fill(mine, len, (uint32_t)n);
		memset(pool, 0, len);
		fail_nth(n);
		ret = xioctl(fd, KVREG_IOC_TRANSFER, &t);
		left = fail_nth_left();
		if (ret)
			failed_as(C_REMOTE, ret);
		else
			CHECK(kvt_mismatch(pool, 0, len, (uint32_t)n, 0) < 0,
			      "remote WRITE succeeded with wrong bytes");
		same_state(kv, &before, "remote transfer", n);
		/* Whatever failed, the connection still works. */
		CHECK(!xioctl(fd, KVREG_IOC_TRANSFER, &t),
		      "remote transfer after failure %d: reason %u", n,
		      rec.reason);
		CHECK(kvt_mismatch(pool, 0, len, (uint32_t)n, 0) < 0,
		      "bytes after failure %d", n);
		if (left > 0)
			break;
	}
	CHECK(n < MAX_POINTS, "remote transfer: more than %d allocations",
	      MAX_POINTS);
	unimport(fd, im.remote);
	close(fd);
	return n - 1;
}

/* SUBMIT of a batch: a failure accepts fewer, and all accepted complete. */
static int points_submit(struct kvreg *kv, struct exporter *e, uint8_t *mine,
			 uint64_t len, uint32_t dev)
{
	int fd = open(KVREG_DEVICE_PATH, O_RDWR), n, ret, left, i;
	struct kvreg_register r = reg_arg(mine, len, 1ULL << dev);
	struct kvreg_import im = import_arg(e);
	struct kvreg_completion comp[4];
	struct kvreg_op ops[4];
	struct kvreg_submit sb;
	struct kvreg_reap rp;
	struct state before;

	CHECK(fd >= 0, "open");
	CHECK(!xioctl(fd, KVREG_IOC_REGISTER, &r), "register");
	CHECK(!xioctl(fd, KVREG_IOC_IMPORT, &im), "import");
	for (i = 0; i < 4; i++)
		ops[i] = (struct kvreg_op) {
			.opcode = KVREG_OP_WRITE, .local_handle = r.handle,
			.local_offset = (uint64_t)i * SZ_4K,
			.remote = im.remote,
			.remote_offset = (uint64_t)i * SZ_4K,
			.length = SZ_4K, .user_data = (uint64_t)i,
		};
	before = state_of(kv);
	for (n = 1; n < MAX_POINTS; n++) {
		sb = (struct kvreg_submit) {
			.size = sizeof(sb), .op_size = sizeof(ops[0]),
			.error = (uintptr_t)&rec, .error_size = sizeof(rec),
			.ops = (uintptr_t)ops, .count = 4,
		};
		fail_nth(n);
		ret = xioctl(fd, KVREG_IOC_SUBMIT, &sb);
		left = fail_nth_left();
		if (ret) {
			CHECK(!sb.accepted, "submit failed and took %u",
			      sb.accepted);
			failed_as(C_SUBMIT, ret);
		}
		rp = (struct kvreg_reap) {
			.size = sizeof(rp), .entry_size = sizeof(comp[0]),
			.entries = (uintptr_t)comp, .capacity = 4,
			.min_complete = sb.accepted, .timeout_ms = 10000,
		};
		CHECK(!xioctl(fd, KVREG_IOC_REAP, &rp) &&
		      rp.count == sb.accepted, "reaped %u of %u", rp.count,
		      sb.accepted);
		for (i = 0; i < (int)rp.count; i++)
			CHECK(!comp[i].status, "op %d failed: %d", i,
			      comp[i].status);
		same_state(kv, &before, "submit", n);
		if (left > 0)
			break;
	}
	CHECK(n < MAX_POINTS, "submit: more than %d allocations", MAX_POINTS);
	unimport(fd, im.remote);
	close(fd);
	return n - 1;
}

/* Release cannot fail: UNIMPORT and close with a connection up. */
static int points_remote_release(struct kvreg *kv, struct exporter *e,
				 int close_file)
{
	struct state before = state_of(kv);
	long qps = kvt_rdma_res("qp"), ids = kvt_rdma_res("cm_id");
	struct kvreg_unimport u = { .size = sizeof(u) };
	struct kvreg_import im;
	int n, fd, ret = 0, left;

	for (n = 1; n < MAX_POINTS; n++) {
		fd = open(KVREG_DEVICE_PATH, O_RDWR);
		CHECK(fd >= 0, "open");
		im = import_arg(e);
		CHECK(!xioctl(fd, KVREG_IOC_IMPORT, &im), "import");
		u.remote = im.remote;
		fail_nth(n);
		if (close_file)
			close(fd);
		else
			ret = xioctl(fd, KVREG_IOC_UNIMPORT, &u);
		left = fail_nth_left();
		CHECK(!ret, "unimport failed: %d", ret);
		if (!close_file)
			close(fd);
		same_state(kv, &before, close_file ? "close" : "unimport", n);
		/*
		 * Not the exporter's side here: when the failed allocation
		 * was the DREQ's, the exporter keeps its end until its
		 * keepalive notices or its file closes (checked in main).
		 */
		(void)qps;
		(void)ids;
		if (left > 0)
			return n - 1;
	}
	CHECK(0, "unimport: more than %d allocations", MAX_POINTS);
	return 0;
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	const uint64_t len = 3 * SZ_4K + 1000;
	int o, r, t, d, c, le, rv, im, sb, ui, cr;
	long qps0, ids0;
	struct exporter e;
	struct kvreg *kv;
	uint8_t *a, *b;

	if (access("/proc/thread-self/fail-nth", F_OK) ||
	    access(DBG "/failslab", F_OK))
		kvt_skip("no fault injection in this kernel");
	/* Every allocation may fail, quietly: we read the results. */
	CHECK(!kvt_put(DBG "/failslab/ignore-gfp-wait", "N") &&
	      !kvt_put(DBG "/failslab/verbose", "0") &&
	      !kvt_put(DBG "/fail_page_alloc/ignore-gfp-wait", "N") &&
	      !kvt_put(DBG "/fail_page_alloc/ignore-gfp-highmem", "N") &&
	      !kvt_put(DBG "/fail_page_alloc/min-order", "0") &&
	      !kvt_put(DBG "/fail_page_alloc/verbose", "0"), "configure");
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	CHECK(nth_fd >= 0, "open fail-nth");
	kv = kvt_open();
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	a = kvt_map_anon(4 * SZ_4K);
	b = kvt_map_anon(4 * SZ_4K);

	o = points_open();
	r = points_register(kv, a + 100, len);
	t = points_transfer(kv, a, b, len, devs[0].index);
	d = points_deregister(kv, a + 100, len);
	c = points_close(kv, a, b, len);
	le = points_listen_export(kv, a, len);
	rv = points_revoke(kv, a, len);
	qps0 = kvt_rdma_res("qp");
	ids0 = kvt_rdma_res("cm_id");
	exporter_up(&e, b, 4 * SZ_4K, devs[0].index);
	im = points_remote_transfer(kv, &e, a, b, 4 * SZ_4K, devs[0].index);
	sb = points_submit(kv, &e, a, 4 * SZ_4K, devs[0].index);
	ui = points_remote_release(kv, &e, 0);
	cr = points_remote_release(kv, &e, 1);
	close(e.fd);
	/* The exporter gone, so is every end of every connection. */
	no_more_res(qps0, ids0, "the exporter closed after the sweeps", 0);
	printf("fault points exercised: open %d, register %d, transfer %d, "
	       "deregister %d, close %d, listen and export %d, revoke and "
	       "export again %d, remote transfer %d, submit %d, unimport %d, "
	       "close with a connection %d: %d in all\n", o, r, t, d, c, le,
	       rv, im, sb, ui, cr,
	       o + r + t + d + c + le + rv + im + sb + ui + cr);
	print_reasons();
	/*
	 * Floors a little under the debug kernel's counts (open 6, register
	 * 20, listen and export 30, revoke 20, remote transfer 2, submit 1,
	 * unimport 5, close with a connection 4 to 7: 88 to 91): fewer means
	 * the injection no longer reaches what it did. REGISTER makes no MR
	 * and no engine QP since 2026-12-06 (62 points before), so its PD,
	 * pin, mapping and charges are what can fail there. A local transfer
	 * (a CPU copy), deregister and close allocate nothing for buffers
	 * this small, so nothing there can fail; their state checks above
	 * still ran, and a local transfer's bytes were checked after each.
	 */
	CHECK(o >= 5 && r >= 18 && le >= 26 && rv >= 17 &&
	      im >= 2 && sb >= 1 && ui >= 4 && cr >= 3 &&
	      o + r + t + d + c + le + rv + im + sb + ui + cr >= 82,
	      "too few points: the injection no longer reaches all of kvreg");
	kvreg_close(kv);
	return T_PASS;
}
