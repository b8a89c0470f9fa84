// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * No CM callback of kvreg's waits on kvreg. The host's CM runs every
 * user's connection events (NVMe-oF, NFS-RDMA, other processes) on one
 * worker per CPU: a kvreg callback that waited for a lock a device
 * removal holds, the removal itself waiting behind a long transfer,
 * would stall all of them.
 *
 * The removal's hold is made through debugfs inject_hold_teardown on the
 * exporter's device, for up to HOLD_MS; the test ends it (a signal to the
 * holder) once it has seen what it looks for, so a slow kernel (the debug
 * one under emulation) stretches the hold instead of outrunning it. During
 * it:
 * - FLOOD requests with the export's secret reach kvreg's endpoint: the
 *   host's CM hands each to kvreg (a connection id at the endpoint's port
 *   for each, in 'rdma res'), and kvreg answers none before the hold ends
 *   (its accept work waits for the device: the wait happened);
 * - another CM user of the host, plain librdmacm on a port of its own,
 *   connects and moves a message each way, bytes checked.
 * Both are seen with the hold still in force. After it, every request is
 * accepted and each peer READs the export, bytes checked.
 *
 * Shown to fail with a build whose request callback waits for the
 * device's lock, as kvreg's did before it queued the accept: the
 * callbacks then hold the CM's workers, and the other user gets through
 * only once the hold is over.
 */
#include <poll.h>

#include "kvpeer.h"
#include "kvexport.h"

#define LEN		(4 * SZ_4K)
#define ADDR		"192.0.2.1"
#define HOLD_FILE	"/sys/kernel/debug/kvreg/inject_hold_teardown"
#define HOLD_MS		60000	/* the module's longest */
#define FLOOD		16
#define POOL_SEED	0x3c
#define MSG_LEN		64

static int holds(void)
{
	FILE *f = fopen(HOLD_FILE, "r");
	int n = -1;

	CHECK(f && fscanf(f, "%d", &n) == 1, "read %s", HOLD_FILE);
	fclose(f);
	return n;
}

/* A child that holds device @index's teardown lock until hold_end(). */
static pid_t hold_start(uint32_t index)
{
	char text[32];
	pid_t pid;
	int i;

	CHECK(holds() == 0, "a hold is in force before the test made one");
	snprintf(text, sizeof(text), "%u %u", index, HOLD_MS);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(kvt_put(HOLD_FILE, text) ? 1 : 0);
	}
	for (i = 0; i < 200 && holds() != 1; i++)
		usleep(10 * 1000);
	CHECK(holds() == 1, "the hold did not start");
	return pid;
}

/*
 * The holder sleeps interruptibly: SIGTERM ends its hold and then it.
 * It must still be holding: one that ended first, its HOLD_MS over,
 * exited by itself.
 */
static void hold_end(pid_t pid)
{
	int status;

	CHECK(!kill(pid, SIGTERM), "kill the holder");
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	      "the hold had ended before the test ended it (status 0x%x): "
	      "the test outran HOLD_MS", status);
	CHECK(holds() == 0, "a hold is still in force");
}

/* Connection ids the host's CM made at @port for requests to it. */
static unsigned int conn_ids_at(uint16_t port)
{
	char line[512], at[64];
	unsigned int n = 0;
	FILE *f;

	snprintf(at, sizeof(at), "src-addr %s:%u ", ADDR, port);
	f = popen("rdma res show cm_id 2>/dev/null", "r");
	CHECK(f, "popen");
	while (fgets(line, sizeof(line), f))
		n += strstr(line, at) && strstr(line, "state CONNECT ");
	CHECK(pclose(f) == 0, "'rdma res show cm_id' failed");
	return n;
}

