// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A peer that knows nothing of libkvreg: plain librdmacm and libibverbs,
 * with only the UAPI header's documented formats (the descriptor, the
 * connection private data). It connects to a kvreg endpoint, presenting
 * the secret from the descriptor, and WRITEs and READs the exported pool
 * with the descriptor's rkeys; the bytes check on both sides. A wrong
 * secret is refused with kvreg's reason in the reject's private data.
 * This is what lets an existing user-space transfer engine on another
 * node use a pool kvreg registered.
 */
#include "kvexport.h"
#include "kvpeer.h"

#define LEN	(2 * SZ_2M + 5 * SZ_4K)
#define ADDR	"192.0.2.1"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_cm_rej rej = { 0 };
	uint8_t secret[KVREG_SECRET_LEN];
	struct kvt_peer p, q;
	uint8_t *pool, *mine;
	struct kvt_exporter *c;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	kvt_uverbs();
	pool = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	mine = kvt_map_anon(LEN);
	c = kvt_exporter_start(kv, pool, LEN, devs[0].index, ADDR);
	CHECK(kvt_desc_head(c->desc)->magic == KVREG_DESC_MAGIC &&
	      kvt_desc_head(c->desc)->version == KVREG_DESC_VERSION,
	      "descriptor");
	printf("descriptor: %zu bytes, %u chunks, port %u\n", c->desc_size,
	       kvt_desc_path(c->desc)->nr_chunks,
	       kvt_desc_path(c->desc)->port);

	/* Without the secret: refused, and the reject says why. */
	memcpy(secret, kvt_desc_head(c->desc)->secret, sizeof(secret));
	secret[0] ^= 1;
	CHECK(kvt_peer_connect(&q, c->desc, secret, mine, LEN, &rej) ==
	      RDMA_CM_EVENT_REJECTED, "a wrong secret was not refused");
	CHECK(rej.magic == KVREG_CM_MAGIC &&
	      rej.reason == KVREG_REASON_CONN_BAD_SECRET,
	      "reject private data: magic %#x reason %u", rej.magic,
	      rej.reason);
	kvt_peer_close(&q, false);
	printf("wrong secret: rejected, reason %u in the private data\n",
	       rej.reason);

	CHECK(kvt_peer_connect(&p, c->desc, kvt_desc_head(c->desc)->secret,
			       mine, LEN, NULL) == RDMA_CM_EVENT_ESTABLISHED,
	      "connect");
	kvt_fill(mine, LEN, 0x71);
	CHECK(kvt_peer_rdma_desc(&p, c->desc, mine, IBV_WR_RDMA_WRITE) ==
	      IBV_WC_SUCCESS, "plain-verbs WRITE failed");
	CHECK(kvt_mismatch(pool, 0, LEN, 0x71, 0) < 0,
	      "plain-verbs WRITE: pool differs at %lld",
	      (long long)kvt_mismatch(pool, 0, LEN, 0x71, 0));
	kvt_fill(pool, LEN, 0x72);
	memset(mine, 0, LEN);
	CHECK(kvt_peer_rdma_desc(&p, c->desc, mine, IBV_WR_RDMA_READ) ==
	      IBV_WC_SUCCESS, "plain-verbs READ failed");
	CHECK(kvt_mismatch(mine, 0, LEN, 0x72, 0) < 0,
	      "plain-verbs READ: differs at %lld",
	      (long long)kvt_mismatch(mine, 0, LEN, 0x72, 0));
	kvt_peer_close(&p, true);
	printf("plain librdmacm + libibverbs peer: WRITE and READ of %lu "
	       "bytes over %u chunks, checked on both sides\n", LEN,
	       kvt_desc_path(c->desc)->nr_chunks);

	kvt_exporter_stop(c);
	kvreg_close(kv);
	return T_PASS;
}
