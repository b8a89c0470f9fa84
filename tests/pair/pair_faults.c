// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Failures between two guests, mid-batch: the importer keeps a queue of
 * WRITEs full while the exporter removes its RDMA device, then (after it
 * added the device again and exported anew, and the importer connected
 * again) while the exporter takes its link down. Every operation in
 * flight completes: those after the failure with the reason and the
 * peer's address, the last within the bound of the first failure, and
 * the connection is LOST for later ones. Some were in flight when the
 * fault came. Each WRITE carries a pattern of its own, and the exporter
 * finds in its pool the last one that completed at each place.
 * The exporter's own end of the connection is LOST within the bound
 * too: with its link down no DREQ reaches it, only its keepalive can.
 * While it is LOST and the link down, another process's close and a
 * kill -9 of a third return within 2 s: they wait for no one else's.
 *   pair_faults export DIR ADDR NETDEV RXE
 *   pair_faults import DIR
 */
#include <arpa/inet.h>
#include <signal.h>
#include <sys/wait.h>

#include "kvpair.h"

#define LEN	(8ULL << 20)
#define PAGE	(64 * 1024)
#define DEPTH	64
#define BOUND_S	10.0
/* Each step of the other side takes seconds: a minute means it failed. */
#define STEP_S	90

static size_t get_step(const char *dir, const char *name, void *data,
		       size_t cap)
{
	return get_file_within(dir, name, data, cap, STEP_S);
}

static void run(const char *cmd)
{
	printf("exporter: %s\n", cmd);
	fflush(stdout);
	CHECK(system(cmd) == 0, "%s failed", cmd);
}

/* The passive ends of this process: none established after @bound s. */
static double passive_gone(struct kvreg *kv, double bound)
{
	struct kvreg_conn_info ci[16];
	struct kvreg_error err;
	double t0 = kvt_now();
	unsigned int n, i;
	bool up;

	do {
		CHECK_OK(kvreg_conns(kv, ci, 16, &n, &err), &err);
		up = false;
		for (i = 0; i < n && i < 16; i++)
			up |= ci[i].pid == (uint32_t)getpid() &&
			      ci[i].kind == KVREG_CONN_KIND_PASSIVE &&
			      ci[i].state != KVREG_CONN_STATE_LOST;
		if (!up)
			return kvt_now() - t0;
		usleep(100 * 1000);
	} while (kvt_now() - t0 < bound);
	return -1;
}

/* A child's exit status within @limit s, or -1: it is stuck. */
static int wait_child(pid_t pid, double limit, double *took)
{
	double t0 = kvt_now();
	int status;

	while (kvt_now() - t0 < limit) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			*took = kvt_now() - t0;
			return WIFEXITED(status) ? WEXITSTATUS(status) :
			       128 + WTERMSIG(status);
		}
		usleep(10 * 1000);
	}
	return -1;
}

/*
 * In a child: a file of its own, as any user (with the only device's
 * link down it can register nothing).
 */
static struct kvreg *other_user(void)
{
	struct kvreg *kv = kvt_open();
	struct kvreg_error err;
	struct kvreg_stats st;

	CHECK_OK(kvreg_stats(kv, &st, &err), &err);
	return kv;
}

/*
 * This process's end of a connection is LOST and its port down: the
 * work that lets it go waits for the port. Another process's close, and
 * a kill -9 of a third, must not wait with it.
 */
