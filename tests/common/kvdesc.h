// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A descriptor's parts as the UAPI header lays them out, and its checksum
 * made again, so a test can forge one that passes IMPORT's checks.
 */
#ifndef KVDESC_H
#define KVDESC_H

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kvreg.h"

static inline const struct kvreg_desc_head *kvt_desc_head(const uint8_t *d)
{
	return (const struct kvreg_desc_head *)d;
}

/*
 * The first path and its chunks, writable so that a test can forge them
 * (kvt_reseal() then), from a descriptor it may hold as const.
 */
static inline struct kvreg_desc_path *kvt_desc_path(const uint8_t *desc)
{
	return (struct kvreg_desc_path *)(uintptr_t)(desc +
		kvt_desc_head(desc)->head_size);
}

static inline struct kvreg_desc_chunk *kvt_desc_chunks(const uint8_t *desc)
{
	const struct kvreg_desc_head *h = kvt_desc_head(desc);

	return (struct kvreg_desc_chunk *)(uintptr_t)(desc + h->head_size +
		h->nr_paths * sizeof(struct kvreg_desc_path));
}

/* FNV-1a over all @size bytes, the checksum field taken as zero. */
static inline void kvt_reseal(uint8_t *desc, size_t size)
{
	struct kvreg_desc_head *h = (struct kvreg_desc_head *)desc;
	uint32_t hash = 0x811c9dc5;
	size_t i;

	h->checksum = 0;
	for (i = 0; i < size; i++) {
		hash ^= desc[i];
		hash *= 0x01000193;
	}
	h->checksum = hash;
}

/*
 * A sealed descriptor of one 4 KiB chunk (rkey 1) with one path, to
 * @addr (IPv4, or IPv6 when it has a colon) and @port: what a peer that
 * is not kvreg's endpoint needs for an importer to connect to it. Returns
 * its size; @desc must have room for it.
 */
static inline size_t kvt_desc_to(uint8_t *desc, const char *addr,
				 uint16_t port)
{
	struct kvreg_desc_head *h = (struct kvreg_desc_head *)desc;
	struct kvreg_desc_path *p = (struct kvreg_desc_path *)(h + 1);
	struct kvreg_desc_chunk *c = (struct kvreg_desc_chunk *)(p + 1);
	size_t n = sizeof(*h) + sizeof(*p) + sizeof(*c);

	memset(desc, 0, n);
	h->magic = KVREG_DESC_MAGIC;
	h->version = KVREG_DESC_VERSION;
	h->head_size = sizeof(*h);
	h->total_size = (uint32_t)n;
	h->length = 4096;
	h->access = KVREG_ACCESS_REMOTE_READ | KVREG_ACCESS_REMOTE_WRITE;
	h->nr_paths = 1;
	p->family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	p->port = port;
	if (inet_pton(p->family, addr, p->addr) != 1)
		return 0;
	p->nr_chunks = 1;
	c->iova = 4096;
	c->length = 4096;
	c->rkey = 1;
	kvt_reseal(desc, n);
	return n;
}

#endif /* KVDESC_H */
