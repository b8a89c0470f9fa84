// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A descriptor's parts as the UAPI header lays them out, and its checksum
 * made again, so a test can forge one that passes IMPORT's checks.
 */
#ifndef KVDESC_H
#define KVDESC_H

#include <stddef.h>
#include <stdint.h>

#include "kvreg.h"

/* The first path: right after a head of this header's size. */
static inline struct kvreg_desc_path *kvt_desc_path(uint8_t *desc)
{
	return (struct kvreg_desc_path *)(desc +
					  sizeof(struct kvreg_desc_head));
}

static inline struct kvreg_desc_chunk *kvt_desc_chunks(uint8_t *desc)
{
	const struct kvreg_desc_head *h = (const struct kvreg_desc_head *)desc;

	return (struct kvreg_desc_chunk *)(desc + h->head_size +
					   h->nr_paths *
					   sizeof(struct kvreg_desc_path));
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

#endif /* KVDESC_H */
