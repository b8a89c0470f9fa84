// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A descriptor lets its holder reach its export and nothing else, however
 * it guesses. A plain-verbs peer, let in with export A's secret, aims RDMA
 * at export B of the same endpoint (all 256 keys of B's MR index, from 8
 * peers at once, each with its own connections; then B's exact rkey and
 * iova), and at A and B exported again after UNEXPORT and after
 * DEREGISTER (the new exact keys, over the connection it kept); then it
 * tries the old secret 1,000 times. Each RDMA attack must be posted and
 * refused by the device (a remote access error), with the victim's bytes
 * unchanged and nothing read back; each connect with a revoked secret must
 * be refused with KVREG_REASON_CONN_BAD_SECRET. The honest descriptors
 * still move bytes afterwards, checked on both sides.
 *
 * 5.10's rxe drops a request whose rkey it refuses instead of NAKing it,
 * so there a refusal is the peer's retries running out (kvpeer.h keeps
 * them short), not a remote access error.
 */

#include "kvchild.h"
#include "kvpeer.h"
#include "kvtransfer.h"

#define LEN		(16 * SZ_4K)
#define ADDR		"192.0.2.1"
#define OLD_SECRET_TRIES	1000
#define MINE_SEED	0x5a5a
/* Peers sweeping at once: on 5.10 each refusal waits out retries. */
#define SWEEPERS	8

struct export {
	uint8_t desc[16384];
	size_t size;
};

static uint8_t *mine;
/* Shared with the sweepers. */
static unsigned int *refused_by_device;
static enum ibv_wc_status refusal = IBV_WC_REM_ACCESS_ERR;

static void export_of(struct kvreg *kv, uint64_t ep, struct kvreg_mr *mr,
		      struct export *x)
{
	struct kvreg_error err;

	CHECK_OK(kvreg_export(kv, ep, mr, x->desc, sizeof(x->desc), &x->size,
			      &err), &err);
}

static const uint8_t *secret_of(const struct export *x)
{
	return kvt_desc_head(x->desc)->secret;
}

static void let_in(struct kvt_peer *p, const struct export *with)
{
	CHECK(kvt_peer_connect(p, with->desc, secret_of(with), mine, LEN,
			       NULL) == RDMA_CM_EVENT_ESTABLISHED,
	      "an honest descriptor was not let in");
}

/*
 * Over @p (let in with another export's secret), @op of 4 KiB at
 * @target's first chunk with @rkey: it must fail, and neither @victim
 * nor the peer's buffer may change. Returns how it failed.
 */
static enum ibv_wc_status attempt(struct kvt_peer *p, enum ibv_wr_opcode op,
				  const struct export *target, uint32_t rkey,
				  const uint8_t *victim, uint32_t victim_seed,
				  const char *what)
{
	const uint64_t len = SZ_4K;
	uint64_t iova = kvt_desc_chunks(target->desc)[0].iova;
	enum ibv_wc_status st;

	kvt_fill(mine, LEN, MINE_SEED);
	st = kvt_peer_rdma(p, mine, op, &iova, &rkey, &len, 1);
	CHECK(st != IBV_WC_SUCCESS, "%s: %s with rkey %#x went through",
	      what, op == IBV_WR_RDMA_READ ? "READ" : "WRITE", rkey);
	CHECK(kvt_mismatch(victim, 0, LEN, victim_seed, 0) < 0,
	      "%s: the victim's byte %lld changed", what,
	      (long long)kvt_mismatch(victim, 0, LEN, victim_seed, 0));
	CHECK(kvt_mismatch(mine, 0, LEN, MINE_SEED, 0) < 0,
	      "%s: the peer's buffer changed at %lld", what,
	      (long long)kvt_mismatch(mine, 0, LEN, MINE_SEED, 0));
	return st;
}

static void refused(enum ibv_wc_status st, const char *what)
{
	CHECK(st == refusal,
	      "%s: refused with %s, not by the device's key check", what,
	      ibv_wc_status_str(st));
	__atomic_add_fetch(refused_by_device, 1, __ATOMIC_RELAXED);
}

/* One attack over @p, which it leaves in error. */
static void attack(struct kvt_peer *p, enum ibv_wr_opcode op,
		   const struct export *target, uint32_t rkey,
		   const uint8_t *victim, uint32_t victim_seed, const char *what)
{
	refused(attempt(p, op, target, rkey, victim, victim_seed, what), what);
}

