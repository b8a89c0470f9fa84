// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A peer that knows nothing of libkvreg: plain librdmacm and libibverbs,
 * with only the UAPI header's documented formats (the descriptor, the
 * connection private data). It connects to a kvreg endpoint, presenting
 * a secret, and posts RDMA READs and WRITEs with whatever rkeys and
 * addresses it is given: an honest importer in some tests, an attacker
 * in others. Link with -lrdmacm -libverbs.
 */
#ifndef KVPEER_H
#define KVPEER_H

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "kvdesc.h"
#include "kvtest.h"

struct kvt_peer {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
};

static inline enum rdma_cm_event_type kvt_peer_event(struct kvt_peer *p,
						     struct kvreg_cm_rej *rej)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;

	CHECK(!rdma_get_cm_event(p->ch, &ev), "rdma_get_cm_event: %s",
	      strerror(errno));
	type = ev->event;
	if (rej && type == RDMA_CM_EVENT_REJECTED &&
	    ev->param.conn.private_data &&
	    ev->param.conn.private_data_len >= sizeof(*rej))
		memcpy(rej, ev->param.conn.private_data, sizeof(*rej));
	rdma_ack_cm_event(ev);
	return type;
}

/* A fresh @p, its id resolved to the first path of descriptor @desc. */
static inline void kvt_peer_resolve(struct kvt_peer *p, const uint8_t *desc)
{
	const struct kvreg_desc_path *path = kvt_desc_path(desc);
	struct sockaddr_in dst = { .sin_family = AF_INET };

	memset(p, 0, sizeof(*p));
	dst.sin_port = htons(path->port);
	memcpy(&dst.sin_addr, path->addr, 4);
	p->ch = rdma_create_event_channel();
	CHECK(p->ch, "event channel: %s", strerror(errno));
	CHECK(!rdma_create_id(p->ch, &p->id, NULL, RDMA_PS_TCP), "create_id");
	CHECK(!rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&dst, 2000),
	      "resolve_addr: %s", strerror(errno));
	CHECK(kvt_peer_event(p, NULL) == RDMA_CM_EVENT_ADDR_RESOLVED, "addr");
	CHECK(!rdma_resolve_route(p->id, 2000), "resolve_route");
	CHECK(kvt_peer_event(p, NULL) == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "route");
}

/*
 * The peer QP's ACK timeout, 4.096 us * 2^14 = 67 ms a try: a request
 * that gets no answer (dropped by a QP in error, or by 5.10's rxe for a
 * bad rkey) fails within a second. A test whose refusals come as NAKs
 * may raise it: it costs nothing when the NAK comes, and a slow NAK is
 * then not taken for no answer.
 */
static uint8_t kvt_peer_ack_timeout __attribute__((unused)) = 14;

/*
 * Resolve the first path of descriptor @desc, make a QP with @buf (@len
 * bytes) registered locally, and send the request with @secret, saying
 * @keepalive_ms; the answer comes as an event on p->ch.
 */
/*
 * The request a kvreg importer sends: @req, kvreg's private data with
 * @secret and @keepalive_ms, carried by @param.
 */
static inline void kvt_peer_req_init(struct kvreg_cm_req *req,
				     struct rdma_conn_param *param,
				     const uint8_t *secret,
				     uint16_t keepalive_ms)
{
	*req = (struct kvreg_cm_req) {
		.magic = KVREG_CM_MAGIC, .version = KVREG_CM_VERSION,
		.keepalive_ms = keepalive_ms,
	};
	memcpy(req->secret, secret, sizeof(req->secret));
	*param = (struct rdma_conn_param) {
		.private_data = req, .private_data_len = sizeof(*req),
		/* Not 7: rxe reads 7 as "retry for ever". */
		.initiator_depth = 1, .retry_count = 6, .rnr_retry_count = 6,
	};
}

