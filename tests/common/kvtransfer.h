/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * Register two buffers, move bytes between them (by CPU copy, then by RDMA
 * through an export of one), and check every byte that should move did,
 * and that the bytes around each range did not.
 */
#ifndef KVTRANSFER_H
#define KVTRANSFER_H

#include <endian.h>

#include "kvdesc.h"
#include "kvtest.h"

static inline uint64_t kvt_span_pages(const void *p, uint64_t len)
{
	uintptr_t lo = (uintptr_t)p & ~(SZ_4K - 1);
	uintptr_t hi = ((uintptr_t)p + len + SZ_4K - 1) & ~(SZ_4K - 1);

	return (hi - lo) / SZ_4K;
}

/*
 * Base pages: MR pages of 4 KiB, or larger where the pages happen to be
 * physically contiguous (kvreg picks the largest that fits): 4 MiB came
 * of 4 MiB of base pages on a fresh debug guest. From 2 MiB up, the range
 * must hold no THP: the test asked for base pages, and got them.
 */
#define KVT_BASE_PAGES	0
/* Any huge page size: 2 MiB, or more where huge pages are contiguous. */
#define KVT_HUGE_PAGES	1
/* Whatever the memory gives: the keys only have to tile the buffer. */
#define KVT_ANY_PAGES	2

/*
 * The key of device @dev: one, over [addr, addr + len), with no lkey or
 * rkey (REGISTER makes no MR), and the page size an export's MRs take
 * there as @want_shift says. Returns how many MRs an export makes there.
 */
static inline unsigned int kvt_check_keys(const struct kvreg_mr *mr,
					  const void *addr, uint64_t len,
					  uint32_t dev, uint32_t want_shift)
{
	unsigned int n, i, found = 0, mrs = 0;
	const struct kvreg_key *k = kvreg_mr_keys(mr, &n);

	for (i = 0; i < n; i++) {
		if (k[i].device_index != dev)
			continue;
		found++;
		if (want_shift == KVT_BASE_PAGES)
			CHECK(k[i].page_shift >= 12 && k[i].page_shift <= 30 &&
			      (k[i].page_shift < 21 ||
			       !kvt_thp_bytes(addr, len)),
			      "device %u page_shift %u over %llu bytes of THP, "
			      "want base pages", dev, k[i].page_shift,
			      (unsigned long long)kvt_thp_bytes(addr, len));
		else if (want_shift == KVT_ANY_PAGES)
			CHECK(k[i].page_shift >= 12 && k[i].page_shift <= 30,
			      "device %u page_shift %u", dev, k[i].page_shift);
		else if (want_shift == KVT_HUGE_PAGES)
			CHECK(k[i].page_shift >= 21 && k[i].page_shift <= 30,
			      "device %u page_shift %u, want huge pages", dev,
			      k[i].page_shift);
		else
			CHECK(k[i].page_shift == want_shift,
			      "device %u page_shift %u, want %u", dev,
			      k[i].page_shift, want_shift);
		CHECK(k[i].iova == (uintptr_t)addr && k[i].length == len,
		      "device %u key over %#llx+%llu, want %p+%llu", dev,
		      (unsigned long long)k[i].iova,
		      (unsigned long long)k[i].length, addr,
		      (unsigned long long)len);
		CHECK(k[i].mrs >= 1 && !k[i].reserved,
		      "device %u key: %u MRs for an export, reserved %u", dev,
		      k[i].mrs, k[i].reserved);
		mrs = k[i].mrs;
	}
	CHECK(found == 1, "%u keys on device %u, want 1", found, dev);
	return mrs;
}

static inline void kvt_xfer(struct kvreg *kv, enum kvreg_transfer_op op,
			    uint32_t dev, const struct kvreg_mr *local,
			    uint64_t loff, const struct kvreg_mr *remote,
			    uint64_t roff, uint64_t n)
{
	struct kvreg_error err;

	CHECK_OK(kvreg_transfer(kv, op, dev, local, loff, remote, roff, n,
				&err), &err);
}

/*
 * Offsets worth crossing: page and huge page boundaries, the ends, and
 * with @desc (an export's descriptor) its first chunk boundaries, where
 * the remote side goes from one MR to the next.
 */
