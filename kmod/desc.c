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

size_t kvreg_desc_size(u32 nr_paths, u64 nr_chunks)
{
	return sizeof(struct kvreg_desc_head) +
	       nr_paths * sizeof(struct kvreg_desc_path) +
	       nr_chunks * sizeof(struct kvreg_desc_chunk);
}

/*
 * Path i is @addrs[i] and the MRs of @eds[i]; each covers all of @ex's
 * registration.
 */
void kvreg_desc_build(void *blob, size_t size,
		      const struct kvreg_exported *ex,
		      const struct kvreg_export_dev *const *eds,
		      const struct kvreg_net_addr *addrs, u32 nr_paths,
		      const u8 *secret)
{
	struct kvreg_desc_head *head = blob;
	struct kvreg_desc_path *path = (void *)(head + 1);
	struct kvreg_desc_chunk *chunk = (void *)(path + nr_paths);
	u32 p, i;

	memset(blob, 0, size);
	head->magic = cpu_to_le32(KVREG_DESC_MAGIC);
	head->version = cpu_to_le16(KVREG_DESC_VERSION);
	head->head_size = cpu_to_le16(sizeof(*head));
	head->total_size = cpu_to_le32(size);
	head->length = cpu_to_le64(ex->reg->length);
	head->access = cpu_to_le32(ex->access);
	head->nr_paths = cpu_to_le16(nr_paths);
	memcpy(head->secret, secret, KVREG_SECRET_LEN);
	for (p = 0; p < nr_paths; p++, path++) {
		const struct kvreg_export_dev *ed = eds[p];

		path->family = cpu_to_le16(addrs[p].family);
		path->port = cpu_to_le16(addrs[p].port);
		path->scope_id = cpu_to_le32(addrs[p].scope_id);
		memcpy(path->addr, addrs[p].addr, sizeof(path->addr));
		path->nr_chunks = cpu_to_le32(ed->nr_mrs);
		for (i = 0; i < ed->nr_mrs; i++, chunk++) {
			chunk->iova = cpu_to_le64(ed->mrs[i]->iova);
			chunk->length = cpu_to_le64(ed->mrs[i]->length);
			chunk->rkey = cpu_to_le32(ed->mrs[i]->rkey);
		}
	}
	head->checksum = cpu_to_le32(kvreg_desc_checksum(blob, size));
}

void kvreg_rpaths_free(struct kvreg_rpath *paths, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		kvfree(paths[i].chunks);
		paths[i].chunks = NULL;
	}
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

/* One path's chunks, from @c: they must tile [0, length) in order. */
static int kvreg_desc_read_chunks(const struct kvreg_desc_chunk *c,
				  u32 nr_chunks, u64 length,
				  struct kvreg_rpath *out)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < nr_chunks; i++) {
		u64 len = le64_to_cpu(c[i].length);

		if (!len || len > length - sum)
			return -EINVAL;
		sum += len;
	}
	if (sum != length)
		return -EINVAL;
	/* The importing process's memory: its memcg pays for what it keeps. */
	out->chunks = kvmalloc_array(nr_chunks, sizeof(*out->chunks),
				     GFP_KERNEL_ACCOUNT);
	if (!out->chunks)
		return -ENOMEM;
	for (i = 0, sum = 0; i < nr_chunks; i++) {
		out->chunks[i].start = sum;
		out->chunks[i].iova = le64_to_cpu(c[i].iova);
		out->chunks[i].length = le64_to_cpu(c[i].length);
		out->chunks[i].rkey = le32_to_cpu(c[i].rkey);
		sum += out->chunks[i].length;
	}
	out->nr_chunks = nr_chunks;
	return 0;
}

/*
 * The chunks @nr_paths paths claim, counted before any table is made for
 * them; U64_MAX when the @room bytes after the path table cannot hold
 * that many. IMPORT's early cap check reads the claim the same way.
 */
