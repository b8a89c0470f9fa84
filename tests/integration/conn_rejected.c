// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A peer that is not kvreg and refuses the connection: a plain librdmacm
 * listener that answers each request with rdma_reject() and private data
 * of its own. IMPORT of a descriptor naming it fails with CONN_REJECTED,
 * the CM's status (consumer-defined, 28) as driver_errno, and the peer's
 * address and port in the record; nothing is imported, charged or left
 * connected, and the rejected connections are not retried behind the
 * caller's back.
 */
#include <infiniband/ib.h>

#include "kvdesc.h"
#include "kvrefuser.h"

#define ADDR	"192.0.2.1"
#define TRIES	3
/* The CM's REJ reason for a consumer's own refusal (IBTA table 112). */
#define REJ_CONSUMER_DEFINED	28

static unsigned int conns_listed(struct kvreg *kv)
{
	struct kvreg_conn_info ci[16];
	struct kvreg_error err;
	unsigned int n;

	CHECK_OK(kvreg_conns(kv, ci, 16, &n, &err), &err);
	return n;
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvt_refuser ref;
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvt_snap before;
	unsigned int t, seen;
	uint8_t desc[256];
	char addr[16];
	size_t n;
	int ret;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	kvt_refuser_start(&ref, ADDR);
	n = kvt_desc_to(desc, ADDR, ref.port);
	CHECK(n, "a descriptor to %s", ADDR);

	before = kvt_snap(kv);
	for (t = 0; t < TRIES; t++) {
		r = NULL;
		ret = kvreg_import(kv, desc, n, 0, &r, &err);
		CHECK(ret == -ECONNREFUSED && !r &&
		      err.reason == KVREG_REASON_CONN_REJECTED &&
		      err.driver_errno == REJ_CONSUMER_DEFINED,
		      "IMPORT from a peer that rejects: %d reason %u "
		      "driver_errno %d", ret, err.reason, err.driver_errno);
		CHECK(err.addr_family == AF_INET && err.port == ref.port &&
		      inet_ntop(AF_INET, err.addr, addr, sizeof(addr)) &&
		      !strcmp(addr, ADDR),
		      "the record names %u %s:%u, not the peer %s:%u",
		      err.addr_family, addr, err.port, ADDR, ref.port);
		kvt_check_unchanged(kv, &before, "a rejected IMPORT");
		CHECK(conns_listed(kv) == 0, "a rejected IMPORT left %u "
		      "connections listed", conns_listed(kv));
	}
	/* Nothing tries again by itself once IMPORT has said no. */
	seen = ref.rejected;
	usleep(1500 * 1000);
	kvt_refuser_stop(&ref);
	CHECK(seen == ref.rejected && seen >= TRIES,
	      "%u IMPORTs, %u requests rejected, %u more after", TRIES, seen,
	      ref.rejected - seen);
	kvreg_close(kv);
	printf("%u IMPORTs from a peer that rejects: CONN_REJECTED, CM status "
	       "%d, the peer named; %u requests, none retried, nothing "
	       "left\n", TRIES, REJ_CONSUMER_DEFINED, seen);
	return T_PASS;
}
