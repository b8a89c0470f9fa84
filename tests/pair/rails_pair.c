// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Rails between two guests joined by two links (tests/guest/pair.sh): the
 * exporter listens on an address of each (rxe0 on eth0, rxe1 on eth1) and
 * exports one pool; the importer's region has a rail on each link. Then:
 *  - a batch of 4 KiB pages and 2 MiB operations is spread over both
 *    rails (each carries some), and reads back what it wrote;
 *  - with a queue of WRITEs kept full, the exporter takes one link down:
 *    every operation completes successfully, moved to the other rail,
 *    and the rail counts failovers; once the link is up the module
 *    reconnects the rail by itself and it carries work again;
 *  - the same link's cable pulled and plugged back ten times under the
 *    same load (tests/guest/cable.py, from the host): every operation
 *    succeeds, the flaps cut traffic in flight (the device retried, and
 *    work moved), and the rail is up once they stop;
 *  - both links down: every operation still in flight fails with
 *    CONN_LOST and the peer's address within the bound, none hangs; both
 *    up again, both rails are reconnected and used;
 *  - the importer removes its own rxe1 mid-batch: every operation
 *    completes; once added again the rail is reconnected on the new
 *    device, and a registration made since uses it;
 *  - the exporter removes its rxe0 mid-batch: every operation of that
 *    registration completes, on rail 1.
 * Every WRITE of a storm carries a pattern of its own and every READ
 * checks what it brought; after each storm the pool holds the last WRITE
 * of every place. The exporter checks every byte of each slice its pool
 * was written in.
 *   rails_pair export DIR
 *   rails_pair import DIR
 */
#include <arpa/inet.h>

#include "kvbatch.h"
#include "kvpair.h"

#define LEN	(16ULL << 20)
#define SLICE	(LEN / 4)
#define PAGE	(64 * 1024)
#define DEPTH	64
/* The retry limit of a rail is ~4 s; a rail is mended within seconds. */
#define BOUND_S	20.0
#define MEND_S	30.0
#define STEP_S	120
/* A storm whose operations neither complete nor start for this long. */
#define STALL_S	30
#define SEED	0x60

static const char *const addrs[2] = { "192.0.2.1", "198.51.100.1" };

static size_t get_step(const char *dir, const char *name, void *data,
		       size_t cap)
{
	return get_file_within(dir, name, data, cap, STEP_S);
}

static void run(const char *who, const char *cmd)
{
	printf("%s: %s\n", who, cmd);
	fflush(stdout);
	CHECK(system(cmd) == 0, "%s failed", cmd);
}

/*
 * `ip link set up` makes a link receive before its routes are back. A CM
 * MAD that arrives then (the importer's rails retry all the while) is
 * answered with a send that fails, and rxe moves the GSI QP of that port
 * to the error state for good: no connection is made on it again (CI saw
 * rail 1 never come back once). A NIC whose cable comes back has no such
 * instant, so the exporter drops what arrives in its first second up
 * (tc; the debug kernel is built with what it needs).
 */
#define LINK_UP(devs)							\
	"for d in " devs "; do tc qdisc add dev $d ingress &&"		\
	" tc filter add dev $d ingress matchall action drop; done"	\
	" >/dev/null 2>&1; for d in " devs "; do"			\
	" ip link set $d up || exit 1; done; sleep 1; for d in " devs	\
	"; do tc qdisc del dev $d ingress; done >/dev/null 2>&1; true"

/*
 * The exporter's side of the flaps: on @go the host pulls eth1's cable
 * FLAPS times, out for a second (within the QP's retries) and for six
 * (beyond them: the rail's work moves, and the rail is mended while the
 * cable goes on flapping) in turn, a second and a half in; the carrier
 * must have gone and come back each time, as this kernel counts it.
 */
