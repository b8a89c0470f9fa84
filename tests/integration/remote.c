// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Remote regions between processes over the RDMA CM, both ends in this
 * guest over its own address: an exporter process listens and exports a
 * pool, this process imports it and moves bytes both ways, checked at
 * every MR boundary and the first and last byte. Then every way it can be
 * refused, each with its own reason: bad descriptors, a wrong secret, no
 * listener, an address nobody answers, a range outside either side, a
 * third process's export's rkey through the exporter's connection
 * (isolation), a
 * deregistered region, the exporter killed with SIGKILL. Connect/close
 * cycles leave no QP or cm_id behind, as 'rdma res' counts them.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "kvchild.h"
#include "kvdesc.h"
#include "kvtransfer.h"

#define LEN		(4 * SZ_2M)
#define ADDR		"192.0.2.1"
#define NO_ONE		"192.0.2.77"	/* on the link, never answers */
#define NO_ROUTE	"203.0.113.77"	/* no route in the guest */
#define NOT_LOCAL	"192.0.2.99"
#define NO_RDMA		"192.0.2.200"	/* on a netdev without rxe */
#define DESC_MAX	(64 * 1024)

/* Shared with the children: a descriptor out, a key out, commands in. */
struct ctl {
	size_t desc_size;
	uint8_t desc[DESC_MAX];
	uint64_t third_iova;
	uint32_t third_rkey;
};

static struct ctl *ctl;

/* What a child works on: memory the parent maps too, and a device. */
struct child_arg {
	uint8_t *mem;
	uint32_t dev;
};

/* The exporter: registers @pool, listens, exports, obeys commands. */
static void exporter(void *arg)
{
	uint8_t *pool = ((struct child_arg *)arg)->mem;
	uint32_t dev = ((struct child_arg *)arg)->dev;
	struct kvreg *kv = kvt_open();
	struct kvreg_error err;
	struct kvreg_mr *mr;
	uint64_t ep;
	uint16_t port;

	CHECK_OK(kvreg_register(kv, pool, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&mr, &err), &err);
	CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep, &port, &err), &err);
	CHECK(port, "no port bound");
	CHECK_OK(kvreg_export(kv, ep, mr, ctl->desc, sizeof(ctl->desc),
			      &ctl->desc_size, &err), &err);
	kvt_send_byte(kvt_me.ack, 'e');
	for (;;) {
		/* EOF (the parent died) fails the read: the child exits. */
		switch (kvt_recv_byte(kvt_me.cmd)) {
		case 'd':
			CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
			kvt_send_byte(kvt_me.ack, 'd');
			break;
		case 'q':
			kvreg_close(kv);
			exit(T_PASS);
		}
	}
}

/* A third process: a registration exported through its own endpoint. */
static void third(void *arg)
{
	uint8_t *mem = ((struct child_arg *)arg)->mem;
	uint32_t dev = ((struct child_arg *)arg)->dev;
	struct kvreg *kv = kvt_open();
	static uint8_t desc[DESC_MAX];
	struct kvreg_error err;
	struct kvreg_mr *mr;
	uint64_t ep;
	size_t size;

	CHECK_OK(kvreg_register(kv, mem, SZ_4K, KVREG_ACCESS_ALL, 1ULL << dev,
				&mr, &err), &err);
	/* REGISTER makes no MR: the key is that of its own export. */
	CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &size, &err),
		 &err);
	ctl->third_iova = kvt_desc_chunks(desc)[0].iova;
	ctl->third_rkey = kvt_desc_chunks(desc)[0].rkey;
	kvt_send_byte(kvt_me.ack, 't');
	kvt_recv_byte(kvt_me.cmd);
	kvreg_close(kv);
	exit(T_PASS);
}

/*
 * The passive side lets go of a connection shortly after it drops, so
 * the count may still hold one from before: no more than then.
 */
