// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * An unprivileged local verbs user against kvreg's engines, the kernel RC
 * QPs connected to themselves that fast-register exports' MRs. `rdma res show qp` gives any user
 * their QP numbers and expected PSNs, and rxe loops a user QP aimed at
 * the host's own GID back to them, so an engine that took remote RDMA
 * would let the user WRITE into and READ from another process's memory
 * with its rkey (or a guess at it: an index plus 8 bits).
 *
 * The victim (root) registers a pool (no MR, no engine) and exports it
 * through two endpoints; the attacker (uid 65534, its own PD and QPs,
 * libibverbs alone) aims RDMA WRITE and READ at every engine on rxe0 with
 * the victim's real rkeys and iovas, both exports', then with guessed
 * keys. Between rounds the victim unexports and exports again through
 * each endpoint (the export's engine, which the UNEXPORT left to the
 * next export, fast-registers the new keys, given to the attacker for
 * the next round) and, once, rekeys. No attack may land or read a byte,
 * and the victim's transfers keep working.
 *
 * An engine answers (ACK or NAK) its own QP number, not the attacker's, so
 * the attacker sees every request time out whether it landed or not: the
 * victim's bytes are the verdict. That the aim is true is shown first on
 * a control, a self-connected QP of the attacker's own with remote write
 * and an MR, found through `rdma res` the same way: the same WRITE must
 * land there, or the test fails for want of a working attack.
 */
#include <infiniband/verbs.h>
#include <sys/wait.h>

#include "kvdesc.h"
#include "kvtrace.h"
#include "kvtransfer.h"

#define LEN		(16 * SZ_4K)
#define ADDR		"192.0.2.1"
/* Real keys both ways (4), then 16 guesses at each key. */
#define ROUNDS		(4 + 2 * 16)
#define REKEY_ROUND	(ROUNDS / 2)
#define MAX_ENGINES	16
#define SEED_VICTIM	0x41

/* The victim's keys, as the attacker is told them: the worst case. */
struct keys {
	uint64_t iova[2];
	uint32_t rkey[2];
	uint32_t round;
};

struct tally {
	uint32_t engines;
	uint32_t tries;
	uint32_t landed;	/* a WRITE that completed */
	uint32_t leaked;	/* a READ that completed or brought bytes */
	uint32_t status[32];	/* how the attacks completed: -1 for none */
};

struct engine {
	uint32_t qpn;
	uint32_t psn;
};

#define ANY_OWNER	NULL

struct attacker {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
};

/*
 * QPs on rxe0 as any user sees them, of @owner (its "comm" in `rdma res`:
 * "[kvreg]" for kvreg's) or with number @qpn: RC QPs in RTS whose remote
 * QP is themselves, with the PSN each expects next.
 */
static uint32_t list_engines(struct engine *e, const char *owner,
			     uint32_t qpn)
{
	FILE *f = popen("rdma res show qp 2>/dev/null", "r");
	uint32_t n = 0, lq, rq, psn;
	char line[1024];
	const char *at;

	CHECK(f, "popen rdma res");
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "link rxe0/") ||
		    (owner && !strstr(line, owner)) ||
		    !strstr(line, "state RTS"))
			continue;
		at = strstr(line, "lqpn ");
		if (!at || sscanf(at, "lqpn %u", &lq) != 1)
			continue;
		at = strstr(line, "rqpn ");
		if (!at || sscanf(at, "rqpn %u", &rq) != 1 || rq != lq ||
		    (!owner && lq != qpn))
			continue;
		at = strstr(line, "rq-psn ");
		if (!at || sscanf(at, "rq-psn %u", &psn) != 1)
			continue;
		if (n < MAX_ENGINES)
			e[n++] = (struct engine){ .qpn = lq, .psn = psn };
	}
	CHECK(pclose(f) == 0, "rdma res show qp failed");
	return n;
}

/* The port's RoCE v2 GID mapped from IPv4: the one the engines use. */
static void find_gid(struct attacker *a)
{
	char path[128], type[32];
	FILE *f;
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/%d",
			 i);
		f = fopen(path, "r");
		if (!f)
			continue;
		type[0] = 0;
		if (!fgets(type, sizeof(type), f))
			type[0] = 0;
		fclose(f);
		if (!strstr(type, "v2") || ibv_query_gid(a->ctx, 1, i, &a->gid))
			continue;
		if (!a->gid.raw[0] && a->gid.raw[10] == 0xff &&
		    a->gid.raw[11] == 0xff) {
			a->gid_index = i;
			return;
		}
	}
	kvt_die(__FILE__, __LINE__, "no IPv4-mapped RoCE v2 GID on rxe0");
}

