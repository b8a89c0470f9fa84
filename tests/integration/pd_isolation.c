// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * One protection domain per open file, tested as an attack: another
 * process that knows a registration's address and rkey (rkeys are small
 * integers on rxe, easy to guess) writes and reads with them through its
 * own file, as a peer holding a leaked key would. The device refuses with
 * a remote access error and the owner's bytes are unchanged. The same
 * keys through the owner's own file work, so the keys themselves are good.
 * A second file of the same process is a stranger too.
 */
#include <sys/wait.h>

#include "kvtransfer.h"

#define LEN	(8 * SZ_4K)
#define IB_WC_WR_FLUSH_ERR	5
#define IB_WC_REM_ACCESS_ERR	10

/*
 * The responder refuses the key with a remote access error. The QP is
 * connected to itself, so the responder's error also moves the requester
 * to the error state, and on some kernels (rxe on 6.12) that flushes the
 * request before the NAK completes it: either status is the refusal.
 */
static bool refused_by_responder(uint32_t wc_status)
{
	return wc_status == IB_WC_REM_ACCESS_ERR ||
	       wc_status == IB_WC_WR_FLUSH_ERR;
}

/* Through @kv, write and read with @victim's key: both must be refused. */
static void attack(struct kvreg *kv, uint32_t dev, const struct kvreg_key *k,
		   uint8_t *mine, uint32_t seed, const char *who)
{
	struct kvreg_error err;
	struct kvreg_mr *mr;

	CHECK_OK(kvreg_register(kv, mine, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&mr, &err), &err);
	kvt_fill(mine, LEN, seed);
	CHECK_FAILS(kvreg_transfer_raw(kv, KVREG_OP_WRITE, dev, mr, 0, k->iova,
				       k->rkey, LEN, &err), &err, EIO,
		    KVREG_REASON_TRANSFER_FAILED);
	CHECK(refused_by_responder(err.wc_status), "%s: write: status %u", who,
	      err.wc_status);
	memset(mine, 0, LEN);
	CHECK_FAILS(kvreg_transfer_raw(kv, KVREG_OP_READ, dev, mr, 0, k->iova,
				       k->rkey, LEN, &err), &err, EIO,
		    KVREG_REASON_TRANSFER_FAILED);
	CHECK(refused_by_responder(err.wc_status), "%s: read: status %u", who,
	      err.wc_status);
	for (uint64_t i = 0; i < LEN; i++)
		CHECK(!mine[i], "%s read byte %llu of the victim", who,
		      (unsigned long long)i);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	printf("%s: refused by the device both ways, nothing read\n", who);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open(), *second;
	const struct kvreg_key *k;
	struct kvreg_mr *victim, *src;
	struct kvt_snap before;
	struct kvreg_error err;
	uint8_t *a, *b, *c;
	uint32_t dev;
	int status;
	pid_t pid;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	a = kvt_map_anon(LEN);
	b = kvt_map_anon(LEN);
	c = kvt_map_anon(LEN);
	before = kvt_snap(kv);
	CHECK_OK(kvreg_register(kv, a, LEN, KVREG_ACCESS_ALL, 1ULL << dev,
				&victim, &err), &err);
	kvt_fill(a, LEN, 0x41);
	k = kvreg_mr_key_at(victim, dev, 0);
	CHECK(k && k->length >= LEN, "one key covers the buffer");

	/* Another process, with the victim's address and rkey. */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct kvreg *attacker = kvt_open();

		attack(attacker, dev, k, b, 0x99, "another process");
		kvreg_close(attacker);
		exit(T_PASS);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "attacker process failed");
	CHECK(kvt_mismatch(a, 0, LEN, 0x41, 0) < 0,
	      "another process changed the victim's bytes");

	/* Another file of the same process: its own PD, no way in either. */
	second = kvt_open();
	attack(second, dev, k, c, 0x77, "a second file of the owner");
	kvreg_close(second);
	CHECK(kvt_mismatch(a, 0, LEN, 0x41, 0) < 0,
	      "a second file changed the victim's bytes");

	/* The owner's own file, the same raw keys: the bytes move. */
	CHECK_OK(kvreg_register(kv, b, LEN, KVREG_ACCESS_ALL, 1ULL << dev, &src,
				&err), &err);
	kvt_fill(b, LEN, 0x42);
	CHECK_OK(kvreg_transfer_raw(kv, KVREG_OP_WRITE, dev, src, 0, k->iova,
				    k->rkey, LEN, &err), &err);
	CHECK(kvt_mismatch(a, 0, LEN, 0x42, 0) < 0, "owner's raw write");
	CHECK_OK(kvreg_deregister(kv, src, &err), &err);
	CHECK_OK(kvreg_deregister(kv, victim, &err), &err);
	kvt_check_unchanged(kv, &before, "after the attacks");
	kvreg_close(kv);
	return T_PASS;
}