static inline unsigned int kvt_edge_offsets(uint8_t *desc, uint64_t len,
					    uint64_t *out, unsigned int max,
					    uint64_t width)
{
	const uint64_t cands[] = { 0, SZ_4K - 3, SZ_4K, 2 * SZ_4K - 1,
				   SZ_2M - 5, SZ_2M + SZ_4K - 2 };
	unsigned int n = 0, i;
	uint64_t at = 0;

	for (i = 0; i < sizeof(cands) / sizeof(cands[0]) && n < max; i++)
		if (cands[i] + width <= len)
			out[n++] = cands[i];
	for (i = 0; desc && i < 2 && n < max &&
	     i + 1 < le32toh(kvt_desc_path(desc)->nr_chunks); i++) {
		at += le64toh(kvt_desc_chunks(desc)[i].length);
		if (at >= 4 && at - 4 + width <= len)
			out[n++] = at - 4;
	}
	if (n < max && len >= width)
		out[n++] = len - width;
	return n;
}

/* Bytes inside the written ranges carry the pattern; all others stay 0. */
static inline void kvt_check_ranges(const uint8_t *b, uint64_t len,
				    const uint64_t *offs, unsigned int n,
				    uint64_t width, uint32_t seed)
{
	uint8_t *written = calloc(1, len);
	uint64_t i;
	unsigned int r;

	CHECK(written, "calloc");
	for (r = 0; r < n; r++)
		memset(written + offs[r], 1, width);
	for (i = 0; i < len; i++) {
		uint64_t w = 1, v = 1;

		/* Eight bytes no range wrote and that are zero: next. */
		if (i % 8 == 0 && i + 8 <= len) {
			memcpy(&w, written + i, 8);
			memcpy(&v, b + i, 8);
		}
		if (!w && !v) {
			i += 7;
			continue;
		}
		CHECK(written[i] ? b[i] == kvt_byte(seed, i) : !b[i],
		      "byte %llu is %#x after edge writes (%s range)",
		      (unsigned long long)i, b[i],
		      written[i] ? "inside a" : "outside every");
	}
	free(written);
}

/*
 * The address tests/guest/rxe-up.sh gave the netdev under device @dev
 * (rxeN), in @buf: where an endpoint on that device listens.
 */
static inline const char *kvt_addr_of(struct kvreg *kv, uint32_t dev,
				      char *buf, size_t size)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	unsigned int n = kvt_devices(kv, devs), i, rxe = ~0U;

	for (i = 0; i < n; i++)
		if (devs[i].index == dev)
			CHECK(sscanf(devs[i].name, "rxe%u", &rxe) == 1,
			      "device %u is %s, not rxeN", dev, devs[i].name);
	CHECK(rxe != ~0U, "no device %u", dev);
	if (rxe == 0)
		snprintf(buf, size, "192.0.2.1");
	else if (rxe == 1)
		snprintf(buf, size, "198.51.100.1");
	else
		snprintf(buf, size, "203.0.113.%u", rxe);
	return buf;
}

/*
 * @mr exported on an endpoint of @kv on device @dev and imported back by
 * @kv, for RDMA in one process; kvreg_unlisten(*@ep) revokes it.
 */
static uint8_t kvt_self_desc[16384];

/* The descriptor of the last kvt_self_import() is in kvt_self_desc. */
static inline struct kvreg_remote *kvt_self_import(struct kvreg *kv,
						   const struct kvreg_mr *mr,
						   uint32_t dev, uint64_t *ep)
{
	uint8_t *desc = kvt_self_desc;
	struct kvreg_remote *r;
	struct kvreg_error err;
	char addr[32];
	size_t size;

	CHECK_OK(kvreg_listen(kv, kvt_addr_of(kv, dev, addr, sizeof(addr)), 0,
			      ep, NULL, &err), &err);
	CHECK_OK(kvreg_export(kv, *ep, mr, desc, sizeof(kvt_self_desc), &size,
			      &err),
		 &err);
	CHECK_OK(kvreg_import(kv, desc, size, 0, &r, &err), &err);
	return r;
}