static void others_not_held(void)
{
	double took;
	int ack[2], ret;
	pid_t pid;
	char b;

	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		kvreg_close(other_user());
		_exit(T_PASS);
	}
	ret = wait_child(pid, 10, &took);
	CHECK(ret == T_PASS && took < 2.0, "another process's open and "
	      "close, with a LOST connection behind a down link: status %d "
	      "after %.1f s (more than 10 s: -1)", ret, took);
	printf("exporter: another process opened and closed in %.2f s\n",
	       took);

	CHECK(!pipe(ack), "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		other_user();
		CHECK(write(ack[1], "r", 1) == 1, "ack");
		pause();
		_exit(T_FAIL);
	}
	CHECK(read(ack[0], &b, 1) == 1, "the third process did not start");
	close(ack[0]);
	close(ack[1]);
	kill(pid, SIGKILL);
	ret = wait_child(pid, 10, &took);
	CHECK(ret == 128 + SIGKILL && took < 2.0, "kill -9 of a process with "
	      "kvreg open: status %d after %.1f s (more than 10 s: -1)",
	      ret, took);
	printf("exporter: a process killed with SIGKILL was gone in %.2f s\n",
	       took);
}

/*
 * Every slot of @pool the importer's storm before @gone names holds the
 * pattern of the last WRITE that completed there.
 */
static void check_pool(const char *dir, const char *gone,
		       const uint8_t *pool)
{
	static uint32_t want[LEN / PAGE];
	unsigned int k, checked = 0;
	char name[64];
	int64_t bad;

	snprintf(name, sizeof(name), "%s-expect", gone);
	CHECK(get_step(dir, name, want, sizeof(want)) == sizeof(want),
	      "%s: short", name);
	for (k = 0; k < LEN / PAGE; k++) {
		if (!want[k])
			continue;
		checked++;
		bad = kvt_mismatch(pool, (uint64_t)k * PAGE, PAGE, want[k],
				   (uint64_t)k * PAGE);
		CHECK(bad < 0, "%s: slot %u does not hold the last WRITE that "
		      "completed there (seed %#x), from byte %lld", gone, k,
		      want[k], (long long)(bad - (int64_t)k * PAGE));
	}
	printf("exporter: %s: each of %u slots holds its last completed "
	       "WRITE\n", gone, checked);
}

/* Register @pool on every device, listen, and write the descriptor. */
static struct kvreg_mr *export_pool(struct kvreg *kv, uint8_t *pool,
				    const char *dir, const char *name,
				    const char *addr)
{
	uint8_t desc[65536];
	struct kvreg_error err;
	struct kvreg_mr *mr;
	uint64_t ep;
	size_t n;

	CHECK_OK(kvreg_register(kv, pool, LEN, KVREG_ACCESS_ALL, 0, &mr, &err),
		 &err);
	CHECK_OK(kvreg_listen(kv, addr, 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &n, &err), &err);
	put_file(dir, name, desc, n);
	return mr;
}

static int exporter(const char *dir, const char *addr, const char *netdev,
		    const char *rxe)
{
	struct kvreg *kv = kvt_open();
	uint8_t *pool = kvt_map_anon(LEN);
	struct kvreg_error err;
	struct kvreg_mr *mr;
	char cmd[256], b[16];
	double gone;

	/*
	 * The device first: its endpoint and MRs go with it, and come back
	 * as a new export on the device added again.
	 */
	mr = export_pool(kv, pool, dir, "fault-desc", addr);
	get_step(dir, "go-dev", b, sizeof(b));
	snprintf(cmd, sizeof(cmd), "rdma link delete %s", rxe);
	run(cmd);
	put_file(dir, "dev-gone", "1", 1);
	get_step(dir, "done-dev", b, sizeof(b));
	check_pool(dir, "dev-gone", pool);
	snprintf(cmd, sizeof(cmd), "rdma link add %s type rxe netdev %s", rxe,
		 netdev);
	run(cmd);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	mr = export_pool(kv, pool, dir, "fault-desc2", addr);

	/* Then the link, last: nothing connects after it. */
	get_step(dir, "go-link", b, sizeof(b));
	snprintf(cmd, sizeof(cmd), "ip link set %s down", netdev);
	run(cmd);
	put_file(dir, "link-down", "1", 1);
	gone = passive_gone(kv, BOUND_S);
	CHECK(gone >= 0, "the link down for %.0f s: the exporter's end of the "
	      "connection is still up (its keepalive did not let it go)",
	      BOUND_S);
	printf("exporter: its end of the connection let go %.1f s after the "
	       "link went down\n", gone);
	others_not_held();
	get_step(dir, "done-link", b, sizeof(b));
	check_pool(dir, "link-down", pool);
	snprintf(cmd, sizeof(cmd), "ip link set %s up", netdev);
	run(cmd);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvreg_close(kv);
	printf("exporter: device removal and link down done\n");
	return T_PASS;
}