#define FLAPS	10
static void flap(const char *dir, const char *go, const char *done)
{
	static const char *const path = "/sys/class/net/eth1/carrier_changes";
	unsigned long long before, after;
	char b[256], answer[512];
	size_t n;

	get_step(dir, go, b, sizeof(b));
	before = kvt_read_param(path);
	snprintf(b, sizeof(b), "n1 %d 1,6 1.5", FLAPS);
	printf("exporter: eth1's cable pulled %d times\n", FLAPS);
	fflush(stdout);
	/* An answer to an earlier request is not this one's. */
	snprintf(answer, sizeof(answer), "%s/cable-req-done", dir);
	CHECK(!unlink(answer) || errno == ENOENT, "%s: %s", answer,
	      strerror(errno));
	put_file(dir, "cable-req", b, strlen(b));
	n = get_step(dir, "cable-req-done", b, sizeof(b) - 1);
	b[n] = 0;
	CHECK(!strcmp(b, "ok"), "the host did not pull the cable: %s", b);
	after = kvt_read_param(path);
	CHECK(after - before >= 2 * FLAPS, "eth1's carrier changed %llu times "
	      "in %d flaps", after - before, FLAPS);
	put_file(dir, done, "1", 1);
}

/* The exporter's side of a step: wait for @go, run @cmd, say @done. */
static void fault(const char *dir, const char *go, const char *cmd,
		  const char *done)
{
	char b[16];

	get_step(dir, go, b, sizeof(b));
	run("exporter", cmd);
	put_file(dir, done, "1", 1);
}

