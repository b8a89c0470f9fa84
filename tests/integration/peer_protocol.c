// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A hostile exporter: a plain librdmacm listener that accepts a kvreg
 * importer (kvreg's private data, any secret) and then puts into the
 * importer's keepalive receive what no kvreg endpoint sends: a SEND with
 * a payload, a SEND with immediate data, a SEND with Invalidate, one per
 * connection. Each time the importer must cut the
 * connection (its rail LOST, PEER_PROTOCOL as the rail's reason), post no
 * receive again on it, and connect again only after a pause that doubles
 * with each offence: at least 4, 8 and 16 s, timed by the exporter from
 * its SEND to the next connection request. The importer's own
 * registration moves bytes afterwards.
 *
 * The Invalidate names a throwaway registration of the importer's own:
 * rxe (and a NIC, in the importer's PD) invalidates it before the
 * importer sees the completion, as docs/remote.md, "Not yet", says. Of
 * a key no MR has, rxe errors the importer's QP instead, which the
 * importer takes as a lost connection, as a dead link: no penalty.
 */
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kvdesc.h"
#include "kvhostile.h"
#include "kvtransfer.h"

#define ADDR		"192.0.2.1"
#define ROUNDS		3
#define LEN		(4 * SZ_4K)
/* The throwaway registration's rkey, set before the exporter forks. */
static uint32_t throwaway_rkey;

static const char *const what[ROUNDS] = {
	"a SEND with a payload", "a SEND with immediate data",
	"a SEND with Invalidate",
};

/* One accepted connection of the hostile exporter. */
struct evil_conn {
	struct kvt_hostile h;
	uint8_t buf[64];
};

static void evil_accept(struct rdma_cm_id *id)
{
	struct evil_conn *c = calloc(1, sizeof(*c));

	CHECK(c, "calloc");
	id->context = c;
	kvt_hostile_accept(id, &c->h, c->buf, sizeof(c->buf));
}

/* Round @r's offence, on an established connection. */
static void evil_send(struct rdma_cm_id *id, int r)
{
	struct evil_conn *c = id->context;
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf, .length = sizeof(c->buf),
		.lkey = c->h.mr->lkey,
	};
	struct ibv_send_wr wr = { .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	double until = kvt_now() + 10;
	int got = 0;

	if (r == 0) {
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	} else if (r == 1) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(0x4b565247);
	} else {
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.invalidate_rkey = throwaway_rkey;
	}
	CHECK(!ibv_post_send(id->qp, &wr, &bad), "post %s: %s", what[r],
	      strerror(errno));
	while (!got && kvt_now() < until)
		got = ibv_poll_cq(c->h.cq, 1, &wc);
	printf("hostile exporter: %s, completion %s\n", what[r],
	       got == 1 ? ibv_wc_status_str(wc.status) : "none");
	fflush(stdout);
}

static void evil_free(struct rdma_cm_id *id)
{
	struct evil_conn *c = id->context;

	kvt_hostile_free(id, &c->h);
	free(c);
}

/*
 * The exporter: each round, accept, say so on @ready_fd and wait for the
 * word on @go_fd (so the importer sees each cut before the next), send
 * the offence, and time the next connection request from the importer's
 * mend. Reports the gaps.
 */
static void evil_exporter(int port_fd, int ready_fd, int go_fd, int gaps_fd)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_event *ev;
	double sent = 0, gap[ROUNDS];
	uint16_t port = kvt_rdma_listen(ADDR, &ch, &listen_id);
	int r = 0;

	CHECK(write(port_fd, &port, sizeof(port)) == sizeof(port), "port");
	while (r <= ROUNDS) {
		struct rdma_cm_id *id;
		enum rdma_cm_event_type type;

		CHECK(!rdma_get_cm_event(ch, &ev), "rdma_get_cm_event: %s",
		      strerror(errno));
		type = ev->event;
		id = ev->id;
		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			if (r)
				gap[r - 1] = kvt_now() - sent;
			if (r == ROUNDS)
				break;
			evil_accept(id);
		} else if (type == RDMA_CM_EVENT_ESTABLISHED) {
			char byte;

			CHECK(write(ready_fd, "e", 1) == 1, "ready");
			CHECK(read(go_fd, &byte, 1) == 1, "go");
			evil_send(id, r);
			sent = kvt_now();
			r++;
		} else if (type == RDMA_CM_EVENT_DISCONNECTED) {
			evil_free(id);
		}
	}
	CHECK(write(gaps_fd, gap, sizeof(gap)) == sizeof(gap), "gaps");
	/* The importer's last request is left unanswered; it times out. */
	pause();
}