static void wait_res(const char *kind, long most)
{
	int i;

	for (i = 0; i < 100 && kvt_rdma_res(kind) > most; i++)
		usleep(100 * 1000);
	CHECK(kvt_rdma_res(kind) <= most, "rdma res %s: %ld, at most %ld", kind,
	      kvt_rdma_res(kind), most);
}

static void check_listen_errors(struct kvreg *kv, uint32_t dev)
{
	struct kvreg_error err;
	uint8_t *local = kvt_map_anon(SZ_4K);
	struct kvreg_mr *mr;
	uint64_t ep, ep2;
	uint16_t port;
	size_t size;

	CHECK_FAILS(kvreg_listen(kv, NOT_LOCAL, 0, &ep, NULL, &err), &err,
		    EADDRNOTAVAIL, KVREG_REASON_ADDRESS_NOT_LOCAL);
	kvt_run("ip link add kvnordma type dummy && ip link set kvnordma up "
		"&& ip addr add " NO_RDMA "/32 dev kvnordma");
	CHECK_FAILS(kvreg_listen(kv, NO_RDMA, 0, &ep, NULL, &err), &err,
		    ENODEV, KVREG_REASON_NO_RDMA_FOR_ADDRESS);
	kvt_run("ip link del kvnordma");
	CHECK_FAILS(kvreg_listen(kv, "0.0.0.0", 0, &ep, NULL, &err), &err,
		    EINVAL, KVREG_REASON_BAD_ARGUMENT);
	CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep, &port, &err), &err);
	CHECK_FAILS(kvreg_listen(kv, ADDR, port, &ep2, NULL, &err), &err,
		    EADDRINUSE, KVREG_REASON_ADDRESS_IN_USE);

	/* Local access only: not reachable from the network. */
	CHECK_OK(kvreg_register(kv, local, SZ_4K, KVREG_ACCESS_LOCAL_WRITE,
				1ULL << dev, &mr, &err), &err);
	CHECK_FAILS(kvreg_export(kv, ep, mr, ctl->desc, DESC_MAX, &size, &err),
		    &err, EACCES, KVREG_REASON_ACCESS_DENIED);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	CHECK_OK(kvreg_register(kv, local, SZ_4K, KVREG_ACCESS_ALL,
				1ULL << dev, &mr, &err), &err);
	CHECK_FAILS(kvreg_export(kv, ep, mr, NULL, 0, &size, &err), &err,
		    ENOSPC, KVREG_REASON_BAD_ARGUMENT);
	CHECK(size == sizeof(struct kvreg_desc_head) +
		      sizeof(struct kvreg_desc_path) +
		      sizeof(struct kvreg_desc_chunk),
	      "export asks for %zu bytes", size);
	CHECK_FAILS(kvreg_export(kv, ep + 100, mr, ctl->desc, DESC_MAX, &size,
				 &err), &err, ENOENT,
		    KVREG_REASON_UNKNOWN_ENDPOINT);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
	munmap(local, SZ_4K);
}

