// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A peer that knows nothing of libkvreg: plain librdmacm and libibverbs,
 * with only the UAPI header's documented formats (the descriptor, the
 * connection private data). It connects to a kvreg endpoint, presenting
 * the secret from the descriptor, and WRITEs and READs the exported pool
 * with the descriptor's rkeys; the bytes check on both sides. A wrong
 * secret is refused with kvreg's reason in the reject's private data.
 * This is what lets an existing user-space transfer engine on another
 * node use a pool kvreg registered.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "kvexport.h"

#define LEN	(2 * SZ_2M + 5 * SZ_4K)
#define ADDR	"192.0.2.1"

struct peer {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
};

static struct kvreg_desc_head *head(struct kvt_exporter *c)
{
	return (struct kvreg_desc_head *)c->desc;
}

static struct kvreg_desc_path *path(struct kvt_exporter *c)
{
	return (struct kvreg_desc_path *)(c->desc + head(c)->head_size);
}

static struct kvreg_desc_chunk *chunks(struct kvt_exporter *c)
{
	return (struct kvreg_desc_chunk *)(c->desc + head(c)->head_size +
					   head(c)->nr_paths *
					   sizeof(struct kvreg_desc_path));
}

static enum rdma_cm_event_type next_event(struct peer *p,
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

/* Resolve, make a QP, connect with @secret: the event that ends it. */
static enum rdma_cm_event_type peer_connect(struct peer *p, struct kvt_exporter *c,
					    const uint8_t *secret,
					    uint8_t *buf,
					    struct kvreg_cm_rej *rej)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct kvreg_cm_req req = {
		.magic = KVREG_CM_MAGIC, .version = KVREG_CM_VERSION,
	};
	struct rdma_conn_param param = {
		.private_data = &req, .private_data_len = sizeof(req),
		.initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7,
	};
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	memcpy(req.secret, secret, sizeof(req.secret));
	dst.sin_port = htons(path(c)->port);
	memcpy(&dst.sin_addr, path(c)->addr, 4);
	p->ch = rdma_create_event_channel();
	CHECK(p->ch, "event channel: %s", strerror(errno));
	CHECK(!rdma_create_id(p->ch, &p->id, NULL, RDMA_PS_TCP), "create_id");
	CHECK(!rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&dst, 2000),
	      "resolve_addr: %s", strerror(errno));
	CHECK(next_event(p, NULL) == RDMA_CM_EVENT_ADDR_RESOLVED, "addr");
	CHECK(!rdma_resolve_route(p->id, 2000), "resolve_route");
	CHECK(next_event(p, NULL) == RDMA_CM_EVENT_ROUTE_RESOLVED, "route");
	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cq = ibv_create_cq(p->id->verbs, 128, NULL, NULL, 0);
	CHECK(p->pd && p->cq, "pd, cq");
	qa.send_cq = qa.recv_cq = p->cq;
	CHECK(!rdma_create_qp(p->id, p->pd, &qa), "create_qp: %s",
	      strerror(errno));
	p->mr = ibv_reg_mr(p->pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(p->mr, "ibv_reg_mr: %s", strerror(errno));
	CHECK(!rdma_connect(p->id, &param), "rdma_connect: %s",
	      strerror(errno));
	return next_event(p, rej);
}

static void peer_close(struct peer *p, bool connected)
{
	if (connected) {
		rdma_disconnect(p->id);
		CHECK(next_event(p, NULL) == RDMA_CM_EVENT_DISCONNECTED,
		      "disconnect");
	}
	rdma_destroy_qp(p->id);
	ibv_dereg_mr(p->mr);
	ibv_destroy_cq(p->cq);
	ibv_dealloc_pd(p->pd);
	rdma_destroy_id(p->id);
	rdma_destroy_event_channel(p->ch);
}

/* One work request per descriptor chunk, then wait for them all. */
static void peer_rdma(struct peer *p, struct kvt_exporter *c, uint8_t *buf,
		      enum ibv_wr_opcode op)
{
	struct kvreg_desc_chunk *k = chunks(c);
	uint32_t i, n = path(c)->nr_chunks, done = 0;
	uint64_t off = 0;
	struct ibv_wc wc[16];

	CHECK(n <= 64, "%u chunks", n);
	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf + off,
			.length = (uint32_t)k[i].length,
			.lkey = p->mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = k[i].iova,
				     .rkey = k[i].rkey },
		}, *bad;

		CHECK(!ibv_post_send(p->id->qp, &wr, &bad), "post %u", i);
		off += k[i].length;
	}
	while (done < n) {
		int got = ibv_poll_cq(p->cq, 16, wc), j;

		CHECK(got >= 0, "poll");
		for (j = 0; j < got; j++)
			CHECK(wc[j].status == IBV_WC_SUCCESS,
			      "chunk %llu: %s", (unsigned long long)wc[j].wr_id,
			      ibv_wc_status_str(wc[j].status));
		done += (uint32_t)got;
	}
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_cm_rej rej = { 0 };
	uint8_t secret[KVREG_SECRET_LEN];
	struct peer p = { 0 }, q = { 0 };
	uint8_t *pool, *mine;
	struct kvt_exporter *c;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	/* User-space verbs need the uverbs device (built in on debug). */
	if (system("modprobe ib_uverbs 2>/dev/null") != 0)
		printf("modprobe ib_uverbs failed: built in, I hope\n");
	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	mine = kvt_map_anon(LEN);
	c = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	CHECK(head(c)->magic == KVREG_DESC_MAGIC &&
	      head(c)->version == KVREG_DESC_VERSION, "descriptor");
	printf("descriptor: %zu bytes, %u chunks, port %u\n", c->desc_size,
	       path(c)->nr_chunks, path(c)->port);

	/* Without the secret: refused, and the reject says why. */
	memcpy(secret, head(c)->secret, sizeof(secret));
	secret[0] ^= 1;
	CHECK(peer_connect(&q, c, secret, mine, &rej) ==
	      RDMA_CM_EVENT_REJECTED, "a wrong secret was not refused");
	CHECK(rej.magic == KVREG_CM_MAGIC &&
	      rej.reason == KVREG_REASON_CONN_BAD_SECRET,
	      "reject private data: magic %#x reason %u", rej.magic,
	      rej.reason);
	peer_close(&q, false);
	printf("wrong secret: rejected, reason %u in the private data\n",
	       rej.reason);

	CHECK(peer_connect(&p, c, head(c)->secret, mine, NULL) ==
	      RDMA_CM_EVENT_ESTABLISHED, "connect");
	kvt_fill(mine, LEN, 0x71);
	peer_rdma(&p, c, mine, IBV_WR_RDMA_WRITE);
	CHECK(kvt_mismatch(pool, 0, LEN, 0x71, 0) < 0,
	      "plain-verbs WRITE: pool differs at %lld",
	      (long long)kvt_mismatch(pool, 0, LEN, 0x71, 0));
	kvt_fill(pool, LEN, 0x72);
	memset(mine, 0, LEN);
	peer_rdma(&p, c, mine, IBV_WR_RDMA_READ);
	CHECK(kvt_mismatch(mine, 0, LEN, 0x72, 0) < 0,
	      "plain-verbs READ: differs at %lld",
	      (long long)kvt_mismatch(mine, 0, LEN, 0x72, 0));
	peer_close(&p, true);
	printf("plain librdmacm + libibverbs peer: WRITE and READ of %lu "
	       "bytes over %u chunks, checked on both sides\n", LEN,
	       path(c)->nr_chunks);

	kvt_exporter_stop(c);
	kvreg_close(kv);
	return T_PASS;
}
