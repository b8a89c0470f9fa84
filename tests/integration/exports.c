// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A peer reaches only what was exported to it, and loses it the moment it
 * is revoked. Every claim is tried as an attack, with bytes checked on
 * both sides:
 *  - a descriptor of registration X, rewritten (checksum recomputed) to
 *    the rkey and iova of Y (same file, REMOTE_READ and REMOTE_WRITE,
 *    exported through another endpoint) or of Z (another file of the
 *    same process, exported through its own): WRITE and READ are refused
 *    with REMOTE_ACCESS, Y and Z unchanged (REGISTER makes no MR, so
 *    only an export's keys exist to aim at);
 *  - a descriptor of Y exported through a second endpoint of the same
 *    file, rewritten to X's keys (exported through the first only):
 *    refused, X unchanged;
 *  - 256 guesses at the rkeys next to X's, aimed at Y and Z, from 16
 *    importers at once: all refused;
 *  - a plain librdmacm listener that a kvreg importer connects to WRITEs
 *    and READs the importer's registration with the real keys of its
 *    export: refused by the importer's QP, its bytes unchanged and not
 *    leaked;
 *  - after UNEXPORT, REKEY, UNLISTEN, DEREGISTER and the exporter's
 *    close, a peer that kept the old descriptor or its connection gets a
 *    named reason, the memory is unchanged and a READ brings nothing
 *    back; after UNEXPORT and DEREGISTER a WRITE and a READ each reach
 *    the device over the kept connection and are refused there;
 *  - a TRANSFER between two registrations without any REMOTE_* flag
 *    works: loopback needs local rights only;
 *  - a descriptor does not tell the exporter's address: no chunk's iova
 *    is the pool's, and an export made again gets another base.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <signal.h>

#include "kvchild.h"
#include "kvdesc.h"
#include "kvhostile.h"
#include "kvtransfer.h"

#define LEN		(2 * SZ_2M + 3 * SZ_4K)	/* X: several MRs */
#define VLEN		(4 * SZ_4K)		/* Y, Z and the importer's */
#define ADDR		"192.0.2.1"
#define DESC_MAX	(64 * 1024)
#define GUESSES		256
/* Importers guessing at once: on 5.10 each refusal waits out retries. */
#define GUESSERS	16

struct key {
	uint64_t iova;
	uint32_t rkey;
};

/* Shared with the children. */
struct ctl {
	size_t desc_size;
	uint8_t desc[DESC_MAX];
	size_t desc2_size;		/* Y, through a second endpoint */
	uint8_t desc2[DESC_MAX];
	struct key y, z;		/* the exporter's, exported elsewhere */
	struct key victim;		/* the importer's own, exported */
	uint16_t evil_port;
	int evil_status[2];		/* the hostile peer's WRITE, READ */
	int evil_leaked;		/* its READ brought the victim's bytes */
};

static struct ctl *ctl;
/* WRITEs and READs on kept connections the device refused. */
static unsigned int device_refusals;

/* The exporter's memory, which the parent maps too, and its device. */
struct exporter_arg {
	uint8_t *pool, *ybuf, *zbuf;
	uint32_t dev;
};

/*
 * A registration has no key until it is exported: the first chunk's of
 * @mr exported through a new endpoint of @kv (in *@ep), a real MR in
 * that export's own PD, which stays until the endpoint goes.
 */
static struct key key_of(struct kvreg *kv, struct kvreg_mr *mr, uint64_t *ep)
{
	static uint8_t desc[DESC_MAX];
	struct kvreg_error err;
	struct key out;
	size_t size;

	CHECK_OK(kvreg_listen(kv, ADDR, 0, ep, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, *ep, mr, desc, sizeof(desc), &size, &err),
		 &err);
	out.iova = le64toh(kvt_desc_chunks(desc)[0].iova);
	out.rkey = le32toh(kvt_desc_chunks(desc)[0].rkey);
	return out;
}

static void export_x(struct kvreg *kv, uint64_t ep, struct kvreg_mr *x)
{
	struct kvreg_error err;

	CHECK_OK(kvreg_export(kv, ep, x, ctl->desc, sizeof(ctl->desc),
			      &ctl->desc_size, &err), &err);
}

/*
 * The exporter: X (exported), Y (same file) and Z (a second file), each
 * with every access; it revokes on command.
 */
static void exporter(void *arg)
{
	const struct exporter_arg *a = arg;
	uint8_t *pool = a->pool, *ybuf = a->ybuf, *zbuf = a->zbuf;
	uint32_t dev = a->dev;
	struct kvreg *kv = kvt_open(), *kv2 = kvt_open();
	struct kvreg_mr *x, *y, *z;
	struct kvreg_error err;
	uint64_t ep, ep2;

	CHECK_OK(kvreg_register(kv, pool, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&x, &err), &err);
	CHECK_OK(kvreg_register(kv, ybuf, VLEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&y, &err), &err);
	CHECK_OK(kvreg_register(kv2, zbuf, VLEN, KVREG_ACCESS_ALL,
				1ULL << dev, &z, &err), &err);
	ctl->y = key_of(kv, y, &ep);
	ctl->z = key_of(kv2, z, &ep);
	CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep, NULL, &err), &err);
	export_x(kv, ep, x);
	CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep2, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep2, y, ctl->desc2, sizeof(ctl->desc2),
			      &ctl->desc2_size, &err), &err);
	kvt_send_byte(kvt_me.ack, 'r');
	for (;;) {
		char c = kvt_recv_byte(kvt_me.cmd);

		switch (c) {
		case 'u':
			CHECK_OK(kvreg_unexport(kv, ep, x, &err), &err);
			/* Nothing left to revoke: said so. */
			CHECK_FAILS(kvreg_unexport(kv, ep, x, &err), &err,
				    ENOENT, KVREG_REASON_NOT_EXPORTED);
			CHECK_FAILS(kvreg_unexport(kv, ep, y, &err), &err,
				    ENOENT, KVREG_REASON_NOT_EXPORTED);
			break;
		case 'e':
			export_x(kv, ep, x);
			break;
		case 'k':
			CHECK_OK(kvreg_rekey(kv, ep, &err), &err);
			break;
		case 'l':
			CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
			CHECK_FAILS(kvreg_unlisten(kv, ep, &err), &err, ENOENT,
				    KVREG_REASON_UNKNOWN_ENDPOINT);
			CHECK_FAILS(kvreg_export(kv, ep, x, ctl->desc,
						 sizeof(ctl->desc),
						 &ctl->desc_size, &err),
				    &err, ENOENT,
				    KVREG_REASON_UNKNOWN_ENDPOINT);
			CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep, NULL, &err),
				 &err);
			export_x(kv, ep, x);
			break;
		case 'd':
			CHECK_OK(kvreg_deregister(kv, x, &err), &err);
			break;
		case 'R':
			CHECK_OK(kvreg_register(kv, pool, LEN,
						KVREG_ACCESS_ALL, 1ULL << dev,
						&x, &err), &err);
			export_x(kv, ep, x);
			break;
		case 'q':
			kvreg_close(kv2);
			kvreg_close(kv);
			exit(T_PASS);
		default:
			CHECK(0, "command %c", c);
		}
		kvt_send_byte(kvt_me.ack, c);
	}
}