/* Each way a descriptor can be wrong: its own reason, nothing made. */
static void check_bad_descriptors(struct kvreg *kv)
{
	static uint8_t bad[DESC_MAX];
	size_t n = ctl->desc_size;
	struct kvreg_desc_head *h = (struct kvreg_desc_head *)bad;
	struct kvreg_remote *r;
	struct kvreg_error err;

	CHECK_FAILS(kvreg_import(kv, ctl->desc, n - 1, 0, &r, &err), &err,
		    EINVAL, KVREG_REASON_DESC_TRUNCATED);
	CHECK_FAILS(kvreg_import(kv, ctl->desc, 2, 0, &r, &err), &err,
		    EINVAL, KVREG_REASON_DESC_TRUNCATED);
	memcpy(bad, ctl->desc, n);
	h->magic ^= 1;
	CHECK_FAILS(kvreg_import(kv, bad, n, 0, &r, &err), &err, EINVAL,
		    KVREG_REASON_DESC_BAD_MAGIC);
	memcpy(bad, ctl->desc, n);
	h->version = 2;
	kvt_reseal(bad, n);
	CHECK_FAILS(kvreg_import(kv, bad, n, 0, &r, &err), &err, EPROTO,
		    KVREG_REASON_DESC_VERSION);
	CHECK(err.usage == 2, "version reported %llu",
	      (unsigned long long)err.usage);
	memcpy(bad, ctl->desc, n);
	bad[n - 3] ^= 0x40;
	CHECK_FAILS(kvreg_import(kv, bad, n, 0, &r, &err), &err, EINVAL,
		    KVREG_REASON_DESC_CORRUPT);
	/* Sealed, but its chunks do not add up to its length. */
	memcpy(bad, ctl->desc, n);
	kvt_desc_chunks(bad)[0].length += SZ_4K;
	kvt_reseal(bad, n);
	CHECK_FAILS(kvreg_import(kv, bad, n, 0, &r, &err), &err, EINVAL,
		    KVREG_REASON_DESC_CORRUPT);
	memcpy(bad, ctl->desc, n);
	kvt_desc_path(bad)->nr_chunks = 0xffffff;
	kvt_reseal(bad, n);
	CHECK_FAILS(kvreg_import(kv, bad, n, 0, &r, &err), &err, EINVAL,
		    KVREG_REASON_DESC_CORRUPT);
}

/* Connections refused, each with its reason and the peer's address. */
static void check_refusals(struct kvreg *kv)
{
	static uint8_t bad[DESC_MAX];
	size_t n = ctl->desc_size;
	struct kvreg_desc_head *h = (struct kvreg_desc_head *)bad;
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct timespec t0, t1;

	/* No route at all: nothing is sent. */
	memcpy(bad, ctl->desc, n);
	CHECK(inet_pton(AF_INET, NO_ROUTE, kvt_desc_path(bad)->addr) == 1, "pton");
	kvt_reseal(bad, n);
	CHECK_FAILS(kvreg_import(kv, bad, n, 1000, &r, &err), &err,
		    EHOSTUNREACH, KVREG_REASON_ADDRESS_UNRESOLVED);

	memcpy(bad, ctl->desc, n);
	h->secret[3] ^= 0x10;
	kvt_reseal(bad, n);
	CHECK_FAILS(kvreg_import(kv, bad, n, 0, &r, &err), &err, ECONNREFUSED,
		    KVREG_REASON_CONN_BAD_SECRET);
	CHECK(err.addr_family == AF_INET && err.port == kvt_desc_path(bad)->port,
	      "the record names the peer: family %u port %u", err.addr_family,
	      err.port);

	memcpy(bad, ctl->desc, n);
	kvt_desc_path(bad)->port ^= 0x0101;
	kvt_reseal(bad, n);
	CHECK_FAILS(kvreg_import(kv, bad, n, 0, &r, &err), &err, ECONNREFUSED,
		    KVREG_REASON_CONN_NO_LISTENER);

	memcpy(bad, ctl->desc, n);
	CHECK(inet_pton(AF_INET, NO_ONE, kvt_desc_path(bad)->addr) == 1, "pton");
	kvt_reseal(bad, n);
	/* The dummy link resolves every neighbour (NOARP): no one answers. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_FAILS(kvreg_import(kv, bad, n, 1000, &r, &err), &err,
		    ETIMEDOUT, KVREG_REASON_CONN_TIMEOUT);
	CHECK(err.limit == 1000, "timeout reported %llu",
	      (unsigned long long)err.limit);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 10, "took %lds to give up",
	      (long)(t1.tv_sec - t0.tv_sec));
}

/* Small ranges across every chunk boundary, then the first and last byte. */
static void check_edges(struct kvreg *kv, struct kvreg_mr *local,
			uint8_t *mine, struct kvreg_remote *r, uint8_t *pool)
{
	struct kvreg_desc_chunk *c = kvt_desc_chunks(ctl->desc);
	uint32_t i, nr = kvt_desc_path(ctl->desc)->nr_chunks;
	struct kvreg_error err;
	uint64_t start = 0, offs[64];
	unsigned int n = 0;

	CHECK(nr >= 2 && nr < 64, "%u chunks", nr);
	for (i = 0; i + 1 < nr; i++) {
		start += c[i].length;
		offs[n++] = start - 4;
	}
	kvt_fill(mine, LEN, 0xB2);
	memset(pool, 0, LEN);
	for (i = 0; i < n; i++)
		CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local,
					       offs[i], r, offs[i], 9, &err),
			 &err);
	kvt_check_ranges(pool, LEN, offs, n, 9, 0xB2);
	memset(pool, 0, LEN);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0, 1,
				       &err), &err);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, LEN - 1, r,
				       LEN - 1, 1, &err), &err);
	CHECK(pool[0] == mine[0] && pool[LEN - 1] == mine[LEN - 1] &&
	      !pool[1] && !pool[LEN - 2], "first/last byte");
	printf("bytes across %u chunk boundaries, first and last\n", n);
}