static int exporter(const char *dir)
{
	struct kvreg *kv = kvt_open();
	uint8_t *pool = kvt_map_anon_scattered(LEN), desc[65536];
	const struct kvreg_desc_head *head = (const void *)desc;
	struct kvreg_error err;
	struct kvreg_mr *mr;
	uint64_t ep;
	char b[16];
	size_t n;
	int s;

	kvt_fill(pool, LEN, SEED - 1);
	CHECK_OK(kvreg_register(kv, pool, LEN, KVREG_ACCESS_ALL, 0, &mr, &err),
		 &err);
	CHECK_OK(kvreg_listen(kv, addrs[0], 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_listen_add(kv, ep, addrs[1], 0, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &n, &err), &err);
	CHECK(head->nr_paths == 2, "the descriptor has %u paths, not one per "
	      "address", head->nr_paths);
	put_file(dir, "rails-desc", desc, n);

	fault(dir, "go-link1", "ip link set eth1 down", "link1-down");
	fault(dir, "done-link1", LINK_UP("eth1"), "link1-up");
	flap(dir, "go-flap", "flaps-done");
	fault(dir, "go-both", "ip link set eth0 down && ip link set eth1 down",
	      "both-down");
	fault(dir, "done-both", LINK_UP("eth0 eth1"), "both-up");
	fault(dir, "go-exp-dev", "rdma link delete rxe0", "exp-dev-gone");
	fault(dir, "done-exp-dev", "rdma link add rxe0 type rxe netdev eth0",
	      "exp-dev-back");

	get_step(dir, "done-import", b, sizeof(b));
	/* Slice s holds seed SEED + s, at its own offsets, every byte. */
	for (s = 0; s < 4; s++) {
		int64_t bad = kvt_mismatch(pool, s * SLICE, SLICE, SEED + s,
					   s * SLICE);

		CHECK(bad < 0, "slice %d: the importer's bytes differ at %lld",
		      s, (long long)bad);
	}
	printf("exporter: every slice holds the importer's bytes\n");
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}

/* This process's active entry on rail @rail, or NULL. */
static const struct kvreg_conn_info *rail_info(struct kvreg *kv, uint32_t rail,
					       struct kvreg_conn_info *ci)
{
	struct kvreg_error err;
	unsigned int n, i;

	CHECK_OK(kvreg_conns(kv, ci, 32, &n, &err), &err);
	for (i = 0; i < n && i < 32; i++)
		if (ci[i].pid == (uint32_t)getpid() &&
		    ci[i].kind == KVREG_CONN_KIND_ACTIVE && ci[i].rail_group &&
		    ci[i].rail == rail)
			return &ci[i];
	return NULL;
}

struct rail_stat {
	uint64_t ops, failovers;
	uint32_t state, mend_reason, inflight;
	int32_t mend_errno;
};

static struct rail_stat rail_stat(struct kvreg *kv, uint32_t rail)
{
	struct kvreg_conn_info ci[32];
	const struct kvreg_conn_info *c = rail_info(kv, rail, ci);
	struct rail_stat st = { 0 };

	if (c) {
		st.ops = c->ops;
		st.failovers = c->failovers;
		st.state = c->state;
		st.inflight = c->inflight;
		st.mend_reason = c->mend_reason;
		st.mend_errno = c->mend_errno;
	}
	return st;
}

/* The module mends rail @rail by itself: ESTABLISHED within MEND_S. */
static void wait_rail(struct kvreg *kv, uint32_t rail, const char *after)
{
	double t0 = kvt_now();

	struct rail_stat st;

	while ((st = rail_stat(kv, rail)).state !=
	       KVREG_CONN_STATE_ESTABLISHED) {
		if (kvt_now() - t0 >= MEND_S) {
			/* What the module said of its tries. */
			if (system("dmesg | grep -E 'kvreg|rxe' | tail -20"))
				printf("(no kernel log)\n");
		}
		CHECK(kvt_now() - t0 < MEND_S, "rail %u not back %.0f s after "
		      "%s: state %u, last reconnect: reason %u errno %d", rail,
		      MEND_S, after, st.state, st.mend_reason, st.mend_errno);
		usleep(100 * 1000);
	}
	printf("importer: rail %u back %.1f s after %s\n", rail,
	       kvt_now() - t0, after);
}

/* WRITE slice @s with its seed, READ it back into @back, compare. */
static void round_trip(struct kvreg *kv, struct kvreg_mr *local,
		       struct kvreg_mr *back_mr, uint8_t *back,
		       struct kvreg_remote *r, int s)
{
	uint64_t off = s * SLICE;
	int64_t bad;

	kvt_batch(kv, local, off, r, off, KVREG_OP_WRITE, PAGE,
		  SLICE / PAGE);
	memset(back + off, 0, SLICE);
	kvt_batch(kv, back_mr, off, r, off, KVREG_OP_READ, PAGE,
		  SLICE / PAGE);
	bad = kvt_mismatch(back, off, SLICE, SEED + s, off);
	CHECK(bad < 0, "slice %d read back differs at %lld", s,
	      (long long)bad);
}

/*
 * A storm works on the first half of its slice, in slots of SPAGE, each
 * with one operation in flight at most; its READs land in the second
 * half. Every WRITE carries a pattern of its own (its number in the seed,
 * its offset in the bytes), so one that completed without landing, or
 * landed elsewhere, leaves the slot with other bytes than its pattern.
 */
#define SPAGE		(16 * 1024)
#define NSLOT		(SLICE / 2 / SPAGE)
#define STORM_SEED	0x5700000u

struct slot {
	bool busy;
	bool known;		/* the pool holds @seed's pattern here */
	bool reading;		/* the operation in flight is a READ */
	uint32_t seed, next;	/* @next: the WRITE in flight's */
};

struct storm {
	unsigned int ok, failed, inflight, writes, reads;
	double t_go, t_first_fail, t_done;
	int slice;
	uint8_t *mine;		/* what @local maps, at its pool offsets */
	uint64_t lbase;		/* the pool offset @local starts at */
	struct slot slot[NSLOT];
};

static uint64_t slot_off(const struct storm *s, unsigned int i)
{
	return s->slice * SLICE + (uint64_t)i * SPAGE;
}

static uint64_t read_off(const struct storm *s, unsigned int i)
{
	return slot_off(s, i) + SLICE / 2;
}

static void storm_reap(struct kvreg *kv, struct storm *s, bool may_fail,
		       uint32_t peer_ip[2])
{
	struct kvreg_completion comp[DEPTH];
	struct kvreg_error err;
	unsigned int n, i;
	char m[512];

	CHECK_OK(kvreg_reap(kv, comp, DEPTH, 1, 200, &n, &err), &err);
	for (i = 0; i < n; i++) {
		const struct kvreg_error *e = &comp[i].error;
		unsigned int k = comp[i].user_data % NSLOT;
		struct slot *sl = &s->slot[k];
		int64_t bad;

		s->inflight--;
		sl->busy = false;
		if (!comp[i].status) {
			s->ok++;
			if (!sl->reading) {
				sl->seed = sl->next;
				sl->known = true;
				continue;
			}
			bad = kvt_mismatch(s->mine, read_off(s, k), SPAGE,
					   sl->seed, slot_off(s, k));
			CHECK(bad < 0, "a READ of slot %u in the storm brought "
			      "other bytes than the last WRITE there (at %lld)",
			      k, (long long)(bad - read_off(s, k)));
			continue;
		}
		kvreg_format_error(e, comp[i].status, m, sizeof(m));
		CHECK(may_fail, "op %llu failed with a rail left: %s",
		      (unsigned long long)comp[i].user_data, m);
		/* A failed WRITE may have landed, or part of it. */
		if (!sl->reading)
			sl->known = false;
		if (!s->failed++)
			s->t_first_fail = kvt_now();
		CHECK(e->reason == KVREG_REASON_CONN_LOST &&
		      comp[i].status == -ENOTCONN && e->addr_family == AF_INET &&
		      (!memcmp(e->addr, &peer_ip[0], 4) ||
		       !memcmp(e->addr, &peer_ip[1], 4)),
		      "op %llu: %s; want CONN_LOST naming a peer address",
		      (unsigned long long)comp[i].user_data, m);
	}
}

/*
 * The next operation of the storm, prepared in @op: on the next slot
 * with none in flight, a READ of every third whose bytes are known, else
 * a WRITE of a pattern of its own. False if every slot is busy.
 */
static bool storm_next(struct storm *s, struct kvreg_mr *local,
		       struct kvreg_remote *r, uint64_t nr, struct kvreg_op *op)
{
	unsigned int tries, k;
	struct slot *sl;

	for (tries = 0; tries < NSLOT; tries++) {
		k = (nr + tries) % NSLOT;
		if (!s->slot[k].busy)
			break;
	}
	if (tries == NSLOT)
		return false;
	sl = &s->slot[k];
	sl->busy = true;
	sl->reading = sl->known && nr % 3 == 2;
	if (sl->reading) {
		memset(s->mine + read_off(s, k), 0, SPAGE);
		kvreg_op_prep(op, KVREG_OP_READ, local,
			      read_off(s, k) - s->lbase, r, slot_off(s, k),
			      SPAGE, nr * NSLOT + k);
		s->reads++;
	} else {
		sl->next = STORM_SEED + (uint32_t)nr;
		kvt_fill_from(s->mine + slot_off(s, k), SPAGE, sl->next,
			      slot_off(s, k));
		kvreg_op_prep(op, KVREG_OP_WRITE, local,
			      slot_off(s, k) - s->lbase, r, slot_off(s, k),
			      SPAGE, nr * NSLOT + k);
		s->writes++;
	}
	return true;
}

/* Nothing moved for STALL_S: what the rails and the last refusal say. */
static void storm_stalled(struct kvreg *kv, struct storm *s,
			  const struct kvreg_error *err)
{
	struct rail_stat r[2] = { rail_stat(kv, 0), rail_stat(kv, 1) };
	unsigned int busy = 0, k;
	char m[512];

	for (k = 0; k < NSLOT; k++)
		busy += s->slot[k].busy;
	kvreg_format_error(err, -EAGAIN, m, sizeof(m));
	for (k = 0; k < 2; k++)
		printf("importer: rail %u: state %u, %u in flight, %llu ops, "
		       "%llu failovers, last mend reason %u errno %d\n", k,
		       r[k].state, r[k].inflight, (unsigned long long)r[k].ops,
		       (unsigned long long)r[k].failovers, r[k].mend_reason,
		       r[k].mend_errno);
	if (system("dmesg | grep -E 'kvreg|rxe' | tail -20"))
		printf("(no kernel log)\n");
	CHECK(0, "the storm moved nothing for %d s: %u in flight, %u slots "
	      "busy; the last SUBMIT refusal: %s", STALL_S, s->inflight, busy,
	      err->reason ? m : "none");
}

/*
 * Keep DEPTH operations on slice @s->slice in flight, WRITEs and READs
 * (from and into @local, which starts at pool offset @s->lbase); ask for
 * the fault with @go (a file for the exporter, or a command run here,
 * once rail @fail_rail has work in flight), and go on for two seconds
 * after it is done, then drain. Without @may_fail every operation must
 * succeed; with it, they may fail once the fault is in, with the reason,
 * and the last within BOUND_S of the fault.
 */
static void storm(struct kvreg *kv, struct kvreg_mr *local,
		  struct kvreg_remote *r, const char *dir, struct storm *s,
		  const char *go, const char *gone, const char *cmd,
		  int fail_rail, bool may_fail, uint32_t peer_ip[2])
{
	struct kvreg_error err = { 0 };
	struct kvreg_op op;
	uint64_t next = 0;
	double t_gone = 0;
	unsigned int acc;
	char b[16];
	bool held = false;
	double t_progress = kvt_now();
	uint64_t progress = 0;
	unsigned int on_rail = 0;

	s->t_go = kvt_now();
	if (cmd) {
		/* Faults of its own: with work already in flight. */
		usleep(300 * 1000);
	} else {
		put_file(dir, go, "1", 1);
	}
	for (;;) {
		while (!s->failed && s->inflight < DEPTH &&
		       (!t_gone || kvt_now() - t_gone < 2)) {
			int ret;

			if (!held && !storm_next(s, local, r, next, &op))
				break;
			held = true;
			ret = kvreg_submit(kv, &op, 1, &acc, &err);
			if (ret == -EAGAIN || (may_fail && ret == -ENOTCONN))
				break;
			CHECK_OK(ret, &err);
			if (!acc)
				break;
			held = false;
			s->inflight++;
			next++;
		}
		/* The fault only once the rail it hits has work on it. */
		if (!t_gone && cmd && kvt_now() - s->t_go > 0.5 &&
		    (on_rail = rail_stat(kv, fail_rail).inflight)) {
			run("importer", cmd);
			t_gone = kvt_now();
			printf("importer: %u operations in flight on rail %d "
			       "as it went\n", on_rail, fail_rail);
		}
		CHECK(t_gone || !cmd || kvt_now() - s->t_go < 10.0, "rail %d "
		      "had no work in flight in 10 s of the storm", fail_rail);
		if (!t_gone && !cmd) {
			FILE *f;
			char path[512];

			snprintf(path, sizeof(path), "%s/%s", dir, gone);
			f = fopen(path, "r");
			if (f) {
				fclose(f);
				t_gone = kvt_now();
			}
		}
		if (t_gone && !s->inflight &&
		    (s->failed || kvt_now() - t_gone >= 2))
			break;
		if (s->inflight)
			storm_reap(kv, s, may_fail && t_gone, peer_ip);
		else
			usleep(10 * 1000);
		if (s->ok + s->failed + next != progress) {
			progress = s->ok + s->failed + next;
			t_progress = kvt_now();
		}
		if (kvt_now() - t_progress > STALL_S)
			storm_stalled(kv, s, &err);
		CHECK(kvt_now() - s->t_go < STEP_S, "%.0f s into the storm, "
		      "%u in flight", kvt_now() - s->t_go, s->inflight);
	}
	/* An operation prepared and never accepted: its slot is free. */
	if (held)
		s->slot[op.user_data % NSLOT].busy = false;
	s->t_done = kvt_now();
	if (!cmd)
		(void)get_step(dir, gone, b, sizeof(b));
	if (s->failed)
		CHECK(s->t_done - t_gone <= BOUND_S, "the last failure came "
		      "%.1f s after the fault; the bound is %.0f s",
		      s->t_done - t_gone, BOUND_S);
	printf("importer: %s: %u ok (%u WRITEs, %u READs sent), %u failed; "
	       "done %.1f s after the fault\n", go, s->ok, s->writes,
	       s->reads, s->failed, s->t_done - t_gone);
}

static void storm_begin(struct storm *s, uint8_t *mine, uint64_t lbase,
			int slice)
{
	memset(s, 0, sizeof(*s));
	s->mine = mine;
	s->lbase = lbase;
	s->slice = slice;
}

/*
 * Once a rail is up again: every slot the storm left known holds its last
 * WRITE's pattern in the exporter's pool, read back over the rails. Then
 * the slice's own bytes go back into @s->mine, for the round trips.
 */
static void storm_check(struct kvreg *kv, struct kvreg_mr *local,
			struct kvreg_remote *r, struct storm *s)
{
	unsigned int k, known = 0;
	int64_t bad;

	memset(s->mine + read_off(s, 0), 0, SLICE / 2);
	kvt_batch(kv, local, read_off(s, 0) - s->lbase, r, slot_off(s, 0),
		  KVREG_OP_READ, SPAGE, NSLOT);
	for (k = 0; k < NSLOT; k++) {
		if (!s->slot[k].known)
			continue;
		known++;
		bad = kvt_mismatch(s->mine, read_off(s, k), SPAGE,
				   s->slot[k].seed, slot_off(s, k));
		CHECK(bad < 0, "slot %u of slice %d: the pool does not hold "
		      "its last WRITE (seed %#x), at byte %lld", k, s->slice,
		      s->slot[k].seed, (long long)(bad - read_off(s, k)));
	}
	CHECK(known, "the storm on slice %d completed no WRITE", s->slice);
	kvt_fill_from(s->mine + slot_off(s, 0), SLICE, SEED + s->slice,
		      slot_off(s, 0));
	printf("importer: slice %d: the last WRITE of each of %u slots is "
	       "in the pool (%u left unknown by a failure)\n", s->slice, known,
	       (unsigned int)NSLOT - known);
}

/*
 * A device mask rules out the rails whose route leaves by another device:
 * through rxe0 alone, one rail of two; through no device there is, none,
 * and the refusal says so.
 */
static void check_device_mask(struct kvreg *kv, const uint8_t *desc, size_t n)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	unsigned int nd = kvt_devices(kv, devs), i;
	struct kvreg_remote *one;
	struct kvreg_error err;
	uint64_t mask = 0;
	int ret;

	for (i = 0; i < nd; i++)
		if (!strcmp(devs[i].name, "rxe0"))
			mask = 1ULL << devs[i].index;
	CHECK(mask, "no rxe0");
	CHECK_OK(kvreg_import_devices(kv, desc, n, 5000, mask, &one, &err),
		 &err);
	CHECK(kvreg_remote_rails(one) == 1 && kvreg_remote_paths(one) == 2,
	      "through rxe0 alone: %u rails of %u paths",
	      kvreg_remote_rails(one), kvreg_remote_paths(one));
	CHECK_OK(kvreg_unimport(kv, one, &err), &err);
	ret = kvreg_import_devices(kv, desc, n, 5000, 1ULL << 40, &one, &err);
	CHECK(ret == -ENODEV && err.reason == KVREG_REASON_NO_DEVICE,
	      "through no device there is: %d, reason %u", ret, err.reason);
	printf("importer: a device mask keeps the rails it rules out down\n");
}

