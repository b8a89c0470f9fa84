// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The connection's private data (include/uapi/kvreg.h, wire version 2),
 * changed at random by peers that are plain librdmacm:
 *  - requests: a kvreg endpoint gets REQS connect requests whose struct
 *    kvreg_cm_req has its length, magic, version, keepalive or secret
 *    changed, or is bytes at random. Each is accepted when it is a
 *    request of this version with the export's secret, and refused
 *    otherwise with the reason its form earns (BAD_SECRET, CONN_VERSION),
 *    read from the refusal's struct kvreg_cm_rej; the endpoint keeps no
 *    connection, and an honest import moves bytes afterwards.
 *  - accepts: a listener that is not kvreg accepts each of ACCEPTS
 *    IMPORTs with private data changed the same way: IMPORT connects when
 *    it is a kvreg accept of this version, and otherwise fails with
 *    PEER_PROTOCOL, the peer named, and the listener sees its accept
 *    refused;
 *  - refusals: the listener refuses each of REJECTS IMPORTs with private
 *    data changed the same way: IMPORT fails with the reason and numbers
 *    a kvreg refusal of that form carries, or CONN_REJECTED with the CM's
 *    status when it is not one.
 * The CM pads what a peer sends with zeroes (56 bytes of a request, 196
 * of an accept, 148 of a refusal), so each answer is predicted from the
 * padded bytes. Every kind of answer must have come; nothing is left
 * pinned, charged, connected or created (QPs, cm_ids) afterwards.
 */
#include <poll.h>
#include <pthread.h>

#include "kvexport.h"
#include "kvhostile.h"
#include "kvpeer.h"

#define ADDR		"192.0.2.1"
#define LEN		(16 * SZ_4K)
#define REQS		96
#define ACCEPTS		48
#define REJECTS		64
/* The CM's own bound on an answer is longer; this one fails the test. */
#define ANSWER_S	10
/* What the CM carries of each, after the RDMA CM's header of a request. */
#define REQ_DATA	56
#define REP_DATA	196
#define REJ_DATA	148
#define REJ_CONSUMER_DEFINED	28
#define NR_REASONS	9

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return kvt_rnd(&rng_state);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

/*
 * @d (@cap bytes, zeroed) gets @valid's @n bytes changed one way at
 * random, or bytes at random; returns the length to send.
 */
static size_t mutate(uint8_t *d, size_t cap, const void *valid, size_t n)
{
	size_t len = n;

	memcpy(d, valid, n);
	switch (rnd() % 7) {
	case 0:		/* as it is, trailing bytes or not */
		break;
	case 1:		/* longer, with bytes after it */
		len = n + rnd() % (cap - n + 1);
		for (size_t i = n; i < len; i++)
			d[i] = (uint8_t)rnd();
		break;
	case 2:		/* cut short */
		len = rnd() % n;
		memset(d + len, 0, n - len);
		break;
	case 3:		/* the magic */
		d[rnd() % 4] ^= (uint8_t)(1 << rnd() % 8);
		break;
	case 4:		/* the version: another, or one bit off */
		d[4 + rnd() % 2] ^= (uint8_t)(rnd() % 2 ? 1U << rnd() % 8 :
					      rnd());
		break;
	case 5:		/* anything after the version */
		d[6 + rnd() % (n - 6)] ^= (uint8_t)(1 << rnd() % 8);
		break;
	default:	/* bytes at random, nothing after them */
		len = rnd() % (cap + 1);
		memset(d, 0, cap);
		for (size_t i = 0; i < len; i++)
			d[i] = (uint8_t)rnd();
		break;
	}
	return len;
}

/* The next CM event of @ch within ANSWER_S, its REJ's data in @rej. */
static enum rdma_cm_event_type event_within(struct rdma_event_channel *ch,
					    uint8_t *rej)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;

	CHECK(poll(&pfd, 1, ANSWER_S * 1000) == 1, "no answer from the CM "
	      "within %d s", ANSWER_S);
	CHECK(!rdma_get_cm_event(ch, &ev), "rdma_get_cm_event: %s",
	      strerror(errno));
	type = ev->event;
	if (rej && type == RDMA_CM_EVENT_REJECTED) {
		memset(rej, 0, REJ_DATA);
		if (ev->param.conn.private_data)
			memcpy(rej, ev->param.conn.private_data,
			       ev->param.conn.private_data_len < REJ_DATA ?
			       ev->param.conn.private_data_len : REJ_DATA);
	}
	rdma_ack_cm_event(ev);
	return type;
}

