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
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>

#include "kvdesc.h"
#include "kvtest.h"

#define ADDR	"192.0.2.1"
#define TRIES	3
/* The CM's REJ reason for a consumer's own refusal (IBTA table 112). */
#define REJ_CONSUMER_DEFINED	28

struct refuser {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	uint16_t port;
	volatile int stop;
	unsigned int rejected;
};

static void *refuse(void *arg)
{
	static const char why[] = "not kvreg";
	struct refuser *r = arg;
	struct rdma_cm_event *ev;
	struct pollfd pfd = { .fd = r->ch->fd, .events = POLLIN };

	while (!r->stop) {
		if (poll(&pfd, 1, 100) != 1)
			continue;
		CHECK(!rdma_get_cm_event(r->ch, &ev), "rdma_get_cm_event: %s",
		      strerror(errno));
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			CHECK(!rdma_reject(ev->id, why, sizeof(why)),
			      "rdma_reject: %s", strerror(errno));
			r->rejected++;
			rdma_ack_cm_event(ev);
			continue;
		}
		rdma_ack_cm_event(ev);
	}
	return NULL;
}

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
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct refuser ref = { 0 };
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvt_snap before;
	unsigned int t, seen;
	uint8_t desc[256];
	char addr[16];
	pthread_t th;
	size_t n;
	int ret;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	ref.ch = rdma_create_event_channel();
	CHECK(ref.ch, "event channel: %s", strerror(errno));
	CHECK(!rdma_create_id(ref.ch, &ref.listen_id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(inet_pton(AF_INET, ADDR, &sin.sin_addr) == 1, "address");
	CHECK(!rdma_bind_addr(ref.listen_id, (struct sockaddr *)&sin),
	      "rdma_bind_addr: %s", strerror(errno));
	CHECK(!rdma_listen(ref.listen_id, 4), "rdma_listen: %s",
	      strerror(errno));
	ref.port = ntohs(rdma_get_src_port(ref.listen_id));
	CHECK(!pthread_create(&th, NULL, refuse, &ref), "pthread_create");
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
	ref.stop = 1;
	CHECK(!pthread_join(th, NULL), "pthread_join");
	CHECK(seen == ref.rejected && seen >= TRIES,
	      "%u IMPORTs, %u requests rejected, %u more after", TRIES, seen,
	      ref.rejected - seen);
	rdma_destroy_id(ref.listen_id);
	rdma_destroy_event_channel(ref.ch);
	kvreg_close(kv);
	printf("%u IMPORTs from a peer that rejects: CONN_REJECTED, CM status "
	       "%d, the peer named; %u requests, none retried, nothing "
	       "left\n", TRIES, REJ_CONSUMER_DEFINED, seen);
	return T_PASS;
}