/* Wait for one CM event of @ch, which must be @want. */
static void evil_expect(struct rdma_event_channel *ch,
			enum rdma_cm_event_type want,
			struct rdma_cm_id **idp)
{
	struct rdma_cm_event *ev;

	CHECK(!rdma_get_cm_event(ch, &ev), "rdma_get_cm_event: %s",
	      strerror(errno));
	CHECK(ev->event == want, "CM event %s, want %s",
	      rdma_event_str(ev->event), rdma_event_str(want));
	if (idp)
		*idp = ev->id;
	rdma_ack_cm_event(ev);
}

/*
 * A hostile node that a kvreg importer connects to: it accepts (kvreg's
 * private data, any secret), then tries the importer's own registration
 * with its real keys, a WRITE on the first connection and a READ on the
 * second, and reports what its work completion said.
 */
static void evil_peer(void *unused)
{
	struct rdma_cm_id *listen_id, *id;
	struct rdma_event_channel *ch;
	static uint8_t buf[VLEN];
	int round;

	(void)unused;
	ctl->evil_port = kvt_rdma_listen(ADDR, &ch, &listen_id);
	kvt_send_byte(kvt_me.ack, 'r');
	for (round = 0; round < 2; round++) {
		struct ibv_send_wr wr = { 0 }, *bad;
		struct kvt_hostile h;
		struct ibv_sge sge;
		struct ibv_wc wc;
		double until;
		int got = 0;

		evil_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &id);
		memset(buf, 0, sizeof(buf));
		kvt_hostile_accept(id, &h, buf, sizeof(buf));
		evil_expect(ch, RDMA_CM_EVENT_ESTABLISHED, NULL);

		sge = (struct ibv_sge) { .addr = (uintptr_t)buf,
					 .length = VLEN, .lkey = h.mr->lkey };
		kvt_fill(buf, VLEN, 0xE7);
		if (round)
			memset(buf, 0, VLEN);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = round ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = ctl->victim.iova;
		wr.wr.rdma.rkey = ctl->victim.rkey;
		CHECK(!ibv_post_send(id->qp, &wr, &bad), "post");
		until = kvt_now() + 20;
		while (!got && kvt_now() < until)
			got = ibv_poll_cq(h.cq, 1, &wc);
		CHECK(got == 1, "no completion for the hostile %s",
		      round ? "READ" : "WRITE");
		ctl->evil_status[round] = wc.status;
		if (round)
			ctl->evil_leaked = kvt_mismatch(buf, 0, VLEN, 0xA5,
							0) < 0;
		printf("hostile %s into the importer: %s\n",
		       round ? "READ" : "WRITE", ibv_wc_status_str(wc.status));

		/*
		 * The importer lets go (UNIMPORT): disconnecting from here
		 * would have its rail connect again, to this listener.
		 */
		kvt_send_byte(kvt_me.ack, 'a');
		evil_expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL);
		kvt_hostile_free(id, &h);
	}
	/* The importer's DISCONNECTED and the like: not waited for. */
	kvt_recv_byte(kvt_me.cmd);
	rdma_destroy_id(listen_id);
	exit(T_PASS);
}