/*
 * The storm's WRITEs go to slots of PAGE, one in flight on each at most,
 * each with a pattern of its own (its number in the seed, its offset in
 * the bytes). What the exporter's pool must hold at a slot is the pattern
 * of the last WRITE that completed there; a slot whose last WRITE failed
 * may hold part of it, and is not checked. The importer hands the
 * exporter that list (0: no check) in a file.
 */
#define NSLOT		(LEN / PAGE)
#define STORM_SEED	0x4200000u

struct storm {
	unsigned int ok, failed, posted_failed, inflight;
	double t_go, t_first_fail, t_done;
	bool busy[NSLOT];
	uint32_t next[NSLOT];	/* the WRITE in flight's seed */
	uint32_t want[NSLOT];	/* what the pool must hold, or 0 */
};

static void storm_reap(struct kvreg *kv, struct storm *s, uint32_t want_ip,
		       unsigned int timeout_ms)
{
	struct kvreg_completion comp[DEPTH];
	struct kvreg_error err;
	unsigned int n, i;

	CHECK_OK(kvreg_reap(kv, comp, DEPTH, 1, timeout_ms, &n, &err), &err);
	for (i = 0; i < n; i++) {
		const struct kvreg_error *e = &comp[i].error;
		unsigned int k = comp[i].user_data % NSLOT;

		s->inflight--;
		s->busy[k] = false;
		if (!comp[i].status) {
			CHECK(!s->failed, "op %llu succeeded after a failure",
			      (unsigned long long)comp[i].user_data);
			s->want[k] = s->next[k];
			s->ok++;
			continue;
		}
		s->want[k] = 0;
		s->posted_failed++;
		if (!s->failed++)
			s->t_first_fail = kvt_now();
		CHECK(e->reason == KVREG_REASON_CONN_LOST &&
		      comp[i].status == -ENOTCONN, "op %llu: status %d reason "
		      "%u, want CONN_LOST", (unsigned long long)comp[i].user_data,
		      comp[i].status, e->reason);
		CHECK(e->addr_family == AF_INET &&
		      !memcmp(e->addr, &want_ip, 4),
		      "the failure does not name the peer's address");
	}
}

/*
 * Keep DEPTH WRITEs in flight, tell the exporter to fail (@go), and go on
 * until the failure has come and every operation has completed. Some of
 * them must have been in flight when it came, and failed for it. The
 * slots' expected bytes go to the exporter as "@gone-expect".
 */
