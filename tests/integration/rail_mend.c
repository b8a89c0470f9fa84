// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A refused rkey moves both ends' QPs to the error state (RC does not
 * recover). Neither is left there: the importer's rail is connected
 * again by itself, as for a lost link, and the exporter lets its dead
 * end go instead of keeping it until the file closes. Tried as a user
 * would: a region whose first chunk's rkey is wrong (a descriptor
 * rewritten, checksum recomputed) is refused there, synchronously and
 * through SUBMIT, and a transfer to its next chunk then moves bytes
 * within seconds, with no call to mend anything; the exporter holds one
 * connection, not one per refusal.
 *
 * The mend connects only rails a region uses. An IMPORT that failed (a
 * descriptor with the export's secret, its path rewritten to a peer
 * that refuses every connection) added its path to the file's rails for
 * that endpoint; the two mends that follow must not send that peer a
 * single request more.
 */
#include "kvdesc.h"
#include "kvexport.h"
#include "kvrefuser.h"

#define LEN		(4 * SZ_2M)
#define ADDR		"192.0.2.1"
#define BOUND_S		10.0

/* How long until a WRITE of chunk 1 goes through: -1 past the bound. */
static double mended(struct kvreg *kv, struct kvreg_mr *local,
		     struct kvreg_remote *r, uint8_t *pool, uint8_t *mine,
		     uint32_t seed)
{
	struct kvreg_error err;
	double t0 = kvt_now();

	kvt_fill(mine, SZ_4K, seed);
	while (kvt_now() - t0 < BOUND_S) {
		if (!kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r,
					   SZ_2M, SZ_4K, &err)) {
			CHECK(!memcmp(pool + SZ_2M, mine, SZ_4K),
			      "the WRITE's bytes");
			return kvt_now() - t0;
		}
		usleep(50 * 1000);
	}
	/* What the module said of its tries, for whoever reads the failure. */
	if (system("dmesg | grep -E 'kvreg|rxe' | tail -20"))
		printf("(no kernel log)\n");
	printf("last try: %s (reason %u, wc status %u)\n",
	       kvreg_strerror(err.reason), err.reason, err.wc_status);
	return -1;
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_completion comp;
	struct kvreg *kv = kvt_open();
	uint8_t *pool, *mine, *bad, *elsewhere;
	struct kvreg_remote *r, *dead = NULL;
	struct kvt_refuser ref;
	struct kvt_exporter *x;
	unsigned int refused;
	struct kvreg_error err;
	struct kvreg_mr *local;
	struct kvreg_op op;
	unsigned int acc, n;
	double took, t0;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	x = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	CHECK(kvt_desc_path(x->desc)->nr_chunks >= 2,
	      "the pool is one chunk: nothing to compare with");
	bad = malloc(x->desc_size);
	CHECK(bad, "malloc");
	memcpy(bad, x->desc, x->desc_size);
	kvt_desc_chunks(bad)[0].rkey ^= 0x5a00;
	kvt_reseal(bad, x->desc_size);
	/* Offset 2 MiB is past the first chunk: its rkey is the real one. */
	CHECK(kvt_desc_chunks(bad)[0].length <= SZ_2M,
	      "the first chunk is %llu bytes",
	      (unsigned long long)kvt_desc_chunks(bad)[0].length);

	mine = kvt_map_anon(SZ_4K);
	CHECK_OK(kvreg_register(kv, mine, SZ_4K, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &local, &err), &err);
	CHECK_OK(kvreg_import(kv, bad, x->desc_size, 0, &r, &err), &err);

	/* The same export's secret, its path turned to a refusing peer. */
	kvt_refuser_start(&ref, ADDR);
	elsewhere = malloc(x->desc_size);
	CHECK(elsewhere, "malloc");
	memcpy(elsewhere, x->desc, x->desc_size);
	kvt_desc_path(elsewhere)->port = ref.port;
	kvt_reseal(elsewhere, x->desc_size);
	ret = kvreg_import(kv, elsewhere, x->desc_size, 0, &dead, &err);
	CHECK(ret == -ECONNREFUSED && err.reason == KVREG_REASON_CONN_REJECTED,
	      "IMPORT through a refusing peer: %d reason %u", ret, err.reason);
	refused = ref.rejected;
	CHECK(refused >= 1, "the refusing peer saw no request");

	/* Synchronous: refused, then the rail comes back by itself. */
	ret = kvreg_transfer_remote(kv, KVREG_OP_WRITE, local, 0, r, 0, SZ_4K,
				    &err);
	CHECK(kvt_refused_posted(ret, &err), "a WRITE with a wrong rkey was "
	      "not refused once posted: %d reason %u wc %u", ret, err.reason,
	      err.wc_status);
	took = mended(kv, local, r, pool, mine, 0x21);
	CHECK(took >= 0, "after a refused rkey the rail was not back in "
	      "%.0f s", BOUND_S);
	printf("refused rkey, TRANSFER: the rail carried work again %.2f s "
	       "later\n", took);

	/* Through SUBMIT the same. */
	kvreg_op_prep(&op, KVREG_OP_WRITE, local, 0, r, 0, SZ_4K, 7);
	CHECK_OK(kvreg_submit(kv, &op, 1, &acc, &err), &err);
	CHECK(acc == 1, "accepted %u", acc);
	CHECK_OK(kvreg_reap(kv, &comp, 1, 1, 10000, &n, &err), &err);
	CHECK(n == 1 && kvt_refused_posted(comp.status, &comp.error),
	      "a SUBMIT with a wrong rkey was not refused once posted: "
	      "status %d reason %u wc %u", comp.status, comp.error.reason,
	      comp.error.wc_status);
	took = mended(kv, local, r, pool, mine, 0x22);
	CHECK(took >= 0, "after a refused rkey (SUBMIT) the rail was not "
	      "back in %.0f s", BOUND_S);
	printf("refused rkey, SUBMIT: the rail carried work again %.2f s "
	       "later\n", took);

	/* The exporter keeps the live connection, and lets the dead go. */
	t0 = kvt_now();
	while (kvt_passive_of(kv, x->pid) > 1 && kvt_now() - t0 < BOUND_S)
		usleep(100 * 1000);
	CHECK(kvt_passive_of(kv, x->pid) == 1, "the exporter holds %u "
	      "connections after two refusals and two mends",
	      kvt_passive_of(kv, x->pid));
	printf("the exporter let its dead ends go within %.1f s\n",
	       kvt_now() - t0);

	/* Two mends ran: neither went back to the failed IMPORT's peer. */
	kvt_refuser_stop(&ref);
	CHECK(ref.rejected == refused,
	      "the mends sent %u requests to the rail of a failed IMPORT",
	      ref.rejected - refused);
	printf("a failed IMPORT's rail: %u request, none from the mends\n",
	       refused);

	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	kvt_exporter_stop(x);
	free(elsewhere);
	free(bad);
	kvreg_close(kv);
	return T_PASS;
}