/* A transfer through a descriptor the exporter must refuse. */
static void refused(struct kvreg *kv, const uint8_t *desc, size_t n,
		    enum kvreg_transfer_op op, struct kvreg_mr *local)
{
	unsigned int retries = 0;
	struct kvreg_error err;
	char msg[512];
	int ret;

	ret = kvt_attack(kv, desc, n, op, local, &retries, &err);
	kvreg_format_error(&err, ret, msg, sizeof(msg));
	CHECK(kvt_refused_posted(ret, &err), "a forged descriptor's transfer "
	      "was not refused once posted: %s", msg);
	printf("refused as expected: %s", msg);
	if (retries)
		printf(" (after %u connects that never carried it)", retries);
	printf("\n");
}

/* Y's endpoint, with X's keys: an export is reachable through its own. */
static void check_other_endpoint(struct kvreg *kv, struct kvreg_mr *local,
				 const uint8_t *pool)
{
	static uint8_t forged[DESC_MAX];
	size_t n = ctl->desc2_size;
	struct kvreg_desc_chunk *c;
	int op;

	memcpy(forged, ctl->desc2, n);
	c = kvt_desc_chunks(forged);
	c[0].iova = kvt_desc_chunks(ctl->desc)[0].iova;
	c[0].rkey = kvt_desc_chunks(ctl->desc)[0].rkey;
	kvt_reseal(forged, n);
	kvt_fill((void *)pool, SZ_4K, 0x58);
	for (op = KVREG_OP_WRITE; op <= KVREG_OP_READ; op++)
		refused(kv, forged, n, op, local);
	CHECK(kvt_mismatch(pool, 0, SZ_4K, 0x58, 0) < 0, "X changed");
	printf("X's keys through the endpoint Y was exported on: refused\n");
}

struct guess_arg {
	const uint8_t *desc;	/* X's */
	size_t size;
	uint32_t xrkey, dev;
};

/*
 * Importer @g of GUESSERS, a process with its own file: every
 * GUESSERS-th guess, alternately above and below X's rkey, at Y's and
 * Z's addresses, a third of them READs into its own registration.
 */
