// SPDX-License-Identifier: GPL-2.0-only
/*
 * The descriptor of an exported registration (format in the UAPI header):
 * written by EXPORT, read by IMPORT on another node. Reading trusts
 * nothing: every size, count and sum is checked before it is used, and
 * each way a blob can be wrong has its own reason. Pure: no locks, and
 * the only allocation is the parsed result's.
 */
#include <linux/slab.h>

#include "kvreg.h"

static u32 kvreg_fnv1a(u32 hash, const void *data, size_t len)
{
	const u8 *p = data;

	while (len--) {
		hash ^= *p++;
		hash *= 0x01000193;
	}
	return hash;
}

/* Over the whole blob, with the checksum field taken as zero. */
static u32 kvreg_desc_checksum(const void *blob, size_t size)
{
	const size_t at = offsetof(struct kvreg_desc_head, checksum);
	const u32 zero = 0;
	u32 hash = 0x811c9dc5;

	hash = kvreg_fnv1a(hash, blob, at);
	hash = kvreg_fnv1a(hash, &zero, sizeof(zero));
	return kvreg_fnv1a(hash, blob + at + sizeof(zero),
			   size - at - sizeof(zero));
}

size_t kvreg_desc_size(u32 nr_chunks)
{
	return sizeof(struct kvreg_desc_head) + sizeof(struct kvreg_desc_path) +
	       (size_t)nr_chunks * sizeof(struct kvreg_desc_chunk);
}

/* One path: the endpoint's address, and @rd's MRs on its device. */
void kvreg_desc_build(void *blob, size_t size, const struct kvreg_reg *reg,
		      const struct kvreg_reg_dev *rd,
		      const struct kvreg_net_addr *addr, const u8 *secret)
{
	struct kvreg_desc_head *head = blob;
	struct kvreg_desc_path *path = (void *)(head + 1);
	struct kvreg_desc_chunk *chunk = (void *)(path + 1);
	u32 i;

	memset(blob, 0, size);
	head->magic = cpu_to_le32(KVREG_DESC_MAGIC);
	head->version = cpu_to_le16(KVREG_DESC_VERSION);
	head->head_size = cpu_to_le16(sizeof(*head));
	head->total_size = cpu_to_le32(size);
	head->length = cpu_to_le64(reg->length);
	head->access = cpu_to_le32(reg->access & (KVREG_ACCESS_REMOTE_READ |
						  KVREG_ACCESS_REMOTE_WRITE));
	head->nr_paths = cpu_to_le16(1);
	memcpy(head->secret, secret, KVREG_SECRET_LEN);
	path->family = cpu_to_le16(addr->family);
	path->port = cpu_to_le16(addr->port);
	path->scope_id = cpu_to_le32(addr->scope_id);
	memcpy(path->addr, addr->addr, sizeof(path->addr));
	path->nr_chunks = cpu_to_le32(rd->nr_mrs);
	for (i = 0; i < rd->nr_mrs; i++, chunk++) {
		chunk->iova = cpu_to_le64(rd->mrs[i]->iova);
		chunk->length = cpu_to_le64(rd->mrs[i]->length);
		chunk->rkey = cpu_to_le32(rd->mrs[i]->rkey);
	}
	head->checksum = cpu_to_le32(kvreg_desc_checksum(blob, size));
}

static int kvreg_desc_fail(struct kvreg_error *err, u32 reason, u64 request,
			   u64 limit)
{
	kvreg_set_error(err, reason, KVREG_NO_DEVICE_INDEX);
	err->argument = KVREG_ARG_DESCRIPTOR;
	err->request = request;
	err->limit = limit;
	return -EINVAL;
}

static int kvreg_desc_check_head(const void *blob, size_t size,
				 struct kvreg_error *err)
{
	const struct kvreg_desc_head *head = blob;
	u32 total;