static void check_bytes(struct kvreg *kv, struct kvreg_mr *local,
			uint8_t *mine, struct kvreg_remote *r, uint8_t *pool)
{
	struct kvreg_error err;
	uint64_t span = LEN - 2 * SZ_4K - 7;

	kvt_fill(mine, LEN, 0xA1);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0, LEN,
				       &err), &err);
	CHECK(kvt_mismatch(pool, 0, LEN, 0xA1, 0) < 0, "WRITE mismatch at %lld",
	      (long long)kvt_mismatch(pool, 0, LEN, 0xA1, 0));
	kvt_fill(pool, LEN, 0xC3);
	memset(mine, 0, LEN);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, 0, r, 0, LEN,
				       &err), &err);
	CHECK(kvt_mismatch(mine, 0, LEN, 0xC3, 0) < 0, "READ mismatch at %lld",
	      (long long)kvt_mismatch(mine, 0, LEN, 0xC3, 0));
	memset(mine, 0, LEN);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, 5, r,
				       SZ_4K + 2, span, &err), &err);
	CHECK(kvt_mismatch(mine, 5, span, 0xC3, SZ_4K + 2) < 0,
	      "shifted READ mismatch");
	CHECK(!mine[4] && !mine[5 + span], "shifted READ overran");
	printf("WRITE and READ of %lu bytes, and shifted, checked\n", LEN);
	check_edges(kv, local, mine, r, pool);

	/* Outside either side: refused before anything is posted. */
	CHECK_FAILS(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r,
					  LEN - 1, 2, &err), &err, ERANGE,
		    KVREG_REASON_OUT_OF_RANGE);
	CHECK(err.argument == KVREG_ARG_REMOTE_OFFSET, "side %u", err.argument);
	CHECK_FAILS(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r,
					  UINT64_MAX, 2, &err), &err, ERANGE,
		    KVREG_REASON_OUT_OF_RANGE);
	CHECK_FAILS(kvreg_transfer_remote(kv, KVREG_OP_READ, local, LEN - 1, r,
					  0, 2, &err), &err, ERANGE,
		    KVREG_REASON_OUT_OF_RANGE);
	CHECK(err.argument == KVREG_ARG_OFFSET, "side %u", err.argument);
}

