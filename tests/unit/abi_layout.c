// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The UAPI layout is fixed forever: sizes, size and flags first in every
 * struct, the error pointer next. The module asserts the same sizes
 * (kmod/main.c).
 */
#include <stddef.h>

#include "kvtest.h"

#define LAYOUT(type, bytes)						\
	_Static_assert(sizeof(struct type) == (bytes), #type " size");	\
	_Static_assert(sizeof(struct type) % 8 == 0, #type " padding");

#define HEAD(type)							\
	_Static_assert(offsetof(struct type, size) == 0, #type " size"); \
	_Static_assert(offsetof(struct type, flags) == 4, #type " flags");

/* Each struct's size in this header: its first, or its latest published. */
LAYOUT(kvreg_error, KVREG_ERROR_SIZE_VER1)
_Static_assert(offsetof(struct kvreg_error, addr_family) ==
	       KVREG_ERROR_SIZE_VER0, "the record grew at its end");
LAYOUT(kvreg_abi_version, 16)
LAYOUT(kvreg_device_info, KVREG_DEVICE_INFO_SIZE_VER0)
LAYOUT(kvreg_devices, KVREG_DEVICES_SIZE_VER0)
LAYOUT(kvreg_key, KVREG_KEY_SIZE_VER0)
LAYOUT(kvreg_register, KVREG_REGISTER_SIZE_VER0)
LAYOUT(kvreg_deregister, KVREG_DEREGISTER_SIZE_VER0)
LAYOUT(kvreg_query, KVREG_QUERY_SIZE_VER0)
LAYOUT(kvreg_transfer, KVREG_TRANSFER_SIZE_VER0)
LAYOUT(kvreg_stats, KVREG_STATS_SIZE_VER1)
LAYOUT(kvreg_budget, KVREG_BUDGET_SIZE_VER0)
LAYOUT(kvreg_proc_info, KVREG_PROC_INFO_SIZE_VER0)
LAYOUT(kvreg_procs, KVREG_PROCS_SIZE_VER0)
LAYOUT(kvreg_features, KVREG_FEATURES_SIZE_VER0)
LAYOUT(kvreg_listen, KVREG_LISTEN_SIZE_VER0)
LAYOUT(kvreg_export, KVREG_EXPORT_SIZE_VER0)
LAYOUT(kvreg_import, KVREG_IMPORT_SIZE_VER1)
_Static_assert(offsetof(struct kvreg_import, device_mask) ==
	       KVREG_IMPORT_SIZE_VER0, "IMPORT grew at its end");
LAYOUT(kvreg_unimport, KVREG_UNIMPORT_SIZE_VER0)
LAYOUT(kvreg_unexport, KVREG_UNEXPORT_SIZE_VER0)
LAYOUT(kvreg_unlisten, KVREG_UNLISTEN_SIZE_VER0)
LAYOUT(kvreg_rekey, KVREG_REKEY_SIZE_VER0)
LAYOUT(kvreg_op, KVREG_OP_SIZE_VER0)
LAYOUT(kvreg_submit, KVREG_SUBMIT_SIZE_VER0)
LAYOUT(kvreg_completion, KVREG_COMPLETION_SIZE_VER0)
LAYOUT(kvreg_reap, KVREG_REAP_SIZE_VER0)
LAYOUT(kvreg_conn_info, KVREG_CONN_INFO_SIZE_VER1)
_Static_assert(offsetof(struct kvreg_conn_info, rail_group) ==
	       KVREG_CONN_INFO_SIZE_VER0, "the connection info grew at its end");
LAYOUT(kvreg_conns, KVREG_CONNS_SIZE_VER0)
/* Wire formats: read by peers that may not share this header's compiler. */
LAYOUT(kvreg_net_addr, 24)
LAYOUT(kvreg_desc_head, 48)
LAYOUT(kvreg_desc_path, 32)
LAYOUT(kvreg_desc_chunk, 24)
LAYOUT(kvreg_cm_req, 24)
LAYOUT(kvreg_cm_rej, 16)
HEAD(kvreg_abi_version)
HEAD(kvreg_devices)
HEAD(kvreg_register)
HEAD(kvreg_deregister)
HEAD(kvreg_query)
HEAD(kvreg_transfer)
HEAD(kvreg_stats)
HEAD(kvreg_budget)
HEAD(kvreg_procs)
HEAD(kvreg_features)
HEAD(kvreg_listen)
HEAD(kvreg_export)
HEAD(kvreg_import)
HEAD(kvreg_unimport)
HEAD(kvreg_submit)
HEAD(kvreg_reap)
HEAD(kvreg_conns)

/*
 * The record lives outside the struct, pointed at from the same place in
 * each: either can grow without moving the other's fields.
 */
#define ERROR_AT(type)							\
	_Static_assert(offsetof(struct type, error) == 8 &&		\
		       offsetof(struct type, error_size) == 16,		\
		       #type " error pointer");
ERROR_AT(kvreg_devices)
ERROR_AT(kvreg_register)
ERROR_AT(kvreg_deregister)
ERROR_AT(kvreg_query)
ERROR_AT(kvreg_transfer)
ERROR_AT(kvreg_stats)
ERROR_AT(kvreg_budget)
ERROR_AT(kvreg_procs)
ERROR_AT(kvreg_features)
ERROR_AT(kvreg_listen)
ERROR_AT(kvreg_export)
ERROR_AT(kvreg_import)
ERROR_AT(kvreg_unimport)
ERROR_AT(kvreg_submit)
ERROR_AT(kvreg_reap)

int main(void)
{
	/* Commands carry no size: structs grow without new numbers. */
	CHECK(_IOC_SIZE(KVREG_IOC_REGISTER) == 0, "size in command");
	CHECK(_IOC_TYPE(KVREG_IOC_STATS) == KVREG_IOC_MAGIC, "magic");
	printf("UAPI layout as published (ABI %d)\n", KVREG_ABI_VERSION);
	return T_PASS;
}