/* The rail of the hostile exporter's group, as kvreg_conns() shows it. */
static bool rail_cut(struct kvreg *kv)
{
	struct kvreg_conn_info ci[16];
	struct kvreg_error err;
	unsigned int n, i;

	CHECK_OK(kvreg_conns(kv, ci, 16, &n, &err), &err);
	for (i = 0; i < n && i < 16; i++)
		if (ci[i].kind == KVREG_CONN_KIND_ACTIVE &&
		    ci[i].state == KVREG_CONN_STATE_LOST &&
		    ci[i].mend_reason == KVREG_REASON_PEER_PROTOCOL)
			return true;
	return false;
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	int port_pipe[2], gaps_pipe[2], ready_pipe[2], go_pipe[2], status, r;
	char byte;
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *a, *b, *c;
	struct kvreg_remote *rem;
	struct kvreg_error err;
	double gap[ROUNDS], t0;
	static uint8_t desc[256];
	uint8_t *pa, *pb, *pc;
	uint16_t port;
	size_t n;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	if (system("modprobe ib_uverbs 2>/dev/null") != 0)
		printf("modprobe ib_uverbs failed: built in, I hope\n");
	pc = kvt_map_anon(SZ_4K);
	CHECK_OK(kvreg_register(kv, pc, SZ_4K, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &c, &err), &err);
	throwaway_rkey = kvreg_mr_key_at(c, devs[0].index, 0)->rkey;
	CHECK(!pipe(port_pipe) && !pipe(gaps_pipe) && !pipe(ready_pipe) &&
	      !pipe(go_pipe), "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		kvreg_close(kv);
		evil_exporter(port_pipe[1], ready_pipe[1], go_pipe[0],
			      gaps_pipe[1]);
	}
	CHECK(read(port_pipe[0], &port, sizeof(port)) == sizeof(port),
	      "the hostile exporter did not start");
	pa = kvt_map_anon(LEN);
	pb = kvt_map_anon(LEN);
	CHECK_OK(kvreg_register(kv, pa, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &a, &err), &err);
	CHECK_OK(kvreg_register(kv, pb, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &b, &err), &err);
	n = kvt_desc_to(desc, ADDR, port);
	CHECK(n, "a descriptor to %s", ADDR);
	CHECK_OK(kvreg_import(kv, desc, n, 0, &rem, &err), &err);

	for (r = 0; r < ROUNDS; r++) {
		/* Connected (the mend's doing after the first), then the go. */
		CHECK(read(ready_pipe[0], &byte, 1) == 1,
		      "no connection of the importer's for round %d", r);
		CHECK(write(go_pipe[1], "g", 1) == 1, "go");
		t0 = kvt_now();
		while (!rail_cut(kv) && kvt_now() - t0 < 20)
			usleep(20 * 1000);
		CHECK(rail_cut(kv), "after %s the rail was not cut with PEER_PROTOCOL",
		      what[r]);
		printf("importer: cut with PEER_PROTOCOL after %s\n", what[r]);
	}
	CHECK(read(gaps_pipe[0], gap, sizeof(gap)) == sizeof(gap),
	      "the hostile exporter failed");
	for (r = 0; r < ROUNDS; r++) {
		double least = 4 << r;

		printf("after %s: the next request came %.1f s later (at least %.0f s)\n",
		       what[r], gap[r], least);
		CHECK(gap[r] >= least - 0.5,
		      "after %s the mend came back in %.1f s, under its %.0f s pause",
		      what[r], gap[r], least);
	}

	/* The importer's own keys are untouched: its bytes move. */
	kvt_fill(pa, LEN, 0x61);
	CHECK_OK(kvreg_transfer(kv, KVREG_OP_WRITE, devs[0].index, a, 0, b, 0,
				LEN, &err), &err);
	CHECK(kvt_mismatch(pb, 0, LEN, 0x61, 0) < 0, "the importer's bytes");
	CHECK_OK(kvreg_unimport(kv, rem, &err), &err);
	CHECK_OK(kvreg_deregister(kv, c, &err), &err);
	CHECK_OK(kvreg_deregister(kv, b, &err), &err);
	CHECK_OK(kvreg_deregister(kv, a, &err), &err);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	kvreg_close(kv);
	return T_PASS;
}