u64 kvreg_desc_claimed_chunks(const struct kvreg_desc_path *path,
			      u32 nr_paths, size_t room)
{
	u64 total = 0;
	u32 p;

	for (p = 0; p < nr_paths; p++)
		total += le32_to_cpu(path[p].nr_chunks);
	return total > room / sizeof(struct kvreg_desc_chunk) ? U64_MAX :
								total;
}

/*
 * The checksum held: a layout that does not add up was built wrong or on
 * purpose, and is refused as corrupt all the same.
 */
static int kvreg_desc_check_layout(const void *blob, size_t size,
				   u64 max_chunks, struct kvreg_desc *out,
				   struct kvreg_error *err)
{
	const struct kvreg_desc_head *head = blob;
	size_t at = le16_to_cpu(head->head_size);
	const struct kvreg_desc_path *path;
	u32 nr_paths = le16_to_cpu(head->nr_paths), nr_chunks, p;
	u64 length = le64_to_cpu(head->length), total = 0;
	int ret;

	if (!nr_paths || nr_paths > KVREG_DESC_MAX_PATHS || !length ||
	    size - at < (size_t)nr_paths * sizeof(*path))
		return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT, size, 0);
	path = blob + at;
	/* More than the blob holds is corrupt, more than the cap too many. */
	total = kvreg_desc_claimed_chunks(path, nr_paths, size - at -
					  (size_t)nr_paths * sizeof(*path));
	if (total == U64_MAX)
		return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT, size, 0);
	if (total > max_chunks) {
		kvreg_set_error(err, KVREG_REASON_DESC_CHUNK_LIMIT,
				KVREG_NO_DEVICE_INDEX);
		err->request = total;
		err->limit = max_chunks;
		return -E2BIG;
	}
	out->nr_chunks = total;
	at += (size_t)nr_paths * sizeof(*path);
	out->length = length;
	for (p = 0; p < nr_paths; p++, path++) {
		struct kvreg_net_addr *a = &out->addrs[p];

		nr_chunks = le32_to_cpu(path->nr_chunks);
		a->family = le16_to_cpu(path->family);
		if (!nr_chunks || nr_chunks > KVREG_DESC_MAX_CHUNKS ||
		    size - at < (size_t)nr_chunks *
				sizeof(struct kvreg_desc_chunk) ||
		    (a->family != AF_INET && a->family != AF_INET6)) {
			ret = -EINVAL;
			goto err_free;
		}
		a->port = le16_to_cpu(path->port);
		a->scope_id = le32_to_cpu(path->scope_id);
		memcpy(a->addr, path->addr, sizeof(a->addr));
		ret = kvreg_desc_read_chunks(blob + at, nr_chunks, length,
					     &out->paths[p]);
		if (ret)
			goto err_free;
		out->nr_paths = p + 1;
		at += (size_t)nr_chunks * sizeof(struct kvreg_desc_chunk);
	}
	out->access = le32_to_cpu(head->access) &
		      (KVREG_ACCESS_REMOTE_READ | KVREG_ACCESS_REMOTE_WRITE);
	memcpy(out->secret, head->secret, KVREG_SECRET_LEN);
	return 0;

err_free:
	kvreg_rpaths_free(out->paths, out->nr_paths);
	out->nr_paths = 0;
	if (ret == -ENOMEM) {
		kvreg_set_error(err, KVREG_REASON_NO_KERNEL_MEMORY,
				KVREG_NO_DEVICE_INDEX);
		return ret;
	}
	return kvreg_desc_fail(err, KVREG_REASON_DESC_CORRUPT, size, 0);
}

/* On success the caller owns out->paths' chunks (kvreg_rpaths_free). */
int kvreg_desc_parse(const void *blob, size_t size, u64 max_chunks,
		     struct kvreg_desc *out, struct kvreg_error *err)
{
	int ret = kvreg_desc_check_head(blob, size, err);

	if (ret)
		return ret;
	return kvreg_desc_check_layout(blob, size, max_chunks, out, err);
}
