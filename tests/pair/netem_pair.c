// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * One side of a test between two guests over a network that misbehaves:
 * each guest puts netem on its end of the first link (packets lost,
 * delayed and reordered, both ways), and the importer moves batches of
 * READs and WRITEs through it, 128 in flight at a time. Every operation
 * must complete, once and successfully, and every byte be right: each
 * WRITE carries its round's pattern at its own offset (a retransmission
 * landing late or elsewhere shows), each READ is checked where it landed,
 * and the exporter checks its whole pool at the end.
 *
 * That the network misbehaved is asserted, not assumed: each side's
 * netem must have dropped packets, and each side's rxe must have counted
 * the damage (the importer's completer retried or got sequence NAKs, the
 * exporter's responder saw requests out of sequence or twice).
 *   netem_pair export DIR ADDR
 *   netem_pair import DIR
 */
#include "kvpair.h"

#define LEN		(8ULL << 20)
#define HALF		(LEN / 2)
#define OP		(64 * 1024ULL)
#define PER_HALF	(HALF / OP)
#define ROUNDS		6
#define SEED0		0xA1
#define NETDEV		"eth0"
/* Loss, and a delay that lets some packets overtake others. */
#define NETEM		"loss 0.5% delay 1ms reorder 2% 25%"

static uint32_t round_seed(int round)
{
	return 0xA100 + (uint32_t)round;
}

static void netem(bool on)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "tc qdisc %s dev %s root%s%s", on ?
		 "add" : "del", NETDEV, on ? " netem " : "", on ? NETEM : "");
	CHECK(!system(cmd), "%s failed", cmd);
}

