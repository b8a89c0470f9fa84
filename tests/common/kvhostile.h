/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * A node that is not kvreg but lets a kvreg importer in: it accepts the
 * connection request with kvreg's private data (any secret will do) on a
 * QP of its own, with a buffer of its own registered for its work. What
 * it does then is the test's.
 */
#ifndef KVHOSTILE_H
#define KVHOSTILE_H

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "kvreg.h"
#include "kvtest.h"

/*
 * A librdmacm listener on IPv4 @addr, a port of its own choosing, which it
 * returns; its events come on *@ch.
 */
static inline uint16_t kvt_rdma_listen(const char *addr,
				       struct rdma_event_channel **ch,
				       struct rdma_cm_id **listen_id)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	*ch = rdma_create_event_channel();
	CHECK(*ch, "event channel: %s", strerror(errno));
	CHECK(!rdma_create_id(*ch, listen_id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(inet_pton(AF_INET, addr, &sin.sin_addr) == 1, "address");
	CHECK(!rdma_bind_addr(*listen_id, (struct sockaddr *)&sin),
	      "rdma_bind_addr: %s", strerror(errno));
	CHECK(!rdma_listen(*listen_id, 4), "rdma_listen: %s",
	      strerror(errno));
	return ntohs(rdma_get_src_port(*listen_id));
}

struct kvt_hostile {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;	/* over the caller's buffer */
};

/* A QP for @id's request, with @buf (@len bytes) registered for local use. */
static inline void kvt_hostile_setup(struct rdma_cm_id *id,
				     struct kvt_hostile *h, void *buf,
				     size_t len)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	h->pd = ibv_alloc_pd(id->verbs);
	h->cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);
	CHECK(h->pd && h->cq, "pd, cq");
	qa.send_cq = qa.recv_cq = h->cq;
	CHECK(!rdma_create_qp(id, h->pd, &qa), "create_qp: %s",
	      strerror(errno));
	h->mr = ibv_reg_mr(h->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	CHECK(h->mr, "ibv_reg_mr: %s", strerror(errno));
}

/* kvt_hostile_setup(), then accept @id's request with kvreg's private data. */
static inline void kvt_hostile_accept(struct rdma_cm_id *id,
				      struct kvt_hostile *h, void *buf,
				      size_t len)
{
	struct kvreg_cm_req acc = {
		.magic = KVREG_CM_MAGIC, .version = KVREG_CM_VERSION,
	};
	struct rdma_conn_param param = {
		.private_data = &acc, .private_data_len = sizeof(acc),
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 3, .rnr_retry_count = 3,
	};

	kvt_hostile_setup(id, h, buf, len);
	CHECK(!rdma_accept(id, &param), "accept: %s", strerror(errno));
}

/* Once the connection is down: its QP, buffer, CQ, PD and id go. */
static inline void kvt_hostile_free(struct rdma_cm_id *id,
				    struct kvt_hostile *h)
{
	rdma_destroy_qp(id);
	ibv_dereg_mr(h->mr);
	ibv_destroy_cq(h->cq);
	ibv_dealloc_pd(h->pd);
	rdma_destroy_id(id);
}

#endif /* KVHOSTILE_H */
