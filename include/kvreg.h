/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * libkvreg: register host memory for RDMA through /dev/kvreg.
 *
 * Every call returns 0 or a negative errno and, when given a
 * struct kvreg_error, fills it with why: a reason code and the numbers
 * behind it. kvreg_format_error() turns that into one sentence a person
 * can act on.
 */
#ifndef KVREG_LIB_H
#define KVREG_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/kvreg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reasons only the library can give: the kernel never returns these. */
enum kvreg_lib_reason {
	KVREG_REASON_MODULE_NOT_LOADED	= 1000,	/* no /dev/kvreg */
	KVREG_REASON_ABI_MISMATCH	= 1001,	/* usage: module, request: lib */
	KVREG_REASON_NOT_OPEN		= 1002,	/* NULL context */
	KVREG_REASON_DEVICE_ACCESS	= 1003,	/* open(/dev/kvreg) refused;
						 * request 1: limit is the
						 * node's gid, usage its mode */
	KVREG_REASON_NO_MEMORY		= 1004,	/* malloc in the library */
	KVREG_REASON_BAD_FD		= 1005,	/* usage: the fd; closed or
						 * not /dev/kvreg any more */
};

struct kvreg;		/* an open /dev/kvreg */
struct kvreg_mr;	/* one registration and its keys */
struct kvreg_remote;	/* a region imported from a peer */

/* setup.c: $KVREG_DEVICE overrides the path when set. */
int kvreg_open(struct kvreg **kvp, struct kvreg_error *err);
int kvreg_open_path(struct kvreg **kvp, const char *path,
		    struct kvreg_error *err);
void kvreg_close(struct kvreg *kv);
int kvreg_fd(const struct kvreg *kv);
uint32_t kvreg_module_abi_version(const struct kvreg *kv);
/*
 * Whether the module can do every KVREG_FEATURE_* bit in feature, as it
 * said at open; kvreg_features() asks it again.
 */
bool kvreg_has_feature(const struct kvreg *kv, uint64_t feature);

/* device.c */
int kvreg_devices(struct kvreg *kv, struct kvreg_device_info *devices,
		  unsigned int capacity, unsigned int *count,
		  struct kvreg_error *err);
int kvreg_stats(struct kvreg *kv, struct kvreg_stats *stats,
		struct kvreg_error *err);
/*
 * Set this process's budget (KVREG_BUDGET_F_*); lowering is always
 * allowed, raising above the module defaults needs CAP_SYS_RESOURCE. The
 * budget in force afterwards is returned in *now when given.
 */
int kvreg_set_budget(struct kvreg *kv, uint32_t flags, uint64_t max_mrs,
		     uint64_t max_pinned_bytes, struct kvreg_budget *now,
		     struct kvreg_error *err);
int kvreg_features(struct kvreg *kv, uint64_t *features,
		   struct kvreg_error *err);
/* Every process using kvreg, host-wide; needs CAP_SYS_ADMIN. */
int kvreg_procs(struct kvreg *kv, struct kvreg_proc_info *procs,
		unsigned int capacity, unsigned int *count,
		struct kvreg_error *err);
/*
 * Every endpoint and connection on the host, with its state and the
 * operations it carried; without CAP_SYS_ADMIN, those of the caller's uid.
 */
int kvreg_conns(struct kvreg *kv, struct kvreg_conn_info *conns,
		unsigned int capacity, unsigned int *count,
		struct kvreg_error *err);

/*
 * register.c: device_mask bit i selects device index i, 0 selects all.
 * A zero length succeeds with handle KVREG_HANDLE_NONE and no keys.
 */
int kvreg_register(struct kvreg *kv, const void *addr, uint64_t length,
		   uint32_t access, uint64_t device_mask,
		   struct kvreg_mr **mrp, struct kvreg_error *err);
