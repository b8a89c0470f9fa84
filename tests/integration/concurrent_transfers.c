// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Transfers on one file hold their registrations, not the file: threads
 * move and check bytes on their own buffers while another registers,
 * queries and deregisters beside them, and a registration deregistered
 * while a transfer uses it stays whole until that transfer is done.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/ioctl.h>

#include "kvtransfer.h"

#define MOVERS	2
#define ROUNDS	100
#define BUF	(64 * SZ_4K)
#define BIG	(1024 * SZ_4K)

static struct kvreg *kv;
static struct kvreg_device_info devs[KVREG_MAX_DEVICES];
static unsigned int ndev;
static atomic_bool stop;

struct mover {
	unsigned int id;
	uint8_t *src, *dst;
	struct kvreg_mr *msrc, *mdst;
};

static void *mover(void *arg)
{
	struct mover *m = arg;
	struct kvreg_error err;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		uint32_t seed = m->id << 16 | i;
		uint32_t dev = devs[i % ndev].index;

		kvt_fill(m->src, BUF, seed);
		memset(m->dst, 0, BUF);
		CHECK_OK(kvreg_transfer(kv, KVREG_OP_WRITE, dev, m->msrc, 0,
					m->mdst, 0, BUF, &err), &err);
		CHECK(kvt_mismatch(m->dst, 0, BUF, seed, 0) < 0,
		      "mover %u round %d", m->id, i);
		memset(m->src, 0, BUF);
		CHECK_OK(kvreg_transfer(kv, KVREG_OP_READ, dev, m->msrc, 0,
					m->mdst, 0, BUF, &err), &err);
		CHECK(kvt_mismatch(m->src, 0, BUF, seed, 0) < 0,
		      "mover %u read back, round %d", m->id, i);
	}
	return NULL;
}

static void *churner(void *arg)
{
	uint8_t *buf = arg;
	struct kvreg_error err;
	struct kvreg_query q;
	struct kvreg_mr *mr;
	long *rounds = calloc(1, sizeof(*rounds));

	while (!atomic_load(&stop)) {
		CHECK_OK(kvreg_register(kv, buf, BUF, KVREG_ACCESS_ALL, 0, &mr,
					&err), &err);
		CHECK_OK(kvreg_query(kv, kvreg_mr_handle(mr), &q, NULL, 0, &err),
			 &err);
		CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
		(*rounds)++;
	}
	return rounds;
}

struct victim {
	struct kvreg_mr *msrc, *mdst;
	uint8_t *dst;
	uint64_t handle;
	int done, gone;
};

/* Transfers from a registration until it is deregistered under it. */
static void *victim_mover(void *arg)
{
	struct victim *v = arg;
	struct kvreg_error e;
	struct kvreg_transfer t = {
		.size = sizeof(t), .opcode = KVREG_OP_WRITE,
		.device_index = devs[0].index, .local_handle = v->handle,
		.remote_handle = kvreg_mr_handle(v->mdst), .length = BIG,
	};

	for (;;) {
		int ret;

		memset(v->dst, 0, BIG);
		t.size = sizeof(t);
		t.error = (uintptr_t)&e;
		t.error_size = sizeof(e);
		ret = ioctl(kvreg_fd(kv), KVREG_IOC_TRANSFER, &t) ? -errno : 0;
		if (ret == -ENOENT)
			break;
		CHECK(!ret, "transfer: %d reason %u", ret, e.reason);
		/* Whole, even when the deregistration came while it ran. */
		CHECK(kvt_mismatch(v->dst, 0, BIG, 0x5a, 0) < 0, "partial");
		v->done++;
	}
	v->gone = 1;
	return NULL;
}

int main(void)
{
	struct mover m[MOVERS];
	struct victim v = { 0 };
	struct kvt_snap before;
	struct kvreg_deregister d = { .size = sizeof(d) };
	struct kvreg_error err;
	pthread_t mt[MOVERS], ct, vt;
	uint8_t *churn_buf, *vsrc;
	long *churned;
	unsigned int i;

	kv = kvt_open();
	ndev = kvt_devices(kv, devs);
	if (!ndev)
		kvt_skip("no RDMA device");
	before = kvt_snap(kv);
	for (i = 0; i < MOVERS; i++) {
		m[i].id = i + 1;
		m[i].src = kvt_map_anon(BUF);
		m[i].dst = kvt_map_anon(BUF);
		CHECK_OK(kvreg_register(kv, m[i].src, BUF, KVREG_ACCESS_ALL, 0,
					&m[i].msrc, &err), &err);
		CHECK_OK(kvreg_register(kv, m[i].dst, BUF, KVREG_ACCESS_ALL, 0,
					&m[i].mdst, &err), &err);
	}
	churn_buf = kvt_map_anon(BUF);
	atomic_store(&stop, false);
	pthread_create(&ct, NULL, churner, churn_buf);
	for (i = 0; i < MOVERS; i++)
		pthread_create(&mt[i], NULL, mover, &m[i]);
	for (i = 0; i < MOVERS; i++)
		pthread_join(mt[i], NULL);
	atomic_store(&stop, true);
	pthread_join(ct, (void **)&churned);
	CHECK(*churned > 0, "no registration beside the transfers");
	printf("%d checked round trips on each of %d threads, %ld "
	       "register/query/deregister rounds beside them\n", ROUNDS,
	       MOVERS, *churned);
	free(churned);
	for (i = 0; i < MOVERS; i++) {
		CHECK_OK(kvreg_deregister(kv, m[i].msrc, &err), &err);
		CHECK_OK(kvreg_deregister(kv, m[i].mdst, &err), &err);
	}

	/* Deregistered while a transfer may be using it. */
	vsrc = kvt_map_anon(BIG);
	v.dst = kvt_map_anon(BIG);
	kvt_fill(vsrc, BIG, 0x5a);
	CHECK_OK(kvreg_register(kv, vsrc, BIG, KVREG_ACCESS_ALL, 0, &v.msrc,
				&err), &err);
	CHECK_OK(kvreg_register(kv, v.dst, BIG, KVREG_ACCESS_ALL, 0, &v.mdst,
				&err), &err);
	v.handle = kvreg_mr_handle(v.msrc);
	pthread_create(&vt, NULL, victim_mover, &v);
	usleep(200000);
	d.handle = v.handle;
	CHECK(!ioctl(kvreg_fd(kv), KVREG_IOC_DEREGISTER, &d), "deregister");
	/* Its library handle names nothing now; kvreg_close() frees it. */
	pthread_join(vt, NULL);
	CHECK(v.gone && v.done > 0, "%d transfers before the deregistration",
	      v.done);
	printf("%d whole transfers, then the deregistered handle was refused\n",
	       v.done);
	CHECK_OK(kvreg_deregister(kv, v.mdst, &err), &err);
	kvt_check_unchanged(kv, &before, "after the concurrent transfers");
	kvreg_close(kv);
	return T_PASS;
}