/* A third process's key through the exporter's connection: refused. */
static void check_isolation(struct kvreg *kv, struct kvreg_mr *local,
			    uint8_t *mine, uint32_t dev)
{
	static uint8_t forged[DESC_MAX];
	uint8_t *victim = mmap(NULL, SZ_4K, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	size_t n = ctl->desc_size;
	struct kvreg_desc_chunk *c;
	struct kvreg_error err;
	struct kvt_child other;
	int op, ret;

	CHECK(victim != MAP_FAILED, "mmap");
	kvt_fill(victim, SZ_4K, 0x5C);
	other = kvt_spawn(third, &(struct child_arg){ victim, dev }, 't');
	memcpy(forged, ctl->desc, n);
	c = kvt_desc_chunks(forged);
	c[0].iova = ctl->third_iova;
	c[0].rkey = ctl->third_rkey;
	kvt_reseal(forged, n);
	for (op = KVREG_OP_WRITE; op <= KVREG_OP_READ; op++) {
		kvt_fill(mine, SZ_4K, 0x11);
		/* A fresh connection each time: a refusal ends one. */
		ret = kvt_attack(kv, forged, n, op, local, NULL, &err);
		CHECK(kvt_refused_posted(ret, &err), "a third process's rkey "
		      "was not refused once posted: %d reason %u wc %u", ret,
		      err.reason, err.wc_status);
	}
	CHECK(kvt_mismatch(mine, 0, SZ_4K, 0x11, 0) < 0,
	      "READ brought bytes of the third process");
	CHECK(kvt_mismatch(victim, 0, SZ_4K, 0x5C, 0) < 0,
	      "the third process's bytes changed");
	kvt_send_byte(other.cmd, 'q');
	kvt_reap(&other);
	munmap(victim, SZ_4K);
	printf("a third process's rkey through the exporter's connection: "
	       "refused both ways, its bytes unchanged\n");
}

static void check_cycles(struct kvreg *kv, struct kvreg_mr *local,
			 unsigned int cycles)
{
	long qps = kvt_rdma_res("qp"), ids = kvt_rdma_res("cm_id");
	struct kvreg_remote *r;
	struct kvreg_error err;
	unsigned int i;

	for (i = 0; i < cycles; i++) {
		CHECK_OK(kvreg_import(kv, ctl->desc, ctl->desc_size, 0, &r,
				      &err), &err);
		CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, 0, r,
					       (uint64_t)i * SZ_4K % LEN,
					       SZ_4K, &err), &err);
		CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	}
	wait_res("qp", qps);
	wait_res("cm_id", ids);
	printf("%u connect/READ/close cycles: %ld QPs and %ld cm_ids before "
	       "and after\n", cycles, qps, ids);
}

/* kvregctl check --peer: the tool's verdict on a descriptor file. */
static void check_tool(const char *kvregctl, const uint8_t *desc, size_t n,
		       int want)
{
	const char *path = "/tmp/kvreg-remote-desc";
	char cmd[512];
	FILE *f = fopen(path, "w");
	int status;

	CHECK(f && fwrite(desc, 1, n, f) == n && !fclose(f), "write %s", path);
	snprintf(cmd, sizeof(cmd), "%s check --peer %s", kvregctl, path);
	status = system(cmd);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == want,
	      "kvregctl check --peer: status %d, want %d", status, want);
	unlink(path);
}

