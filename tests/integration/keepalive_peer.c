// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * An exporter looks at each connection's expected receive PSN and lets
 * go of an importer heard from in none of three periods. The periods need
 * not agree across nodes: the importer says its own in the connection
 * request (struct kvreg_cm_req.keepalive_ms), and the exporter looks at
 * the longer of the two. A plain-verbs importer, its exporter's period
 * set to 500 ms, says 4000 and sends a zero-length RDMA WRITE every
 * 2000 ms, as a kvreg importer with that setting would: it must still be
 * connected after 9 s (a WRITE of data lands, bytes checked), where an
 * exporter deaf to the request lets it go in about 1.5 s. One that says
 * 0 (it sends none) is looked at with the exporter's own period, and let
 * go once it falls quiet. One that never completes the handshake (the
 * exporter's REP answered by no RTU, as an importer killed while it
 * connects leaves it) is let go within three periods too, where the
 * CM's REP retries alone would hold it, and a place under the endpoint's
 * caps, for a minute or more.
 */
#include "kvpeer.h"
#include "kvexport.h"

#define LEN		(4 * SZ_4K)
#define ADDR		"192.0.2.1"
#define PARAM		"/sys/module/kvreg/parameters/keepalive_ms"
#define MINE_SEED	0x6b

static unsigned int param_read(void)
{
	FILE *f = fopen(PARAM, "r");
	unsigned int v;

	CHECK(f && fscanf(f, "%u", &v) == 1, "read %s", PARAM);
	fclose(f);
	return v;
}

static void param_write(unsigned int v)
{
	FILE *f = fopen(PARAM, "w");

	CHECK(f && fprintf(f, "%u\n", v) > 0, "write %s", PARAM);
	CHECK(!fclose(f), "write %s", PARAM);
}

static unsigned int saved = ~0U;

static void restore(void)
{
	if (saved != ~0U)
		param_write(saved);
}

/* Connect with the export's secret, saying @period in the request. */
static void connect_saying(struct kvt_peer *p, const uint8_t *desc,
			   uint8_t *buf, uint16_t period)
{
	CHECK(kvt_peer_connect_ka(p, desc, kvt_desc_head(desc)->secret, buf,
				  LEN, period, NULL) ==
	      RDMA_CM_EVENT_ESTABLISHED, "connect");
}

/*
 * A request with the export's secret from an id with no QP: librdmacm
 * hands the exporter's REP to us as CONNECT_RESPONSE, and without
 * rdma_establish() no RTU is ever sent.
 */
static void request_no_rtu(struct kvt_peer *p, const uint8_t *desc)
{
	struct rdma_conn_param param;
	struct kvreg_cm_req req;

	kvt_peer_req_init(&req, &param, kvt_desc_head(desc)->secret, 0);
	param.qp_num = 0x1234;	/* no such QP: nothing answers REP */
	kvt_peer_resolve(p, desc);
	CHECK(!rdma_connect(p->id, &param), "rdma_connect: %s",
	      strerror(errno));
	CHECK(kvt_peer_event(p, NULL) == RDMA_CM_EVENT_CONNECT_RESPONSE,
	      "the exporter did not answer the request with a REP");
}

static enum ibv_wc_status zero_write(struct kvt_peer *p, uint8_t *buf)
{
	uint64_t iova = 0, len = 0;
	uint32_t rkey = 0;

	return kvt_peer_rdma(p, buf, IBV_WR_RDMA_WRITE, &iova, &rkey, &len, 1);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	static uint8_t desc[16384];
	struct kvreg_error err;
	struct kvreg_mr *mr;
	uint8_t *pool, *mine;
	struct kvt_peer p;
	double t0, gone;
	size_t size;
	uint64_t ep;
	int i;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	kvt_uverbs();
	saved = param_read();
	atexit(restore);
	pool = kvt_map_anon(LEN);
	mine = kvt_map_anon(LEN);
	CHECK_OK(kvreg_register(kv, pool, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &mr, &err), &err);
	CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &size, &err),
		 &err);
	param_write(500);

	/* Says 4000, writes every 2000: kept, though the exporter's is 500. */
	connect_saying(&p, desc, mine, 4000);
	for (i = 0; i < 4; i++) {
		CHECK(zero_write(&p, mine) == IBV_WC_SUCCESS,
		      "keepalive WRITE %d refused: the exporter let go of an "
		      "importer that kept to the period it said", i);
		CHECK(kvt_passive_of(kv, getpid()) == 1,
		      "the connection was let go after %d keepalives", i);
		usleep(2000 * 1000);
	}
	kvt_fill(mine, LEN, MINE_SEED);
	CHECK(kvt_peer_rdma_desc(&p, desc, mine, IBV_WR_RDMA_WRITE) ==
	      IBV_WC_SUCCESS, "a WRITE after 8 s of keepalives failed");
	CHECK(kvt_mismatch(pool, 0, LEN, MINE_SEED, 0) < 0,
	      "the WRITE after 8 s of keepalives: the pool differs at %lld",
	      (long long)kvt_mismatch(pool, 0, LEN, MINE_SEED, 0));
	kvt_peer_close(&p, true);
	printf("an importer that said 4000 ms, its exporter at 500 ms: kept "
	       "through 8 s of keepalives every 2 s, then its WRITE landed\n");

	/* Says 0: the exporter's own period, and let go when quiet. */
	connect_saying(&p, desc, mine, 0);
	t0 = kvt_now();
	while (kvt_passive_of(kv, getpid()) && kvt_now() - t0 < 20)
		usleep(100 * 1000);
	gone = kvt_now() - t0;
	CHECK(!kvt_passive_of(kv, getpid()),
	      "a quiet importer that said 0 was kept for 20 s");
	printf("an importer that said 0 and fell quiet: let go after %.1f s\n",
	       gone);
	kvt_peer_close(&p, false);

	/* Never established: let go within three periods as well. */
	request_no_rtu(&p, desc);
	/* The REP may come before the accept work lists the connection. */
	t0 = kvt_now();
	while (!kvt_passive_of(kv, getpid()) && kvt_now() - t0 < 5)
		usleep(10 * 1000);
	CHECK(kvt_passive_of(kv, getpid()) == 1,
	      "the exporter lists %u connections, not the half-made one",
	      kvt_passive_of(kv, getpid()));
	t0 = kvt_now();
	while (kvt_passive_of(kv, getpid()) && kvt_now() - t0 < 10)
		usleep(100 * 1000);
	gone = kvt_now() - t0;
	CHECK(!kvt_passive_of(kv, getpid()),
	      "a connection never established (no RTU) was kept for 10 s "
	      "with keepalive_ms at 500");
	printf("an importer that never sent its RTU: let go after %.1f s\n",
	       gone);
	/* Its id only now: destroying it would have sent a REJ. */
	rdma_destroy_id(p.id);
	rdma_destroy_event_channel(p.ch);

	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}
