// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The last put of a rail group (UNIMPORT of its last region, or the
 * file's close; both end in the same release) does not wait for its
 * mend. An importer's rail goes down when its exporter's address
 * vanishes (deleted from the guest's dummy link, so whatever is sent
 * there is dropped), and the mend then connects to an address that
 * never answers: each try waits for the CM's steps to time out, seconds.
 * The importer UNIMPORTs half a second into such a try. It must return
 * within a second, and the kvreg_connect_stopped tracepoint must show
 * that it stopped a connect in progress (the race this test is about
 * happened). Before, UNIMPORT waited for the try to time out.
 */
#include "kvexport.h"
#include "kvtrace.h"

#define LEN		(4 * SZ_4K)
#define ADDR		"192.0.2.1"
#define GONE		"192.0.2.77"
/* The RoCE v2 GID of GONE, as sysfs shows it. */
#define GONE_GID	"0000:0000:0000:0000:0000:ffff:c000:024d"
#define LINK		"kvdummy0"

static void gone_addr(bool add)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip addr %s " GONE "/24 dev " LINK,
		 add ? "add" : "del");
	CHECK(!system(cmd), "%s", cmd);
}

/* Whether rxe0 has a GID for GONE yet: LISTEN needs one. */
static bool gone_gid(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 "grep -qs '^" GONE_GID "$' /sys/class/infiniband/rxe0/ports/1/gids/*");
	return !system(cmd);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open(), *imp;
	struct kvreg_remote *r;
	struct kvt_exporter *x;
	struct kvreg_error err;
	struct kvtr_event ev;
	struct kvreg_mr *mine;
	uint8_t *pool, *buf;
	double t0, fail_s, gone_s;
	int stopped = 0;
	FILE *tf;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	gone_addr(true);
	for (t0 = kvt_now(); !gone_gid() && kvt_now() - t0 < 10; )
		usleep(50 * 1000);
	CHECK(gone_gid(), "no GID for %s on rxe0 after 10 s", GONE);

	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	x = kvt_exporter_start(kv, pool, LEN, devs[0].index, GONE);

	imp = kvt_open();
	buf = kvt_map_anon(LEN);
	CHECK_OK(kvreg_register(imp, buf, LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &mine, &err), &err);
	CHECK_OK(kvreg_import(imp, x->desc, x->desc_size, 0, &r, &err), &err);
	kvt_fill(buf, LEN, 0x31);
	CHECK_OK(kvreg_transfer_remote(imp, KVREG_OP_WRITE, mine, 0, r, 0, LEN,
				       &err), &err);
	CHECK(kvt_mismatch(pool, 0, LEN, 0x31, 0) < 0, "the WRITE's bytes");

	/*
	 * The address goes: a transfer fails at the retry limit, and the
	 * mend starts to connect to an address that drops what it is sent.
	 */
	gone_addr(false);
	t0 = kvt_now();
	CHECK(kvreg_transfer_remote(imp, KVREG_OP_WRITE, mine, 0, r, 0, LEN,
				    &err),
	      "a WRITE to a vanished address went through");
	fail_s = kvt_now() - t0;
	printf("the WRITE after the address went failed in %.1f s: %s\n",
	       fail_s, kvreg_strerror(err.reason));

	kvtr_start("kvreg_connect_stopped");
	usleep(500 * 1000);
	t0 = kvt_now();
	CHECK_OK(kvreg_unimport(imp, r, &err), &err);
	gone_s = kvt_now() - t0;
	kvtr_stop();
	tf = kvtr_open();
	while (kvtr_next(tf, &ev))
		stopped += !strcmp(ev.name, "kvreg_connect_stopped");
	fclose(tf);
	printf("UNIMPORT during the mend's connect: %.2f s, %d connect "
	       "stopped\n", gone_s, stopped);
	CHECK(stopped == 1, "%d connects stopped by UNIMPORT: it did not "
	      "come while the mend was connecting", stopped);
	CHECK(gone_s < 1.0, "UNIMPORT took %.2f s: it waited for the mend",
	      gone_s);

	CHECK_OK(kvreg_deregister(imp, mine, &err), &err);
	kvreg_close(imp);
	kvt_exporter_kill(x);
	kvreg_close(kv);
	return T_PASS;
}