/*
 * A fresh connection with @with's secret, for one attack; then gone.
 * The device NAKs a bad key once and puts its QP in error: if that NAK
 * is lost, or comes after the peer's last retry, the peer's retries run
 * out instead. Then the attack is made again on a new connection, at
 * most twice, until the device's refusal is seen.
 */
static void attack_once(const struct export *with, enum ibv_wr_opcode op,
			const struct export *target, uint32_t rkey,
			const uint8_t *victim, uint32_t victim_seed,
			const char *what)
{
	enum ibv_wc_status st;
	struct kvt_peer p;
	int tries = 0;

	do {
		let_in(&p, with);
		st = attempt(&p, op, target, rkey, victim, victim_seed, what);
		kvt_peer_close(&p, true);
	} while (st == IBV_WC_RETRY_EXC_ERR && refusal != st && ++tries < 3);
	if (tries)
		printf("%s, rkey %#x: no answer %d time(s), then %s\n", what,
		       rkey, tries, ibv_wc_status_str(st));
	refused(st, what);
}

struct sweep {
	const struct export *with, *target;
	uint32_t rkey;
	const uint8_t *victim;
};

/* Sweeper @s of SWEEPERS: every SWEEPERS-th key of the target's index. */
static void sweeper(int s, void *arg)
{
	const struct sweep *w = arg;
	uint32_t k;

	for (k = (uint32_t)s; k < 256; k += SWEEPERS)
		attack_once(w->with, IBV_WR_RDMA_WRITE, w->target,
			    (w->rkey & ~0xffU) | k, w->victim, 0xb1,
			    "A's peer sweeping B's index");
}

/* A connect request with a revoked @secret, with no QP behind it. */
static void refused_secret(const struct export *x, const uint8_t *secret)
{
	struct kvreg_cm_req req = {
		.magic = KVREG_CM_MAGIC, .version = KVREG_CM_VERSION,
	};
	struct rdma_conn_param param = {
		.private_data = &req, .private_data_len = sizeof(req),
		.initiator_depth = 1, .qp_num = 0x123,
	};
	struct kvreg_cm_rej rej = { 0 };
	enum rdma_cm_event_type ev;
	struct kvt_peer p;

	memcpy(req.secret, secret, sizeof(req.secret));
	kvt_peer_resolve(&p, x->desc);
	CHECK(!rdma_connect(p.id, &param), "rdma_connect: %s",
	      strerror(errno));
	ev = kvt_peer_event(&p, &rej);
	CHECK(ev == RDMA_CM_EVENT_REJECTED,
	      "a revoked secret got %s, not a refusal", rdma_event_str(ev));
	CHECK(rej.magic == KVREG_CM_MAGIC &&
	      rej.reason == KVREG_REASON_CONN_BAD_SECRET,
	      "a revoked secret was refused with reason %u, magic %#x",
	      rej.reason, rej.magic);
	rdma_destroy_id(p.id);
	rdma_destroy_event_channel(p.ch);
}

