/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
#ifndef KVREG_INTERNAL_H
#define KVREG_INTERNAL_H

#include <stdatomic.h>

#include "kvreg.h"

/*
 * A handle's place on its context's list. First in every handle, so that
 * kvreg_close() frees a handle it finds there with free(link).
 */
struct kvreg_link {
	struct kvreg_link *prev, *next;
};

struct kvreg {
	int fd;
	uint32_t abi_version;
	uint64_t features;	/* KVREG_FEATURE_*, asked at open */
	/*
	 * The MRs and remotes handed out and not yet freed: kvreg_close()
	 * frees what is left, as the module releases what they name.
	 * Threads may register and deregister at once: @handles_lock.
	 */
	struct kvreg_link handles;
	atomic_flag handles_lock;
};

struct kvreg_mr {
	struct kvreg_link link;
	uint64_t handle;
	uint64_t addr;
	uint64_t length;
	uint32_t out_flags;
	uint32_t refs;
	unsigned int nkeys;
	struct kvreg_key keys[];
};

/* Put a new handle on @kv's list, or take one off before freeing it. */
void kvreg__handle_add(struct kvreg *kv, struct kvreg_link *link);
void kvreg__handle_del(struct kvreg *kv, struct kvreg_link *link);

/* ioctl on the context's fd: 0 or -errno. */
int kvreg__ioctl(const struct kvreg *kv, unsigned long cmd, void *arg);

/* Start an error record, if any: no reason, no device. */
void kvreg__error_init(struct kvreg_error *err);
/* Set a library-side reason; returns errnum for tail calls. */
int kvreg__lib_error(struct kvreg_error *err, uint32_t reason, int errnum);
/* Copy the kernel's record to the caller's, if the caller passed one. */
void kvreg__error_out(struct kvreg_error *dst, const struct kvreg_error *src);
/* A required pointer argument is NULL: -EINVAL. */
int kvreg__bad_pointer(struct kvreg_error *err);
/*
 * The ioctl on an argument struct, whose error pointer this points at a
 * record of its own; the caller's record (if any) gets the kernel's, or
 * one from the errno when the kernel could not give a reason (the struct
 * refused, the fd not kvreg's). 0 or -errno.
 */
int kvreg__call(const struct kvreg *kv, unsigned long cmd, void *arg,
		struct kvreg_error *err);

/* error.c, exposed for the unit tests of ABI negotiation. */
int kvreg__check_abi(uint32_t module_abi, struct kvreg_error *err);
/* The errno's name ("EDQUOT"), or "errno N" written into @buf. */
const char *kvreg__errno_name(int errnum, char *buf, size_t size);

#endif