/*
 * An attack through @desc, which the exporter must refuse: a fresh IMPORT,
 * one @op of 4 KiB between @local and the region, and the UNIMPORT. Returns
 * the transfer's return, its error in @err, for kvt_refused_posted().
 *
 * What is tried again never reached the exporter's device with the key:
 * on every kernel, the CM refusing the connect as stale (REJ status 10,
 * IB_CM_REJ_STALE_CONN: the QP number rxe reuses still names the
 * exporter's end of an earlier connection, which it is told to drop); on
 * 5.10, whose rxe drops a request with a bad rkey rather than NAK it, so
 * that such ends linger, also a connect left unanswered (CONN_TIMEOUT)
 * and a connection lost before the transfer was posted (CONN_LOST with
 * no work completion; seen under load, most likely the same stale-QP
 * handling dropping a connection just made). Each retry is counted in
 * *@retries when it is given.
 */
static inline int kvt_attack(struct kvreg *kv, const uint8_t *desc, size_t n,
			     enum kvreg_transfer_op op, struct kvreg_mr *local,
			     unsigned int *retries, struct kvreg_error *err)
{
	int ret, stale = 0, timeouts = 0, lost = 0;
	struct kvreg_error unimport_err;
	struct kvreg_remote *r;
	char msg[512];

	for (;;) {
		ret = kvreg_import(kv, desc, n, 0, &r, err);
		if (ret && ((err->reason == KVREG_REASON_CONN_REJECTED &&
			     err->driver_errno == 10 && ++stale < 40) ||
			    (kvt_on_5_10() &&
			     err->reason == KVREG_REASON_CONN_TIMEOUT &&
			     ++timeouts < 4))) {
			if (retries)
				++*retries;
			usleep(250 * 1000);
			continue;
		}
		kvreg_format_error(err, ret, msg, sizeof(msg));
		CHECK(!ret, "the forged descriptor's IMPORT failed: %s", msg);
		ret = kvreg_transfer_remote(kv, op, local, 0, r, 0, SZ_4K, err);
		CHECK_OK(kvreg_unimport(kv, r, &unimport_err), &unimport_err);
		if (kvt_on_5_10() && ret == -ENOTCONN &&
		    err->reason == KVREG_REASON_CONN_LOST && !err->wc_status &&
		    ++lost < 8) {
			if (retries)
				++*retries;
			usleep(250 * 1000);
			continue;
		}
		return ret;
	}
}

/*
 * The mappings' turn: a TRANSFER between two registrations is a CPU copy,
 * which proves the pins but not what the devices see. So @mb is exported
 * and imported back, and the edges are crossed by RDMA: @ma's DMA runs
 * as the local side's scatter entries (read by a WRITE, landed in by a
 * READ), @mb's export MRs as the remote one, their chunk boundaries
 * among the edges. A run out of order, an entry off by a page or an MR
 * boundary off by one moves the wrong bytes here.
 */
static inline void kvt_rdma_roundtrip(struct kvreg *kv, uint8_t *a,
				      uint8_t *b, const struct kvreg_mr *ma,
				      const struct kvreg_mr *mb, uint64_t len,
				      uint32_t dev)
{
	const uint64_t width = 9;
	struct kvreg_error err;
	uint64_t ep, offs[16];
	struct kvreg_remote *r = kvt_self_import(kv, mb, dev, &ep);
	unsigned int n, i;

	kvt_fill(a, len, 0xD4);
	memset(b, 0, len);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, ma, 0, r, 0, len,
				       &err), &err);
	CHECK(kvt_mismatch(b, 0, len, 0xD4, 0) < 0,
	      "RDMA WRITE mismatch at %lld",
	      (long long)kvt_mismatch(b, 0, len, 0xD4, 0));

	kvt_fill(a, len, 0xE5);
	memset(b, 0, len);
	n = kvt_edge_offsets(kvt_self_desc, len, offs, 16, width);
	for (i = 0; i < n; i++)
		CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, ma, offs[i],
					       r, offs[i], width, &err), &err);
	kvt_check_ranges(b, len, offs, n, width, 0xE5);

	/* READs land through @ma's MRs: the same edges, the other way. */
	kvt_fill(b, len, 0xF6);
	memset(a, 0, len);
	for (i = 0; i < n; i++)
		CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, ma, offs[i],
					       r, offs[i], width, &err), &err);
	kvt_check_ranges(a, len, offs, n, width, 0xF6);

	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
}

/*
 * Register @a and @b, check their keys and what is pinned (@kernel_pins
 * pins in all, or -1 for what kvt_expected_pins() says), move bytes both
 * ways across every edge, by CPU copy and by RDMA, deregister, and check
 * nothing is left.
 */