static void attacker_open(struct attacker *a)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	CHECK(list, "ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "rxe0"))
			a->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	CHECK(a->ctx, "open rxe0 as an unprivileged user");
	a->pd = ibv_alloc_pd(a->ctx);
	a->cq = ibv_create_cq(a->ctx, 4, NULL, NULL, 0);
	a->buf = kvt_map_anon(SZ_4K);
	CHECK(a->pd && a->cq, "pd, cq");
	a->mr = ibv_reg_mr(a->pd, a->buf, SZ_4K, IBV_ACCESS_LOCAL_WRITE);
	CHECK(a->mr, "ibv_reg_mr");
	find_gid(a);
}

/*
 * @qp through INIT, RTR and RTS to QP @dest on the host's own GID, taking
 * @access from it, expecting @rq_psn and sending from @sq_psn.
 */
static void connect_rc(struct attacker *a, struct ibv_qp *qp, uint32_t dest,
		       int access, uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};

	CHECK(!ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "INIT");
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = dest;
	at.rq_psn = rq_psn;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 12;
	at.ah_attr.is_global = 1;
	at.ah_attr.grh.dgid = a->gid;
	at.ah_attr.grh.sgid_index = a->gid_index;
	at.ah_attr.grh.hop_limit = 64;
	at.ah_attr.port_num = 1;
	CHECK(!ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER), "RTR");
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	/* A dropped packet fails in a few tens of ms, not seconds. */
	at.timeout = 12;
	at.retry_cnt = 1;
	at.sq_psn = sq_psn;
	at.max_rd_atomic = 1;
	CHECK(!ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC), "RTS");
}

static struct ibv_qp *new_qp(struct attacker *a)
{
	struct ibv_qp_init_attr init = {
		.send_cq = a->cq, .recv_cq = a->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct ibv_qp *qp = ibv_create_qp(a->pd, &init);

	CHECK(qp, "ibv_create_qp");
	return qp;
}

/* An RC QP of the attacker's, connected to @e as if it were its peer. */
static struct ibv_qp *aim(struct attacker *a, const struct engine *e)
{
	struct ibv_qp *qp = new_qp(a);

	connect_rc(a, qp, e->qpn, 0, 0, e->psn);
	return qp;
}

/* One WRITE or READ of 4 KiB at @e; -1 when nothing completed in 5 s. */
static int hit(struct attacker *a, const struct engine *e, bool write,
	       uint64_t iova, uint32_t rkey)
{
	struct ibv_qp *qp = aim(a, e);
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf, .length = SZ_4K,
		.lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = iova, .rkey = rkey },
	}, *bad;
	double until = kvt_now() + 5;
	struct ibv_wc wc;
	int n = 0;

	memset(a->buf, write ? 0xee : 0, SZ_4K);
	CHECK(!ibv_post_send(qp, &wr, &bad), "post");
	while (kvt_now() < until && (n = ibv_poll_cq(a->cq, 1, &wc)) == 0)
		usleep(1000);
	CHECK(n >= 0, "poll");
	CHECK(!ibv_destroy_qp(qp), "destroy qp");
	return n ? (int)wc.status : -1;
}

static void count(struct tally *t, struct attacker *a, bool write, int status)
{
	uint32_t i;

	t->tries++;
	if (status >= -1 && status < 31)
		t->status[status + 1]++;
	if (write) {
		t->landed += status == IBV_WC_SUCCESS;
		return;
	}
	t->leaked += status == IBV_WC_SUCCESS;
	for (i = 0; i < SZ_4K; i++)
		if (a->buf[i]) {
			t->leaked++;
			return;
		}
}

/*
 * What round @r tries: a WRITE, then a READ, with the real keys, each key
 * at each engine over two rounds; then WRITEs with guessed keys (the real
 * index, other key bytes). A refused request leaves an engine in error
 * until the victim's next use of it, so each round is one shot an engine.
 */
static uint32_t round_rkey(const struct keys *k, uint32_t r, uint32_t j)
{
	uint32_t guess = r < 4 ? 0 : (r - 4) / 2 + 1;

	return (k->rkey[j] & ~0xffu) | ((k->rkey[j] + guess) & 0xffu);
}

