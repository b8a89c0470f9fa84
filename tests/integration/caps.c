// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Nothing a user or a peer does makes kvreg allocate without bound. Each
 * cap is hit as an attacker would hit it, and stops it with its named
 * reason and numbers, before it allocates, while `rdma res` counts stay
 * bounded and honest users still connect and move bytes:
 *  - a LISTEN loop, stopped by max_endpoints_per_process (default);
 *  - an IMPORT loop of forged descriptors of 1M chunks each (the rail is
 *    up, so each returns at once), stopped by the process's chunk cap
 *    on what the head claims, before the table is copied;
 *    a descriptor over max_desc_chunks is refused before a table is
 *    made, an oversized one before it is copied; max_imports_per_process
 *    stops a loop of honest imports;
 *  - a peer speaking another version of the connection's wire format:
 *    refused with CONN_VERSION and the version spoken here;
 *  - a peer that connects and then sends nothing (asking for RNR retries
 *    for ever too): the exporter's keepalive, which watches its QP's
 *    receive PSN, lets it go;
 *  - a flood of connection requests (argv[1], 1,000 by default) from a
 *    raw librdmacm peer with the endpoint's valid secret:
 *    max_conns_per_peer (default) stops it, the REJ says so with the
 *    numbers, and a kvreg importer of the same node learns the same;
 *    max_conns_per_endpoint likewise;
 *  - SUBMIT without REAP, stopped by max_unreaped;
 *  - one operation over more chunks than a chain carries for it.
 * Caps changed for a step are put back, also when the test fails.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/wait.h>

#include "kvchild.h"
#include "kvdesc.h"
#include "kvexport.h"

#define LEN		(4 * SZ_2M)
#define ADDR		"192.0.2.1"
#define PARAMS		"/sys/module/kvreg/parameters/"
#define FORGED_CHUNKS	(1U << 20)
#define FLOOD_RECVS	32	/* the flood's keepalive receives, a QP */

static const char *const cap_names[] = {
	"max_endpoints_per_process", "max_conns_per_endpoint",
	"max_conns_per_peer", "max_imports_per_process", "max_desc_chunks",
	"max_import_chunks_per_process", "max_unreaped", "keepalive_ms",
};
#define NR_CAPS	(sizeof(cap_names) / sizeof(cap_names[0]))
static unsigned long long saved[NR_CAPS];
static pid_t caps_parent;

static unsigned long long cap(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	return kvt_read_param(path);
}

static void set_cap(const char *name, unsigned long long v)
{
	char path[128];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	kvt_write_param(path, v);
}

static void restore_caps(void)
{
	char path[128], text[32];
	size_t i;

	/* Not from a child's exit: the parent may have lowered a cap. */
	if (getpid() != caps_parent)
		return;
	for (i = 0; i < NR_CAPS; i++) {
		snprintf(path, sizeof(path), PARAMS "%s", cap_names[i]);
		snprintf(text, sizeof(text), "%llu\n", saved[i]);
		kvt_put(path, text);
	}
}

/*
 * A copy of @blob whose bytes past its first page the kernel cannot read:
 * an IMPORT refused on it was refused before the descriptor was copied.
 */
static uint8_t *guarded_copy(const uint8_t *blob, size_t size,
			     size_t *mapped)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *g;

	*mapped = (size + page - 1) / page * page;
	g = mmap(NULL, *mapped, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(g != MAP_FAILED, "mmap %zu", *mapped);
	memcpy(g, blob, size);
	CHECK(!mprotect(g + page, *mapped - page, PROT_NONE), "mprotect");
	return g;
}

/* The cap's numbers as the record must carry them. */
static void check_numbers(const struct kvreg_error *err, uint64_t limit,
			  uint64_t usage, uint64_t request)
{
	CHECK(err->limit == limit && err->usage == usage &&
	      err->request == request,
	      "reason %u: limit %llu usage %llu request %llu, want %llu %llu "
	      "%llu", err->reason, (unsigned long long)err->limit,
	      (unsigned long long)err->usage,
	      (unsigned long long)err->request, (unsigned long long)limit,
	      (unsigned long long)usage, (unsigned long long)request);
}