static void guesser(int g, void *arg)
{
	const struct key *victims[2] = { &ctl->y, &ctl->z };
	const struct guess_arg *a = arg;
	static uint8_t forged[DESC_MAX];
	struct kvreg *kv = kvt_open();
	uint8_t *mine = kvt_map_anon(SZ_4K);
	struct kvreg_desc_chunk *c;
	struct kvreg_mr *local;
	struct kvreg_error err;
	int i;

	memcpy(forged, a->desc, a->size);
	c = kvt_desc_chunks(forged);
	kvt_fill(mine, SZ_4K, 0x11);
	CHECK_OK(kvreg_register(kv, mine, SZ_4K, KVREG_ACCESS_LOCAL_WRITE,
				1ULL << a->dev, &local, &err), &err);
	for (i = g; i < GUESSES; i += GUESSERS) {
		uint32_t d = (uint32_t)i / 2 + 1;

		c[0].rkey = i % 2 ? a->xrkey - d : a->xrkey + d;
		c[0].iova = victims[(i / 2) % 2]->iova;
		kvt_reseal(forged, a->size);
		refused(kv, forged, a->size,
			i % 3 ? KVREG_OP_WRITE : KVREG_OP_READ, local);
	}
	CHECK(kvt_mismatch(mine, 0, SZ_4K, 0x11, 0) < 0,
	      "a READ brought another registration's bytes");
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvreg_close(kv);
}

static void check_forged(struct kvreg *kv, struct kvreg_mr *local,
			 uint8_t *mine, const uint8_t *ybuf,
			 const uint8_t *zbuf, uint32_t dev)
{
	static uint8_t forged[DESC_MAX];
	const struct key *victims[2] = { &ctl->y, &ctl->z };
	size_t n = ctl->desc_size;
	struct kvreg_desc_chunk *c;
	uint32_t xrkey;
	int v, op;

	memcpy(forged, ctl->desc, n);
	c = kvt_desc_chunks(forged);
	xrkey = c[0].rkey;
	kvt_fill(mine, SZ_4K, 0x11);
	for (v = 0; v < 2; v++) {
		for (op = KVREG_OP_WRITE; op <= KVREG_OP_READ; op++) {
			c[0].iova = victims[v]->iova;
			c[0].rkey = victims[v]->rkey;
			kvt_reseal(forged, n);
			refused(kv, forged, n, op, local);
		}
	}
	printf("X's descriptor rewritten to Y (same file) and Z (another "
	       "file): WRITE and READ refused\n");
	CHECK(kvt_mismatch(mine, 0, SZ_4K, 0x11, 0) < 0,
	      "a READ brought another registration's bytes");
	kvt_fan_out(GUESSERS, guesser,
		    &(struct guess_arg){ ctl->desc, n, xrkey, dev });
	CHECK(kvt_mismatch(ybuf, 0, VLEN, 0x59, 0) < 0, "Y changed");
	CHECK(kvt_mismatch(zbuf, 0, VLEN, 0x5A, 0) < 0, "Z changed");
	printf("%d guesses at rkeys next to X's (%#x), at Y's and Z's "
	       "addresses, from %d importers at once: all refused; Y, Z and "
	       "the importers unchanged\n", GUESSES, xrkey, GUESSERS);
}

/*
 * The descriptor's chunks are X's layout, each where the pool lies past
 * the first, but moved away from the exporter's addresses: only the
 * offset within a page shows. Returns the first chunk's iova.
 */
static uint64_t check_hidden_iova(uint8_t *desc, const uint8_t *pool)
{
	const struct kvreg_desc_chunk *c = kvt_desc_chunks(desc);
	uint32_t i, n = kvt_desc_path(desc)->nr_chunks;
	uint64_t at = 0;

	CHECK(n > 1, "X in %u chunks", n);
	for (i = 0; i < n; at += c[i].length, i++) {
		CHECK(c[i].iova != (uintptr_t)pool + at,
		      "chunk %u's iova %#llx is the exporter's address", i,
		      (unsigned long long)c[i].iova);
		CHECK(c[i].iova - c[0].iova == at,
		      "chunk %u at %#llx, %#llx past chunk 0", i,
		      (unsigned long long)c[i].iova, (unsigned long long)at);
	}
	CHECK(c[0].iova % SZ_4K == (uintptr_t)pool % SZ_4K,
	      "the iova %#llx moved the pool's offset in its page",
	      (unsigned long long)c[0].iova);
	return c[0].iova;
}