static unsigned int conns_of_kind(struct kvreg *kv, uint32_t kind)
{
	struct kvreg_conn_info ci[64];
	struct kvreg_error err;
	unsigned int n, i, count = 0;

	CHECK_OK(kvreg_conns(kv, ci, 64, &n, &err), &err);
	for (i = 0; i < n && i < 64; i++)
		count += ci[i].kind == kind;
	return count;
}

/* Until no connection of @kind is listed, within ANSWER_S. */
static void wait_no_conns(struct kvreg *kv, uint32_t kind, const char *when)
{
	double t0 = kvt_now();

	while (conns_of_kind(kv, kind)) {
		CHECK(kvt_now() - t0 < ANSWER_S, "%s: %u connections still "
		      "listed after %d s", when, conns_of_kind(kv, kind),
		      ANSWER_S);
		usleep(20 * 1000);
	}
}

/* QPs and cm_ids back to @qp and @cm (let go asynchronously). */
static void wait_res(long qp, long cm, const char *when)
{
	double t0 = kvt_now();

	while (kvt_rdma_res("qp") != qp || kvt_rdma_res("cm_id") != cm) {
		CHECK(kvt_now() - t0 < ANSWER_S, "%s: %ld QPs and %ld cm_ids, "
		      "%ld and %ld before", when, kvt_rdma_res("qp"),
		      kvt_rdma_res("cm_id"), qp, cm);
		usleep(50 * 1000);
	}
}

/* --- requests ----------------------------------------------------------- */

enum req_answer { REQ_ACCEPTED, REQ_BAD_SECRET, REQ_VERSION, REQ_ANSWERS };

/* What the endpoint must answer to @d, padded (kvreg_conn_check_req()). */
static enum req_answer req_expect(const uint8_t *d, const uint8_t *secret)
{
	if (get32(d) != KVREG_CM_MAGIC)
		return REQ_BAD_SECRET;
	if (get16(d + 4) != KVREG_CM_VERSION)
		return REQ_VERSION;
	if (memcmp(d + offsetof(struct kvreg_cm_req, secret), secret,
		   KVREG_SECRET_LEN))
		return REQ_BAD_SECRET;
	return REQ_ACCEPTED;
}

/* One request of @len bytes of @d to @desc's endpoint: how it ended. */
static enum req_answer req_try(struct kvreg *kv, const uint8_t *desc,
			       const uint8_t *d, size_t len, uint8_t *buf)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = {
		.private_data = len ? d : NULL,
		.private_data_len = (uint8_t)len,
		.initiator_depth = 1, .retry_count = 6, .rnr_retry_count = 6,
	};
	uint8_t rej[REJ_DATA];
	enum rdma_cm_event_type ev;
	struct kvt_peer p;

	kvt_peer_resolve(&p, desc);
	p.pd = ibv_alloc_pd(p.id->verbs);
	p.cq = ibv_create_cq(p.id->verbs, 8, NULL, NULL, 0);
	CHECK(p.pd && p.cq, "pd, cq");
	qa.send_cq = qa.recv_cq = p.cq;
	CHECK(!rdma_create_qp(p.id, p.pd, &qa), "create_qp: %s",
	      strerror(errno));
	p.mr = ibv_reg_mr(p.pd, buf, SZ_4K, IBV_ACCESS_LOCAL_WRITE);
	CHECK(p.mr, "ibv_reg_mr: %s", strerror(errno));
	CHECK(!rdma_connect(p.id, &param), "rdma_connect: %s",
	      strerror(errno));
	ev = event_within(p.ch, rej);
	if (ev == RDMA_CM_EVENT_ESTABLISHED) {
		kvt_peer_close(&p, true);
		wait_no_conns(kv, KVREG_CONN_KIND_PASSIVE, "an accepted request "
			      "closed");
		return REQ_ACCEPTED;
	}
	kvt_peer_close(&p, false);
	CHECK(ev == RDMA_CM_EVENT_REJECTED, "a request ended in %s",
	      rdma_event_str(ev));
	CHECK(get32(rej) == KVREG_CM_MAGIC, "a refusal without kvreg's magic: "
	      "%#x", get32(rej));
	CHECK(get16(rej + 4) == KVREG_CM_VERSION, "the refusal says version "
	      "%u", get16(rej + 4));
	switch (get16(rej + 6)) {
	case KVREG_REASON_CONN_BAD_SECRET:
		return REQ_BAD_SECRET;
	case KVREG_REASON_CONN_VERSION:
		return REQ_VERSION;
	}
	CHECK(0, "a request refused with reason %u", get16(rej + 6));
	return REQ_ANSWERS;
}