/* An answer (an event) waiting on @p's channel. */
static bool answered(struct kvt_peer *p)
{
	struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

static struct rdma_cm_event *next_event(struct rdma_event_channel *ch,
					enum rdma_cm_event_type want,
					const char *who)
{
	struct rdma_cm_event *ev;

	CHECK(!rdma_get_cm_event(ch, &ev), "%s: rdma_get_cm_event: %s", who,
	      strerror(errno));
	CHECK(ev->event == want, "%s: %s, want %s", who,
	      rdma_event_str(ev->event), rdma_event_str(want));
	return ev;
}

struct side {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t buf[2 * MSG_LEN];
};

/* PD, CQ, QP and MR on @s->id, a receive posted into the buffer's top. */
static void side_setup(struct side *s)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	s->pd = ibv_alloc_pd(s->id->verbs);
	s->cq = ibv_create_cq(s->id->verbs, 8, NULL, NULL, 0);
	CHECK(s->pd && s->cq, "pd, cq");
	qa.send_cq = qa.recv_cq = s->cq;
	CHECK(!rdma_create_qp(s->id, s->pd, &qa), "create_qp: %s",
	      strerror(errno));
	s->mr = ibv_reg_mr(s->pd, s->buf, sizeof(s->buf),
			   IBV_ACCESS_LOCAL_WRITE);
	CHECK(s->mr, "ibv_reg_mr");
	sge = (struct ibv_sge){ (uintptr_t)s->buf + MSG_LEN, MSG_LEN,
				s->mr->lkey };
	CHECK(!ibv_post_recv(s->id->qp, &wr, &bad), "post_recv");
}

static void side_wait(struct side *s, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;
	int n;

	while (!(n = ibv_poll_cq(s->cq, 1, &wc)))
		;
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == op,
	      "completion: %s, opcode %d", ibv_wc_status_str(wc.status),
	      wc.opcode);
}

