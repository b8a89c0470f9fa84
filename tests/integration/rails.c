// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Two rails in one guest, over its two devices: an exporter listens on an
 * address of each (rxe0's 192.0.2.1, rxe1's 198.51.100.1) and exports one
 * pool registered on both; the importer's region gets a rail on each. A
 * batch of 4 KiB pages and of 2 MiB operations spreads over both rails
 * (each carries some), every byte written is checked in the pool and read
 * back; the rails close with the region and leave nothing behind. The
 * pair test (tests/pair/rails_pair.c) adds failover between two guests.
 */
#include "kvbatch.h"
#include "kvtransfer.h"

#define LEN		(8ULL << 20)
#define MEND_S		30.0

static const char *const addrs[2] = { "192.0.2.1", "198.51.100.1" };

/* This process's active rail @rail: its parts carried, or -1 if down. */
static int64_t rail_ops(struct kvreg *kv, uint32_t rail)
{
	struct kvreg_conn_info ci[32];
	struct kvreg_error err;
	unsigned int n, i;

	CHECK_OK(kvreg_conns(kv, ci, 32, &n, &err), &err);
	for (i = 0; i < n && i < 32; i++)
		if (ci[i].pid == (uint32_t)getpid() &&
		    ci[i].kind == KVREG_CONN_KIND_ACTIVE && ci[i].rail_group &&
		    ci[i].rail == rail &&
		    ci[i].state == KVREG_CONN_STATE_ESTABLISHED)
			return (int64_t)ci[i].ops;
	return -1;
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *ex = kvt_open(), *kv = kvt_open();
	uint8_t *pool, *mine, desc[16384];
	struct kvreg_mr *pool_mr, *local;
	int64_t ops0, ops1, want_ops;
	struct kvreg_remote *r;
	struct kvt_snap before;
	struct kvreg_error err;
	unsigned int rail;
	uint64_t ep;
	size_t n;
	double t0;

	if (kvt_devices(kv, devs) < 2)
		kvt_skip("needs two RDMA devices");
	pool = kvt_map_anon_scattered(LEN);
	mine = kvt_map_anon_scattered(LEN);
	before = kvt_snap(kv);

	CHECK_OK(kvreg_register(ex, pool, LEN, KVREG_ACCESS_ALL, 0, &pool_mr,
				&err), &err);
	CHECK_OK(kvreg_listen(ex, addrs[0], 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_listen_add(ex, ep, addrs[1], 0, NULL, &err), &err);
	CHECK_OK(kvreg_export(ex, ep, pool_mr, desc, sizeof(desc), &n, &err),
		 &err);
	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL, 0, &local,
				&err), &err);
	CHECK_OK(kvreg_import(kv, desc, n, 0, &r, &err), &err);
	CHECK(kvreg_remote_paths(r) == 2, "%u paths, want one per device",
	      kvreg_remote_paths(r));
	/* A rail the import did not connect is connected by the module. */
	t0 = kvt_now();
	for (rail = 0; rail < 2; rail++)
		while (rail_ops(kv, rail) < 0) {
			CHECK(kvt_now() - t0 < MEND_S, "rail %u not up %.0f s "
			      "after the import", rail, MEND_S);
			usleep(100 * 1000);
		}
	printf("imported: %u paths, %u rails at import, both up in %.1f s\n",
	       kvreg_remote_paths(r), kvreg_remote_rails(r), kvt_now() - t0);

	/* 4 KiB pages where there is room, then 2 MiB ones that split. */
	kvt_fill(mine, LEN, 0x21);
	memset(pool, 0, LEN);
	kvt_batch(kv, local, 0, r, 0, KVREG_OP_WRITE, SZ_4K, 256);
	CHECK(kvt_mismatch(pool, 0, 256 * SZ_4K, 0x21, 0) < 0,
	      "4 KiB pages over two rails: the pool differs at %lld",
	      (long long)kvt_mismatch(pool, 0, 256 * SZ_4K, 0x21, 0));
	kvt_fill(mine, LEN, 0x22);
	kvt_batch(kv, local, 0, r, 0, KVREG_OP_WRITE, SZ_2M, 4);
	CHECK(kvt_mismatch(pool, 0, LEN, 0x22, 0) < 0,
	      "2 MiB operations over two rails: the pool differs at %lld",
	      (long long)kvt_mismatch(pool, 0, LEN, 0x22, 0));
	kvt_fill(pool, LEN, 0x23);
	memset(mine, 0, LEN);
	kvt_batch(kv, local, 0, r, 0, KVREG_OP_READ, SZ_2M, 4);
	CHECK(kvt_mismatch(mine, 0, LEN, 0x23, 0) < 0,
	      "READ over two rails differs at %lld",
	      (long long)kvt_mismatch(mine, 0, LEN, 0x23, 0));

	ops0 = rail_ops(kv, 0);
	ops1 = rail_ops(kv, 1);
	want_ops = 256 + 8;
	CHECK(ops0 > 0 && ops1 > 0, "one rail idle: rail 0 carried %lld "
	      "parts, rail 1 %lld", (long long)ops0, (long long)ops1);
	CHECK(ops0 + ops1 >= want_ops, "%lld parts for %lld operations",
	      (long long)(ops0 + ops1), (long long)want_ops);
	printf("spread over both rails: %lld and %lld parts, every byte "
	       "checked\n", (long long)ops0, (long long)ops1);

	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	CHECK_OK(kvreg_deregister(ex, pool_mr, &err), &err);
	kvreg_close(ex);
	/* The exporter's end of each rail goes in the CM's own time. */
	t0 = kvt_now();
	while (kvt_snap(kv).st.registrations != before.st.registrations &&
	       kvt_now() - t0 < 10)
		usleep(100 * 1000);
	kvt_check_unchanged(kv, &before, "after two rails");
	kvreg_close(kv);
	return T_PASS;
}