static void requests(struct kvreg *kv)
{
	static const char *const names[REQ_ANSWERS] = {
		"accepted", "refused BAD_SECRET", "refused CONN_VERSION",
	};
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	unsigned int count[REQ_ANSWERS] = { 0 }, i;
	uint8_t d[REQ_DATA], padded[REQ_DATA];
	uint8_t *pool = kvt_map_shared(LEN), *mine = kvt_map_anon(LEN);
	struct kvreg_cm_req valid = {
		.magic = KVREG_CM_MAGIC, .version = KVREG_CM_VERSION,
	};
	struct kvreg_mr *local;
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvt_exporter *c;
	long qp, cm;

	CHECK(kvt_devices(kv, devs), "no RDMA device");
	c = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	memcpy(valid.secret, kvt_desc_head(c->desc)->secret, KVREG_SECRET_LEN);
	qp = kvt_rdma_res("qp");
	cm = kvt_rdma_res("cm_id");
	for (i = 0; i < REQS; i++) {
		enum req_answer want, got;
		size_t len;

		memset(d, 0, sizeof(d));
		valid.keepalive_ms = (uint16_t)(rnd() % 3 ? 0 : rnd());
		len = mutate(d, sizeof(d), &valid, sizeof(valid));
		/* One of each answer first, whatever the seed. */
		if (i < REQ_ANSWERS) {
			len = sizeof(valid);
			memcpy(d, &valid, len);
			d[i == REQ_VERSION ? 4 : 0] ^= i != REQ_ACCEPTED;
		}
		memset(padded, 0, sizeof(padded));
		memcpy(padded, d, len);
		want = req_expect(padded, valid.secret);
		got = req_try(kv, c->desc, d, len, mine);
		CHECK(got == want, "request %u (%zu bytes, magic %#x version %u):"
		      " %s, not %s", i, len, get32(padded), get16(padded + 4),
		      names[got], names[want]);
		count[got]++;
	}
	wait_res(qp, cm, "the requests");
	CHECK(!conns_of_kind(kv, KVREG_CONN_KIND_PASSIVE), "the endpoint "
	      "holds connections after the requests");
	for (i = 0; i < REQ_ANSWERS; i++)
		CHECK(count[i] >= REQS / 32, "%u of %u requests %s", count[i],
		      REQS, names[i]);
	printf("requests: %u accepted, %u BAD_SECRET, %u CONN_VERSION, each "
	       "as its bytes said\n", count[REQ_ACCEPTED],
	       count[REQ_BAD_SECRET], count[REQ_VERSION]);

	/* The endpoint still serves an honest importer. */
	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL, 0, &local,
				&err), &err);
	CHECK_OK(kvreg_import(kv, c->desc, c->desc_size, 0, &r, &err), &err);
	kvt_fill(mine, LEN, 0x5c);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r,
				       0, LEN, &err), &err);
	CHECK(kvt_mismatch(pool, 0, LEN, 0x5c, 0) < 0, "the exporter's pool "
	      "differs at %lld", (long long)kvt_mismatch(pool, 0, LEN, 0x5c,
							 0));
	kvt_fill(pool, LEN, 0x5d);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, 0, r, 0,
				       LEN, &err), &err);
	CHECK(kvt_mismatch(mine, 0, LEN, 0x5d, 0) < 0, "what was read differs "
	      "at %lld", (long long)kvt_mismatch(mine, 0, LEN, 0x5d, 0));
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	printf("requests: an honest import then wrote and read %lu bytes, "
	       "checked on both sides\n", (unsigned long)LEN);
	kvt_exporter_stop(c);
	munmap(pool, LEN);
	munmap(mine, LEN);
}

/* --- accepts and refusals, by a listener that is not kvreg -------------- */

