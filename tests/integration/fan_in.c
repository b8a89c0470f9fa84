// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Fan-in: two importers, each a process with its own file and so its own
 * connection, move bytes through one export at the same time, as two
 * inference nodes do with one storage node's pool. Each owns half of the
 * pool, cut into slots; every round WRITEs a slot with its own pattern
 * (importer, round and slot in the bytes) and checks the whole half as
 * the exporter's memory holds it, then fills another slot from the CPU and
 * READs it back. A connection cut by the other's accept, a WRITE landing
 * in the other's half or at the wrong slot, a READ answered from the
 * wrong memory: each fails a check here.
 *
 * That both were at work at once is asserted, not assumed: the exporter
 * lists both connections at once before either moves a byte, and the
 * transfers that began while the other importer was inside one are
 * counted and must reach OVERLAPS. Nothing is left behind: no QP, cm_id,
 * pin or connection once all three processes are gone.
 */
#include <sys/mman.h>

#include "kvchild.h"
#include "kvexport.h"

#define ADDR		"192.0.2.1"
#define IMPORTERS	2
#define SLOT		(64 * SZ_4K)
#define SLOTS		4
#define HALF		(SLOTS * SLOT)
#define LEN		(IMPORTERS * HALF)
#define ROUNDS		32
#define OVERLAPS	8

/* Shared by the importers: a start line and who is inside a transfer. */
struct fan {
	struct kvreg *parent;	/* the parent's file: closed in each child */
	const struct kvt_exporter *x;
	uint8_t *pool;
	uint32_t dev;
	int imported;
	int go;
	int inside;
	int overlaps;
};

/* What slot @slot of importer @who's half holds after @round. */
static uint32_t written_seed(int who, int round, int slot)
{
	return (uint32_t)(0x100000 | who << 16 | round << 4 | slot);
}

static uint32_t filled_seed(int who, int round, int slot)
{
	return (uint32_t)(0x200000 | who << 16 | round << 4 | slot);
}

static int write_slot(int round)
{
	return round % SLOTS;
}

static int read_slot(int round)
{
	return (round + 1) % SLOTS;
}

/*
 * The seed each slot of @who's half holds after @rounds whole rounds, and
 * the WRITE of the next one when @and_write.
 */
static void expected_half(int who, int rounds, bool and_write,
			  uint32_t *seeds)
{
	int round, slot;

	for (slot = 0; slot < SLOTS; slot++)
		seeds[slot] = 0x7F0000 | who << 8 | slot;
	for (round = 0; round < rounds; round++) {
		seeds[write_slot(round)] = written_seed(who, round,
							write_slot(round));
		seeds[read_slot(round)] = filled_seed(who, round,
						      read_slot(round));
	}
	if (and_write)
		seeds[write_slot(rounds)] = written_seed(who, rounds,
							 write_slot(rounds));
}

static void check_half(const uint8_t *pool, int who, int rounds,
		       bool and_write, const char *when)
{
	uint32_t seeds[SLOTS];
	int slot;

	expected_half(who, rounds, and_write, seeds);
	for (slot = 0; slot < SLOTS; slot++) {
		int64_t bad = kvt_mismatch(pool + who * HALF + slot * SLOT, 0,
					   SLOT, seeds[slot], 0);

		CHECK(bad < 0, "%s: importer %d's slot %d differs at byte %lld "
		      "(round %d)", when, who, slot, (long long)bad, rounds);
	}
}

/* Inside one transfer, counting a start that found the other inside. */
static void transfer(struct kvreg *kv, struct fan *f,
		     enum kvreg_transfer_op op, const struct kvreg_mr *mr,
		     const struct kvreg_remote *r, uint64_t off)
{
	struct kvreg_error err;

	if (__atomic_fetch_add(&f->inside, 1, __ATOMIC_SEQ_CST))
		__atomic_fetch_add(&f->overlaps, 1, __ATOMIC_SEQ_CST);
	CHECK_OK(kvreg_transfer_remote(kv, op, mr, 0, r, off, SLOT, &err),
		 &err);
	__atomic_fetch_sub(&f->inside, 1, __ATOMIC_SEQ_CST);
}

/* This importer's connection: up, every operation done, none moved. */
static void check_own_conn(struct kvreg *kv, int who, uint64_t ops)
{
	struct kvreg_conn_info ci[64];
	struct kvreg_error err;
	unsigned int n, i, mine = 0;

	CHECK_OK(kvreg_conns(kv, ci, 64, &n, &err), &err);
	for (i = 0; i < n && i < 64; i++) {
		if (ci[i].pid != (uint32_t)getpid() ||
		    ci[i].kind != KVREG_CONN_KIND_ACTIVE)
			continue;
		mine++;
		CHECK(ci[i].state == KVREG_CONN_STATE_ESTABLISHED &&
		      ci[i].ops >= ops && !ci[i].ops_failed &&
		      !ci[i].failovers && !ci[i].mend_reason,
		      "importer %d's connection: state %u, %llu operations "
		      "(%llu posted), %llu failed, %llu failed over, mend "
		      "reason %u", who, ci[i].state,
		      (unsigned long long)ci[i].ops,
		      (unsigned long long)ops,
		      (unsigned long long)ci[i].ops_failed,
		      (unsigned long long)ci[i].failovers, ci[i].mend_reason);
	}
	CHECK(mine == 1, "importer %d has %u connections, not one", who, mine);
}