static void check_listen_loop(struct kvreg *kv)
{
	unsigned long long max = cap("max_endpoints_per_process");
	long ids = kvt_rdma_res("cm_id"), during;
	struct kvreg_error err;
	struct kvreg_stats st;
	uint64_t *eps = calloc(max, sizeof(*eps));
	unsigned long long i;

	CHECK(eps, "calloc");
	for (i = 0; i < max; i++)
		CHECK_OK(kvreg_listen(kv, ADDR, 0, &eps[i], NULL, &err), &err);
	for (i = 0; i < 10; i++) {
		uint64_t ep;

		if (!i)
			CHECK_FAILS(kvreg_listen(kv, ADDR, 0, &ep, NULL, &err),
				    &err, EDQUOT, KVREG_REASON_ENDPOINT_LIMIT);
		else
			CHECK(kvreg_listen(kv, ADDR, 0, &ep, NULL, &err) ==
			      -EDQUOT && err.reason ==
			      KVREG_REASON_ENDPOINT_LIMIT, "LISTEN %llu", i);
		check_numbers(&err, max, max, 1);
	}
	st = kvt_stats(kv);
	CHECK(st.proc_endpoints == max && st.proc_max_endpoints == max,
	      "STATS: %llu of %llu endpoints, want %llu",
	      (unsigned long long)st.proc_endpoints,
	      (unsigned long long)st.proc_max_endpoints, max);
	during = kvt_rdma_res("cm_id");
	CHECK(during <= ids + (long)max, "%ld cm_ids for %llu endpoints "
	      "(%ld before)", during, max, ids);
	for (i = 0; i < max; i++)
		CHECK_OK(kvreg_unlisten(kv, eps[i], &err), &err);
	st = kvt_stats(kv);
	CHECK(!st.proc_endpoints, "%llu endpoints left",
	      (unsigned long long)st.proc_endpoints);
	CHECK(kvt_rdma_res("cm_id") == ids, "cm_ids: %ld, %ld before",
	      kvt_rdma_res("cm_id"), ids);
	printf("LISTEN loop: %llu endpoints, then refused; %ld cm_ids at "
	       "most\n", max, during);
	free(eps);
}

/*
 * @desc's endpoint and secret, with @paths paths of @chunks chunks each
 * (4 KiB apiece, the first chunk's rkey): what a peer that once held a
 * descriptor can make.
 */
static uint8_t *forge(const struct kvt_exporter *x, uint32_t paths,
		      uint32_t chunks, size_t *size)
{
	const struct kvreg_desc_head *oh = (const void *)x->desc;
	uint8_t *orig = (uint8_t *)x->desc;
	struct kvreg_desc_chunk *c0 = kvt_desc_chunks(orig);
	size_t head = sizeof(struct kvreg_desc_head);
	struct kvreg_desc_head *h;
	struct kvreg_desc_path *p;
	struct kvreg_desc_chunk *c;
	uint8_t *d;
	uint64_t i;
	uint32_t k;

	CHECK(oh->head_size == head, "descriptor head of %u bytes",
	      oh->head_size);
	*size = head + paths * sizeof(*p) +
		(size_t)paths * chunks * sizeof(*c);
	d = malloc(*size);
	CHECK(d, "malloc %zu", *size);
	memcpy(d, orig, head);
	h = (struct kvreg_desc_head *)d;
	h->nr_paths = paths;
	h->total_size = *size;
	h->length = (uint64_t)chunks * SZ_4K;
	p = kvt_desc_path(d);
	for (k = 0; k < paths; k++) {
		memcpy(&p[k], kvt_desc_path(orig), sizeof(*p));
		p[k].nr_chunks = chunks;
	}
	c = kvt_desc_chunks(d);
	for (i = 0; i < (uint64_t)paths * chunks; i++) {
		c[i].iova = c0->iova + (i % chunks) * SZ_4K;
		c[i].length = SZ_4K;
		c[i].rkey = c0->rkey;
		c[i].reserved = 0;
	}
	kvt_reseal(d, *size);
	return d;
}

/*
 * A region cut into 4 KiB chunks: one operation over more of them than a
 * chain may carry for it is refused whole at SUBMIT, before any of it is
 * posted, with the most it may span.
 */