static inline void kvt_roundtrip_pins(struct kvreg *kv, uint8_t *a,
				      uint8_t *b, uint64_t len, uint32_t dev,
				      uint32_t want_shift, int64_t kernel_pins)
{
	const uint64_t width = 9;
	struct kvt_snap before = kvt_snap(kv);
	struct kvreg_mr *ma, *mb;
	struct kvreg_error err;
	uint64_t offs[16], pages;
	unsigned int n, i;

	pages = kvt_span_pages(a, len) + kvt_span_pages(b, len);
	kvt_fill(a, len, 0xA1);
	memset(b, 0, len);
	CHECK_OK(kvreg_register(kv, a, len, KVREG_ACCESS_ALL, 1ULL << dev,
				&ma, &err), &err);
	CHECK_OK(kvreg_register(kv, b, len, KVREG_ACCESS_ALL, 1ULL << dev,
				&mb, &err), &err);
	n = kvt_check_keys(ma, a, len, dev, want_shift);
	kvt_check_keys(mb, b, len, dev, want_shift);
	printf("registered 2 x %llu bytes on device %u: %u MR(s) each to "
	       "export, page shift %u\n", (unsigned long long)len, dev, n,
	       kvreg_mr_keys(ma, &i)[0].page_shift);
	if (kernel_pins < 0)
		kernel_pins = kvt_expected_pins(a, len) +
			      kvt_expected_pins(b, len);
	kvt_check_pins(kv, &before, pages, kernel_pins, "after REGISTER");

	/* The whole buffer, local a -> remote b. */
	kvt_xfer(kv, KVREG_OP_WRITE, dev, ma, 0, mb, 0, len);
	CHECK(kvt_mismatch(b, 0, len, 0xA1, 0) < 0, "WRITE mismatch at %lld",
	      (long long)kvt_mismatch(b, 0, len, 0xA1, 0));

	/* Small ranges across every edge; their neighbours stay zero. */
	kvt_fill(a, len, 0xB2);
	memset(b, 0, len);
	n = kvt_edge_offsets(NULL, len, offs, 16, width);
	for (i = 0; i < n; i++)
		kvt_xfer(kv, KVREG_OP_WRITE, dev, ma, offs[i], mb, offs[i],
			 width);
	kvt_check_ranges(b, len, offs, n, width, 0xB2);
	/* First and last byte alone. */
	memset(b, 0, len);
	kvt_xfer(kv, KVREG_OP_WRITE, dev, ma, 0, mb, 0, 1);
	kvt_xfer(kv, KVREG_OP_WRITE, dev, ma, len - 1, mb, len - 1, 1);
	CHECK(b[0] == a[0] && b[len - 1] == a[len - 1] && !b[1] &&
	      !b[len - 2], "first/last byte transfer");

	/* READ: remote b -> local a, whole, then shifted across pages. */
	kvt_fill(b, len, 0xC3);
	memset(a, 0, len);
	kvt_xfer(kv, KVREG_OP_READ, dev, ma, 0, mb, 0, len);
	CHECK(kvt_mismatch(a, 0, len, 0xC3, 0) < 0, "READ mismatch at %lld",
	      (long long)kvt_mismatch(a, 0, len, 0xC3, 0));
	if (len > 3 * SZ_4K) {
		uint64_t span = len - 2 * SZ_4K - 7;

		memset(a, 0, len);
		kvt_xfer(kv, KVREG_OP_READ, dev, ma, 5, mb, SZ_4K + 2, span);
		CHECK(kvt_mismatch(a, 5, span, 0xC3, SZ_4K + 2) < 0,
		      "shifted READ mismatch");
		CHECK(!a[4] && !a[5 + span], "shifted READ overran");
	}

	kvt_rdma_roundtrip(kv, a, b, ma, mb, len, dev);
	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	kvt_check_unchanged(kv, &before, "after DEREGISTER");
}

static inline void kvt_roundtrip(struct kvreg *kv, uint8_t *a, uint8_t *b,
				 uint64_t len, uint32_t dev,
				 uint32_t want_shift)
{
	kvt_roundtrip_pins(kv, a, b, len, dev, want_shift, -1);
}

#endif