static void importer(int who, void *arg)
{
	struct fan *f = arg;
	struct kvreg *kv;
	uint8_t *wbuf = kvt_map_anon(SLOT), *rbuf = kvt_map_anon(SLOT);
	uint8_t *half = f->pool + who * HALF;
	struct kvreg_mr *wmr, *rmr;
	struct kvreg_remote *r;
	struct kvreg_error err;
	int round, slot;
	double t0;

	kvreg_close(f->parent);
	kv = kvt_open();
	CHECK_OK(kvreg_register(kv, wbuf, SLOT, KVREG_ACCESS_ALL,
				1ULL << f->dev, &wmr, &err), &err);
	CHECK_OK(kvreg_register(kv, rbuf, SLOT, KVREG_ACCESS_ALL,
				1ULL << f->dev, &rmr, &err), &err);
	CHECK_OK(kvreg_import(kv, f->x->desc, f->x->desc_size, 0, &r, &err),
		 &err);
	__atomic_fetch_add(&f->imported, 1, __ATOMIC_SEQ_CST);
	/*
	 * Importer 0 sees both connections up, then lets both go; bounded,
	 * as the other may have died.
	 */
	t0 = kvt_now();
	if (!who) {
		while (__atomic_load_n(&f->imported, __ATOMIC_SEQ_CST) <
		       IMPORTERS && kvt_now() - t0 < 60.0)
			usleep(1000);
		CHECK(kvt_passive_of(kv, f->x->pid) == IMPORTERS,
		      "the exporter lists %u connections, not %d",
		      kvt_passive_of(kv, f->x->pid), IMPORTERS);
		__atomic_store_n(&f->go, 1, __ATOMIC_SEQ_CST);
	}
	while (!__atomic_load_n(&f->go, __ATOMIC_SEQ_CST) &&
	       kvt_now() - t0 < 60.0)
		usleep(1000);
	CHECK(__atomic_load_n(&f->go, __ATOMIC_SEQ_CST), "importer %d: not "
	      "let go within 60 s", who);

	for (round = 0; round < ROUNDS; round++) {
		slot = write_slot(round);
		kvt_fill(wbuf, SLOT, written_seed(who, round, slot));
		transfer(kv, f, KVREG_OP_WRITE, wmr, r, who * HALF +
			 slot * SLOT);
		/* This WRITE, and nothing else, changed the half. */
		check_half(f->pool, who, round, true, "after a WRITE");
		slot = read_slot(round);
		kvt_fill(half + slot * SLOT, SLOT,
			 filled_seed(who, round, slot));
		memset(rbuf, 0, SLOT);
		transfer(kv, f, KVREG_OP_READ, rmr, r, who * HALF +
			 slot * SLOT);
		CHECK(kvt_mismatch(rbuf, 0, SLOT, filled_seed(who, round, slot),
				   0) < 0, "importer %d round %d: READ of slot "
		      "%d returned other bytes", who, round, slot);
	}
	check_half(f->pool, who, ROUNDS, false, "at the end");
	check_own_conn(kv, who, 2 * ROUNDS);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, rmr, &err), &err);
	CHECK_OK(kvreg_deregister(kv, wmr, &err), &err);
	kvreg_close(kv);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvt_exporter *x;
	struct kvt_snap before;
	long qps, ids;
	struct fan *f;
	int who, slot, i;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(f != MAP_FAILED, "mmap");
	f->pool = kvt_map_shared(LEN);
	f->dev = devs[0].index;
	f->parent = kv;
	for (who = 0; who < IMPORTERS; who++)
		for (slot = 0; slot < SLOTS; slot++)
			kvt_fill(f->pool + who * HALF + slot * SLOT, SLOT,
				 0x7F0000 | who << 8 | slot);
	before = kvt_snap(kv);
	qps = kvt_rdma_res("qp");
	ids = kvt_rdma_res("cm_id");

	x = kvt_exporter_start(kv, f->pool, LEN, f->dev, ADDR);
	f->x = x;
	kvt_fan_out(IMPORTERS, importer, f);
	for (who = 0; who < IMPORTERS; who++)
		check_half(f->pool, who, ROUNDS, false,
			   "seen by the exporter");
	printf("%d importers, %d rounds each of a %lu KiB WRITE and READ: "
	       "%d began while the other was inside a transfer\n",
	       IMPORTERS, ROUNDS, SLOT >> 10, f->overlaps);
	CHECK(f->overlaps >= OVERLAPS, "only %d transfers overlapped the "
	      "other importer's, want %d: the fan-in was not tried",
	      f->overlaps, OVERLAPS);

	/* Both importers gone: the exporter lets both connections go. */
	for (i = 0; i < 100 && kvt_passive_of(kv, x->pid); i++)
		usleep(100 * 1000);
	CHECK(!kvt_passive_of(kv, x->pid), "the exporter still holds %u "
	      "connections of importers that left", kvt_passive_of(kv, x->pid));
	kvt_exporter_stop(x);
	for (i = 0; i < 100 && (kvt_rdma_res("qp") > qps ||
				kvt_rdma_res("cm_id") > ids); i++)
		usleep(100 * 1000);
	CHECK(kvt_rdma_res("qp") == qps && kvt_rdma_res("cm_id") == ids,
	      "left behind: QPs %ld -> %ld, cm_ids %ld -> %ld", qps,
	      kvt_rdma_res("qp"), ids, kvt_rdma_res("cm_id"));
	kvt_check_unchanged(kv, &before, "after the fan-in");
	kvreg_close(kv);
	return T_PASS;
}