/* What rxe1 here counts of traffic cut: retries and NAKs of sequence. */
static unsigned long long rxe1_damage(void)
{
	return kvt_read_param("/sys/class/infiniband/rxe1/ports/1/hw_counters/"
			      "completer_retry_err") +
	       kvt_read_param("/sys/class/infiniband/rxe1/ports/1/hw_counters/"
			      "rcvd_seq_err");
}

static int importer(const char *dir)
{
	struct kvreg *kv = kvt_open();
	uint8_t *mine = kvt_map_anon_scattered(LEN);
	uint8_t *back = kvt_map_anon_scattered(LEN);
	struct kvreg_mr *local, *back_mr, *local2;
	struct rail_stat r0, r1, a0, a1;
	static uint8_t desc[65536];
	struct kvreg_remote *r;
	struct kvreg_error err;
	uint32_t peer_ip[2];
	static struct storm st;
	unsigned long long damage;
	uint64_t moved;
	size_t n;
	int s;

	CHECK(inet_pton(AF_INET, addrs[0], &peer_ip[0]) == 1 &&
	      inet_pton(AF_INET, addrs[1], &peer_ip[1]) == 1, "inet_pton");
	/* Slice s: seed SEED + s, as bytes of their offset in the pool. */
	for (s = 0; s < 4; s++)
		kvt_fill_from(mine + s * SLICE, SLICE, SEED + s, s * SLICE);
	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL, 0, &local,
				&err), &err);
	CHECK_OK(kvreg_register(kv, back, LEN, KVREG_ACCESS_ALL, 0, &back_mr,
				&err), &err);
	n = get_file(dir, "rails-desc", desc, sizeof(desc));
	r = kvp_import(kv, desc, n, addrs[0]);
	CHECK(kvreg_remote_paths(r) == 2, "%u paths", kvreg_remote_paths(r));
	check_device_mask(kv, desc, n);
	if (kvreg_remote_rails(r) < 2)
		wait_rail(kv, 1, "import");
	wait_rail(kv, 0, "import");

	/* Spread: 4 KiB pages go where there is room, 2 MiB ones split. */
	kvt_batch(kv, local, 0, r, 0, KVREG_OP_WRITE, SZ_4K, 256);
	kvt_batch(kv, local, 1ULL << 20, r, 1ULL << 20, KVREG_OP_WRITE,
		  SZ_2M, 1);
	round_trip(kv, local, back_mr, back, r, 0);
	r0 = rail_stat(kv, 0);
	r1 = rail_stat(kv, 1);
	CHECK(r0.ops && r1.ops, "one rail idle: rail 0 %llu ops, rail 1 %llu",
	      (unsigned long long)r0.ops, (unsigned long long)r1.ops);
	printf("importer: spread over both rails: %llu and %llu parts\n",
	       (unsigned long long)r0.ops, (unsigned long long)r1.ops);

	/* One link down: nothing fails; the rail counts what it gave up. */
	storm_begin(&st, mine, 0, 1);
	storm(kv, local, r, dir, &st, "go-link1", "link1-down", NULL, 1, false,
	      peer_ip);
	storm_check(kv, local, r, &st);
	a1 = rail_stat(kv, 1);
	CHECK(a1.failovers > r1.failovers, "rail 1 went down mid-batch and "
	      "moved nothing: failovers %llu",
	      (unsigned long long)a1.failovers);
	round_trip(kv, local, back_mr, back, r, 1);
	put_file(dir, "done-link1", "1", 1);
	get_step(dir, "link1-up", desc, sizeof(desc));
	wait_rail(kv, 1, "its link came up");
	a1 = rail_stat(kv, 1);
	kvt_batch(kv, local, SLICE, r, SLICE, KVREG_OP_WRITE, SZ_4K, 256);
	CHECK(rail_stat(kv, 1).ops > a1.ops, "rail 1 is back but carries "
	      "nothing");

	/*
	 * Its cable pulled ten times: nothing fails, nothing is lost. A
	 * second out is within the QP's retries (the device counts retries
	 * and sequence errors), six are not (the rail's work moves): both
	 * must have happened.
	 */
	a1 = rail_stat(kv, 1);
	damage = rxe1_damage();
	storm_begin(&st, mine, 0, 1);
	storm(kv, local, r, dir, &st, "go-flap", "flaps-done", NULL, 1, false,
	      peer_ip);
	storm_check(kv, local, r, &st);
	damage = rxe1_damage() - damage;
	moved = rail_stat(kv, 1).failovers - a1.failovers;
	CHECK(damage && moved, "rail 1's cable was pulled ten times under "
	      "load: its device retried %llu times, %llu operations moved off "
	      "it", damage, (unsigned long long)moved);
	printf("importer: ten flaps of rail 1's cable: %llu retries, %llu "
	       "operations moved off it\n", damage, (unsigned long long)moved);
	wait_rail(kv, 1, "ten flaps");
	a1 = rail_stat(kv, 1);
	round_trip(kv, local, back_mr, back, r, 1);
	CHECK(rail_stat(kv, 1).ops > a1.ops, "rail 1 is back after ten flaps "
	      "but carries nothing");

	/* Both down: what is in flight fails, with the reason, in time. */
	storm_begin(&st, mine, 0, 3);
	storm(kv, local, r, dir, &st, "go-both", "both-down", NULL, -1, true,
	      peer_ip);
	CHECK(st.failed, "both links down and nothing failed");
	put_file(dir, "done-both", "1", 1);
	get_step(dir, "both-up", desc, sizeof(desc));
	wait_rail(kv, 0, "both links came up");
	wait_rail(kv, 1, "both links came up");
	storm_check(kv, local, r, &st);
	a0 = rail_stat(kv, 0);
	a1 = rail_stat(kv, 1);
	round_trip(kv, local, back_mr, back, r, 3);
	CHECK(rail_stat(kv, 0).ops > a0.ops && rail_stat(kv, 1).ops > a1.ops,
	      "after both links came up, a rail carries nothing");

	/* Its own device on rail 1 removed: rail 0 carries it all. */
	a1 = rail_stat(kv, 1);
	storm_begin(&st, mine, 0, 2);
	storm(kv, local, r, dir, &st, "own rxe1", NULL, "rdma link delete rxe1",
	      1, false, peer_ip);
	storm_check(kv, local, r, &st);
	/* What was on it finished first, or moved: either way, it is out. */
	CHECK(rail_stat(kv, 1).state == KVREG_CONN_STATE_LOST,
	      "rail 1's device is gone, and the rail is not LOST");
	printf("importer: rail 1 taken out with its device, %llu operations "
	       "moved off it\n", (unsigned long long)
	       (rail_stat(kv, 1).failovers - a1.failovers));
	round_trip(kv, local, back_mr, back, r, 2);
	run("importer", "rdma link add rxe1 type rxe netdev eth1");
	wait_rail(kv, 1, "rxe1 was added again");
	/* Registered since: it has MRs on the new device, and uses it. */
	CHECK_OK(kvreg_register_flags(kv, mine + 2 * SLICE, SLICE,
				      KVREG_ACCESS_ALL, 0,
				      KVREG_REG_F_ALLOW_OVERLAP, &local2,
				      &err), &err);
	a1 = rail_stat(kv, 1);
	/* Slice 2 again from @local2, which maps exactly it. */
	kvt_batch(kv, local2, 0, r, 2 * SLICE, KVREG_OP_WRITE, SZ_4K, 64);
	CHECK(rail_stat(kv, 1).ops > a1.ops, "rail 1 on the new rxe1 carries "
	      "nothing for a registration made after it came");

	/* The exporter's rxe0 removed mid-batch: local2 goes on, on rail 1. */
	a0 = rail_stat(kv, 0);
	a1 = rail_stat(kv, 1);
	storm_begin(&st, mine, 2 * SLICE, 2);
	storm(kv, local2, r, dir, &st, "go-exp-dev", "exp-dev-gone", NULL, 0,
	      false, peer_ip);
	CHECK(rail_stat(kv, 1).ops > a1.ops, "rail 1 took nothing over");
	/*
	 * Rail 0 worked in the storm and is down. What it had in flight
	 * moved (counted) or completed first: the debug pair once saw the
	 * second, the exporter's removal slower than the rail's work.
	 */
	CHECK(rail_stat(kv, 0).ops > a0.ops &&
	      rail_stat(kv, 0).state != KVREG_CONN_STATE_ESTABLISHED,
	      "rail 0: %llu operations in the storm, state %u after the "
	      "exporter's device went",
	      (unsigned long long)(rail_stat(kv, 0).ops - a0.ops),
	      rail_stat(kv, 0).state);
	printf("importer: the exporter's rxe0 went: rail 0 down, %llu "
	       "operations moved off it\n", (unsigned long long)
	       (rail_stat(kv, 0).failovers - a0.failovers));
	storm_check(kv, local2, r, &st);
	/* The slice's own bytes again, for the exporter's last check. */
	kvt_batch(kv, local2, 0, r, 2 * SLICE, KVREG_OP_WRITE, PAGE,
		  SLICE / PAGE);
	put_file(dir, "done-exp-dev", "1", 1);
	get_step(dir, "exp-dev-back", desc, sizeof(desc));

	CHECK_OK(kvreg_deregister(kv, local2, &err), &err);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, back_mr, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	put_file(dir, "done-import", "1", 1);
	kvreg_close(kv);
	return T_PASS;
}

int main(int argc, char **argv)
{
	return kvp_roles(argc, argv, exporter, importer);
}
