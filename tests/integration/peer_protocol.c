// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A hostile exporter: a plain librdmacm listener that accepts a kvreg
 * importer (kvreg's private data, any secret) and then sends the importer
 * what no kvreg endpoint sends: a SEND with a payload, a SEND with
 * immediate data, a SEND with Invalidate, one per connection. The
 * importer posts no receive (wire version 2), so none of them lands: each
 * ends at the hostile side in RNR, its retries spent, and the
 * Invalidate, which names the key of an export of the importer's own,
 * leaves it valid: bytes still move through it. Under version 1 the importer
 * kept receives for a keepalive SEND, rxe took the Invalidate into one
 * (and invalidated the key before kvreg saw the completion), and the
 * first SEND here completed with success.
 *
 * The hostile QP is in the error state after its SEND: the importer's
 * keepalive WRITE then fails, the rail is mended, and the next round
 * begins on the new connection.
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
/* The named export's rkey, set before the exporter forks. */
static uint32_t named_rkey;

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

/*
 * Round @r's offence, on an established connection: how it ended, an
 * ibv_wc_status, or -1 for no completion in 10 s.
 */
static int evil_send(struct rdma_cm_id *id, int r)
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
		wr.invalidate_rkey = named_rkey;
	}
	CHECK(!ibv_post_send(id->qp, &wr, &bad), "post %s: %s", what[r],
	      strerror(errno));
	while (!got && kvt_now() < until)
		got = ibv_poll_cq(c->h.cq, 1, &wc);
	printf("hostile exporter: %s, completion %s\n", what[r],
	       got == 1 ? ibv_wc_status_str(wc.status) : "none");
	fflush(stdout);
	return got == 1 ? (int)wc.status : -1;
}

static void evil_free(struct rdma_cm_id *id)
{
	struct evil_conn *c = id->context;

	kvt_hostile_free(id, &c->h);
	free(c);
}

/*
 * The exporter: each round, accept, say so on @ready_fd and wait for the
 * word on @go_fd, send the offence and report how it ended on @ends_fd.
 */
static void evil_exporter(int port_fd, int ready_fd, int go_fd, int ends_fd)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_event *ev;
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
			if (r == ROUNDS)
				break;
			evil_accept(id);
		} else if (type == RDMA_CM_EVENT_ESTABLISHED) {
			char byte;
			int end;

			CHECK(write(ready_fd, "e", 1) == 1, "ready");
			CHECK(read(go_fd, &byte, 1) == 1, "go");
			end = evil_send(id, r);
			CHECK(write(ends_fd, &end, sizeof(end)) == sizeof(end),
			      "ends");
			r++;
		} else if (type == RDMA_CM_EVENT_DISCONNECTED) {
			evil_free(id);
		}
	}
	/* The importer's last request is left unanswered; it times out. */
	pause();
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	int port_pipe[2], ends_pipe[2], ready_pipe[2], go_pipe[2], status, r;
	char byte;
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *a, *b, *c;
	struct kvreg_remote *rem, *rc;
	struct kvreg_error err;
	static uint8_t desc[256];
	uint64_t ep;
	int end;
	uint8_t *pa, *pb, *pc;
	uint16_t port;
	size_t n;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	kvt_uverbs();
	pc = kvt_map_anon(SZ_4K);
	CHECK_OK(kvreg_register(kv, pc, SZ_4K, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &c, &err), &err);
	/* REGISTER makes no key: the one named is c's export's, a real MR. */
	rc = kvt_self_import(kv, c, devs[0].index, &ep);
	named_rkey = le32toh(kvt_desc_chunks(kvt_self_desc)[0].rkey);
	CHECK(!pipe(port_pipe) && !pipe(ends_pipe) && !pipe(ready_pipe) &&
	      !pipe(go_pipe), "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		kvreg_close(kv);
		evil_exporter(port_pipe[1], ready_pipe[1], go_pipe[0],
			      ends_pipe[1]);
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
		CHECK(read(ends_pipe[0], &end, sizeof(end)) == sizeof(end),
		      "the hostile exporter failed in round %d", r);
		/* RNR alone says no receive was there to take it. */
		CHECK(end == IBV_WC_RNR_RETRY_EXC_ERR,
		      "%s ended in %s at the sender, not RNR: a receive of the importer's took it",
		      what[r], end < 0 ? "no completion" :
		      ibv_wc_status_str((enum ibv_wc_status)end));
		printf("importer: %s landed nowhere (RNR at the sender)\n",
		       what[r]);
	}

	/* The key the Invalidate named is still valid: bytes move to it. */
	kvt_fill(pa, SZ_4K, 0x5a);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, a, 0, rc, 0, SZ_4K,
				       &err), &err);
	CHECK(kvt_mismatch(pc, 0, SZ_4K, 0x5a, 0) < 0,
	      "the bytes through the key the Invalidate named");
	CHECK_OK(kvreg_unimport(kv, rc, &err), &err);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);

	/* The importer's own registrations are untouched: bytes move. */
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
