// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * kvregctl conns and kvreg_conns(): an exporter's endpoint and the two
 * ends of a connection, each with its owner, state and addresses that
 * agree with each other; the active end's counters match the operations
 * posted (synchronous and batched), with the bytes checked; a user other
 * than the owner sees none of it; the exporter killed with SIGKILL with a
 * batch unreaped leaves the active end LOST within the bound, with
 * counters that agree with the completions, and its own entries gone; a
 * batch submitted after its death is refused or fails, and none of its
 * bytes reach the dead exporter's pages; nothing is left after the last
 * unimport.
 *   conns KVREGCTL
 */
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "kvexport.h"

#define LEN	(1ULL << 20)
#define ADDR	"192.0.2.1"
#define PAGES	16
#define BIG	(LEN / PAGES)

static unsigned int list(struct kvreg *kv, struct kvreg_conn_info *ci,
			 unsigned int cap)
{
	struct kvreg_error err;
	unsigned int n;

	CHECK_OK(kvreg_conns(kv, ci, cap, &n, &err), &err);
	CHECK(n <= cap, "%u entries, room for %u", n, cap);
	return n;
}

/* The one entry of @pid and @kind, or NULL; more than one fails. */
static const struct kvreg_conn_info *
find(const struct kvreg_conn_info *ci, unsigned int n, pid_t pid,
     uint32_t kind)
{
	const struct kvreg_conn_info *hit = NULL;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (ci[i].pid != (uint32_t)pid || ci[i].kind != kind)
			continue;
		CHECK(!hit, "two entries of kind %u for pid %d", kind, pid);
		hit = &ci[i];
	}
	return hit;
}