static void storm(struct kvreg *kv, struct kvreg_mr *local, uint8_t *mine,
		  struct kvreg_remote *r, const char *dir, const char *go,
		  const char *gone, uint32_t peer_ip)
{
	static struct storm s;
	struct kvreg_error err;
	struct kvreg_op op;
	uint64_t next = 0;
	unsigned int acc, k = 0, checked = 0;
	char m[512];
	int ret = 0;

	memset(&s, 0, sizeof(s));
	/* The fault comes between this and the exporter's @gone file. */
	put_file(dir, go, "1", 1);
	s.t_go = kvt_now();
	for (;;) {
		while (!s.failed && s.inflight < DEPTH) {
			uint64_t off;

			/* The next slot with nothing in flight. */
			for (k = next % NSLOT; s.busy[k]; k = (k + 1) % NSLOT)
				;
			off = (uint64_t)k * PAGE;
			s.next[k] = STORM_SEED + (uint32_t)next;
			kvt_fill_from(mine + off, PAGE, s.next[k], off);
			kvreg_op_prep(&op, KVREG_OP_WRITE, local, off, r, off,
				      PAGE, next * NSLOT + k);
			ret = kvreg_submit(kv, &op, 1, &acc, &err);
			if (ret == -ENOTCONN || ret == -EAGAIN)
				break;
			CHECK_OK(ret, &err);
			if (!acc)
				break;
			s.busy[k] = true;
			s.inflight++;
			next++;
		}
		if (s.failed && !s.inflight)
			break;
		if (!s.inflight) {
			/* Refused before posting: the connection is lost. */
			CHECK(ret == -ENOTCONN &&
			      err.reason == KVREG_REASON_CONN_LOST,
			      "nothing in flight, and submit says %d", ret);
			if (!s.failed++)
				s.t_first_fail = kvt_now();
			break;
		}
		storm_reap(kv, &s, peer_ip, 200);
		CHECK(kvt_now() - s.t_go < 2 * BOUND_S + 10,
		      "%.0f s after %s, %u operations in flight and no failure",
		      kvt_now() - s.t_go, go, s.inflight);
	}
	s.t_done = kvt_now();
	CHECK(s.posted_failed, "%s: no operation was in flight when it "
	      "failed (%u ok, then refused before posting)", go, s.ok);
	/* The exporter's own step (a command, a file) is a second at most. */
	get_step(dir, gone, m, sizeof(m));
	CHECK(s.t_first_fail - s.t_go <= BOUND_S + 2 &&
	      s.t_done - s.t_first_fail <= BOUND_S,
	      "%s: first failure %.1f s after, the last of it %.1f s later; "
	      "the bound is %.0f s", go, s.t_first_fail - s.t_go,
	      s.t_done - s.t_first_fail, BOUND_S);
	/* Later ones are refused at once, with the reason. */
	ret = kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0, PAGE,
				    &err);
	kvreg_format_error(&err, ret, m, sizeof(m));
	CHECK(ret == -ENOTCONN && err.reason == KVREG_REASON_CONN_LOST,
	      "a transfer after %s: %s", gone, m);
	for (k = 0; k < NSLOT; k++)
		checked += !!s.want[k];
	CHECK(checked, "%s: no WRITE completed before the failure", go);
	snprintf(m, sizeof(m), "%s-expect", gone);
	put_file(dir, m, s.want, sizeof(s.want));
	printf("%s: %u ok, then %u failed %.1f s after it (%u of them in "
	       "flight; the last %.1f s later); %u slots to check; next: ",
	       gone, s.ok, s.failed, s.t_first_fail - s.t_go, s.posted_failed,
	       s.t_done - s.t_first_fail, checked);
	kvreg_format_error(&err, -ENOTCONN, m, sizeof(m));
	printf("%s\n", m);
}

static int importer(const char *dir)
{
	struct kvreg *kv = kvt_open();
	uint8_t *mine = kvt_map_anon(LEN);
	static uint8_t desc[65536];
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_mr *local;
	uint32_t peer_ip;
	size_t n;

	CHECK(inet_pton(AF_INET, "192.0.2.1", &peer_ip) == 1, "inet_pton");
	n = get_file(dir, "fault-desc", desc, sizeof(desc));
	r = kvp_import(kv, desc, n, "192.0.2.1");
	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL,
				1ULL << kvreg_remote_device(r), &local, &err),
		 &err);
	storm(kv, local, mine, r, dir, "go-dev", "dev-gone", peer_ip);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	put_file(dir, "done-dev", "1", 1);

	n = get_step(dir, "fault-desc2", desc, sizeof(desc));
	r = kvp_import(kv, desc, n, "192.0.2.1");
	storm(kv, local, mine, r, dir, "go-link", "link-down", peer_ip);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	put_file(dir, "done-link", "1", 1);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "export"))
		return exporter(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 3 && !strcmp(argv[1], "import"))
		return importer(argv[2]);
	fprintf(stderr, "usage: pair_faults export DIR ADDR NETDEV RXE | "
		"import DIR\n");
	return T_FAIL;
}