struct answerer {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	uint16_t port;
	pthread_t thread;
	pthread_mutex_t lock;
	/* Under @lock: the answer to the next request, and what came. */
	bool accept;
	uint8_t data[REP_DATA];
	size_t len;
	unsigned int live;		/* accepted, not yet let go */
	unsigned int refused;		/* accepts the importer refused */
	volatile int stop;
	uint8_t buf[SZ_4K];
};

/* An accepted request's objects are let go once its connection ends. */
static void answer(struct answerer *a, struct rdma_cm_id *id)
{
	struct rdma_conn_param param = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 6, .rnr_retry_count = 6,
	};
	struct kvt_hostile *h;

	pthread_mutex_lock(&a->lock);
	param.private_data = a->len ? a->data : NULL;
	param.private_data_len = (uint8_t)a->len;
	if (!a->accept) {
		CHECK(!rdma_reject(id, param.private_data,
				   param.private_data_len), "rdma_reject: %s",
		      strerror(errno));
		pthread_mutex_unlock(&a->lock);
		return;
	}
	h = calloc(1, sizeof(*h));
	CHECK(h, "calloc");
	kvt_hostile_setup(id, h, a->buf, sizeof(a->buf));
	id->context = h;
	a->live++;
	CHECK(!rdma_accept(id, &param), "rdma_accept: %s", strerror(errno));
	pthread_mutex_unlock(&a->lock);
}

static void let_go(struct answerer *a, struct rdma_cm_id *id, bool refused)
{
	struct kvt_hostile *h = id->context;

	kvt_hostile_free(id, h);
	free(h);
	pthread_mutex_lock(&a->lock);
	a->live--;
	a->refused += refused;
	pthread_mutex_unlock(&a->lock);
}

static void *answerer_run(void *arg)
{
	struct answerer *a = arg;
	struct pollfd pfd = { .fd = a->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	while (!a->stop) {
		enum rdma_cm_event_type type;
		struct rdma_cm_id *id;

		if (poll(&pfd, 1, 100) != 1)
			continue;
		CHECK(!rdma_get_cm_event(a->ch, &ev), "rdma_get_cm_event: %s",
		      strerror(errno));
		type = ev->event;
		id = ev->id;
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			answer(a, id);
			rdma_ack_cm_event(ev);
			/* A refused request's id is done with. */
			if (!id->context)
				rdma_destroy_id(id);
			continue;
		}
		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_DISCONNECTED ||
		    type == RDMA_CM_EVENT_REJECTED ||
		    type == RDMA_CM_EVENT_CONNECT_ERROR ||
		    type == RDMA_CM_EVENT_UNREACHABLE)
			let_go(a, id, type == RDMA_CM_EVENT_REJECTED);
	}
	return NULL;
}

static void answerer_set(struct answerer *a, bool accept, const uint8_t *d,
			 size_t len)
{
	pthread_mutex_lock(&a->lock);
	a->accept = accept;
	memset(a->data, 0, sizeof(a->data));
	memcpy(a->data, d, len);
	a->len = len;
	pthread_mutex_unlock(&a->lock);
}

static unsigned int answerer_get(struct answerer *a, unsigned int *refused)
{
	unsigned int live;

	pthread_mutex_lock(&a->lock);
	live = a->live;
	if (refused)
		*refused = a->refused;
	pthread_mutex_unlock(&a->lock);
	return live;
}

/* IMPORT of a descriptor naming @a: the record names @a. */
static int import_try(struct kvreg *kv, struct answerer *a,
		      struct kvreg_remote **r, struct kvreg_error *err)
{
	uint8_t desc[256];
	size_t n = kvt_desc_to(desc, ADDR, a->port);
	char addr[INET_ADDRSTRLEN] = "";
	int ret;

	CHECK(n, "a descriptor to %s", ADDR);
	*r = NULL;
	ret = kvreg_import(kv, desc, n, 3000, r, err);
	if (ret)
		CHECK(err->addr_family == AF_INET && err->port == a->port &&
		      inet_ntop(AF_INET, err->addr, addr, sizeof(addr)) &&
		      !strcmp(addr, ADDR), "reason %u: the record names %u "
		      "%s:%u, not the peer %s:%u", err->reason,
		      err->addr_family, addr, err->port, ADDR, a->port);
	return ret;
}