int main(int argc, char **argv)
{
	const char *kvregctl = argc > 1 ? argv[1] : NULL;
	unsigned int cycles = argc > 2 ? (unsigned int)atoi(argv[2]) : 1000;
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open(), *kv2;
	struct kvreg_remote *r, *r2;
	struct kvreg_mr *local, *local2;
	struct kvt_snap before;
	struct kvreg_error err;
	struct timespec t0, t1;
	uint8_t *pool, *mine;
	struct kvt_child exp;
	uint32_t dev;
	int ret;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	if (!kvreg_has_feature(kv, KVREG_FEATURE_REMOTE))
		kvt_skip("module without KVREG_FEATURE_REMOTE");
	dev = devs[0].index;
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(ctl != MAP_FAILED && pool != MAP_FAILED, "mmap");
	mine = kvt_map_anon_scattered(LEN);
	before = kvt_snap(kv);

	check_listen_errors(kv, dev);
	exp = kvt_spawn(exporter, &(struct child_arg){ pool, dev }, 'e');
	printf("descriptor: %zu bytes, %u chunks\n", ctl->desc_size,
	       kvt_desc_path(ctl->desc)->nr_chunks);
	check_bad_descriptors(kv);
	check_refusals(kv);

	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&local, &err), &err);
	CHECK_OK(kvreg_import(kv, ctl->desc, ctl->desc_size, 0, &r, &err),
		 &err);
	CHECK(kvreg_remote_length(r) == LEN &&
	      kvreg_remote_access(r) == (KVREG_ACCESS_REMOTE_READ |
					 KVREG_ACCESS_REMOTE_WRITE) &&
	      kvreg_remote_device(r) == dev, "region %llu bytes access %u",
	      (unsigned long long)kvreg_remote_length(r),
	      kvreg_remote_access(r));
	check_bytes(kv, local, mine, r, pool);
	/* A second import of the same export shares the connection. */
	{
		long qps = kvt_rdma_res("qp");

		CHECK_OK(kvreg_import(kv, ctl->desc, ctl->desc_size, 0, &r2,
				      &err), &err);
		CHECK(kvt_rdma_res("qp") == qps, "a second import made a QP");
		CHECK_OK(kvreg_unimport(kv, r2, &err), &err);
	}
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);

	if (kvregctl) {
		static uint8_t bad[DESC_MAX];

		check_tool(kvregctl, ctl->desc, ctl->desc_size, 0);
		memcpy(bad, ctl->desc, ctl->desc_size);
		((struct kvreg_desc_head *)bad)->secret[0] ^= 1;
		kvt_reseal(bad, ctl->desc_size);
		check_tool(kvregctl, bad, ctl->desc_size, 1);
	}
	check_isolation(kv, local, mine, dev);
	check_cycles(kv, local, cycles);

	/*
	 * A second file's connection, made while the export lives, for the
	 * exporter's kill below: DEREGISTER leaves the descriptor's secret
	 * letting no new one in.
	 */
	kv2 = kvt_open();
	CHECK_OK(kvreg_register(kv2, mine, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&local2, &err), &err);
	CHECK_OK(kvreg_import(kv2, ctl->desc, ctl->desc_size, 0, &r2, &err),
		 &err);

	/* DEREGISTER revokes remote access at once. */
	CHECK_OK(kvreg_import(kv, ctl->desc, ctl->desc_size, 0, &r, &err),
		 &err);
	kvt_fill(pool, LEN, 0x3D);
	kvt_send_byte(exp.cmd, 'd');
	CHECK(kvt_recv_byte(exp.ack) == 'd', "deregister");
	kvt_fill(mine, LEN, 0x4E);
	ret = kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0, SZ_4K,
				    &err);
	CHECK(kvt_refused_posted(ret, &err), "a WRITE after DEREGISTER was "
	      "not refused once posted: %d reason %u wc %u", ret, err.reason,
	      err.wc_status);
	CHECK(kvt_mismatch(pool, 0, LEN, 0x3D, 0) < 0,
	      "a WRITE after DEREGISTER changed the memory");
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_FAILS(kvreg_import(kv, ctl->desc, ctl->desc_size, 0, &r, &err),
		    &err, ECONNREFUSED, KVREG_REASON_CONN_BAD_SECRET);

	/* The exporter killed: the next transfer says so, in bounded time. */
	kill(exp.pid, SIGKILL);
	CHECK(waitpid(exp.pid, NULL, 0) == exp.pid, "waitpid");
	close(exp.cmd);
	close(exp.ack);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_FAILS(kvreg_transfer_remote(kv2, KVREG_OP_READ, local2, 0, r2, 0,
					  SZ_4K, &err), &err, ENOTCONN,
		    KVREG_REASON_CONN_LOST);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec <= 10, "%lds to report the loss",
	      (long)(t1.tv_sec - t0.tv_sec));
	CHECK_OK(kvreg_unimport(kv2, r2, &err), &err);
	CHECK_OK(kvreg_deregister(kv2, local2, &err), &err);
	kvreg_close(kv2);

	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvt_check_unchanged(kv, &before, "after the remote tests");
	kvreg_close(kv);
	return T_PASS;
}