static struct tally attack_round(struct attacker *a, const struct keys *k,
				 uint32_t r)
{
	struct engine e[MAX_ENGINES];
	bool write = r != 2 && r != 3;
	struct tally t = {};
	uint32_t i, j;

	t.engines = list_engines(e, "[kvreg]", 0);
	for (i = 0; i < t.engines; i++) {
		j = (i + r) & 1;
		count(&t, a, write, hit(a, &e[i], write, k->iova[j],
					round_rkey(k, r, j)));
	}
	return t;
}

/*
 * The control: a QP of the attacker's connected to itself with remote
 * write, as kvreg's engines were, and an MR it allows. Aimed at through
 * `rdma res` like an engine, the WRITE must land.
 */
static void control(struct attacker *a)
{
	struct ibv_qp *qp = new_qp(a);
	uint8_t *mine = kvt_map_anon(SZ_4K);
	struct ibv_mr *mr = ibv_reg_mr(a->pd, mine, SZ_4K,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE);
	struct engine e;
	double until;
	int status;

	CHECK(mr, "control mr");
	/* Connected to itself, as an engine is, expecting what it sends. */
	connect_rc(a, qp, qp->qp_num, IBV_ACCESS_REMOTE_WRITE, 0x123456,
		   0x123456);
	CHECK(list_engines(&e, ANY_OWNER, qp->qp_num) == 1,
	      "the control QP %u is not in rdma res", qp->qp_num);
	status = hit(a, &e, true, (uintptr_t)mine, mr->rkey);
	until = kvt_now() + 2;
	while (mine[SZ_4K - 1] != 0xee && kvt_now() < until)
		usleep(1000);
	CHECK(mine[0] == 0xee && mine[SZ_4K - 1] == 0xee,
	      "the control: a WRITE aimed through rdma res did not land (status %d): the attack does not work here",
	      status);
	printf("control: a WRITE aimed at a self-connected QP with remote write, through rdma res, landed (status %d: the answer goes to that QP)\n",
	       status);
	fflush(stdout);
	ibv_dereg_mr(mr);
	ibv_destroy_qp(qp);
}

static void attacker(int cmd, int res)
{
	struct attacker a = {};
	struct tally t;
	struct keys k;

	CHECK(!setresgid(65534, 65534, 65534) &&
	      !setresuid(65534, 65534, 65534), "setresuid");
	attacker_open(&a);
	control(&a);
	while (read(cmd, &k, sizeof(k)) == sizeof(k)) {
		t = attack_round(&a, &k, k.round);
		CHECK(write(res, &t, sizeof(t)) == sizeof(t), "report");
	}
	exit(T_PASS);
}

/* The export's first chunk, as its descriptor gives it to a peer. */
static void export_key(struct kvreg *kv, uint64_t ep, struct kvreg_mr *mr,
		       uint64_t *iova, uint32_t *rkey)
{
	static uint8_t desc[16384];
	struct kvreg_desc_chunk *c;
	struct kvreg_error err;
	size_t size;

	CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &size, &err),
		 &err);
	c = kvt_desc_chunks(desc);
	*iova = c->iova;
	*rkey = c->rkey;
}