static void accepts(struct kvreg *kv, struct answerer *a)
{
	struct kvreg_cm_req valid = {
		.magic = KVREG_CM_MAGIC, .version = KVREG_CM_VERSION,
	};
	unsigned int ok = 0, broke = 0, refused, i;
	uint8_t d[REP_DATA];

	for (i = 0; i < ACCEPTS; i++) {
		struct kvreg_remote *r;
		struct kvreg_error err;
		bool want_ok;
		size_t len;
		int ret;

		memset(d, 0, sizeof(d));
		len = mutate(d, sizeof(d), &valid, sizeof(valid));
		/* A whole one and one with its magic wrong, first. */
		if (i < 2) {
			len = sizeof(valid);
			memcpy(d, &valid, len);
			d[0] ^= i;
		}
		/* Padded with zeroes, it is a kvreg accept of this version. */
		want_ok = get32(d) == KVREG_CM_MAGIC &&
			  get16(d + 4) == KVREG_CM_VERSION;
		answerer_set(a, true, d, len);
		ret = import_try(kv, a, &r, &err);
		if (want_ok) {
			CHECK(!ret, "accept %u (%zu bytes, magic %#x version %u), "
			      "a kvreg accept: IMPORT gave %d reason %u", i,
			      len, get32(d), get16(d + 4), ret, err.reason);
			CHECK_OK(kvreg_unimport(kv, r, &err), &err);
			ok++;
		} else {
			CHECK(ret == -EPROTO && !r &&
			      err.reason == KVREG_REASON_PEER_PROTOCOL,
			      "accept %u (%zu bytes, magic %#x version %u): "
			      "IMPORT gave %d reason %u, not PEER_PROTOCOL", i,
			      len, get32(d), get16(d + 4), ret, err.reason);
			broke++;
		}
		wait_no_conns(kv, KVREG_CONN_KIND_ACTIVE, "an accept");
	}
	for (i = 0; answerer_get(a, &refused); i++) {
		CHECK(i < ANSWER_S * 50, "the listener holds %u accepted "
		      "connections", answerer_get(a, NULL));
		usleep(20 * 1000);
	}
	CHECK(ok >= ACCEPTS / 8 && broke >= ACCEPTS / 8, "of %u accepts, %u "
	      "connected and %u broke the protocol", ACCEPTS, ok, broke);
	CHECK(refused == broke, "%u accepts broke the protocol and the "
	      "listener saw %u of them refused", broke, refused);
	printf("accepts: %u connected, %u refused as PEER_PROTOCOL (the "
	       "listener saw each refused)\n", ok, broke);
}

/*
 * What IMPORT must say of a refusal of @d, padded (kvreg_conn_refusal()):
 * a kvreg refusal's reason with the connect's errno, or CONN_REJECTED
 * with the CM's status.
 */
static void rej_expect(const uint8_t *d, struct kvreg_error *want)
{
	uint16_t reason = get16(d + 6);

	memset(want, 0, sizeof(*want));
	want->reason = KVREG_REASON_CONN_REJECTED;
	want->driver_errno = REJ_CONSUMER_DEFINED;
	if (get32(d) != KVREG_CM_MAGIC)
		return;
	switch (reason) {
	case KVREG_REASON_ENDPOINT_CONN_LIMIT:
	case KVREG_REASON_PEER_CONN_LIMIT:
		want->limit = get32(d + 8);
		want->usage = get32(d + 12);
		want->request = 1;
		/* fall through */
	case KVREG_REASON_CONN_BAD_SECRET:
	case KVREG_REASON_CONN_NO_LISTENER:
	case KVREG_REASON_DEVICE_REMOVED:
	case KVREG_REASON_NO_KERNEL_MEMORY:
		want->reason = reason;
		want->driver_errno = -ECONNREFUSED;
		break;
	case KVREG_REASON_CONN_VERSION:
		want->reason = reason;
		want->driver_errno = -ECONNREFUSED;
		want->usage = get16(d + 4);
		want->request = KVREG_CM_VERSION;
		break;
	}
}