static bool same_addr(const struct kvreg_net_addr *a,
		      const struct kvreg_net_addr *b)
{
	return a->family == b->family && a->port == b->port &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static void check_ipv4(const struct kvreg_net_addr *a, const char *ip,
		       const char *what)
{
	struct in_addr want;

	CHECK(inet_pton(AF_INET, ip, &want) == 1, "inet_pton");
	CHECK(a->family == AF_INET && !memcmp(a->addr, &want, 4) && a->port,
	      "%s: family %u port %u, want %s", what, a->family, a->port, ip);
}

/* kvregctl's table names both ends: the endpoint's port, and ESTABLISHED. */
static void check_tool(const char *kvregctl, uint16_t port)
{
	char cmd[512], line[512], want[64];
	bool established = false, listening = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s conns", kvregctl);
	snprintf(want, sizeof(want), "%s:%u", ADDR, port);
	f = popen(cmd, "r");
	CHECK(f, "popen %s", cmd);
	while (fgets(line, sizeof(line), f)) {
		printf("    | %s", line);
		if (strstr(line, "LISTENING") && strstr(line, want))
			listening = true;
		if (strstr(line, "active") && strstr(line, "ESTABLISHED") &&
		    strstr(line, want))
			established = true;
	}
	CHECK(pclose(f) == 0, "kvregctl conns failed");
	CHECK(listening && established,
	      "kvregctl conns lacks the endpoint or the connection to %s",
	      want);
}

/* Another uid, on an inherited file: none of root's entries. */
static void check_other_user(struct kvreg *kv)
{
	struct kvreg_conn_info ci[16];
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	if (!pid) {
		CHECK(!setresgid(65534, 65534, 65534) &&
		      !setresuid(65534, 65534, 65534), "setresuid");
		CHECK(list(kv, ci, 16) == 0,
		      "uid 65534 sees %u entries of root's", list(kv, ci, 16));
		_exit(T_PASS);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "the other user's listing");
}

int main(int argc, char **argv)
{
	const struct kvreg_conn_info *ep, *act, *pas;
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_conn_info ci[64];
	struct kvreg_completion comp[PAGES];
	struct kvreg *kv = kvt_open();
	struct kvreg_op ops[PAGES];
	struct kvt_exporter *x;
	struct kvreg_remote *r;
	struct kvreg_mr *local, *late;
	struct kvreg_error err;
	unsigned int n, acc, late_acc, got, i, late_ok, total, failed = 0;
	uint8_t *pool, *mine, *late_src, *pool_before;
	uint16_t port;
	pid_t pid;
	size_t j;
	int ret;

	CHECK(argc == 2, "usage: conns KVREGCTL");
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	if (!kvreg_has_feature(kv, KVREG_FEATURE_CONNS))
		kvt_skip("module without KVREG_FEATURE_CONNS");
	CHECK(list(kv, ci, 64) == 0, "entries before any endpoint");
	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	mine = kvt_map_anon(LEN);
	late_src = kvt_map_anon(LEN);
	pool_before = kvt_map_anon(LEN);
	x = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	pid = x->pid;

	n = list(kv, ci, 64);
	ep = find(ci, n, pid, KVREG_CONN_KIND_ENDPOINT);
	CHECK(n == 1 && ep && ep->state == KVREG_CONN_STATE_LISTENING &&
	      ep->endpoint && ep->device_index == devs[0].index,
	      "want one LISTENING endpoint of the exporter, have %u entries",
	      n);
	check_ipv4(&ep->local, ADDR, "endpoint");
	port = ep->local.port;

	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &local, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	kvt_fill(mine, LEN, 7);
	memset(pool, 0, LEN);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0,
				       64 * 1024, &err), &err);
	for (i = 0; i < PAGES; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_WRITE, local,
			      64 * 1024 + i * SZ_4K, r, 64 * 1024 + i * SZ_4K,
			      SZ_4K, i);
	CHECK_OK(kvreg_submit(kv, ops, PAGES, &acc, &err), &err);
	CHECK(acc == PAGES, "accepted %u of %u", acc, PAGES);
	for (got = 0; got < PAGES; got += n) {
		CHECK_OK(kvreg_reap(kv, comp, PAGES, 1, 10000, &n, &err), &err);
		CHECK(n, "no completion within 10 s");
		for (i = 0; i < n; i++)
			CHECK(!comp[i].status, "op %llu: status %d",
			      (unsigned long long)comp[i].user_data,
			      comp[i].status);
	}
	CHECK(kvt_mismatch(pool, 0, 64 * 1024 + PAGES * SZ_4K, 7, 0) < 0,
	      "the pool differs from what was written");

	n = list(kv, ci, 64);
	ep = find(ci, n, pid, KVREG_CONN_KIND_ENDPOINT);
	act = find(ci, n, getpid(), KVREG_CONN_KIND_ACTIVE);
	pas = find(ci, n, pid, KVREG_CONN_KIND_PASSIVE);
	CHECK(n == 3 && ep && act && pas, "want endpoint, active, passive; "
	      "have %u entries", n);
	CHECK(act->state == KVREG_CONN_STATE_ESTABLISHED &&
	      pas->state == KVREG_CONN_STATE_ESTABLISHED,
	      "states: active %u passive %u", act->state, pas->state);
	/* The two ends agree: each one's peer is the other's local. */
	CHECK(same_addr(&act->peer, &ep->local) &&
	      same_addr(&pas->local, &ep->local) &&
	      same_addr(&pas->peer, &act->local),
	      "the two ends' addresses disagree");
	CHECK(act->device_index == kvreg_remote_device(r),
	      "active end on device %u, the region on %u", act->device_index,
	      kvreg_remote_device(r));
	CHECK(act->ops == PAGES + 1 && act->ops_failed == 0 &&
	      act->bytes == 64 * 1024 + PAGES * SZ_4K && act->inflight == 0,
	      "active counters: ops %llu failed %llu bytes %llu inflight %u",
	      (unsigned long long)act->ops,
	      (unsigned long long)act->ops_failed,
	      (unsigned long long)act->bytes, act->inflight);
	CHECK(pas->ops == 0 && pas->uid == 0 && act->uid == 0 &&
	      !strcmp(act->comm, pas->comm), "owners or passive counters");
	printf("endpoint %s:%u, active %u ops %llu bytes, passive up\n", ADDR,
	       port, (unsigned int)act->ops, (unsigned long long)act->bytes);
	check_tool(argv[1], port);
	check_other_user(kv);

	/*
	 * The exporter dies with a batch submitted and not reaped: each of
	 * its operations completes once, either way (rxe's loopback has
	 * usually finished them inside SUBMIT). What must fail is a batch
	 * submitted after the exporter was reaped (its file released, its
	 * MRs gone): SUBMIT refuses it with CONN_LOST, or every operation of
	 * it fails, and no byte of it reaches the dead exporter's pages,
	 * which this process still maps. The counters agree with the
	 * completions, the exporter's entries go, and the active end is LOST.
	 */
	CHECK_OK(kvreg_register(kv, late_src, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &late, &err), &err);
	kvt_fill(late_src, LEN, 9);
	/* What each pool byte may hold after: this, or the batch's byte. */
	memcpy(pool_before, pool, LEN);
	for (i = 0; i < PAGES; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_WRITE, local, i * BIG, r,
			      i * BIG, BIG, i);
	CHECK_OK(kvreg_submit(kv, ops, PAGES, &acc, &err), &err);
	CHECK(acc == PAGES, "accepted %u of %u", acc, PAGES);
	kvt_exporter_kill(x);
	for (i = 0; i < PAGES; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_WRITE, late, i * BIG, r,
			      i * BIG, BIG, PAGES + i);
	ret = kvreg_submit(kv, ops, PAGES, &late_acc, &err);
	CHECK((ret == 0 && late_acc) ||
	      (ret == -ENOTCONN && err.reason == KVREG_REASON_CONN_LOST),
	      "a batch after the exporter's death: %d reason %u", ret,
	      err.reason);
	late_ok = 0;
	for (got = 0; got < PAGES + late_acc; got += n) {
		CHECK_OK(kvreg_reap(kv, comp, PAGES, 1, 10000, &n, &err), &err);
		CHECK(n, "no completion within 10 s of the peer's death");
		for (i = 0; i < n; i++) {
			failed += comp[i].status != 0;
			late_ok += comp[i].user_data >= PAGES &&
				   comp[i].status == 0;
		}
	}
	CHECK(late_ok == 0, "%u of %u operations posted after the exporter "
	      "was reaped succeeded", late_ok, late_acc);
	/*
	 * Byte by byte, so that a page partly landed is caught too: each
	 * holds what it held before the first batch, or that batch's byte
	 * (the pool's offsets are the source's); a late byte is neither,
	 * but for the 1 in 256 that equal one of them by chance.
	 */
	for (j = 0; j < LEN; j++)
		CHECK(pool[j] == pool_before[j] || pool[j] == mine[j],
		      "byte %zu of the dead exporter's pool holds %#x, "
		      "neither its byte before (%#x) nor the batch's before "
		      "the death (%#x): written after it (%#x)", j, pool[j],
		      pool_before[j], mine[j], late_src[j]);
	for (i = 0; i < 100; i++) {
		n = list(kv, ci, 64);
		act = find(ci, n, getpid(), KVREG_CONN_KIND_ACTIVE);
		if (n == 1 && act && act->state == KVREG_CONN_STATE_LOST)
			break;
		usleep(100 * 1000);
	}
	CHECK(n == 1 && act && act->state == KVREG_CONN_STATE_LOST,
	      "10 s after the exporter died: %u entries, active state %u", n,
	      act ? act->state : 0);
	total = 2 * PAGES + 1 + late_acc;
	CHECK(act->ops == total && act->ops_failed == failed &&
	      act->bytes == 64 * 1024 + PAGES * SZ_4K +
			    (PAGES + late_acc - failed) * BIG &&
	      act->inflight == 0 && (!failed || act->last_wc_status),
	      "after the peer's death, %u of %u failed: ops %llu failed %llu "
	      "bytes %llu inflight %u", failed, PAGES + late_acc,
	      (unsigned long long)act->ops,
	      (unsigned long long)act->ops_failed,
	      (unsigned long long)act->bytes, act->inflight);
	printf("the exporter killed with a batch unreaped: %u of %u failed; "
	       "after its death %u accepted, none landed; LOST\n",
	       failed - late_acc, PAGES, late_acc);
	/* Refused before posting: not an operation of the connection's. */
	ret = kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0, SZ_4K,
				    &err);
	CHECK(ret == -ENOTCONN && err.reason == KVREG_REASON_CONN_LOST,
	      "a transfer on a lost connection: %d reason %u", ret,
	      err.reason);
	n = list(kv, ci, 64);
	act = find(ci, n, getpid(), KVREG_CONN_KIND_ACTIVE);
	CHECK(act && act->ops == total, "a refused transfer counted");

	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK(list(kv, ci, 64) == 0, "entries after the last unimport");
	CHECK_OK(kvreg_deregister(kv, late, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvreg_close(kv);
	printf("conns: both ends listed and counted; gone with their owners\n");
	return T_PASS;
}