/* Packets netem dropped on this side's egress. */
static long long netem_dropped(void)
{
	char line[512], *at;
	long long dropped = -1;
	FILE *f = popen("tc -s qdisc show dev " NETDEV, "r");

	CHECK(f, "tc: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		at = strstr(line, "(dropped ");
		if (at)
			dropped = atoll(at + 9);
	}
	CHECK(!pclose(f) && dropped >= 0, "tc -s qdisc show: no drop count");
	return dropped;
}

static long long rxe_counter(const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/rxe0/ports/1/hw_counters/%s", name);
	f = fopen(path, "r");
	CHECK(f && fscanf(f, "%lld", &v) == 1, "%s: %s", path,
	      strerror(errno));
	fclose(f);
	return v;
}

/* rxe's count of what the misbehaving network made it do, by role. */
static long long rxe_damage(bool exporter)
{
	if (exporter)
		return rxe_counter("out_of_seq_request") +
		       rxe_counter("duplicate_request");
	return rxe_counter("rcvd_seq_err") + rxe_counter("completer_retry_err");
}

static int exporter(const char *dir, const char *addr)
{
	struct kvreg *kv = kvt_open();
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	uint8_t *pool = kvt_map_anon_scattered(LEN), desc[65536];
	long long damage = rxe_damage(true), dropped;
	struct kvreg_error err;
	struct kvreg_mr *mr;
	char done[16];
	int64_t bad;
	uint64_t ep;
	size_t n;

	CHECK(kvt_devices(kv, devs), "no RDMA device");
	kvt_fill(pool, LEN, SEED0);
	CHECK_OK(kvreg_register(kv, pool, LEN, KVREG_ACCESS_ALL, 0, &mr, &err),
		 &err);
	CHECK_OK(kvreg_listen(kv, addr, 0, &ep, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &n, &err), &err);
	put_file(dir, "desc-netem", desc, n);
	netem(true);
	/* A minute's work at most: an importer that failed says nothing. */
	get_file_within(dir, "done-netem", done, sizeof(done), 300);
	dropped = netem_dropped();
	netem(false);
	bad = kvt_mismatch(pool, 0, HALF, SEED0, 0);
	CHECK(bad < 0, "the half only READ changed at %lld", (long long)bad);
	bad = kvt_mismatch(pool, HALF, HALF, round_seed(ROUNDS - 1), HALF);
	CHECK(bad < 0, "the last round's WRITEs differ at %lld",
	      (long long)bad);
	damage = rxe_damage(true) - damage;
	printf("exporter: netem dropped %lld packets, rxe saw %lld requests "
	       "out of sequence or twice; every byte checked\n", dropped,
	       damage);
	CHECK(dropped > 0 && damage > 0, "the network did not misbehave "
	      "toward the importer: %lld dropped, %lld out of sequence",
	      dropped, damage);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvreg_close(kv);
	return T_PASS;
}

/*
 * @n operations in flight, as many as SUBMIT takes, each reaped exactly
 * once and successfully; every wait bounded.
 */
static void run_batch(struct kvreg *kv, struct kvreg_op *ops, unsigned int n)
{
	struct kvreg_completion comp[64];
	unsigned int submitted = 0, done = 0, acc, k, i;
	bool seen[2 * PER_HALF] = { false };
	struct kvreg_error err;
	int ret;

	CHECK(n <= 2 * PER_HALF, "a batch of %u", n);
	while (done < n) {
		if (submitted < n) {
			acc = 0;
			ret = kvreg_submit(kv, ops + submitted, n - submitted,
					   &acc, &err);
			CHECK(!ret || ret == -EAGAIN || ret == -EDQUOT,
			      "SUBMIT: %d reason %u", ret, err.reason);
			submitted += acc;
		}
		CHECK_OK(kvreg_reap(kv, comp, 64, 1, 60000, &k, &err), &err);
		CHECK(k, "no completion in 60 s, %u of %u done", done, n);
		for (i = 0; i < k; i++) {
			uint64_t id = comp[i].user_data;

			CHECK(id < n && !seen[id], "operation %llu completed "
			      "%s", (unsigned long long)id,
			      id < n ? "twice" : "but was never submitted");
			CHECK(!comp[i].status, "operation %llu: status %d",
			      (unsigned long long)id, comp[i].status);
			seen[id] = true;
		}
		done += k;
	}
}

/* Both halves READ at once, each checked where it landed. */
static void read_all(struct kvreg *kv, struct kvreg_mr *local, uint8_t *mine,
		     struct kvreg_remote *r, uint32_t upper_seed, int round)
{
	struct kvreg_op ops[2 * PER_HALF];
	unsigned int i;
	int64_t bad;

	memset(mine, 0, LEN);
	for (i = 0; i < 2 * PER_HALF; i++)
		kvreg_op_prep(&ops[i], KVREG_OP_READ, local, i * OP, r, i * OP,
			      OP, i);
	run_batch(kv, ops, 2 * PER_HALF);
	bad = kvt_mismatch(mine, 0, HALF, SEED0, 0);
	CHECK(bad < 0, "round %d: a READ of the exporter's half differs at "
	      "%lld", round, (long long)bad);
	bad = kvt_mismatch(mine, HALF, HALF, upper_seed, HALF);
	CHECK(bad < 0, "round %d: a READ of the WRITEs' half differs at %lld",
	      round, (long long)bad);
}

static int importer(const char *dir)
{
	long long damage = rxe_damage(false), dropped;
	struct kvreg *kv = kvt_open();
	struct kvreg_op ops[PER_HALF];
	static uint8_t desc[65536];
	struct kvreg_remote *r;
	struct kvreg_error err;
	struct kvreg_mr *local;
	uint8_t *mine;
	double t0;
	int round;
	size_t n;
	unsigned int i;

	netem(true);
	n = get_file(dir, "desc-netem", desc, sizeof(desc));
	CHECK(n, "an empty descriptor");
	r = kvp_import(kv, desc, n, "192.0.2.1");
	mine = kvt_map_anon_scattered(LEN);
	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL,
				1ULL << kvreg_remote_device(r), &local, &err),
		 &err);
	t0 = kvt_now();
	for (round = 0; round < ROUNDS; round++) {
		read_all(kv, local, mine, r,
			 round ? round_seed(round - 1) : SEED0, round);
		kvt_fill_from(mine + HALF, HALF, round_seed(round), HALF);
		for (i = 0; i < PER_HALF; i++)
			kvreg_op_prep(&ops[i], KVREG_OP_WRITE, local,
				      HALF + i * OP, r, HALF + i * OP, OP, i);
		run_batch(kv, ops, PER_HALF);
	}
	read_all(kv, local, mine, r, round_seed(ROUNDS - 1), ROUNDS);
	t0 = kvt_now() - t0;
	dropped = netem_dropped();
	netem(false);
	damage = rxe_damage(false) - damage;
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvreg_close(kv);
	/* The exporter checks its side either way. */
	put_file(dir, "done-netem", "ok", 2);
	printf("importer: %d rounds of %llu MiB READ and %llu MiB WRITTEN in "
	       "%.1f s; netem dropped %lld packets, rxe retried or was NAKed "
	       "%lld times\n", ROUNDS, (unsigned long long)(LEN >> 20),
	       (unsigned long long)(HALF >> 20), t0, dropped, damage);
	CHECK(dropped > 0 && damage > 0, "the network did not misbehave "
	      "toward the exporter: %lld dropped, %lld retries and NAKs",
	      dropped, damage);
	return T_PASS;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "export"))
		return exporter(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "import"))
		return importer(argv[2]);
	fprintf(stderr, "usage: netem_pair export DIR ADDR | import DIR\n");
	return T_FAIL;
}
