// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The UAPI layout is fixed forever: sizes, and size and flags first in
 * every struct. The module asserts the same sizes (kmod/main.c).
 */
#include <stddef.h>

#include "kvtest.h"

#define LAYOUT(type, bytes)						\
	_Static_assert(sizeof(struct type) == (bytes), #type " size");	\
	_Static_assert(sizeof(struct type) % 8 == 0, #type " padding");

#define HEAD(type)							\
	_Static_assert(offsetof(struct type, size) == 0, #type " size"); \
	_Static_assert(offsetof(struct type, flags) == 4, #type " flags");

LAYOUT(kvreg_error, 56)
LAYOUT(kvreg_abi_version, 16)
LAYOUT(kvreg_device_info, 112)
LAYOUT(kvreg_devices, 32)
LAYOUT(kvreg_key, 32)
LAYOUT(kvreg_register, 128)
LAYOUT(kvreg_deregister, 72)
LAYOUT(kvreg_query, 144)
LAYOUT(kvreg_transfer, 128)
LAYOUT(kvreg_stats, 120)
LAYOUT(kvreg_budget, 80)
LAYOUT(kvreg_proc_info, 64)
LAYOUT(kvreg_procs, 32)
HEAD(kvreg_abi_version)
HEAD(kvreg_devices)
HEAD(kvreg_register)
HEAD(kvreg_deregister)
HEAD(kvreg_query)
HEAD(kvreg_transfer)
HEAD(kvreg_stats)
HEAD(kvreg_budget)
HEAD(kvreg_procs)

/* The error record ends each struct that carries one. */
_Static_assert(offsetof(struct kvreg_register, error) + 56 ==
	       sizeof(struct kvreg_register), "register error last");
_Static_assert(offsetof(struct kvreg_transfer, error) + 56 ==
	       sizeof(struct kvreg_transfer), "transfer error last");
_Static_assert(offsetof(struct kvreg_query, error) + 56 ==
	       sizeof(struct kvreg_query), "query error last");
_Static_assert(offsetof(struct kvreg_budget, error) + 56 ==
	       sizeof(struct kvreg_budget), "budget error last");

int main(void)
{
	/* Commands carry no size: structs grow without new numbers. */
	CHECK(_IOC_SIZE(KVREG_IOC_REGISTER) == 0, "size in command");
	CHECK(_IOC_TYPE(KVREG_IOC_STATS) == KVREG_IOC_MAGIC, "magic");
	printf("UAPI layout as published (ABI %d)\n", KVREG_ABI_VERSION);
	return T_PASS;
}