/*
 * The same with KVREG_REG_F_* flags. Registering a range already
 * registered with the same access and devices returns its handle with one
 * more reference (KVREG_REG_OUT_DUPLICATE); each kvreg_deregister() drops
 * one. Any other overlap fails with KVREG_REASON_OVERLAP unless
 * KVREG_REG_F_ALLOW_OVERLAP is given.
 */
int kvreg_register_flags(struct kvreg *kv, const void *addr, uint64_t length,
			 uint32_t access, uint64_t device_mask, uint32_t flags,
			 struct kvreg_mr **mrp, struct kvreg_error *err);
int kvreg_deregister(struct kvreg *kv, struct kvreg_mr *mr,
		     struct kvreg_error *err);
int kvreg_query(struct kvreg *kv, uint64_t handle, struct kvreg_query *info,
		struct kvreg_key *keys, unsigned int capacity,
		struct kvreg_error *err);
uint64_t kvreg_mr_handle(const struct kvreg_mr *mr);
uint32_t kvreg_mr_flags(const struct kvreg_mr *mr);	/* KVREG_REG_OUT_* */
uint32_t kvreg_mr_refs(const struct kvreg_mr *mr);
const struct kvreg_key *kvreg_mr_keys(const struct kvreg_mr *mr,
				      unsigned int *nkeys);
/* The key covering addr + offset on a device, or NULL. */
const struct kvreg_key *kvreg_mr_key_at(const struct kvreg_mr *mr,
					uint32_t device_index,
					uint64_t offset);

/*
 * preflight.c: would registering length bytes on device_mask (0: all) succeed
 * now? 0 if every limit has room; otherwise the negative errno and the
 * reason and numbers the registration would fail with. Nothing is pinned
 * or charged. KVREG_PREFLIGHT_F_HUGETLB counts MRs for 2 MiB pages. The
 * limits are the ones the module reports it enforces; the buffer is taken
 * to be page-aligned, and MRs are counted for the worst case.
 */
#define KVREG_PREFLIGHT_F_HUGETLB	(1U << 0)
int kvreg_preflight(struct kvreg *kv, uint64_t length, uint64_t device_mask,
		    uint32_t flags, struct kvreg_error *err);

/* transfer.c */
int kvreg_transfer(struct kvreg *kv, enum kvreg_transfer_op op,
		   uint32_t device_index,
		   const struct kvreg_mr *local, uint64_t local_offset,
		   const struct kvreg_mr *remote, uint64_t remote_offset,
		   uint64_t length, struct kvreg_error *err);

/*
 * remote.c: the peer side of a registration. A process listens on an
 * address of an RDMA device (port 0: one is chosen) and exports a
 * registration with remote access as a descriptor: bytes it ships to
 * another node by its own means. There kvreg_import() checks it and
 * connects (timeout_ms per step, 0: KVREG_CONNECT_TIMEOUT_MS), sharing
 * the file's connections per export; transfers then go to and from the
 * peer's memory. kvreg_export() with capacity 0 returns the size needed
 * in *size (and -ENOSPC).
 *
 * Rails: kvreg_listen_add() gives an endpoint another address (on another
 * device); the descriptor then has a path per address, and the importer
 * connects on each (kvreg_import_devices() limits which local devices it
 * may use). Operations spread over the rails, move off one that fails,
 * and use it again once the module has reconnected it.
 */
int kvreg_listen(struct kvreg *kv, const char *address, uint16_t port,
		 uint64_t *endpoint, uint16_t *bound_port,
		 struct kvreg_error *err);
int kvreg_listen_add(struct kvreg *kv, uint64_t endpoint,
		     const char *address, uint16_t port, uint16_t *bound_port,
		     struct kvreg_error *err);
int kvreg_export(struct kvreg *kv, uint64_t endpoint,
		 const struct kvreg_mr *mr, void *desc, size_t capacity,
		 size_t *size, struct kvreg_error *err);