static void refusals(struct kvreg *kv, struct answerer *a)
{
	static const uint16_t reasons[NR_REASONS] = {
		KVREG_REASON_ENDPOINT_CONN_LIMIT, KVREG_REASON_PEER_CONN_LIMIT,
		KVREG_REASON_CONN_BAD_SECRET, KVREG_REASON_CONN_NO_LISTENER,
		KVREG_REASON_DEVICE_REMOVED, KVREG_REASON_NO_KERNEL_MEMORY,
		KVREG_REASON_CONN_VERSION, KVREG_REASON_DESC_CORRUPT, 0,
	};
	unsigned int caps = 0, passed = 0, version = 0, plain = 0, i;
	uint8_t d[REJ_DATA];

	for (i = 0; i < REJECTS; i++) {
		struct kvreg_cm_rej valid = {
			.magic = KVREG_CM_MAGIC,
			.version = (uint16_t)(rnd() % 4),
			.reason = rnd() % 8 ? reasons[rnd() % NR_REASONS] :
					      (uint16_t)rnd(),
			.limit = (uint32_t)rnd(), .usage = (uint32_t)rnd(),
		};
		struct kvreg_error err, want;
		struct kvreg_remote *r;
		size_t len;
		int ret;

		memset(d, 0, sizeof(d));
		len = mutate(d, sizeof(d), &valid, sizeof(valid));
		/* Each reason as it is, then one not kvreg's, first. */
		if (i < NR_REASONS + 1) {
			valid.reason = i < NR_REASONS ? reasons[i] : 0;
			len = sizeof(valid);
			memcpy(d, &valid, len);
			d[0] ^= i == NR_REASONS;
		}
		rej_expect(d, &want);
		answerer_set(a, false, d, len);
		ret = import_try(kv, a, &r, &err);
		CHECK(ret < 0 && !r && err.reason == want.reason &&
		      err.driver_errno == want.driver_errno &&
		      err.limit == want.limit && err.usage == want.usage &&
		      err.request == want.request,
		      "refusal %u (%zu bytes, magic %#x reason %u): IMPORT "
		      "gave %d reason %u errno %d numbers %llu %llu %llu, not "
		      "reason %u errno %d numbers %llu %llu %llu", i, len,
		      get32(d), get16(d + 6), ret, err.reason,
		      err.driver_errno, (unsigned long long)err.limit,
		      (unsigned long long)err.usage,
		      (unsigned long long)err.request, want.reason,
		      want.driver_errno, (unsigned long long)want.limit,
		      (unsigned long long)want.usage,
		      (unsigned long long)want.request);
		if (want.reason == KVREG_REASON_CONN_REJECTED)
			plain++;
		else if (want.reason == KVREG_REASON_CONN_VERSION)
			version++;
		else if (want.request == 1)
			caps++;
		else
			passed++;
		wait_no_conns(kv, KVREG_CONN_KIND_ACTIVE, "a refusal");
	}
	CHECK(caps && passed && version && plain, "of %u refusals: %u with "
	      "a cap's numbers, %u with a reason, %u of version, %u not "
	      "kvreg's: each kind is wanted", REJECTS, caps, passed, version,
	      plain);
	printf("refusals: %u with a cap's numbers, %u with a reason, %u of "
	       "version, %u not kvreg's (CONN_REJECTED), each as its bytes "
	       "said\n", caps, passed, version, plain);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	const char *seed = getenv("KVREG_SEED");
	struct answerer *a;
	struct kvt_snap before;
	long qp, cm;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	kvt_uverbs();
	rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL);
	rng_state |= 1;
	printf("seed %#llx (KVREG_SEED=%#llx runs it again, in a guest)\n",
	       (unsigned long long)rng_state, (unsigned long long)rng_state);
	before = kvt_snap(kv);

	requests(kv);

	a = calloc(1, sizeof(*a));
	CHECK(a, "calloc");
	pthread_mutex_init(&a->lock, NULL);
	a->port = kvt_rdma_listen(ADDR, &a->ch, &a->listen_id);
	qp = kvt_rdma_res("qp");
	cm = kvt_rdma_res("cm_id");
	CHECK(!pthread_create(&a->thread, NULL, answerer_run, a),
	      "pthread_create");
	accepts(kv, a);
	refusals(kv, a);
	a->stop = 1;
	CHECK(!pthread_join(a->thread, NULL), "pthread_join");
	wait_res(qp, cm, "the accepts and refusals");
	rdma_destroy_id(a->listen_id);
	rdma_destroy_event_channel(a->ch);
	free(a);

	wait_no_conns(kv, KVREG_CONN_KIND_ACTIVE, "the end");
	kvt_check_unchanged(kv, &before, "the private data fuzzed");
	kvreg_close(kv);
	return T_PASS;
}