static void check_too_many_pieces(struct kvreg *kv, struct kvt_exporter *x,
				  struct kvreg_mr *local)
{
	const uint64_t len = (KVREG_OP_MAX_PIECES + 1) * SZ_4K;
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_op op;
	unsigned int acc;
	uint8_t *small;
	size_t size;

	small = forge(x, 1, KVREG_OP_MAX_PIECES + 1, &size);
	CHECK_OK(kvreg_import(kv, small, size, 0, &r, &err), &err);
	kvreg_op_prep(&op, KVREG_OP_WRITE, local, 0, r, 0, len, 1);
	CHECK_FAILS(kvreg_submit(kv, &op, 1, &acc, &err), &err, E2BIG,
		    KVREG_REASON_TOO_MANY_PIECES);
	CHECK(!acc && err.limit == KVREG_OP_MAX_PIECES && err.request == len,
	      "%u accepted, limit %llu, request %llu", acc,
	      (unsigned long long)err.limit, (unsigned long long)err.request);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	free(small);
	printf("an operation over %d chunks of 4 KiB: refused, at most %d\n",
	       KVREG_OP_MAX_PIECES + 1, KVREG_OP_MAX_PIECES);
}

static void check_forged_imports(struct kvreg *kv, struct kvt_exporter *x)
{
	struct kvreg_remote *held[2], *r;
	struct kvreg_error err;
	struct kvreg_stats st;
	uint8_t *big, *two, *guarded;
	size_t size, size2, mapped;
	int i;

	big = forge(x, 1, FORGED_CHUNKS, &size);
	guarded = guarded_copy(big, size, &mapped);
	/* Two regions' worth of chunks, and not a third. */
	set_cap("max_import_chunks_per_process", 2ULL * FORGED_CHUNKS);
	for (i = 0; i < 2; i++)
		CHECK_OK(kvreg_import(kv, big, size, 0, &held[i], &err), &err);
	/*
	 * Refused on the head's claim: 50 refusals copy none of the 50
	 * tables (24 MiB each) nor make one.
	 */
	CHECK_FAILS(kvreg_import(kv, guarded, size, 0, &r, &err), &err,
		    EDQUOT, KVREG_REASON_IMPORT_CHUNK_LIMIT);
	for (i = 0; i < 50; i++) {
		CHECK(kvreg_import(kv, guarded, size, 0, &r, &err) ==
		      -EDQUOT &&
		      err.reason == KVREG_REASON_IMPORT_CHUNK_LIMIT,
		      "IMPORT %d: reason %u", i, err.reason);
		check_numbers(&err, 2ULL * FORGED_CHUNKS,
			      2ULL * FORGED_CHUNKS, FORGED_CHUNKS);
	}
	st = kvt_stats(kv);
	CHECK(st.proc_imports == 2 &&
	      st.proc_import_chunks == 2ULL * FORGED_CHUNKS,
	      "STATS: %llu imports, %llu chunks",
	      (unsigned long long)st.proc_imports,
	      (unsigned long long)st.proc_import_chunks);
	for (i = 0; i < 2; i++)
		CHECK_OK(kvreg_unimport(kv, held[i], &err), &err);
	st = kvt_stats(kv);
	CHECK(!st.proc_imports && !st.proc_import_chunks,
	      "unimported, STATS still says %llu imports, %llu chunks",
	      (unsigned long long)st.proc_imports,
	      (unsigned long long)st.proc_import_chunks);
	/* With room under the cap, the same copy faults: the guard holds. */
	CHECK_FAILS(kvreg_import(kv, guarded, size, 0, &r, &err), &err,
		    EFAULT, KVREG_REASON_BAD_ARGUMENT);
	CHECK(err.argument == KVREG_ARG_POINTER, "the unreadable "
	      "descriptor: argument %u", err.argument);
	munmap(guarded, mapped);
	printf("IMPORT loop of 1M-chunk descriptors: 2 held, 50 refused on "
	       "their heads, none copied\n");

	/* Over max_desc_chunks: refused before any table is made... */
	set_cap("max_desc_chunks", 1000);
	free(big);
	big = forge(x, 1, 1001, &size);
	CHECK_FAILS(kvreg_import(kv, big, size, 0, &r, &err), &err, E2BIG,
		    KVREG_REASON_DESC_CHUNK_LIMIT);
	CHECK(err.request == 1001 && err.limit == 1000,
	      "1001 chunks: request %llu limit %llu",
	      (unsigned long long)err.request, (unsigned long long)err.limit);
	/* ... and one too large to hold that many, before it is copied. */
	set_cap("max_desc_chunks", FORGED_CHUNKS);
	two = forge(x, 2, FORGED_CHUNKS, &size2);
	CHECK_FAILS(kvreg_import(kv, two, size2, 0, &r, &err), &err, E2BIG,
		    KVREG_REASON_DESC_CHUNK_LIMIT);
	CHECK(err.request > FORGED_CHUNKS && err.limit == FORGED_CHUNKS,
	      "2M chunks: request %llu limit %llu",
	      (unsigned long long)err.request, (unsigned long long)err.limit);
	free(two);
	free(big);
	restore_caps();
}