static inline void kvt_peer_request(struct kvt_peer *p, const uint8_t *desc,
				    const uint8_t *secret, uint8_t *buf,
				    size_t len, uint16_t keepalive_ms)
{
	struct rdma_conn_param param;
	struct kvreg_cm_req req;
	uint8_t ack_timeout = kvt_peer_ack_timeout;
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	kvt_peer_req_init(&req, &param, secret, keepalive_ms);
	kvt_peer_resolve(p, desc);
	CHECK(!rdma_set_option(p->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			       &ack_timeout, sizeof(ack_timeout)),
	      "ack timeout: %s", strerror(errno));
	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cq = ibv_create_cq(p->id->verbs, 128, NULL, NULL, 0);
	CHECK(p->pd && p->cq, "pd, cq");
	qa.send_cq = qa.recv_cq = p->cq;
	CHECK(!rdma_create_qp(p->id, p->pd, &qa), "create_qp: %s",
	      strerror(errno));
	p->mr = ibv_reg_mr(p->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	CHECK(p->mr, "ibv_reg_mr: %s", strerror(errno));
	CHECK(!rdma_connect(p->id, &param), "rdma_connect: %s",
	      strerror(errno));
}

/*
 * kvt_peer_request(), then the event that ends it (ESTABLISHED, or
 * REJECTED with kvreg's reason in @rej).
 */
static inline enum rdma_cm_event_type
kvt_peer_connect_ka(struct kvt_peer *p, const uint8_t *desc,
		    const uint8_t *secret, uint8_t *buf, size_t len,
		    uint16_t keepalive_ms, struct kvreg_cm_rej *rej)
{
	kvt_peer_request(p, desc, secret, buf, len, keepalive_ms);
	return kvt_peer_event(p, rej);
}

/* A peer that posts no keepalive, and says so (0). */
static inline enum rdma_cm_event_type
kvt_peer_connect(struct kvt_peer *p, const uint8_t *desc,
		 const uint8_t *secret, uint8_t *buf, size_t len,
		 struct kvreg_cm_rej *rej)
{
	return kvt_peer_connect_ka(p, desc, secret, buf, len, 0, rej);
}

static inline void kvt_peer_close(struct kvt_peer *p, bool connected)
{
	if (connected) {
		enum rdma_cm_event_type ev;

		rdma_disconnect(p->id);
		ev = kvt_peer_event(p, NULL);
		/*
		 * A REJ ends it too: 7.2's CM answers a DREQ with one when
		 * the exporter, its QP failed by an attack, let go first.
		 */
		CHECK(ev == RDMA_CM_EVENT_DISCONNECTED ||
		      ev == RDMA_CM_EVENT_REJECTED, "disconnect: %s",
		      rdma_event_str(ev));
	}
	rdma_destroy_qp(p->id);
	ibv_dereg_mr(p->mr);
	ibv_destroy_cq(p->cq);
	ibv_dealloc_pd(p->pd);
	rdma_destroy_id(p->id);
	rdma_destroy_event_channel(p->ch);
}

/*
 * Post @n work requests of @op, the i-th of @lens[i] bytes between @buf
 * (consecutively) and (@iovas[i], @rkeys[i]), and wait for them all.
 * Returns the first status that is not success, or IBV_WC_SUCCESS.
 */
static inline enum ibv_wc_status
kvt_peer_rdma(struct kvt_peer *p, uint8_t *buf, enum ibv_wr_opcode op,
	      const uint64_t *iovas, const uint32_t *rkeys,
	      const uint64_t *lens, uint32_t n)
{
	enum ibv_wc_status first = IBV_WC_SUCCESS;
	uint32_t i, done = 0;
	uint64_t off = 0;
	struct ibv_wc wc[16];

	CHECK(n <= 64, "%u work requests", n);
	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf + off,
			.length = (uint32_t)lens[i],
			.lkey = p->mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = iovas[i],
				     .rkey = rkeys[i] },
		}, *bad;

		CHECK(!ibv_post_send(p->id->qp, &wr, &bad), "post %u", i);
		off += lens[i];
	}
	while (done < n) {
		int got = ibv_poll_cq(p->cq, 16, wc), j;

		CHECK(got >= 0, "poll");
		for (j = 0; j < got; j++)
			if (wc[j].status != IBV_WC_SUCCESS &&
			    first == IBV_WC_SUCCESS)
				first = wc[j].status;
		done += (uint32_t)got;
	}
	return first;
}

/* One work request per chunk of @desc's first path, over all of @buf. */
static inline enum ibv_wc_status kvt_peer_rdma_desc(struct kvt_peer *p,
						    const uint8_t *desc,
						    uint8_t *buf,
						    enum ibv_wr_opcode op)
{
	const struct kvreg_desc_chunk *k = kvt_desc_chunks(desc);
	uint32_t i, n = kvt_desc_path(desc)->nr_chunks;
	uint64_t iovas[64], lens[64];
	uint32_t rkeys[64];

	CHECK(n <= 64, "%u chunks", n);
	for (i = 0; i < n; i++) {
		iovas[i] = k[i].iova;
		rkeys[i] = k[i].rkey;
		lens[i] = k[i].length;
	}
	return kvt_peer_rdma(p, buf, op, iovas, rkeys, lens, n);
}

#endif /* KVPEER_H */