int kvreg_import(struct kvreg *kv, const void *desc, size_t size,
		 uint32_t timeout_ms, struct kvreg_remote **remotep,
		 struct kvreg_error *err);
/* device_mask: bit i allows local device i for its rails; 0: any. */
int kvreg_import_devices(struct kvreg *kv, const void *desc, size_t size,
			 uint32_t timeout_ms, uint64_t device_mask,
			 struct kvreg_remote **remotep,
			 struct kvreg_error *err);
/*
 * Revocation: a descriptor is a capability. kvreg_unexport() revokes one
 * registration's export through an endpoint, kvreg_unlisten() closes the
 * endpoint (its exports, its connections), kvreg_rekey() gives each of
 * its exports a new secret (descriptors exported before stop working, its
 * connections are cut). Each returns once no peer can reach what it revoked.
 */
int kvreg_unexport(struct kvreg *kv, uint64_t endpoint,
		   const struct kvreg_mr *mr, struct kvreg_error *err);
int kvreg_unlisten(struct kvreg *kv, uint64_t endpoint,
		   struct kvreg_error *err);
int kvreg_rekey(struct kvreg *kv, uint64_t endpoint, struct kvreg_error *err);
/* Drops the region (and, with its last region, the connection); frees it. */
int kvreg_unimport(struct kvreg *kv, struct kvreg_remote *remote,
		   struct kvreg_error *err);
uint64_t kvreg_remote_handle(const struct kvreg_remote *remote);
uint64_t kvreg_remote_length(const struct kvreg_remote *remote);
uint32_t kvreg_remote_access(const struct kvreg_remote *remote);
/* The local device of its first rail that was up at import. */
uint32_t kvreg_remote_device(const struct kvreg_remote *remote);
/* Rails up at import, and paths the descriptor offered. */
uint32_t kvreg_remote_rails(const struct kvreg_remote *remote);
uint32_t kvreg_remote_paths(const struct kvreg_remote *remote);
int kvreg_transfer_remote(struct kvreg *kv, enum kvreg_transfer_op op,
			  const struct kvreg_mr *local, uint64_t local_offset,
			  const struct kvreg_remote *remote,
			  uint64_t remote_offset, uint64_t length,
			  struct kvreg_error *err);

/*
 * Batches, asynchronously: kvreg_submit() posts up to count operations
 * (kvreg_op_prep() fills one) without waiting and says how many it took:
 * fewer when a rail's queue is full (KVREG_SUBMIT_DEPTH work
 * requests in flight), never blocking. Each completes once;
 * kvreg_reap() returns up to capacity completions, waiting up to
 * timeout_ms for min_complete. kvreg_fd() is readable (poll, epoll)
 * while completions wait. A completion's error record says why it failed.
 */
void kvreg_op_prep(struct kvreg_op *op, enum kvreg_transfer_op opcode,
		   const struct kvreg_mr *local, uint64_t local_offset,
		   const struct kvreg_remote *remote, uint64_t remote_offset,
		   uint64_t length, uint64_t user_data);
int kvreg_submit(struct kvreg *kv, const struct kvreg_op *ops,
		 unsigned int count, unsigned int *accepted,
		 struct kvreg_error *err);
int kvreg_reap(struct kvreg *kv, struct kvreg_completion *completions,
	       unsigned int capacity, unsigned int min_complete,
	       uint32_t timeout_ms, unsigned int *count,
	       struct kvreg_error *err);

/* error.c */
const char *kvreg_strerror(uint32_t reason);
/* What to do about KVREG_REG_OUT_* flags worth acting on; "" if nothing. */
const char *kvreg_hint(uint32_t out_flags);
/*
 * One sentence: what failed, the numbers, what to do, and the errno's
 * name. errnum is the negative errno the call returned. Returns the length
 * snprintf would.
 */
int kvreg_format_error(const struct kvreg_error *err, int errnum,
		       char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* KVREG_LIB_H */