static void check_import_limit(struct kvreg *kv, struct kvt_exporter *x)
{
	struct kvreg_remote *held[3], *r;
	struct kvreg_error err;
	int i;

	set_cap("max_imports_per_process", 3);
	for (i = 0; i < 3; i++)
		CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &held[i],
				      &err), &err);
	CHECK_FAILS(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err),
		    &err, EDQUOT, KVREG_REASON_IMPORT_LIMIT);
	check_numbers(&err, 3, 3, 1);
	for (i = 0; i < 3; i++)
		CHECK_OK(kvreg_unimport(kv, held[i], &err), &err);
	restore_caps();
}

/* Shared with the flooding child. */
struct flood {
	uint8_t secret[KVREG_SECRET_LEN];
	struct sockaddr_in dst;
	int established, refused;
	int first_refused_at;
	uint16_t reason, version;
	uint32_t limit, usage;
	double hostile_gone_s;		/* -1: never let go */
};

static struct flood *fl;
static int flood_attempts = 1000;

static struct rdma_cm_event *flood_event(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;

	CHECK(!rdma_get_cm_event(ch, &ev), "rdma_get_cm_event: %s",
	      strerror(errno));
	return ev;
}

/* The next event of @id (events of others connected before are dropped). */
static enum rdma_cm_event_type flood_wait(struct rdma_event_channel *ch,
					  struct rdma_cm_id *id,
					  struct kvreg_cm_rej *rej)
{
	for (;;) {
		struct rdma_cm_event *ev = flood_event(ch);
		enum rdma_cm_event_type type = ev->event;

		if (ev->id != id) {
			rdma_ack_cm_event(ev);
			continue;
		}
		if (rej && type == RDMA_CM_EVENT_REJECTED &&
		    ev->param.conn.private_data_len >= sizeof(*rej))
			memcpy(rej, ev->param.conn.private_data, sizeof(*rej));
		rdma_ack_cm_event(ev);
		return type;
	}
}

struct flood_res {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

/* What flood_one()'s requests say they speak. */
static uint16_t flood_version = KVREG_CM_VERSION;

/* One connection request with the export's secret; @recvs posted. */
static struct rdma_cm_id *flood_one(struct rdma_event_channel *ch,
				    struct flood_res *res, int recvs,
				    uint8_t rnr, struct kvreg_cm_rej *rej,
				    enum rdma_cm_event_type *out)
{
	struct kvreg_cm_req req = { .magic = KVREG_CM_MAGIC,
				    .version = flood_version };
	struct rdma_conn_param param = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.initiator_depth = 1,
		.retry_count = 6,
		.rnr_retry_count = rnr,
	};
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = FLOOD_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_cm_id *id;
	int i;