/* The victim's own bytes still move between its registrations. */
static void own_transfer(struct kvreg *kv, uint32_t dev, struct kvreg_mr *src,
			 uint8_t *s, struct kvreg_mr *dst, uint8_t *d,
			 uint32_t seed)
{
	struct kvreg_error err;

	kvt_fill(s, LEN, seed);
	CHECK_OK(kvreg_transfer(kv, KVREG_OP_WRITE, dev, src, 0, dst, 0, LEN,
				&err), &err);
	CHECK(kvt_mismatch(d, 0, LEN, seed, 0) < 0, "own WRITE, round seed %u",
	      seed);
	memset(s, 0, LEN);
	CHECK_OK(kvreg_transfer(kv, KVREG_OP_READ, dev, src, 0, dst, 0, LEN,
				&err), &err);
	CHECK(kvt_mismatch(s, 0, LEN, seed, 0) < 0, "own READ, round seed %u",
	      seed);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_mr *victim, *src, *dst;
	uint8_t *v, *s, *d;
	uint32_t status[32] = {}, tries = 0, recoveries = 0, i;
	struct kvtr_event ev;
	FILE *tf;
	int cmd[2], res[2], wstatus;
	struct kvreg_error err;
	struct engine e[MAX_ENGINES];
	struct kvreg *kv;
	struct tally t;
	struct keys k;
	uint64_t ep[2];
	uint32_t dev, r;
	pid_t pid;

	CHECK(!pipe(cmd) && !pipe(res), "pipe");
	/* Before the file is open: the attacker never holds it. */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		close(cmd[1]);
		close(res[0]);
		attacker(cmd[0], res[1]);
	}
	close(cmd[0]);
	close(res[1]);

	kv = kvt_open();
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	v = kvt_map_anon(LEN);
	s = kvt_map_anon(LEN);
	d = kvt_map_anon(LEN);
	kvt_fill(v, LEN, SEED_VICTIM);
	CHECK_OK(kvreg_register(kv, v, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&victim, &err), &err);
	CHECK_OK(kvreg_register(kv, s, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&src, &err), &err);
	CHECK_OK(kvreg_register(kv, d, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&dst, &err), &err);
	/*
	 * REGISTER made no MR and no engine: the victim's keys are those of
	 * its exports through two endpoints, each in its own PD with its
	 * own engine.
	 */
	CHECK(!list_engines(e, "[kvreg]", 0), "REGISTER made an engine");
	for (i = 0; i < 2; i++) {
		CHECK_OK(kvreg_listen(kv, ADDR, 0, &ep[i], NULL, &err), &err);
		export_key(kv, ep[i], victim, &k.iova[i], &k.rkey[i]);
	}

	kvtr_start("kvreg_engine_retry");
	for (r = 0; r < ROUNDS; r++) {
		k.round = r;
		CHECK(write(cmd[1], &k, sizeof(k)) == sizeof(k), "tell");
		CHECK(read(res[0], &t, sizeof(t)) == sizeof(t),
		      "the attacker died in round %u", r);
		for (i = 0; i < 32; i++)
			status[i] += t.status[i];
		tries += t.tries;
		CHECK(t.engines == 2,
		      "round %u: the two exports' engines on rxe0, %u seen",
		      r, t.engines);
		CHECK(!t.landed, "round %u: %u WRITEs through an engine completed",
		      r, t.landed);
		CHECK(!t.leaked, "round %u: %u READs brought bytes through an engine",
		      r, t.leaked);
		CHECK(kvt_mismatch(v, 0, LEN, SEED_VICTIM, 0) < 0,
		      "round %u: the victim's bytes changed", r);
		/*
		 * Both engines fast-register the exports made again: one left
		 * in error by the attack is connected again, new PSNs listed
		 * for the next round, new keys given to the attacker. Neither
		 * moves data, which would leave its listed PSN behind.
		 */
		for (i = 0; i < 2; i++) {
			CHECK_OK(kvreg_unexport(kv, ep[i], victim, &err),
				 &err);
			export_key(kv, ep[i], victim, &k.iova[i], &k.rkey[i]);
		}
		if (r == REKEY_ROUND) {
			CHECK_OK(kvreg_rekey(kv, ep[0], &err), &err);
			printf("round %u: an endpoint was rekeyed\n", r);
		}
	}
	printf("%u attacks in %u rounds at two engines; completions:", tries,
	       ROUNDS);
	for (i = 0; i < 32; i++)
		if (status[i])
			printf(" %u with status %d", status[i], i - 1);
	printf("\n");
	/*
	 * An engine refuses a request by NAKing its own QP, which leaves it in
	 * error: the victim's next use of it connects it again, and says so.
	 * So each recovery is an attack that reached an engine in sequence.
	 */
	kvtr_stop();
	tf = kvtr_open();
	while (kvtr_next(tf, &ev))
		recoveries += !strcmp(ev.name, "kvreg_engine_retry");
	fclose(tf);
	printf("the engines were connected again %u times after the attacks\n",
	       recoveries);
	CHECK(recoveries == 2 * ROUNDS,
	      "%u recoveries for %u attacks: an attack missed its engine",
	      recoveries, 2 * ROUNDS);
	/* After all of it, the victim's own bytes still move both ways. */
	own_transfer(kv, dev, src, s, dst, d, 2);
	CHECK(kvt_mismatch(v, 0, LEN, SEED_VICTIM, 0) < 0,
	      "the victim's bytes changed");
	close(cmd[1]);
	CHECK(waitpid(pid, &wstatus, 0) == pid && WIFEXITED(wstatus) &&
	      WEXITSTATUS(wstatus) == T_PASS, "the attacker failed");
	CHECK_OK(kvreg_unlisten(kv, ep[0], &err), &err);
	CHECK_OK(kvreg_unlisten(kv, ep[1], &err), &err);
	CHECK_OK(kvreg_deregister(kv, dst, &err), &err);
	CHECK_OK(kvreg_deregister(kv, src, &err), &err);
	CHECK_OK(kvreg_deregister(kv, victim, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}