static void check_importer(struct kvreg *kv, uint32_t dev)
{
	static uint8_t desc[256];
	uint8_t *victim = kvt_map_anon(VLEN);
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_mr *mr;
	struct kvt_child evil;
	uint64_t victim_ep;
	size_t n;
	int round;

	kvt_uverbs();
	kvt_fill(victim, VLEN, 0xA5);
	CHECK_OK(kvreg_register(kv, victim, VLEN, KVREG_ACCESS_ALL,
				1ULL << dev, &mr, &err), &err);
	ctl->victim = key_of(kv, mr, &victim_ep);
	evil = kvt_spawn(evil_peer, NULL, 'r');
	/* It names the hostile listener; its keys do not matter. */
	n = kvt_desc_to(desc, ADDR, ctl->evil_port);
	CHECK(n, "a descriptor to %s", ADDR);
	for (round = 0; round < 2; round++) {
		CHECK_OK(kvreg_import(kv, desc, n, 0, &r, &err), &err);
		CHECK(kvt_recv_byte(evil.ack) == 'a', "hostile peer");
		CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	}
	kvt_send_byte(evil.cmd, 'q');
	kvt_reap(&evil);
	CHECK(ctl->evil_status[0] != IBV_WC_SUCCESS,
	      "the importer's QP took an RDMA WRITE");
	CHECK(ctl->evil_status[1] != IBV_WC_SUCCESS && !ctl->evil_leaked,
	      "the importer's QP answered an RDMA READ");
	CHECK(kvt_mismatch(victim, 0, VLEN, 0xA5, 0) < 0,
	      "the importer's registration changed");
	CHECK_OK(kvreg_unlisten(kv, victim_ep, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	munmap(victim, VLEN);
	printf("a node the importer connected to, with the importer's real "
	       "rkey: WRITE and READ refused, bytes unchanged\n");
}

static struct kvreg_remote *import_ok(struct kvreg *kv,
				      struct kvreg_mr *local, uint8_t *mine,
				      const uint8_t *pool)
{
	struct kvreg_remote *r;
	struct kvreg_error err;

	CHECK_OK(kvreg_import(kv, ctl->desc, ctl->desc_size, 0, &r, &err),
		 &err);
	kvt_fill(mine, SZ_4K, 0x21);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r,
				       LEN - SZ_4K, SZ_4K, &err), &err);
	CHECK(kvt_mismatch(pool, LEN - SZ_4K, SZ_4K, 0x21, 0) < 0,
	      "WRITE through the export did not land");
	return r;
}

/*
 * After a revocation: the kept region's @op fails with @reason; the
 * exporter's bytes stay, and a READ brings nothing back.
 */
static void check_cut(struct kvreg *kv, struct kvreg_remote *r,
		      enum kvreg_transfer_op op, struct kvreg_mr *local,
		      uint8_t *mine, const uint8_t *pool, int want_errno,
		      uint32_t reason, const char *what)
{
	const char *name = op == KVREG_OP_READ ? "READ" : "WRITE";
	struct kvreg_error err;
	char msg[512];
	int ret;

	kvt_fill(mine, SZ_4K, 0x33);
	ret = kvreg_transfer_remote(kv, op, local, 0, r, 0, SZ_4K, &err);
	kvreg_format_error(&err, ret, msg, sizeof(msg));
	if (reason == KVREG_REASON_REMOTE_ACCESS) {
		CHECK(kvt_device_refused(ret, &err), "a %s after %s was not "
		      "refused by the device: %s", name, what, msg);
		device_refusals++;
	} else {
		CHECK(ret == -want_errno && err.reason == reason,
		      "a %s after %s: %s; want %d reason %u", name, what, msg,
		      -want_errno, reason);
	}
	CHECK(kvt_mismatch(pool, 0, LEN, 0x44, 0) < 0,
	      "a %s after %s changed the memory", name, what);
	CHECK(kvt_mismatch(mine, 0, SZ_4K, 0x33, 0) < 0,
	      "a %s after %s brought bytes back", name, what);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	printf("after %s: the peer's %s refused (%s), the memory unchanged\n",
	       what, name, msg);
}