	memcpy(req.secret, fl->secret, sizeof(req.secret));
	CHECK(!rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), "create_id");
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&fl->dst, 2000),
	      "resolve_addr: %s", strerror(errno));
	CHECK(flood_wait(ch, id, NULL) == RDMA_CM_EVENT_ADDR_RESOLVED,
	      "address");
	CHECK(!rdma_resolve_route(id, 2000), "resolve_route");
	CHECK(flood_wait(ch, id, NULL) == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "route");
	if (!res->pd) {
		res->pd = ibv_alloc_pd(id->verbs);
		res->cq = ibv_create_cq(id->verbs, 4096, NULL, NULL, 0);
		CHECK(res->pd && res->cq, "pd, cq");
	}
	qa.send_cq = res->cq;
	qa.recv_cq = res->cq;
	CHECK(!rdma_create_qp(id, res->pd, &qa), "create_qp: %s",
	      strerror(errno));
	for (i = 0; i < recvs; i++) {
		struct ibv_recv_wr wr = { .wr_id = i }, *bad;

		CHECK(!ibv_post_recv(id->qp, &wr, &bad), "post_recv");
	}
	CHECK(!rdma_connect(id, &param), "connect: %s", strerror(errno));
	*out = flood_wait(ch, id, rej);
	if (*out == RDMA_CM_EVENT_ESTABLISHED)
		return id;
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	return NULL;
}

/* How long until the exporter disconnects @id: -1 past @limit s. */
static double flood_gone(struct rdma_event_channel *ch,
			 struct rdma_cm_id *id, double limit)
{
	double t0 = kvt_now();
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

	while (kvt_now() - t0 < limit) {
		struct rdma_cm_event *ev;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		ev = flood_event(ch);
		if (ev->id == id && ev->event == RDMA_CM_EVENT_DISCONNECTED) {
			rdma_ack_cm_event(ev);
			return kvt_now() - t0;
		}
		rdma_ack_cm_event(ev);
	}
	return -1;
}

static void flooder(void *unused)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id **ids = calloc(flood_attempts, sizeof(*ids));
	struct flood_res res = { 0 };
	enum rdma_cm_event_type got;
	struct kvreg_cm_rej rej;
	struct rdma_cm_id *id;
	int i;

	(void)unused;
	CHECK(ch && ids, "event channel");
	/*
	 * A peer speaking a later version of the connection's wire format:
	 * refused, with the version this side speaks.
	 */
	memset(&rej, 0, sizeof(rej));
	flood_version = KVREG_CM_VERSION + 1;
	id = flood_one(ch, &res, 0, 6, &rej, &got);
	flood_version = KVREG_CM_VERSION;
	CHECK(!id && got == RDMA_CM_EVENT_REJECTED &&
	      rej.reason == KVREG_REASON_CONN_VERSION &&
	      rej.version == KVREG_CM_VERSION,
	      "a request of version %d: %s, reason %u, version %u",
	      KVREG_CM_VERSION + 1, rdma_event_str(got), rej.reason,
	      rej.version);
	/*
	 * Then: a peer that sends nothing once connected, and asks for RNR
	 * retries for ever (version 1's exporter SENDs would have retried).
	 */
	id = flood_one(ch, &res, 0, 7, NULL, &got);
	CHECK(id, "the hostile connection: %s", rdma_event_str(got));
	fl->hostile_gone_s = flood_gone(ch, id, 30);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	kvt_send_byte(kvt_me.ack, 'h');

	kvt_recv_byte(kvt_me.cmd);
	fl->first_refused_at = -1;
	for (i = 0; i < flood_attempts; i++) {
		memset(&rej, 0, sizeof(rej));
		id = flood_one(ch, &res, FLOOD_RECVS, 6, &rej, &got);
		if (id) {
			ids[fl->established++] = id;
			continue;
		}
		CHECK(got == RDMA_CM_EVENT_REJECTED, "attempt %d: %s", i,
		      rdma_event_str(got));
		if (fl->first_refused_at < 0) {
			fl->first_refused_at = i;
			fl->reason = rej.reason;
			fl->version = rej.version;
			fl->limit = rej.limit;
			fl->usage = rej.usage;
		}
		fl->refused++;
	}
	kvt_send_byte(kvt_me.ack, 'f');
	/* Held while the parent looks; then all of them go. */
	kvt_recv_byte(kvt_me.cmd);
	for (i = 0; i < fl->established; i++) {
		rdma_disconnect(ids[i]);
		rdma_destroy_qp(ids[i]);
		rdma_destroy_id(ids[i]);
	}
	ibv_destroy_cq(res.cq);
	ibv_dealloc_pd(res.pd);
	rdma_destroy_event_channel(ch);
	kvt_send_byte(kvt_me.ack, 'd');
	/* Not exit(): the parent's caps and file are the parent's. */
	_exit(T_PASS);
}