	/* Magic first: anything else is not ours to judge. */
	if (size < sizeof(head->magic))
		return kvreg_desc_fail(err, KVREG_REASON_DESC_TRUNCATED, size,
				       sizeof(*head));
	if (le32_to_cpu(head->magic) != KVREG_DESC_MAGIC)
		return kvreg_desc_fail(err, KVREG_REASON_DESC_BAD_MAGIC,
				       le32_to_cpu(head->magic),
				       KVREG_DESC_MAGIC);
	if (size < offsetof(struct kvreg_desc_head, head_size) +
		   sizeof(head->head_size))
		return kvreg_desc_fail(err, KVREG_REASON_DESC_TRUNCATED, size,
				       sizeof(*head));
	if (le16_to_cpu(head->version) != KVREG_DESC_VERSION) {
		kvreg_desc_fail(err, KVREG_REASON_DESC_VERSION, size,
				KVREG_DESC_VERSION);
		err->usage = le16_to_cpu(head->version);
		return -EPROTO;
	}
	if (size < sizeof(*head))
		return kvreg_desc_fail(err, KVREG_REASON_DESC_TRUNCATED, size,
				       sizeof(*head));
	total = le32_to_cpu(head->total_size);
	if (size < total)
		return kvreg_desc_fail(err, KVREG_REASON_DESC_TRUNCATED, size,
				       total);
	if (total < sizeof(*head) || size > total ||
	    le16_to_cpu(head->head_size) < sizeof(*head) ||
	    le16_to_cpu(head->head_size) > total)
		return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT, size,
				       total);
	if (le32_to_cpu(head->checksum) != kvreg_desc_checksum(blob, total))
		return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT, size,
				       total);
	return 0;
}

/*
 * The checksum held: a layout that does not add up was built wrong or on
 * purpose, and is refused as corrupt all the same.
 */
static int kvreg_desc_check_layout(const void *blob, size_t size,
				   struct kvreg_desc *out,
				   struct kvreg_error *err)
{
	const struct kvreg_desc_head *head = blob;
	size_t at = le16_to_cpu(head->head_size);
	const struct kvreg_desc_path *path;
	const struct kvreg_desc_chunk *c;
	u32 nr_paths = le16_to_cpu(head->nr_paths), nr_chunks, i;
	u64 length = le64_to_cpu(head->length), sum = 0;

	if (!nr_paths || nr_paths > KVREG_DESC_MAX_PATHS || !length ||
	    size - at < (size_t)nr_paths * sizeof(*path))
		return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT, size, 0);
	/* Version 1 readers use the first path; the others are for later. */
	path = blob + at;
	nr_chunks = le32_to_cpu(path->nr_chunks);
	at += (size_t)nr_paths * sizeof(*path);
	if (!nr_chunks || nr_chunks > KVREG_DESC_MAX_CHUNKS ||
	    size - at < (size_t)nr_chunks * sizeof(*c))
		return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT, size, 0);
	out->family = le16_to_cpu(path->family);
	if (out->family != AF_INET && out->family != AF_INET6)
		return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT, size, 0);

	c = blob + at;
	for (i = 0; i < nr_chunks; i++) {
		u64 len = le64_to_cpu(c[i].length);

		if (!len || len > length - sum)
			return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT,
					       size, 0);
		sum += len;
	}
	if (sum != length)
		return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT, size, 0);

	out->chunks = kvmalloc_array(nr_chunks, sizeof(*out->chunks),
				     GFP_KERNEL);
	if (!out->chunks) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return -ENOMEM;
	}
	for (i = 0, sum = 0; i < nr_chunks; i++) {
		out->chunks[i].start = sum;
		out->chunks[i].iova = le64_to_cpu(c[i].iova);
		out->chunks[i].length = le64_to_cpu(c[i].length);
		out->chunks[i].rkey = le32_to_cpu(c[i].rkey);
		sum += out->chunks[i].length;
	}
	out->nr_chunks = nr_chunks;
	out->length = length;
	out->access = le32_to_cpu(head->access) &
		      (KVREG_ACCESS_REMOTE_READ | KVREG_ACCESS_REMOTE_WRITE);
	out->port = le16_to_cpu(path->port);
	out->scope_id = le32_to_cpu(path->scope_id);
	memcpy(out->addr, path->addr, sizeof(out->addr));
	memcpy(out->secret, head->secret, KVREG_SECRET_LEN);
	return 0;
}

/* On success the caller owns out->chunks (kvfree). */
int kvreg_desc_parse(const void *blob, size_t size, struct kvreg_desc *out,
		     struct kvreg_error *err)
{
	int ret = kvreg_desc_check_head(blob, size, err);

	if (ret)
		return ret;
	return kvreg_desc_check_layout(blob, size, out, err);
}
