/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
#ifndef KVREG_INTERNAL_H
#define KVREG_INTERNAL_H

#include "kvreg.h"

struct kvreg {
	int fd;
	uint32_t abi_version;
};

struct kvreg_mr {
	uint64_t handle;
	uint64_t addr;
	uint64_t length;
	uint32_t out_flags;
	uint32_t refs;
	unsigned int nkeys;
	struct kvreg_key keys[];
};

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
 * The ioctl, and the caller's record from the kernel's (@kerr, inside
 * @arg; NULL for structs without one), or from the errno when the kernel
 * gave no reason. 0 or -errno.
 */
int kvreg__call(const struct kvreg *kv, unsigned long cmd, void *arg,
		const struct kvreg_error *kerr, struct kvreg_error *err);

/* error.c, exposed for the unit tests of ABI negotiation. */
int kvreg__check_abi(uint32_t module_abi, struct kvreg_error *err);

#endif