/* An honest importer: WRITE a page into @x's pool, read it back. */
static void honest(struct kvreg *kv, struct kvt_exporter *x, uint8_t *pool,
		   uint8_t *mine, struct kvreg_mr *local, uint32_t seed)
{
	struct kvreg_remote *r;
	struct kvreg_error err;

	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	kvt_fill(mine, SZ_4K, seed);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, SZ_4K,
				       SZ_4K, &err), &err);
	CHECK(!memcmp(pool + SZ_4K, mine, SZ_4K), "the WRITE's bytes");
	memset(mine, 0, SZ_4K);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, local, 0, r, SZ_4K,
				       SZ_4K, &err), &err);
	CHECK(kvt_mismatch(mine, 0, SZ_4K, seed, 0) < 0, "the READ's bytes");
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
}

static void check_flood(struct kvreg *kv, struct kvt_exporter *x,
			struct kvt_exporter *x2, uint8_t *pool2,
			uint8_t *mine, struct kvreg_mr *local)
{
	unsigned long long max_peer = cap("max_conns_per_peer");
	long qps = kvt_rdma_res("qp"), ids = kvt_rdma_res("cm_id"), qps_during;
	struct kvreg_desc_path *p = kvt_desc_path(x->desc);
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvt_child c;
	unsigned int passive;
	double t0;

	fl = mmap(NULL, sizeof(*fl), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(fl != MAP_FAILED, "mmap");
	memcpy(fl->secret,
	       ((const struct kvreg_desc_head *)x->desc)->secret,
	       KVREG_SECRET_LEN);
	fl->dst.sin_family = AF_INET;
	fl->dst.sin_port = htons(p->port);
	memcpy(&fl->dst.sin_addr, p->addr, 4);

	c = kvt_spawn(flooder, NULL, 'h');
	CHECK(fl->hostile_gone_s >= 0, "a connected peer that sends nothing "
	      "was kept for 30 s");
	printf("a connected peer that sends nothing: let go after %.1f s\n",
	       fl->hostile_gone_s);

	/*
	 * Under TCG a flood can starve rxe long enough for a keepalive to
	 * reach its retry limit, and the connection to be let go (as it
	 * should): the count of what the cap lets in is taken without them.
	 */
	set_cap("keepalive_ms", 0);
	t0 = kvt_now();
	CHECK(kvt_ask(&c, 'g') == 'f', "flood");
	printf("flood: %d established, %d refused in %.1f s; the first "
	       "refusal, at attempt %d: reason %u, limit %u, usage %u\n",
	       fl->established, fl->refused, kvt_now() - t0,
	       fl->first_refused_at, fl->reason, fl->limit, fl->usage);
	CHECK(fl->established == (int)max_peer &&
	      fl->refused == flood_attempts - (int)max_peer,
	      "%d of %d connections accepted, the cap is %llu",
	      fl->established, flood_attempts, max_peer);
	CHECK(fl->reason == KVREG_REASON_PEER_CONN_LIMIT &&
	      fl->version == KVREG_CM_VERSION && fl->limit == max_peer &&
	      fl->usage == max_peer, "the REJ: reason %u version %u limit %u "
	      "usage %u", fl->reason, fl->version, fl->limit, fl->usage);
	passive = kvt_passive_of(kv, x->pid);
	CHECK(passive == max_peer, "the exporter holds %u connections",
	      passive);
	qps_during = kvt_rdma_res("qp");
	/* The flood's QPs and the exporter's, and nothing more. */
	CHECK(qps_during <= qps + 2 * (long)max_peer + 4,
	      "%ld QPs during the flood, %ld before", qps_during, qps);

	/* A kvreg importer of this node is that peer too: told the same. */
	CHECK_FAILS(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err),
		    &err, ECONNREFUSED, KVREG_REASON_PEER_CONN_LIMIT);
	check_numbers(&err, max_peer, max_peer, 1);
	set_cap("max_conns_per_endpoint", 16);
	CHECK_FAILS(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err),
		    &err, ECONNREFUSED, KVREG_REASON_ENDPOINT_CONN_LIMIT);
	check_numbers(&err, 16, max_peer, 1);
	restore_caps();
	/* Another endpoint is not held up by it. */
	honest(kv, x2, pool2, mine, local, 0x77);

	CHECK(kvt_ask(&c, 'q') == 'd', "flood teardown");
	kvt_reap(&c);
	/* The exporter lets each go at its DREQ. */
	t0 = kvt_now();
	while ((kvt_passive_of(kv, x->pid) || kvt_rdma_res("qp") > qps) &&
	       kvt_now() - t0 < 20)
		usleep(200 * 1000);
	CHECK(!kvt_passive_of(kv, x->pid) && kvt_rdma_res("qp") <= qps &&
	      kvt_rdma_res("cm_id") <= ids, "after the flood: %u connections, "
	      "%ld QPs (%ld before), %ld cm_ids (%ld before)",
	      kvt_passive_of(kv, x->pid), kvt_rdma_res("qp"), qps,
	      kvt_rdma_res("cm_id"), ids);
	printf("after the flood: every connection let go in %.1f s\n",
	       kvt_now() - t0);
	munmap(fl, sizeof(*fl));
}

