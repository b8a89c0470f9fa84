// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * An endpoint on an IPv6 address (RoCE v2 over IPv6: rxe's GID of that
 * address) and an import through it: the descriptor's path is IPv6, the
 * bytes of a WRITE and a READ check on both sides, the connection is
 * listed with both IPv6 addresses, and the refusals name an IPv6 address
 * in the error record (a LISTEN on an address that is not local, an
 * IMPORT of a descriptor to one that no route reaches), leaving nothing
 * behind. tests/guest/rxe-up.sh puts ADDR on rxe0's netdev.
 */
#include "kvdesc.h"
#include "kvexport.h"

#define LEN		(SZ_2M + 7 * SZ_4K)
#define ADDR		"2001:db8::1"
#define NOT_LOCAL	"2001:db8::99"
#define NO_ROUTE	"2001:db8:ffff::5"

/* The record must name @addr as an IPv6 address. */
static void check_names(const struct kvreg_error *err, const char *addr,
			const char *when)
{
	char got[INET6_ADDRSTRLEN] = "";

	CHECK(err->addr_family == AF_INET6 &&
	      inet_ntop(AF_INET6, err->addr, got, sizeof(got)) &&
	      !strcmp(got, addr), "%s: the record names family %u %s, not "
	      "%s", when, err->addr_family, got, addr);
}

/* The importer's connection to ADDR, listed with IPv6 on both ends. */
static void check_listed(struct kvreg *kv)
{
	char local[INET6_ADDRSTRLEN], peer[INET6_ADDRSTRLEN];
	struct kvreg_conn_info ci[16];
	struct kvreg_error err;
	unsigned int n, i, k = 0;

	CHECK_OK(kvreg_conns(kv, ci, 16, &n, &err), &err);
	for (i = 0; i < n && i < 16; i++) {
		if (ci[i].pid != (uint32_t)getpid() ||
		    ci[i].kind != KVREG_CONN_KIND_ACTIVE)
			continue;
		CHECK(ci[i].local.family == AF_INET6 &&
		      ci[i].peer.family == AF_INET6 &&
		      inet_ntop(AF_INET6, ci[i].local.addr, local,
				sizeof(local)) &&
		      inet_ntop(AF_INET6, ci[i].peer.addr, peer,
				sizeof(peer)) &&
		      !strcmp(peer, ADDR) && !strcmp(local, ADDR),
		      "connection listed as family %u/%u", ci[i].local.family,
		      ci[i].peer.family);
		k++;
	}
	CHECK(k == 1, "%u connections of this process listed, not 1", k);
	printf("listed: [%s] -> [%s]\n", local, peer);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_remote *r = NULL;
	struct kvreg_error err;
	struct kvt_exporter *x;
	struct kvt_snap before;
	uint8_t *pool, *mine;
	struct kvreg_mr *mr;
	uint8_t desc[256];
	uint64_t ep;
	size_t n;
	int ret;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	pool = kvt_map_shared(LEN);
	mine = kvt_map_anon(LEN);
	x = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	CHECK(kvt_desc_path(x->desc)->family == AF_INET6,
	      "the descriptor's path is family %u, not AF_INET6",
	      kvt_desc_path(x->desc)->family);

	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &mr, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	kvt_exporter_roundtrip(kv, pool, mine, mr, r, LEN, 0x61);
	printf("endpoint [%s]:%u: WRITE and READ of %lu bytes, checked on "
	       "both sides\n", ADDR, kvt_desc_path(x->desc)->port, LEN);
	check_listed(kv);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);

	before = kvt_snap(kv);
	ret = kvreg_listen(kv, NOT_LOCAL, 0, &ep, NULL, &err);
	CHECK(ret == -EADDRNOTAVAIL &&
	      err.reason == KVREG_REASON_ADDRESS_NOT_LOCAL,
	      "LISTEN on %s: %d reason %u, not ADDRESS_NOT_LOCAL", NOT_LOCAL,
	      ret, err.reason);
	check_names(&err, NOT_LOCAL, "LISTEN");
	n = kvt_desc_to(desc, NO_ROUTE, 4791);
	CHECK(n, "a descriptor to %s", NO_ROUTE);
	r = NULL;
	ret = kvreg_import(kv, desc, n, 2000, &r, &err);
	CHECK(ret < 0 && !r && err.reason == KVREG_REASON_ADDRESS_UNRESOLVED,
	      "IMPORT from %s: %d reason %u, not ADDRESS_UNRESOLVED",
	      NO_ROUTE, ret, err.reason);
	check_names(&err, NO_ROUTE, "IMPORT");
	kvt_check_unchanged(kv, &before, "the refusals");
	printf("refused, each naming its IPv6 address: LISTEN on %s (%s), "
	       "IMPORT from %s (%s)\n", NOT_LOCAL,
	       kvreg_strerror(KVREG_REASON_ADDRESS_NOT_LOCAL), NO_ROUTE,
	       kvreg_strerror(err.reason));

	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvt_exporter_stop(x);
	kvreg_close(kv);
	return T_PASS;
}