/*
 * A connection made to the export, then @cmd to the exporter revokes it
 * (UNEXPORT or DEREGISTER): the kept connection's @op is refused by the
 * device.
 */
static void check_revoked(struct kvreg *kv, struct kvt_child *exp, char cmd,
			  enum kvreg_transfer_op op, struct kvreg_mr *local,
			  uint8_t *mine, uint8_t *pool, const char *what)
{
	struct kvreg_remote *r = import_ok(kv, local, mine, pool);

	kvt_fill(pool, LEN, 0x44);
	CHECK(kvt_ask(exp, cmd) == cmd, "%s", what);
	check_cut(kv, r, op, local, mine, pool, EIO,
		  KVREG_REASON_REMOTE_ACCESS, what);
}

static void check_revocations(struct kvreg *kv, struct kvt_child *exp,
			      struct kvreg_mr *local, uint8_t *mine,
			      uint8_t *pool)
{
	static uint8_t old[DESC_MAX];
	size_t old_size;
	struct kvreg_remote *r;
	struct kvreg_error err;
	uint64_t iova, again;

	/*
	 * UNEXPORT: the keys die; the connection stays, reaching nothing.
	 * READ first, on an export made again, then WRITE: a refused
	 * request leaves the connection in error, so one op a round.
	 */
	check_revoked(kv, exp, 'u', KVREG_OP_READ, local, mine, pool,
		      "UNEXPORT");
	CHECK(kvt_ask(exp, 'e') == 'e', "export");
	iova = check_hidden_iova(ctl->desc, pool);
	old_size = ctl->desc_size;
	memcpy(old, ctl->desc, old_size);
	check_revoked(kv, exp, 'u', KVREG_OP_WRITE, local, mine, pool,
		      "UNEXPORT");
	/* Exported again: new keys; the old descriptor's stay dead. */
	CHECK(kvt_ask(exp, 'e') == 'e', "export");
	again = check_hidden_iova(ctl->desc, pool);
	CHECK(again != iova, "exported again at the same iova %#llx",
	      (unsigned long long)iova);
	printf("descriptors hide the exporter's address: X at %#llx, then "
	       "%#llx, not %p\n", (unsigned long long)iova,
	       (unsigned long long)again, (void *)pool);
	r = import_ok(kv, local, mine, pool);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	/* The old descriptor's secret went with it: it cannot connect. */
	CHECK_FAILS(kvreg_import(kv, old, old_size, 0, &r, &err), &err,
		    ECONNREFUSED, KVREG_REASON_CONN_BAD_SECRET);

	/* REKEY: old descriptors cannot connect, old connections are cut. */
	memcpy(old, ctl->desc, ctl->desc_size);
	old_size = ctl->desc_size;
	r = import_ok(kv, local, mine, pool);
	kvt_fill(pool, LEN, 0x44);
	CHECK(kvt_ask(exp, 'k') == 'k', "rekey");
	check_cut(kv, r, KVREG_OP_READ, local, mine, pool, ENOTCONN,
		  KVREG_REASON_CONN_LOST, "REKEY");
	CHECK_FAILS(kvreg_import(kv, old, old_size, 0, &r, &err), &err,
		    ECONNREFUSED, KVREG_REASON_CONN_BAD_SECRET);
	/* Still exported: the same MRs, so the same base. */
	CHECK(kvt_ask(exp, 'e') == 'e', "export");
	CHECK(check_hidden_iova(ctl->desc, pool) == again,
	      "a descriptor of the same export at another iova");
	r = import_ok(kv, local, mine, pool);

	/* UNLISTEN: the connection is cut, nothing listens there. */
	memcpy(old, ctl->desc, ctl->desc_size);
	old_size = ctl->desc_size;
	kvt_fill(pool, LEN, 0x44);
	CHECK(kvt_ask(exp, 'l') == 'l', "unlisten");
	check_cut(kv, r, KVREG_OP_WRITE, local, mine, pool, ENOTCONN,
		  KVREG_REASON_CONN_LOST, "UNLISTEN");
	CHECK_FAILS(kvreg_import(kv, old, old_size, 0, &r, &err), &err,
		    ECONNREFUSED, KVREG_REASON_CONN_NO_LISTENER);

	/* DEREGISTER (the exporter listens anew since 'l'): WRITE, READ. */
	check_revoked(kv, exp, 'd', KVREG_OP_WRITE, local, mine, pool,
		      "DEREGISTER");
	CHECK(kvt_ask(exp, 'R') == 'R', "register again");
	check_revoked(kv, exp, 'd', KVREG_OP_READ, local, mine, pool,
		      "DEREGISTER");
	CHECK(device_refusals == 4, "%u refusals by the device, not 4",
	      device_refusals);

	/* The exporter's close, its process gone. */
	CHECK(kvt_ask(exp, 'R') == 'R', "register again");
	r = import_ok(kv, local, mine, pool);
	kvt_fill(pool, LEN, 0x44);
	kvt_send_byte(exp->cmd, 'q');
	kvt_reap(exp);
	check_cut(kv, r, KVREG_OP_READ, local, mine, pool, ENOTCONN,
		  KVREG_REASON_CONN_LOST, "the exporter's close");
}