static void check_unreaped(struct kvreg *kv, struct kvt_exporter *x,
			   struct kvreg_mr *local)
{
	struct kvreg_completion comp[8];
	struct kvreg_op ops[5];
	struct kvreg_remote *r;
	struct kvreg_error err;
	unsigned int acc, n, i;
	struct kvreg_stats st;

	set_cap("max_unreaped", 4);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	for (i = 0; i < 5; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_WRITE, local, 0, r,
			      i * SZ_4K, SZ_4K, i);
	/* Four taken, the fifth refused: a SUBMIT that took some succeeds. */
	CHECK_OK(kvreg_submit(kv, ops, 5, &acc, &err), &err);
	CHECK(acc == 4, "accepted %u of 5, the cap is 4", acc);
	CHECK_FAILS(kvreg_submit(kv, &ops[4], 1, &acc, &err), &err, EDQUOT,
		    KVREG_REASON_COMPLETION_LIMIT);
	check_numbers(&err, 4, 4, 1);
	st = kvt_stats(kv);
	CHECK(st.file_unreaped == 4 && st.max_unreaped == 4,
	      "STATS: %u of %u unreaped", st.file_unreaped, st.max_unreaped);
	CHECK_OK(kvreg_reap(kv, comp, 8, 4, 10000, &n, &err), &err);
	CHECK(n == 4, "reaped %u", n);
	for (i = 0; i < n; i++)
		CHECK(!comp[i].status, "op %u: %d", i, comp[i].status);
	CHECK_OK(kvreg_submit(kv, &ops[4], 1, &acc, &err), &err);
	CHECK_OK(kvreg_reap(kv, comp, 8, 1, 10000, &n, &err), &err);
	CHECK(n == 1 && !comp[0].status, "the fifth, after reaping");
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	restore_caps();
}

int main(int argc, char **argv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	uint8_t *pool, *pool2, *mine;
	struct kvt_exporter *x, *x2;
	struct kvreg *kv = kvt_open();
	struct kvreg_error err;
	struct kvreg_mr *local;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1)
		flood_attempts = atoi(argv[1]);
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	for (i = 0; i < NR_CAPS; i++)
		saved[i] = cap(cap_names[i]);
	caps_parent = getpid();
	atexit(restore_caps);

	check_listen_loop(kv);

	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pool2 = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED && pool2 != MAP_FAILED, "mmap");
	x = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	x2 = kvt_exporter_start(kv, pool2, LEN, devs[0].index, ADDR);
	mine = kvt_map_anon(LEN);
	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &local, &err), &err);

	check_too_many_pieces(kv, x, local);
	check_forged_imports(kv, x);
	check_import_limit(kv, x);
	check_flood(kv, x, x2, pool2, mine, local);
	check_unreaped(kv, x2, local);
	/* After all of it, the first endpoint serves an honest importer. */
	honest(kv, x, pool, mine, local, 0x78);

	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvt_exporter_stop(x2);
	kvt_exporter_stop(x);
	kvreg_close(kv);
	printf("every cap held\n");
	return T_PASS;
}