/* @from SENDs its buffer's bottom, filled with @seed; @to checks it. */
static void side_send(struct side *from, struct side *to, uint32_t seed)
{
	struct ibv_sge sge = { (uintptr_t)from->buf, MSG_LEN,
			       from->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	kvt_fill(from->buf, MSG_LEN, seed);
	CHECK(!ibv_post_send(from->id->qp, &wr, &bad), "post_send");
	side_wait(from, IBV_WC_SEND);
	side_wait(to, IBV_WC_RECV);
	CHECK(kvt_mismatch(to->buf + MSG_LEN, 0, MSG_LEN, seed, 0) < 0,
	      "the other CM user's message differs at %lld",
	      (long long)kvt_mismatch(to->buf + MSG_LEN, 0, MSG_LEN, seed, 0));
}

static void side_free(struct side *s)
{
	rdma_destroy_qp(s->id);
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(s->cq);
	ibv_dealloc_pd(s->pd);
	rdma_destroy_id(s->id);
}

/*
 * Another user of the host's CM, which knows nothing of kvreg: listen,
 * connect to itself, and move a message each way.
 */
static void other_cm_user(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_conn_param param = { .retry_count = 6,
					 .rnr_retry_count = 6 };
	struct rdma_cm_id *listener;
	struct rdma_cm_event *ev;
	struct side srv = { 0 }, cli = { 0 };

	CHECK(sch && cch, "event channels");
	inet_pton(AF_INET, ADDR, &sin.sin_addr);
	CHECK(!rdma_create_id(sch, &listener, NULL, RDMA_PS_TCP), "create_id");
	CHECK(!rdma_bind_addr(listener, (struct sockaddr *)&sin), "bind: %s",
	      strerror(errno));
	CHECK(!rdma_listen(listener, 4), "listen: %s", strerror(errno));
	sin.sin_port = rdma_get_src_port(listener);

	CHECK(!rdma_create_id(cch, &cli.id, NULL, RDMA_PS_TCP), "create_id");
	CHECK(!rdma_resolve_addr(cli.id, NULL, (struct sockaddr *)&sin, 2000),
	      "resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(next_event(cch, RDMA_CM_EVENT_ADDR_RESOLVED,
				     "other user"));
	CHECK(!rdma_resolve_route(cli.id, 2000), "resolve_route");
	rdma_ack_cm_event(next_event(cch, RDMA_CM_EVENT_ROUTE_RESOLVED,
				     "other user"));
	side_setup(&cli);
	CHECK(!rdma_connect(cli.id, &param), "connect: %s", strerror(errno));

	ev = next_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST, "other listener");
	srv.id = ev->id;
	rdma_ack_cm_event(ev);
	side_setup(&srv);
	CHECK(!rdma_accept(srv.id, &param), "accept: %s", strerror(errno));
	rdma_ack_cm_event(next_event(cch, RDMA_CM_EVENT_ESTABLISHED,
				     "other user"));
	rdma_ack_cm_event(next_event(sch, RDMA_CM_EVENT_ESTABLISHED,
				     "other listener"));

	side_send(&cli, &srv, 0x51);
	side_send(&srv, &cli, 0x52);

	/* The listener's own disconnect answers the DREQ (the DREP). */
	rdma_disconnect(cli.id);
	rdma_ack_cm_event(next_event(sch, RDMA_CM_EVENT_DISCONNECTED,
				     "other listener"));
	rdma_disconnect(srv.id);
	rdma_ack_cm_event(next_event(cch, RDMA_CM_EVENT_DISCONNECTED,
				     "other user"));
	side_free(&cli);
	side_free(&srv);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	static struct kvt_peer peers[FLOOD];
	struct kvt_exporter *x;
	unsigned int ids, early = 0;
	uint8_t *pool, *mine;
	uint16_t port;
	double held;
	pid_t hold;
	int i;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	kvt_uverbs();
	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	kvt_fill(pool, LEN, POOL_SEED);
	mine = kvt_map_anon((uint64_t)FLOOD * LEN);
	/* In a child: its file's lock is the one the accept work takes. */
	x = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	port = kvt_desc_path(x->desc)->port;

	hold = hold_start(devs[0].index);
	held = kvt_now();
	for (i = 0; i < FLOOD; i++)
		kvt_peer_request(&peers[i], x->desc,
				 kvt_desc_head(x->desc)->secret,
				 mine + (size_t)i * LEN, LEN, 0);
	/* Time for the requests to reach the CM, not a bound. */
	for (i = 0; i < 100 && conn_ids_at(port) < FLOOD; i++)
		usleep(20 * 1000);

	other_cm_user();

	ids = conn_ids_at(port);
	for (i = 0; i < FLOOD; i++)
		early += answered(&peers[i]);
	CHECK(holds() == 1,
	      "the hold ended before the other CM user had connected and "
	      "moved its messages: the host's CM waited on kvreg");
	if (ids != FLOOD && system("rdma res show cm_id") != 0)
		printf("rdma res show cm_id failed\n");
	CHECK(ids == FLOOD,
	      "during the hold the CM had handed %u of %u requests to kvreg "
	      "(connection ids at port %u)", ids, FLOOD, port);
	CHECK(!early,
	      "%u of %u requests were answered during the hold: kvreg's "
	      "accept did not wait for the device, the test proves nothing",
	      early, FLOOD);
	printf("during a %.1f s hold of the device's teardown lock: %u "
	       "requests with kvreg, none answered; another CM user "
	       "connected and moved 2 messages\n", kvt_now() - held, ids);
	hold_end(hold);

	for (i = 0; i < FLOOD; i++) {
		uint8_t *buf = mine + (size_t)i * LEN;

		CHECK(kvt_peer_event(&peers[i], NULL) ==
		      RDMA_CM_EVENT_ESTABLISHED,
		      "request %d was not accepted after the hold", i);
		CHECK(kvt_peer_rdma_desc(&peers[i], x->desc, buf,
					 IBV_WR_RDMA_READ) == IBV_WC_SUCCESS,
		      "peer %d's READ failed", i);
		CHECK(kvt_mismatch(buf, 0, LEN, POOL_SEED, 0) < 0,
		      "peer %d read a pool that differs at %lld", i,
		      (long long)kvt_mismatch(buf, 0, LEN, POOL_SEED, 0));
		kvt_peer_close(&peers[i], true);
	}
	printf("after the hold: %d requests accepted, each READ the export\n",
	       FLOOD);
	kvt_exporter_stop(x);
	kvreg_close(kv);
	return T_PASS;
}