/* Between two of the file's registrations, no REMOTE_* flag is needed. */
static void check_loopback(struct kvreg *kv, uint32_t dev)
{
	uint8_t *a = kvt_map_anon(SZ_2M), *b = kvt_map_anon(SZ_2M);
	struct kvreg_mr *ma, *mb;
	struct kvreg_error err;

	CHECK_OK(kvreg_register(kv, a, SZ_2M, KVREG_ACCESS_LOCAL_WRITE,
				1ULL << dev, &ma, &err), &err);
	CHECK_OK(kvreg_register(kv, b, SZ_2M, KVREG_ACCESS_LOCAL_WRITE,
				1ULL << dev, &mb, &err), &err);
	kvt_fill(a, SZ_2M, 0x61);
	memset(b, 0, SZ_2M);
	CHECK_OK(kvreg_transfer(kv, KVREG_OP_WRITE, dev, ma, 0, mb, 0, SZ_2M,
				&err), &err);
	CHECK(kvt_mismatch(b, 0, SZ_2M, 0x61, 0) < 0, "loopback WRITE");
	kvt_fill(b, SZ_2M, 0x62);
	CHECK_OK(kvreg_transfer(kv, KVREG_OP_READ, dev, ma, 0, mb, 0, SZ_2M,
				&err), &err);
	CHECK(kvt_mismatch(a, 0, SZ_2M, 0x62, 0) < 0, "loopback READ");
	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	munmap(a, SZ_2M);
	munmap(b, SZ_2M);
	printf("loopback WRITE and READ of 2 MiB between registrations with "
	       "local write only: bytes moved\n");
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	uint8_t *pool, *ybuf, *zbuf, *mine;
	struct kvreg_mr *local;
	struct kvt_snap before;
	struct kvreg_error err;
	struct kvt_child exp;
	uint32_t dev;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	if (!kvreg_has_feature(kv, KVREG_FEATURE_REVOCABLE_EXPORTS))
		kvt_skip("module without KVREG_FEATURE_REVOCABLE_EXPORTS");
	dev = devs[0].index;
	ctl = kvt_map_shared(sizeof(*ctl));
	pool = kvt_map_shared(LEN);
	ybuf = kvt_map_shared(VLEN);
	zbuf = kvt_map_shared(VLEN);
	kvt_fill(ybuf, VLEN, 0x59);
	kvt_fill(zbuf, VLEN, 0x5A);
	mine = kvt_map_anon(SZ_2M);
	before = kvt_snap(kv);

	check_loopback(kv, dev);
	CHECK_OK(kvreg_register(kv, mine, SZ_2M, KVREG_ACCESS_LOCAL_WRITE,
				1ULL << dev, &local, &err), &err);
	exp = kvt_spawn(exporter, &(struct exporter_arg){ pool, ybuf, zbuf,
							  dev }, 'r');
	check_forged(kv, local, mine, ybuf, zbuf, dev);
	check_other_endpoint(kv, local, pool);
	check_importer(kv, dev);
	check_revocations(kv, &exp, local, mine, pool);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvt_check_unchanged(kv, &before, "after the export attacks");
	kvreg_close(kv);
	return T_PASS;
}
