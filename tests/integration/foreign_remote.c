// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The remote commands of a file are its opener's alone, as its
 * registrations are: a fork child holding the file, and an unrelated
 * process that received it over a UNIX socket (SCM_RIGHTS) and knows its
 * handles, are refused SUBMIT, a remote TRANSFER, IMPORT, LISTEN, EXPORT,
 * UNIMPORT and REAP with FOREIGN_PROCESS; the exporter's pool keeps the
 * opener's bytes, and the opener's connection still works afterwards.
 */
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "kvexport.h"

#define LEN	(1ULL << 20)
#define ADDR	"192.0.2.1"

struct handles {
	uint64_t local, remote;
	size_t desc_size;
	uint8_t desc[16384];
};

static int raw(int fd, unsigned long cmd, void *arg, struct kvreg_error *e)
{
	struct kvreg_submit *h = arg;	/* every head is the same */

	memset(e, 0, sizeof(*e));
	h->error = (uintptr_t)e;
	h->error_size = sizeof(*e);
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

#define CHECK_FOREIGN(ret, e, what)					\
	CHECK((ret) == -EPERM &&					\
	      (e).reason == KVREG_REASON_FOREIGN_PROCESS,		\
	      "%s from another process: %d reason %u", what, ret,	\
	      (e).reason)

/* Every remote command of @fd, with the opener's own handles. */
static void attack(int fd, const struct handles *h)
{
	struct kvreg_op op = {
		.opcode = KVREG_OP_WRITE, .local_handle = h->local,
		.remote = h->remote, .length = SZ_4K, .user_data = 1,
	};
	struct kvreg_submit sb = { .size = sizeof(sb), .op_size = sizeof(op),
				   .ops = (uintptr_t)&op, .count = 1 };
	struct kvreg_transfer tr = {
		.size = sizeof(tr), .flags = KVREG_TRANSFER_F_REMOTE_REGION,
		.opcode = KVREG_OP_READ, .local_handle = h->local,
		.remote_handle = h->remote, .length = SZ_4K,
	};
	struct kvreg_import im = { .size = sizeof(im),
				   .desc_size = (uint32_t)h->desc_size,
				   .desc = (uintptr_t)h->desc };
	struct kvreg_listen li = { .size = sizeof(li) };
	struct kvreg_export ex = { .size = sizeof(ex), .endpoint = 1,
				   .handle = h->local };
	struct kvreg_unimport un = { .size = sizeof(un),
				     .remote = h->remote };
	struct kvreg_completion c[4];
	struct kvreg_reap rp = { .size = sizeof(rp), .capacity = 4,
				 .entry_size = sizeof(c[0]),
				 .entries = (uintptr_t)c };
	struct kvreg_error e;
	int ret;

	li.addr.family = AF_INET;
	CHECK(inet_pton(AF_INET, ADDR, li.addr.addr) == 1, "inet_pton");
	ret = raw(fd, KVREG_IOC_SUBMIT, &sb, &e);
	CHECK_FOREIGN(ret, e, "SUBMIT");
	CHECK(!sb.accepted, "SUBMIT accepted %u", sb.accepted);
	ret = raw(fd, KVREG_IOC_TRANSFER, &tr, &e);
	CHECK_FOREIGN(ret, e, "remote TRANSFER");
	ret = raw(fd, KVREG_IOC_IMPORT, &im, &e);
	CHECK_FOREIGN(ret, e, "IMPORT");
	ret = raw(fd, KVREG_IOC_LISTEN, &li, &e);
	CHECK_FOREIGN(ret, e, "LISTEN");
	ret = raw(fd, KVREG_IOC_EXPORT, &ex, &e);
	CHECK_FOREIGN(ret, e, "EXPORT");
	ret = raw(fd, KVREG_IOC_UNIMPORT, &un, &e);
	CHECK_FOREIGN(ret, e, "UNIMPORT");
	ret = raw(fd, KVREG_IOC_REAP, &rp, &e);
	CHECK_FOREIGN(ret, e, "REAP");
}

static void send_fd(int sock, int fd)
{
	char byte = 'f', buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	CHECK(sendmsg(sock, &m, 0) == 1, "sendmsg: %s", strerror(errno));
}

static int recv_fd(int sock)
{
	char byte, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	int fd;

	CHECK(recvmsg(sock, &m, 0) == 1, "recvmsg: %s", strerror(errno));
	cm = CMSG_FIRSTHDR(&m);
	CHECK(cm && cm->cmsg_type == SCM_RIGHTS, "no fd came");
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Started before the file was opened: it shares nothing but the fd. */
static void receiver(int sock, const struct handles *h)
{
	int fd = recv_fd(sock);

	attack(fd, h);
	close(fd);
	CHECK(write(sock, "d", 1) == 1, "done");
	_exit(T_PASS);
}

static void wait_child(pid_t pid, const char *what)
{
	int status;

	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "%s failed", what);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvt_exporter *x;
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_mr *local;
	struct handles *h;
	uint8_t *pool, *mine;
	struct kvreg *kv;
	int sv[2];
	pid_t recv_pid, pid;
	char byte;

	h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(h != MAP_FAILED, "mmap");
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	recv_pid = fork();
	CHECK(recv_pid >= 0, "fork");
	if (!recv_pid) {
		close(sv[0]);
		/* The handles arrive before the fd does. */
		receiver(sv[1], h);
	}
	close(sv[1]);

	kv = kvt_open();
	if (!kvt_devices(kv, devs)) {
		kill(recv_pid, SIGKILL);
		kvt_skip("no RDMA device");
	}
	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	mine = kvt_map_anon(LEN);
	x = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &local, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	kvt_fill(mine, LEN, 0x31);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0, LEN,
				       &err), &err);
	h->local = kvreg_mr_handle(local);
	h->remote = kvreg_remote_handle(r);
	h->desc_size = x->desc_size;
	memcpy(h->desc, x->desc, x->desc_size);
	/* What the attackers would write, were they let. */
	kvt_fill(mine, LEN, 0x47);

	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		attack(kvreg_fd(kv), h);
		_exit(T_PASS);
	}
	wait_child(pid, "the fork child");
	send_fd(sv[0], kvreg_fd(kv));
	CHECK(read(sv[0], &byte, 1) == 1, "the receiver did not finish");
	wait_child(recv_pid, "the receiver of the fd");

	CHECK(kvt_mismatch(pool, 0, LEN, 0x31, 0) < 0,
	      "the pool changed: another process reached it");
	/* The opener's connection is whole: a READ brings the pool back. */
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, 0, r, 0, LEN,
				       &err), &err);
	CHECK(kvt_mismatch(mine, 0, LEN, 0x31, 0) < 0, "READ differs");
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvt_exporter_stop(x);
	kvreg_close(kv);
	printf("a fork child and a receiver of the fd: every remote command "
	       "refused, the pool unchanged\n");
	return T_PASS;
}