/* An honest WRITE of pattern @seed, then READ, over @x's own connection. */
static void honest(const struct export *x, uint8_t *pool, uint32_t seed)
{
	struct kvt_peer p;

	let_in(&p, x);
	kvt_fill(mine, LEN, seed);
	CHECK(kvt_peer_rdma_desc(&p, x->desc, mine, IBV_WR_RDMA_WRITE) ==
	      IBV_WC_SUCCESS, "honest WRITE failed");
	CHECK(kvt_mismatch(pool, 0, LEN, seed, 0) < 0,
	      "honest WRITE: the pool differs at %lld",
	      (long long)kvt_mismatch(pool, 0, LEN, seed, 0));
	memset(mine, 0, LEN);
	CHECK(kvt_peer_rdma_desc(&p, x->desc, mine, IBV_WR_RDMA_READ) ==
	      IBV_WC_SUCCESS, "honest READ failed");
	CHECK(kvt_mismatch(mine, 0, LEN, seed, 0) < 0,
	      "honest READ: differs at %lld",
	      (long long)kvt_mismatch(mine, 0, LEN, seed, 0));
	kvt_peer_close(&p, true);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct export xa, xb, xa2, xb2;
	struct kvreg *kv = kvt_open();
	uint8_t old_secret[KVREG_SECRET_LEN];
	struct kvreg_mr *ma, *mb, *mb2;
	struct kvreg_error err;
	uint32_t rkey_b;
	uint8_t *a, *b;
	struct kvt_peer p;
	uint64_t ep;
	int i;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	if (kvt_on_5_10())
		refusal = IBV_WC_RETRY_EXC_ERR;
	else
		kvt_peer_ack_timeout = 18;	/* 1.07 s a try */
	if (!kvreg_has_feature(kv, KVREG_FEATURE_EXPORT_PD))
		CHECK(0, "module without KVREG_FEATURE_EXPORT_PD");
	kvt_uverbs();
	/* Shared: the sweepers check B's bytes after each attack. */
	a = kvt_map_shared(LEN);
	b = kvt_map_shared(LEN);
	refused_by_device = kvt_map_shared(sizeof(*refused_by_device));
	mine = kvt_map_anon(LEN);
	CHECK_OK(kvreg_register(kv, a, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &ma, &err), &err);
	CHECK_OK(kvreg_register(kv, b, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &mb, &err), &err);
	CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep, NULL, &err), &err);
	export_of(kv, ep, ma, &xa);
	export_of(kv, ep, mb, &xb);
	CHECK(memcmp(secret_of(&xa), secret_of(&xb), KVREG_SECRET_LEN),
	      "two exports of one endpoint share a secret");
	/*
	 * A's holder, at every key of B's index, then at B's exact key. The
	 * sweepers go first: a child cannot use verbs the parent opened
	 * (uverbs refuses a file another process opened), and librdmacm
	 * opens them once per process, on first use.
	 */
	kvt_fill(b, LEN, 0xb1);
	rkey_b = kvt_desc_chunks(xb.desc)[0].rkey;
	kvt_fan_out(SWEEPERS, sweeper,
		    &(struct sweep){ &xa, &xb, rkey_b, b });
	CHECK(kvt_mismatch(b, 0, LEN, 0xb1, 0) < 0, "B changed at %lld",
	      (long long)kvt_mismatch(b, 0, LEN, 0xb1, 0));
	honest(&xa, a, 0xa1);
	honest(&xb, b, 0xb1);
	attack_once(&xa, IBV_WR_RDMA_WRITE, &xb, rkey_b, b, 0xb1,
		    "A's peer at B, exact key");
	attack_once(&xa, IBV_WR_RDMA_READ, &xb, rkey_b, b, 0xb1,
		    "A's peer at B, exact key");
	printf("A's descriptor against B: 256 keys of its index (%d peers "
	       "at once) and the exact key refused by the device, B's bytes "
	       "unchanged\n", SWEEPERS);

	/* A connection kept across UNEXPORT and EXPORT again. */
	let_in(&p, &xa);
	memcpy(old_secret, secret_of(&xa), sizeof(old_secret));
	CHECK_OK(kvreg_unexport(kv, ep, ma, &err), &err);
	export_of(kv, ep, ma, &xa2);
	CHECK(memcmp(secret_of(&xa2), old_secret, KVREG_SECRET_LEN),
	      "A exported again with its old secret");
	attack(&p, IBV_WR_RDMA_WRITE, &xa2,
	       kvt_desc_chunks(xa2.desc)[0].rkey, a, 0xa1,
	       "A's old connection at A exported again");
	kvt_peer_close(&p, true);
	let_in(&p, &xa2);
	kvt_peer_close(&p, true);
	for (i = 0; i < OLD_SECRET_TRIES; i++)
		refused_secret(&xa2, old_secret);
	printf("A exported again: the old connection's WRITE with the new "
	       "key refused by the device; the old secret refused %d times\n",
	       OLD_SECRET_TRIES);

	/* The same across DEREGISTER and REGISTER of the same pages. */
	let_in(&p, &xb);
	memcpy(old_secret, secret_of(&xb), sizeof(old_secret));
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	CHECK_OK(kvreg_register(kv, b, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &mb2, &err), &err);
	export_of(kv, ep, mb2, &xb2);
	attack(&p, IBV_WR_RDMA_READ, &xb2,
	       kvt_desc_chunks(xb2.desc)[0].rkey, b, 0xb1,
	       "B's old connection at B registered and exported again");
	kvt_peer_close(&p, true);
	refused_secret(&xb2, old_secret);
	printf("B registered and exported again: the old connection's READ "
	       "refused by the device, the old secret refused\n");

	/* The honest descriptors still work, and the attacks all reached it. */
	honest(&xa2, a, 0xa2);
	honest(&xb2, b, 0xb2);
	CHECK(*refused_by_device == 2 + 256 + 2, "%u attacks refused",
	      *refused_by_device);
	printf("%u RDMA attacks posted and refused by the device; honest "
	       "descriptors moved bytes after\n", *refused_by_device);

	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mb2, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}
