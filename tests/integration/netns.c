// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A file's network namespace is the one it was opened in, as a socket's
 * is: its endpoints listen and its imports connect there, wherever the
 * process goes after. So a process in a namespace of its own (a
 * container's) can neither listen on the host's address nor reach the
 * host's exports through kvreg, while a file opened in the host's
 * namespace keeps working from inside the new one (bytes checked on both
 * sides). A namespace nobody is in any more lives on in a file opened in
 * it, and goes with that file's close: on the debug kernel under KASAN,
 * lockdep and kmemleak.
 */
#include <sched.h>

#include "kvexport.h"

#define LEN	(SZ_2M + 3 * SZ_4K)
#define ADDR	"192.0.2.1"

/* LISTEN and IMPORT through @kv must fail as in a namespace without ADDR. */
static void check_not_here(struct kvreg *kv, const struct kvt_exporter *x,
			   const char *which)
{
	struct kvreg_conn_info ci[16];
	struct kvreg_remote *r = NULL;
	struct kvreg_error err;
	struct kvt_snap before;
	unsigned int n, i, mine = 0;
	uint64_t ep;
	int ret;

	before = kvt_snap(kv);
	ret = kvreg_listen(kv, ADDR, 0, &ep, NULL, &err);
	CHECK(ret == -EADDRNOTAVAIL &&
	      err.reason == KVREG_REASON_ADDRESS_NOT_LOCAL,
	      "%s: LISTEN on %s: %d reason %u, not ADDRESS_NOT_LOCAL", which,
	      ADDR, ret, err.reason);
	ret = kvreg_import(kv, x->desc, x->desc_size, 2000, &r, &err);
	CHECK(ret < 0 && !r && err.reason == KVREG_REASON_ADDRESS_UNRESOLVED,
	      "%s: IMPORT from %s: %d reason %u, not ADDRESS_UNRESOLVED",
	      which, ADDR, ret, err.reason);
	printf("%s: LISTEN on %s and IMPORT from it refused (%d: %s)\n",
	       which, ADDR, ret, kvreg_strerror(err.reason));
	kvt_check_unchanged(kv, &before, which);
	/* The host lists everyone's: the exporter's endpoint is there. */
	CHECK_OK(kvreg_conns(kv, ci, 16, &n, &err), &err);
	for (i = 0; i < n && i < 16; i++)
		mine += ci[i].pid == (uint32_t)getpid();
	CHECK(mine == 0, "%s: %u endpoints or connections left listed",
	      which, mine);
}

/* WRITE then READ the whole pool through @kv's own import of @x. */
static void check_moves(struct kvreg *kv, const struct kvt_exporter *x,
			uint8_t *pool, uint8_t *mine, uint32_t dev,
			uint32_t seed, const char *which)
{
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_mr *mr;

	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&mr, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	kvt_exporter_roundtrip(kv, pool, mine, mr, r, LEN, seed);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	printf("%s: WRITE and READ of %lu bytes, checked on both sides\n",
	       which, LEN);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open(), *host, *own, *back;
	struct kvreg_error err;
	struct kvt_exporter *x;
	uint8_t *pool, *mine;
	struct kvt_snap start;
	int host_ns;
	uint64_t ep;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	pool = kvt_map_shared(LEN);
	mine = kvt_map_anon(LEN);
	x = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	start = kvt_snap(kv);

	host = kvt_open();
	host_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	CHECK(host_ns >= 0, "open /proc/self/ns/net: %s", strerror(errno));
	CHECK(!unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET): %s",
	      strerror(errno));

	/* In a namespace of its own: the host's address is not there. */
	own = kvt_open();
	check_not_here(own, x, "a file opened in a new namespace");
	/* The host's file still lives in the host's namespace. */
	check_moves(host, x, pool, mine, devs[0].index, 0x31,
		    "the host's file, from the new namespace");
	CHECK_OK(kvreg_listen(host, ADDR, 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_unlisten(host, ep, &err), &err);

	/*
	 * Back in the host's namespace: nothing is in the new one any more,
	 * and the file opened there still answers from it.
	 */
	CHECK(!setns(host_ns, CLONE_NEWNET), "setns: %s", strerror(errno));
	close(host_ns);
	check_not_here(own, x, "the new namespace's file, no process in it");
	back = kvt_open();
	check_moves(back, x, pool, mine, devs[0].index, 0x41,
		    "a file opened back in the host's namespace");
	/* Its close is the namespace's end. */
	kvreg_close(own);
	kvreg_close(back);
	kvreg_close(host);

	kvt_check_unchanged(kv, &start, "the end");
	kvt_exporter_stop(x);
	kvreg_close(kv);
	return T_PASS;
}
