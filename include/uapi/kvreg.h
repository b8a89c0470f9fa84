/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * kvreg: register host memory for RDMA through the kernel.
 *
 * The ioctl ABI of /dev/kvreg, shared by kvreg.ko and libkvreg.
 *
 * Rules that keep this ABI extensible (after VFIO's argsz convention):
 *  - every argument struct begins with __u32 size (bytes the caller passes)
 *    and __u32 flags, then (all but kvreg_abi_version) __u64 error and
 *    __u32 error_size: where the kernel writes the struct kvreg_error of
 *    the call, and how many bytes of it the caller has room for. The
 *    record lives outside the struct, so either can grow on its own;
 *  - commands are _IO() numbers: the size travels in the struct, not in the
 *    command, so a struct may grow at its end without a new command;
 *  - the kernel accepts any size from the first published size of a struct
 *    (KVREG_*_SIZE_VER0) up to KVREG_MAX_ARG_SIZE; bytes past what it knows
 *    must be zero (E2BIG otherwise); it writes back no more than the caller
 *    passed. The error record likewise, from KVREG_ERROR_SIZE_VER0 up to
 *    KVREG_MAX_ARG_SIZE, and each array's entry size (@entry_size,
 *    @key_size), from its entry's first published size up to
 *    KVREG_MAX_ARG_SIZE: outside that, EINVAL naming the field, with the
 *    bound in @limit;
 *  - a struct refused for its size, or whose record cannot be written,
 *    fails with no record (EINVAL, E2BIG, EFAULT);
 *  - unknown flags and non-zero reserved fields are refused with EINVAL;
 *  - fields are fixed width, padding is explicit, user pointers are __u64;
 *  - what the module can do is asked with KVREG_IOC_FEATURES, not guessed
 *    from versions.
 */
#ifndef _UAPI_KVREG_H
#define _UAPI_KVREG_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KVREG_ABI_VERSION	2
/* No argument struct is larger; a caller passing more is refused. */
#define KVREG_MAX_ARG_SIZE	4096
#define KVREG_DEVICE_PATH	"/dev/kvreg"
#define KVREG_MAX_DEVICES	64
#define KVREG_DEVICE_NAME_MAX	64
/* REGISTER of a zero-length buffer succeeds with this handle; no-op. */
#define KVREG_HANDLE_NONE	0ULL
#define KVREG_NO_DEVICE_INDEX	0xffffffffU

/* Why a call failed. Values are ABI: append only, never renumber. */
enum kvreg_reason {
	KVREG_REASON_NONE		= 0,
	/* error.argument names it; for an address, a length or access
	 * flags, address, request and limit say more.
	 */
	KVREG_REASON_BAD_ARGUMENT	= 1,
	KVREG_REASON_NO_DEVICE		= 2,	/* none, or not in the mask */
	KVREG_REASON_DEVICE_NOT_ACTIVE	= 3,	/* kernel QP not usable */
	KVREG_REASON_DEVICE_REMOVED	= 4,	/* device went away */
	KVREG_REASON_UNMAPPED_ADDRESS	= 5,	/* address: first bad page */
	KVREG_REASON_NO_KERNEL_MEMORY	= 6,
	KVREG_REASON_DEVICE_REFUSED	= 7,	/* driver_errno: raw */
	KVREG_REASON_UNKNOWN_HANDLE	= 8,
	/* argument: which side; address: its offset, request: the
	 * length, limit: the registration's length.
	 */
	KVREG_REASON_OUT_OF_RANGE	= 9,
	KVREG_REASON_ACCESS_DENIED	= 10,	/* lacks the access */
	KVREG_REASON_TRANSFER_FAILED	= 11,	/* wc_status says why */
	/* 12 is retired: test-only fault injection gets no reason code. */
	KVREG_REASON_NOT_PERMITTED	= 13,	/* needs a capability */
	KVREG_REASON_TOO_LARGE		= 14,	/* limit: max_mr_size */
	KVREG_REASON_PROC_MR_BUDGET	= 15,	/* MRs: limit, usage, request */
	KVREG_REASON_PROC_BYTES_BUDGET	= 16,	/* bytes, likewise */
	KVREG_REASON_HOST_CEILING	= 17,	/* bytes, all processes */
	KVREG_REASON_DEVICE_MR_RESERVE	= 18,	/* MRs on device_index */
	KVREG_REASON_MEMLOCK_EXCEEDED	= 19,	/* RLIMIT_MEMLOCK, bytes */
	KVREG_REASON_MEMLOCK_ZERO	= 20,	/* RLIMIT_MEMLOCK is 0 */
	KVREG_REASON_RDMA_CGROUP	= 21,	/* rdma.max hca_object */
	KVREG_REASON_DEVICE_EXHAUSTED	= 22,	/* driver out of MRs/memory */
	KVREG_REASON_NOT_HOST_MEMORY	= 23,	/* VM_IO/VM_PFNMAP */
	KVREG_REASON_FILE_BACKED	= 24,	/* file mapping at address */
	KVREG_REASON_READ_ONLY		= 25,	/* write on read-only map */
	KVREG_REASON_OVERLAP		= 26,	/* address, limit: existing */
	KVREG_REASON_FOREIGN_PROCESS	= 27,	/* fd of another process */
	/*
	 * Remote regions. For descriptors: request is the size given, limit
	 * the size needed or this module's version. For connections the
	 * record's addr_family, addr and port name the peer (or, for LISTEN,
	 * the local address); limit is a timeout in milliseconds.
	 */
	KVREG_REASON_DESC_TRUNCATED	= 28,	/* shorter than it says */
	KVREG_REASON_DESC_BAD_MAGIC	= 29,	/* not a kvreg descriptor */
	KVREG_REASON_DESC_VERSION	= 30,	/* usage: its version */
	KVREG_REASON_DESC_CORRUPT	= 31,	/* checksum or layout */
	KVREG_REASON_ADDRESS_NOT_LOCAL	= 32,	/* LISTEN: not local */
	KVREG_REASON_NO_RDMA_FOR_ADDRESS = 33,	/* no RDMA device on it */
	KVREG_REASON_ADDRESS_UNRESOLVED	= 34,	/* no route, no neighbour */
	KVREG_REASON_ROUTE_UNRESOLVED	= 35,
	KVREG_REASON_CONN_NO_LISTENER	= 36,	/* no endpoint at port */
	KVREG_REASON_CONN_BAD_SECRET	= 37,	/* wrong endpoint secret */
	KVREG_REASON_CONN_VERSION	= 38,	/* usage: the peer's version */
	KVREG_REASON_CONN_REJECTED	= 39,	/* driver_errno: CM status */
	KVREG_REASON_CONN_TIMEOUT	= 40,	/* no answer within limit ms */
	KVREG_REASON_CONN_LOST		= 41,	/* the connection went down */
	KVREG_REASON_REMOTE_ACCESS	= 42,	/* peer refused the rkey */
	KVREG_REASON_ADDRESS_IN_USE	= 43,	/* LISTEN: port taken */
	KVREG_REASON_UNKNOWN_ENDPOINT	= 44,	/* no such endpoint handle */
	KVREG_REASON_QUEUE_FULL		= 45,	/* limit, usage: WRs queued */
	KVREG_REASON_TOO_MANY_PIECES	= 46,	/* request: WRs, limit: most */
	/* UNEXPORT: the registration is not exported through the endpoint. */
	KVREG_REASON_NOT_EXPORTED	= 47,
	/*
	 * Caps (module parameters, shown by KVREG_IOC_STATS): limit is the
	 * cap, usage what is held, request what the call asked for. A peer
	 * refused for a connection cap learns it from the REJ (struct
	 * kvreg_cm_rej), with the same numbers.
	 */
	KVREG_REASON_ENDPOINT_LIMIT	= 48,	/* endpoints of the process */
	KVREG_REASON_ENDPOINT_CONN_LIMIT = 49,	/* connections on an endpoint */
	KVREG_REASON_PEER_CONN_LIMIT	= 50,	/* from one peer address */
	KVREG_REASON_IMPORT_LIMIT	= 51,	/* regions it imported */
	KVREG_REASON_DESC_CHUNK_LIMIT	= 52,	/* chunks in one descriptor */
	KVREG_REASON_IMPORT_CHUNK_LIMIT	= 53,	/* chunks of all its imports */
	KVREG_REASON_COMPLETION_LIMIT	= 54,	/* operations not yet reaped */
	/* No completion within limit ms (op_timeout_ms): flushed. */
	KVREG_REASON_OP_TIMEOUT		= 55,
	KVREG_REASON_INTERRUPTED	= 56,	/* a fatal signal: flushed */
	/*
	 * The peer broke kvreg's wire protocol: it accepted a connection
	 * with private data that is not a kvreg accept of this wire
	 * version (IMPORT, a rail's mend). Wire version 1 also reported
	 * with it a SEND other than an empty keepalive.
	 */
	KVREG_REASON_PEER_PROTOCOL	= 57,
};

/* A limit that does not apply. */
#define KVREG_UNLIMITED		(~0ULL)

/* Which argument KVREG_REASON_BAD_ARGUMENT refers to. */
enum kvreg_argument {
	KVREG_ARG_NONE		= 0,
	KVREG_ARG_SIZE		= 1,
	KVREG_ARG_FLAGS		= 2,
	KVREG_ARG_RESERVED	= 3,
	KVREG_ARG_ADDRESS	= 4,
	KVREG_ARG_LENGTH	= 5,
	KVREG_ARG_ACCESS	= 6,
	KVREG_ARG_DEVICE	= 7,
	KVREG_ARG_HANDLE	= 8,
	KVREG_ARG_OFFSET	= 9,	/* the local side's */
	KVREG_ARG_OPCODE	= 10,
	KVREG_ARG_KEYS		= 11,
	KVREG_ARG_REMOTE_OFFSET	= 12,
	KVREG_ARG_POINTER	= 13,	/* libkvreg: a required one is NULL */
	KVREG_ARG_ENDPOINT	= 14,
	KVREG_ARG_DESCRIPTOR	= 15,	/* its buffer: size or pointer */
	KVREG_ARG_TIMEOUT	= 16,
	KVREG_ARG_NET_ADDRESS	= 17,	/* LISTEN's, or a descriptor's */
};

/*
 * Written by the kernel at the caller's @error pointer: zero on success,
 * why on failure. Fields that do not apply to the reason are zero
 * (device_index: KVREG_NO_DEVICE_INDEX). New fields go at the end; the
 * kernel writes min(error_size, its own size) bytes and zeroes the rest.
 */
#define KVREG_ERROR_SIZE_VER0	56
#define KVREG_ERROR_SIZE_VER1	80	/* adds the network address */
struct kvreg_error {
	__u32 reason;		/* enum kvreg_reason */
	__u32 argument;		/* enum kvreg_argument */
	__u32 device_index;
	__u32 page_shift;
	__s32 driver_errno;	/* raw errno from ib_core or the driver */
	__u32 wc_status;	/* enum ib_wc_status of a failed transfer */
	__u64 limit;
	__u64 usage;
	__u64 request;
	__u64 address;
	/* VER1: the network address a connection or LISTEN failure is about. */
	__u16 addr_family;	/* AF_INET or AF_INET6; 0 when none */
	__u16 port;		/* host byte order */
	__u32 reserved;
	__u8 addr[16];		/* network byte order; IPv4 in the first 4 */
};

#define KVREG_ACCESS_LOCAL_WRITE	(1U << 0)
#define KVREG_ACCESS_REMOTE_WRITE	(1U << 1)
#define KVREG_ACCESS_REMOTE_READ	(1U << 2)
#define KVREG_ACCESS_ALL		(KVREG_ACCESS_LOCAL_WRITE | \
					 KVREG_ACCESS_REMOTE_WRITE | \
					 KVREG_ACCESS_REMOTE_READ)

/*
 * KVREG_IOC_ABI_VERSION: the first call a client makes. Never changes: it
 * alone has no error record.
 */
struct kvreg_abi_version {
	__u32 size;
	__u32 flags;
	__u32 abi_version;	/* out: KVREG_ABI_VERSION of the module */
	__u32 max_devices;	/* out */
};

#define KVREG_DEVICE_F_READY	(1U << 0)	/* kernel QP connected */

/*
 * One device, as KVREG_IOC_DEVICES lists them. The limits are the ones the
 * module enforces, so a pre-flight reads them instead of recomputing.
 */
#define KVREG_DEVICE_INFO_SIZE_VER0	128
struct kvreg_device_info {
	__u32 index;		/* stable while the device exists */
	__u32 port_state;	/* enum ib_port_state: 4 = ACTIVE */
	char name[KVREG_DEVICE_NAME_MAX];
	__u64 max_mr_size;
	__u64 page_size_cap;
	__u32 max_mr;
	__u32 max_fast_reg_page_list_len;
	__u32 flags;		/* KVREG_DEVICE_F_* */
	__u32 reserved;
	__u64 mrs_in_use;	/* kvreg MRs charged here, all processes */
	__u64 mr_limit;		/* MRs kvreg may hold here, all processes */
	__u32 mr_pages_base;	/* pages one MR holds, of PAGE_SIZE */
	__u32 mr_pages_huge;	/* and of 2 MiB */
};

/* KVREG_IOC_DEVICES */
#define KVREG_DEVICES_SIZE_VER0	40
struct kvreg_devices {
	__u32 size;
	__u32 flags;
	__u64 error;		/* in: user pointer to struct kvreg_error */
	__u32 error_size;	/* in: bytes there (0: no record) */
	__u32 count;		/* out: devices present (may exceed capacity) */
	__u32 capacity;		/* in: entries at @entries */
	__u32 entry_size;	/* in: sizeof(struct kvreg_device_info) */
	__u64 entries;		/* in: user pointer to the array */
};

/*
 * A device's view of a registration, one per device it is live on: its
 * pages are DMA-mapped there, and no MR of the file exists (see
 * KVREG_IOC_REGISTER). @mrs and @page_shift are those of the MRs an
 * export of it makes on that device, which REGISTER charged; @iova and
 * @length are the registration's address and length.
 */
#define KVREG_KEY_SIZE_VER0	32
struct kvreg_key {
	__u32 device_index;
	__u32 page_shift;	/* an export's MR page size there */
	__u32 mrs;		/* an export's MRs there: charged */
	__u32 reserved;		/* 0 */
	__u64 iova;		/* the registration's address */
	__u64 length;
};

/* kvreg_register.flags: register even if the range overlaps another. */
#define KVREG_REG_F_ALLOW_OVERLAP	(1U << 0)

/* kvreg_register.out_flags and kvreg_query.out_flags */
#define KVREG_REG_OUT_SPLIT	(1U << 0)	/* an export: several MRs */
#define KVREG_REG_OUT_DUPLICATE	(1U << 1)	/* existing one, one more ref */
/*
 * MR pages smaller than 2 MiB on memory backed by huge pages: 2 MiB
 * alignment of the address and length would have allowed 2 MiB MR pages.
 */
#define KVREG_REG_OUT_HUGE_HINT	(1U << 2)

/**
 * KVREG_IOC_REGISTER - pin a buffer once and map it on devices
 *
 * Pins [@addr, @addr + @length) (LOCAL_WRITE or REMOTE_WRITE: for
 * writing) and DMA-maps its pages on each device of @device_mask (0:
 * every device). No MR is made: the local side of a transfer or a SUBMIT
 * is a list of scatter entries over the mapping with the kernel PD's
 * local_dma_lkey, as nvme-rdma's are, and the MRs a peer uses are made by
 * EXPORT, in the export's own PD. So REGISTER costs the pin and the
 * mapping, and no key of the file exists for anyone to aim at.
 *
 * It charges what it charged when it made MRs: the pinned bytes (the
 * process's budget, the host's ceiling, RLIMIT_MEMLOCK through the mm)
 * and, on each device, the MRs one export of it takes there (the
 * process's MR budget, the device's reserve, the rdma cgroup's
 * hca_object), so that what could not be exported is refused here, with
 * the same numbers. An EXPORT charges its MRs again, as its own.
 *
 * Out: @handle, @refs and @out_flags; @nkeys keys (struct kvreg_key, one
 * per device: the page size and the number of an export's MRs there), as
 * many as @keys_capacity takes. The same buffer registered again (same
 * range, access and devices) is the same handle with one more reference
 * (KVREG_REG_OUT_DUPLICATE). A zero @length succeeds with
 * KVREG_HANDLE_NONE and no keys.
 *
 * Return: 0, or -1 with errno and the error record, whose reason says
 * what failed: BAD_ARGUMENT; NO_DEVICE, DEVICE_REMOVED,
 * DEVICE_NOT_ACTIVE; UNMAPPED_ADDRESS, NOT_HOST_MEMORY, FILE_BACKED,
 * READ_ONLY, OVERLAP (the memory); TOO_LARGE (an MR cannot hold what one
 * must); PROC_MR_BUDGET, PROC_BYTES_BUDGET, HOST_CEILING,
 * DEVICE_MR_RESERVE, MEMLOCK_EXCEEDED, MEMLOCK_ZERO, RDMA_CGROUP (with
 * limit, usage and request); NO_KERNEL_MEMORY, FOREIGN_PROCESS,
 * INTERRUPTED; DEVICE_REFUSED (the DMA mapping). Nothing is left
 * pinned, mapped or charged after a failure.
 */
#define KVREG_REGISTER_SIZE_VER0	88
struct kvreg_register {
	__u32 size;
	__u32 flags;		/* KVREG_REG_F_* */
	__u64 error;		/* in: user pointer to struct kvreg_error */
	__u32 error_size;	/* in: bytes there (0: no record) */
	__u32 access;		/* KVREG_ACCESS_* */
	__u64 addr;
	__u64 length;
	__u64 device_mask;	/* bit i: device index i; 0: every device */
	__u64 keys;		/* in: user pointer to struct kvreg_key[] */
	__u32 key_size;		/* in: sizeof(struct kvreg_key) */
	__u32 keys_capacity;	/* in: entries at @keys (may be 0) */
	__u64 handle;		/* out */
	__u32 nkeys;		/* out: devices live; as many keys */
	__u32 out_flags;	/* out: KVREG_REG_OUT_* */
	__u32 refs;		/* out: references held on the handle */
	__u32 reserved;
};

/* KVREG_IOC_DEREGISTER: drops one reference; the last one releases. */
#define KVREG_DEREGISTER_SIZE_VER0	32
struct kvreg_deregister {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 reserved;
	__u64 handle;
};

/**
 * KVREG_IOC_QUERY - what a registration of this file is, now
 *
 * @handle's range, access, pinned span, the devices it is live on
 * (@device_mask; a removed device drops out), a key per such device
 * (@nkeys, as many into @keys as @keys_capacity takes), @refs and
 * @out_flags, as REGISTER reported them.
 *
 * Return: 0, or -1 with errno and the error record: BAD_ARGUMENT,
 * UNKNOWN_HANDLE, NO_KERNEL_MEMORY, FOREIGN_PROCESS.
 */
#define KVREG_QUERY_SIZE_VER0	104
struct kvreg_query {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 key_size;
	__u64 handle;
	__u64 keys;		/* in: user pointer to struct kvreg_key[] */
	__u32 keys_capacity;
	__u32 access;		/* out: as registered, like the rest */
	__u64 addr;
	__u64 length;
	__u64 pinned_addr;	/* out: first pinned page */
	__u64 pinned_pages;	/* out: base pages pinned */
	__u64 device_mask;	/* out: devices it is live on */
	__u32 nkeys;		/* out: as many keys */
	__u32 refs;		/* out */
	__u32 out_flags;	/* out: KVREG_REG_OUT_* */
	__u32 reserved;
};

enum kvreg_transfer_op {
	KVREG_OP_WRITE	= 1,	/* local -> remote */
	KVREG_OP_READ	= 2,	/* remote -> local */
};

/*
 * Bit 0 is retired: it was a raw (address, rkey) remote side, root only,
 * that moved bytes by RDMA loopback. A file's own MRs no longer take remote
 * access (see "Remote regions"), so no raw key can reach them.
 */
/*
 * remote_handle is a region imported with KVREG_IOC_IMPORT: the transfer
 * goes through its connections to the node that exported it. device_index
 * is the local device of one of its rails (IMPORT reports one), the rail
 * tried first; when that rail has failed, the others carry it.
 */
#define KVREG_TRANSFER_F_REMOTE_REGION	(1U << 1)

/**
 * KVREG_IOC_TRANSFER - move @length bytes, and return once they moved
 *
 * KVREG_OP_WRITE moves them from the local side (@local_handle at
 * @local_offset, a registration of this file) to the remote side, READ
 * the other way. The remote side is:
 *  - with KVREG_TRANSFER_F_REMOTE_REGION, a region this file imported
 *    (@remote_handle, @remote_offset): RDMA through the region's rails,
 *    the one on @device_index first;
 *  - without it, another registration of this file: the CPU copies the
 *    bytes between the two registrations' pinned pages, and a fatal
 *    signal ends the copy within a MiB. No RDMA takes part: a loopback
 *    would need a QP of the file that accepts remote RDMA while it runs.
 *    Both registrations must still be live on @device_index, so that a
 *    caller's arguments and refusals are the same for both kinds;
 *    overlapping ranges copy as forward.
 * The side written must have been registered with LOCAL_WRITE.
 *
 * Return: 0 once every byte moved. Otherwise -1 with errno and the error
 * record: EINVAL (BAD_ARGUMENT: unknown flags, a non-zero reserved field,
 * a zero length), ENOENT (UNKNOWN_HANDLE), ERANGE (OUT_OF_RANGE), EACCES
 * (ACCESS_DENIED), ENODEV (NO_DEVICE, DEVICE_REMOVED), ENETDOWN
 * (DEVICE_NOT_ACTIVE), EINTR (INTERRUPTED: a fatal signal, in which case
 * a prefix of the bytes moved), and for a region ETIMEDOUT (OP_TIMEOUT),
 * EIO (TRANSFER_FAILED, REMOTE_ACCESS), ENOTCONN (CONN_LOST).
 */
#define KVREG_TRANSFER_SIZE_VER0	80
struct kvreg_transfer {
	__u32 size;
	__u32 flags;		/* KVREG_TRANSFER_F_* */
	__u64 error;
	__u32 error_size;
	__u32 opcode;		/* enum kvreg_transfer_op */
	__u32 device_index;
	__u32 reserved;		/* must be 0 */
	__u64 local_handle;
	__u64 local_offset;
	__u64 remote_handle;
	__u64 remote_offset;
	__u64 reserved2;	/* must be 0 */
	__u64 length;
};

/* KVREG_IOC_STATS: usage against every limit that applies to the caller. */
#define KVREG_STATS_SIZE_VER0	144
#define KVREG_STATS_SIZE_VER1	232
struct kvreg_stats {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 devices;
	/* Host-wide, kvreg only. */
	__u64 pinned_pages;
	__u64 registrations;
	__u64 mrs;
	__u64 host_max_pinned_bytes;
	/* This open file. */
	__u64 file_pinned_pages;
	__u64 file_registrations;
	__u64 file_mrs;		/* its registrations', as an export's */
	/* This process: every file it opened shares one budget. */
	__u64 proc_pinned_bytes;
	__u64 proc_max_pinned_bytes;
	__u64 proc_mrs;
	__u64 proc_max_mrs;
	/*
	 * RLIMIT_MEMLOCK of the caller (KVREG_UNLIMITED with CAP_IPC_LOCK)
	 * and what its mm has charged, by kvreg and every other pinner.
	 */
	__u64 memlock_limit;
	__u64 memlock_used;
	__u32 device_mr_reserve_percent;	/* share of max_mr kept free */
	__u32 page_size;	/* bytes of the pages counted above */
	__u64 host_pinned_bytes;	/* what host_max_pinned_bytes limits */
	/* VER1: the caps on what a process or a peer makes kvreg allocate. */
	__u64 proc_endpoints;
	__u64 proc_max_endpoints;
	__u64 proc_imports;		/* imported regions */
	__u64 proc_max_imports;
	__u64 proc_import_chunks;	/* their chunks (remote MRs) */
	__u64 proc_max_import_chunks;
	__u64 max_desc_chunks;		/* in one descriptor */
	__u64 file_conns;		/* accepted on this file's endpoints */
	__u32 max_conns_per_endpoint;
	__u32 max_conns_per_peer;	/* per endpoint and peer address */
	__u32 file_unreaped;		/* submitted operations not reaped */
	__u32 max_unreaped;
	__u32 op_timeout_ms;		/* an operation's deadline */
	__u32 reserved;
};

#define KVREG_BUDGET_F_MRS	(1U << 0)	/* set max_mrs */
#define KVREG_BUDGET_F_BYTES	(1U << 1)	/* set max_pinned_bytes */
#define KVREG_BUDGET_F_DEFAULTS	(1U << 2)	/* back to module defaults */

/*
 * KVREG_IOC_SET_BUDGET: a process may lower its own budget; raising it
 * above the module defaults needs CAP_SYS_RESOURCE. On return both fields
 * hold the budget now in force.
 */
#define KVREG_BUDGET_SIZE_VER0	40
struct kvreg_budget {
	__u32 size;
	__u32 flags;		/* KVREG_BUDGET_F_* */
	__u64 error;
	__u32 error_size;
	__u32 reserved;
	__u64 max_mrs;
	__u64 max_pinned_bytes;
};

/* One process using kvreg, as KVREG_IOC_PROCS lists them. */
#define KVREG_PROC_INFO_SIZE_VER0	64
struct kvreg_proc_info {
	__u32 pid;
	__u32 files;		/* open /dev/kvreg files */
	char comm[16];
	__u64 registrations;
	__u64 mrs;
	__u64 max_mrs;
	__u64 pinned_bytes;
	__u64 max_pinned_bytes;
};

/* KVREG_IOC_PROCS: every process's usage; needs CAP_SYS_ADMIN. */
#define KVREG_PROCS_SIZE_VER0	40
struct kvreg_procs {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 count;		/* out: processes (may exceed capacity) */
	__u32 capacity;
	__u32 entry_size;	/* sizeof(struct kvreg_proc_info) */
	__u64 entries;
};

/*
 * KVREG_IOC_FEATURES: what this module can do, as bits, so that a library
 * learns it instead of guessing from ABI_VERSION. A bit once defined keeps
 * its meaning; a module that lacks a feature leaves its bit clear.
 */
/* Each open file has its own PD: no other file's QP reaches it. */
#define KVREG_FEATURE_FILE_PD		(1ULL << 0)
/* Transfers hold their registrations, not the file: they run in parallel. */
#define KVREG_FEATURE_PARALLEL_TRANSFER	(1ULL << 1)
/* Bit 2 is retired: KVREG_TRANSFER_F_RAW_REMOTE, gone with it. */
/* LISTEN, EXPORT, IMPORT, UNIMPORT, KVREG_TRANSFER_F_REMOTE_REGION. */
#define KVREG_FEATURE_REMOTE		(1ULL << 3)
/* SUBMIT, REAP, and poll() on the file. */
#define KVREG_FEATURE_SUBMIT		(1ULL << 4)
/* KVREG_IOC_CONNS. */
#define KVREG_FEATURE_CONNS		(1ULL << 5)
/*
 * Rails: KVREG_LISTEN_F_ADD_ADDRESS, descriptors with a path per address,
 * IMPORT connecting on each (device_mask, rails), operations spread over
 * the rails and moved off one that fails, rails reconnected by the module.
 */
#define KVREG_FEATURE_RAILS		(1ULL << 6)
/*
 * Exports are capabilities (see "Remote regions" below): EXPORT makes keys
 * of its own in the endpoint's protection domain, UNEXPORT, UNLISTEN and
 * REKEY revoke them, importers' connections accept no RDMA at all, and
 * TRANSFER between a file's own registrations needs no REMOTE_* flag.
 */
#define KVREG_FEATURE_REVOCABLE_EXPORTS	(1ULL << 7)
/*
 * Each export has a secret and protection domains of its own: a
 * descriptor lets its holder in to that export only, and one exported
 * again after UNEXPORT or DEREGISTER has a new secret.
 */
#define KVREG_FEATURE_EXPORT_PD		(1ULL << 8)
/*
 * REGISTER makes no MR: it pins and DMA-maps, its keys (struct kvreg_key)
 * give an export's MR page size and count per device (@mrs) and no lkey
 * or rkey, and the file has no engine QP.
 */
#define KVREG_FEATURE_REGISTER_NO_MR	(1ULL << 9)

#define KVREG_FEATURES_SIZE_VER0	32
struct kvreg_features {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 max_devices;	/* out: KVREG_MAX_DEVICES of the module */
	__u64 features;		/* out: KVREG_FEATURE_* */
};

/*
 * Remote regions: a process LISTENs on an address, EXPORTs a registration
 * as a descriptor, and ships it to another node over its own control
 * plane; a process there IMPORTs it, which connects (through the RDMA CM,
 * in the caller's network namespace) to the endpoint, and transfers with
 * KVREG_TRANSFER_F_REMOTE_REGION.
 *
 * The rule (KVREG_FEATURE_REVOCABLE_EXPORTS, KVREG_FEATURE_EXPORT_PD): a
 * connection accepted on an endpoint reaches exactly the one export whose
 * descriptor's secret it presented, only with the access it was exported
 * with; a connection an importer made reaches nothing of the importer;
 * and once UNEXPORT, DEREGISTER, UNLISTEN, REKEY (for the connections it
 * cuts) or the file's close returns, no peer can read or write a byte of
 * that memory, nor reach it again by guessing keys. It holds by
 * construction:
 *  - each export has a random secret and a protection domain of its own
 *    on each device the endpoint listens on; a connection request is
 *    accepted into the domain of the export whose secret it carries, and
 *    nothing else lives there but the MRs that EXPORT made for it;
 *  - EXPORT fast-registers the registration's pages (pinned once, already
 *    DMA-mapped) as new MRs in that domain, with REMOTE_READ and/or
 *    REMOTE_WRITE as registered; their rkeys are the descriptor's, and no
 *    other key of the process, of the endpoint's other exports, or of a
 *    later export of the same registration reaches anything through
 *    those QPs, whatever rkey a peer tries;
 *  - revoking deregisters those MRs: the device refuses their rkeys from
 *    then on, and a peer's operation on them fails (REMOTE_ACCESS there);
 *    its secret lets no connection in any more, and an export made again
 *    has a new secret and new domains;
 *  - an importer's QPs accept no incoming RDMA READ, WRITE or atomic at
 *    any state (kvreg moves them through INIT, RTR and RTS itself, with
 *    no remote access flags), so the node it connected to reaches none of
 *    the importer's memory;
 *  - kvreg's engines (a file's and an endpoint's fast-registration QPs),
 *    which any local verbs user can address, never hold a remote right,
 *    and their PSNs are random; a TRANSFER between two registrations of
 *    a file is a CPU copy, not an RDMA loopback.
 * What each adversary (a local verbs user, a peer holding a descriptor,
 * one holding only an address, a spoofer on a RoCE fabric) can and cannot
 * do, which claims rely on the NIC, and the gaps still open are in
 * docs/remote.md, "Threat model".
 * REGISTER's REMOTE_* flags mean "may be exported with": REGISTER makes
 * no MR, so a registration has no key for a peer or a local verbs user
 * to aim at until it is exported, and then only the export's.
 */
struct kvreg_net_addr {
	__u16 family;		/* AF_INET or AF_INET6 */
	__u16 port;		/* host byte order; LISTEN: 0 picks one */
	__u32 scope_id;		/* IPv6 link-local; else 0 */
	__u8 addr[16];		/* network byte order; IPv4 in the first 4 */
};

/*
 * KVREG_IOC_LISTEN: an endpoint on a local address of an RDMA device.
 * With KVREG_LISTEN_F_ADD_ADDRESS, @endpoint (in) is an endpoint of this
 * file and @addr becomes another of its addresses, for the same exports:
 * one rail per address, on the device that owns it (at most
 * KVREG_DESC_MAX_PATHS). A listener whose device is removed is not bound
 * again: the keys its paths carried died with the device; close the
 * endpoint (UNLISTEN) and listen anew.
 */
#define KVREG_LISTEN_F_ADD_ADDRESS	(1U << 0)
#define KVREG_LISTEN_SIZE_VER0	64
struct kvreg_listen {
	__u32 size;
	__u32 flags;		/* KVREG_LISTEN_F_* */
	__u64 error;
	__u32 error_size;
	__u32 device_index;	/* out: the device that owns the address */
	struct kvreg_net_addr addr;	/* in; out: the port bound */
	__u64 endpoint;		/* out: handle, for EXPORT (in: to add to) */
	__u32 backlog;		/* 0: the kernel's default; at most 1024 */
	__u32 reserved;
};

/*
 * KVREG_IOC_EXPORT: a registration's descriptor, for a peer to IMPORT.
 * The first EXPORT of a registration through an endpoint makes its keys
 * there (what that costs is charged as MRs to the caller's budgets, the
 * device reserve and the rdma cgroup); another returns a descriptor of
 * the same keys and secret, with a path for any address added since. The
 * descriptor reveals the registration's length, the access granted, the
 * endpoint's addresses, the export's secret, and for each path the iova,
 * length and rkey of each of the export's MRs: nothing of any other
 * registration or export, and no handle. The iovas are not the
 * exporter's virtual addresses: the export's layout moved to a random
 * base, a multiple of the MR page size, made anew at each first EXPORT
 * through an endpoint, so only each page's offset shows.
 */
#define KVREG_EXPORT_SIZE_VER0	56
struct kvreg_export {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 reserved;
	__u64 endpoint;
	__u64 handle;		/* a registration with remote access */
	__u64 desc;		/* user pointer: room for the descriptor */
	__u32 desc_capacity;
	__u32 desc_size;	/* out: bytes written; with ENOSPC, needed */
};

/*
 * KVREG_IOC_IMPORT: validate a descriptor and connect to its export (or
 * share the file's connections to it, made by an IMPORT of the same
 * export). A connection is made on each path
 * of the descriptor (a rail), through the local device the route to that
 * address takes; it succeeds when at least one rail is up, and the module
 * keeps trying the others. The region stays until UNIMPORT or close; the
 * rails while a region of them does.
 */
#define KVREG_CONNECT_TIMEOUT_MS	5000
#define KVREG_IMPORT_SIZE_VER0	64
#define KVREG_IMPORT_SIZE_VER1	80	/* adds device_mask, rails, paths */
struct kvreg_import {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 desc_size;
	__u64 desc;		/* user pointer to the descriptor */
	__u64 remote;		/* out: remote region handle */
	__u64 length;		/* out: the exported registration's */
	__u32 access;		/* out: KVREG_ACCESS_REMOTE_* it allows */
	__u32 device_index;	/* out: the local device it goes through */
	__u32 timeout_ms;	/* 0: KVREG_CONNECT_TIMEOUT_MS */
	__u32 reserved;
	/* VER1 */
	__u64 device_mask;	/* in: local devices rails may use; 0: any */
	__u32 rails;		/* out: rails up now */
	__u32 paths;		/* out: paths the descriptor offers */
};

/*
 * KVREG_IOC_UNEXPORT: revoke what EXPORT granted to @handle through
 * @endpoint. On return its keys are dead in every device: a peer's
 * operation that reaches them fails (there, with REMOTE_ACCESS), and its
 * secret lets no connection in (KVREG_REASON_CONN_BAD_SECRET); the
 * connections made with it stay, reaching nothing, until their peers or
 * the endpoint drop them. Fails with KVREG_REASON_NOT_EXPORTED when
 * there is nothing to revoke.
 */
#define KVREG_UNEXPORT_SIZE_VER0	40
struct kvreg_unexport {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 reserved;
	__u64 endpoint;
	__u64 handle;
};

/*
 * KVREG_IOC_UNLISTEN: close an endpoint. Its addresses stop listening,
 * every connection accepted on it is disconnected, every export through
 * it is revoked, and its handle is gone, all before the call returns.
 */
#define KVREG_UNLISTEN_SIZE_VER0	32
struct kvreg_unlisten {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 reserved;
	__u64 endpoint;
};

/*
 * KVREG_IOC_REKEY: give each export of an endpoint a new secret. Every
 * descriptor exported before stops working: an IMPORT of one is refused
 * with KVREG_REASON_CONN_BAD_SECRET, and every connection accepted on the
 * endpoint is disconnected, so no peer keeps access through one. The
 * exports and their keys stay: EXPORT them again for the descriptors to
 * ship.
 */
#define KVREG_REKEY_SIZE_VER0	32
struct kvreg_rekey {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 reserved;
	__u64 endpoint;
};

/* KVREG_IOC_UNIMPORT */
#define KVREG_UNIMPORT_SIZE_VER0	32
struct kvreg_unimport {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 reserved;
	__u64 remote;
};

/*
 * KVREG_IOC_SUBMIT: operations on imported regions, posted without
 * waiting. With several rails, an operation of KVREG_RAIL_SPLIT_MIN bytes
 * or more is split over them, a smaller one goes to the rail with the
 * least in flight; what was in flight on a rail that fails is posted again
 * on another (a READ or WRITE of the same bytes may be repeated), so an
 * operation fails only when no rail is left to carry it. Each completes,
 * once, into the file's completion queue, which KVREG_IOC_REAP drains and
 * poll() reports (POLLIN while completions wait). Work in flight is
 * bounded per rail (KVREG_SUBMIT_DEPTH work requests): a full queue
 * accepts fewer operations, never blocks.
 * An operation is split at the remote side's MR boundaries into at most
 * KVREG_OP_MAX_PIECES work requests, whose local side is up to 32 runs of
 * the registration's pages (the device's max_send_sge if lower; a run per
 * page on scattered base pages). SUBMIT stops at the first operation
 * it refuses: with some accepted it succeeds and says how many; with none
 * it fails with that operation's reason.
 */
#define KVREG_SUBMIT_DEPTH	128
#define KVREG_RAIL_SPLIT_MIN	(256U << 10)
#define KVREG_OP_MAX_PIECES	64
#define KVREG_SUBMIT_MAX	4096	/* operations in one call */

#define KVREG_OP_SIZE_VER0	56
struct kvreg_op {
	__u32 opcode;		/* enum kvreg_transfer_op */
	__u32 flags;		/* none yet */
	__u64 local_handle;
	__u64 local_offset;
	__u64 remote;		/* an imported region */
	__u64 remote_offset;
	__u64 length;
	__u64 user_data;	/* returned in its completion */
};

#define KVREG_SUBMIT_SIZE_VER0	40
struct kvreg_submit {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 op_size;		/* sizeof(struct kvreg_op) */
	__u64 ops;		/* user pointer to struct kvreg_op[count] */
	__u32 count;
	__u32 accepted;		/* out */
};

/* One finished operation: status 0, or -errno and the record's reason. */
#define KVREG_COMPLETION_SIZE_VER0	104
struct kvreg_completion {
	__u64 user_data;
	__u64 bytes;		/* moved: the length, or 0 */
	__s32 status;
	__u32 reserved;
	struct kvreg_error error;	/* zero on success */
};

/*
 * KVREG_IOC_REAP: up to capacity completions, oldest first; waits up to
 * timeout_ms for min_complete of them (0: does not wait).
 */
#define KVREG_REAP_MAX_TIMEOUT_MS	60000
#define KVREG_REAP_SIZE_VER0	48
struct kvreg_reap {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 entry_size;	/* sizeof(struct kvreg_completion) */
	__u64 entries;		/* user pointer to struct kvreg_completion[] */
	__u32 capacity;
	__u32 count;		/* out */
	__u32 min_complete;
	__u32 timeout_ms;
};

/*
 * The descriptor, version 1: what EXPORT writes and IMPORT reads, and what
 * a peer written with plain libibverbs and librdmacm may parse (it needs
 * no libkvreg). All fields little-endian; the parts follow each other with
 * no gaps: the head, nr_paths paths, then each path's chunks in path
 * order. A chunk is one MR: chunks tile [0, length) in order, so region
 * offset o lies in the chunk where the running sum of lengths passes o,
 * at iova + (o - that chunk's start). checksum is 32-bit FNV-1a
 * (offset basis 0x811c9dc5, prime 0x01000193) over all total_size bytes
 * with the checksum field taken as zero. A reader refuses a head_size
 * below its own and ignores bytes of the head past what it knows. Each
 * path is one address of the endpoint and the region's MRs on the device
 * that owns it (rkeys are per device); each path's chunks tile the whole
 * region. A reader that uses one path takes the first.
 */
#define KVREG_DESC_MAGIC	0x4452564bU	/* "KVRD" */
#define KVREG_DESC_VERSION	1
#define KVREG_DESC_MAX_PATHS	8
#define KVREG_DESC_MAX_CHUNKS	(1U << 20)
#define KVREG_SECRET_LEN	16

struct kvreg_desc_head {
	__le32 magic;
	__le16 version;
	__le16 head_size;	/* sizeof(struct kvreg_desc_head) */
	__le32 total_size;
	__le32 checksum;
	__le64 length;		/* the registration's length */
	__le32 access;		/* KVREG_ACCESS_REMOTE_* granted */
	__le16 nr_paths;	/* one per address the endpoint answers on */
	__le16 reserved;
	__u8 secret[KVREG_SECRET_LEN];	/* the export's, for the CM */
};

/* One way to reach the region: an address of the endpoint, its device. */
struct kvreg_desc_path {
	__le16 family;		/* AF_INET or AF_INET6 */
	__le16 port;
	__le32 scope_id;
	__u8 addr[16];		/* network byte order */
	__le32 nr_chunks;
	__le32 reserved;
};

struct kvreg_desc_chunk {
	__le64 iova;
	__le64 length;
	__le32 rkey;
	__le32 reserved;
};

/*
 * Connection private data, version 2 (RDMA_PS_TCP, IB_QPT_RC). The active
 * side's connect request carries struct kvreg_cm_req; a refusal carries
 * struct kvreg_cm_rej with the reason (KVREG_REASON_CONN_BAD_SECRET,
 * KVREG_REASON_CONN_VERSION, ...). The accept carries struct kvreg_cm_req
 * with a zero secret; an active side refuses (REJ, then
 * KVREG_REASON_PEER_PROTOCOL) an accept whose private data is not that,
 * with this version. The passive side only responds: the active side
 * posts RDMA READ and WRITE with the descriptor's rkeys (responder
 * resources up to the device's max_qp_rd_atom) and sends nothing else.
 * The active side asks for no responder resources and its QP takes no
 * incoming RDMA READ, WRITE or atomic, and posts no receive: a peer that
 * posts one of those, or any SEND, gets an error or RNR. Liveness (since
 * version 2; version 1's passive side sent empty SENDs into receives the
 * active side kept posted, which a SEND with Invalidate could abuse):
 * the active side posts a zero-length RDMA WRITE (no address, no key)
 * twice every kvreg.keepalive_ms, and learns from its failure that the
 * passive side is gone; the passive side lets go of a connection whose
 * expected receive PSN has not moved for three of its keepalive periods.
 * The request's @keepalive_ms is the active side's period (at most
 * 65535; 0: it posts no keepalive), and the passive side's period for
 * that connection is the longer of it and its own, so nodes need not
 * agree on kvreg.keepalive_ms. A request of 0 gets the passive side's
 * own period: a connection that stays quiet is let go all the same.
 */
#define KVREG_CM_MAGIC		0x4352564bU	/* "KVRC" */
#define KVREG_CM_VERSION	2
struct kvreg_cm_req {
	__le32 magic;
	__le16 version;
	__le16 keepalive_ms;	/* the request's; the accept's is 0 */
	__u8 secret[KVREG_SECRET_LEN];
};

struct kvreg_cm_rej {
	__le32 magic;
	__le16 version;		/* the highest the refusing side speaks */
	__le16 reason;		/* enum kvreg_reason */
	/*
	 * A cap's numbers, as in struct kvreg_error. They came after the
	 * first three fields without a new version: a reader takes what the
	 * private data's length holds, and a shorter REJ has none.
	 */
	__le32 limit;
	__le32 usage;
};

/*
 * One endpoint or connection, as KVREG_IOC_CONNS lists them. An active
 * connection is made by IMPORT and posts the transfers; a passive one was
 * accepted on an endpoint and serves a peer's. A connection's counters
 * are of the operations it posted (SUBMIT and TRANSFER), so a passive
 * one, which posts none, shows zeros there.
 */
enum kvreg_conn_kind {
	KVREG_CONN_KIND_ENDPOINT	= 1,
	KVREG_CONN_KIND_ACTIVE		= 2,
	KVREG_CONN_KIND_PASSIVE		= 3,
};

enum kvreg_conn_state {
	KVREG_CONN_STATE_LISTENING	= 1,	/* an endpoint */
	KVREG_CONN_STATE_CONNECTING	= 2,	/* accepted, not yet up */
	KVREG_CONN_STATE_ESTABLISHED	= 3,
	/* Disconnected, its device removed or its peer silent: it fails. */
	KVREG_CONN_STATE_LOST		= 4,
};

#define KVREG_CONN_INFO_SIZE_VER0	128
#define KVREG_CONN_INFO_SIZE_VER1	160	/* adds the rail */
struct kvreg_conn_info {
	__u32 pid;		/* the process that opened the file */
	__u32 uid;		/* its effective uid at open */
	char comm[16];
	__u32 kind;		/* enum kvreg_conn_kind */
	__u32 state;		/* enum kvreg_conn_state */
	__u32 device_index;
	__u32 inflight;		/* operations posted, not yet completed */
	struct kvreg_net_addr local;
	struct kvreg_net_addr peer;	/* zero for an endpoint */
	__u64 endpoint;		/* an endpoint's handle in its file, or 0 */
	__u64 ops;		/* operations completed, successfully or not */
	__u64 ops_failed;
	__u64 bytes;		/* moved by the operations that succeeded */
	__u32 last_wc_status;	/* of the last failed operation, or 0 */
	__u32 reserved;
	/*
	 * VER1. An active connection is one rail of the file's connections
	 * to one endpoint: @rail_group names them (0: none), @rail is the
	 * descriptor path it serves. @failovers counts operations that were
	 * in flight on it when it failed and were posted again elsewhere.
	 * While it is LOST, the module connects it again: @mend_reason and
	 * @mend_errno say why the last try failed (0: none failed yet;
	 * KVREG_REASON_PEER_PROTOCOL and -EPROTO when what answered there
	 * accepted as no kvreg endpoint does).
	 */
	__u64 rail_group;
	__u32 rail;
	__u32 rails;		/* rails of the group, up or not */
	__u64 failovers;
	__u32 mend_reason;	/* enum kvreg_reason */
	__s32 mend_errno;
};

/*
 * KVREG_IOC_CONNS: every endpoint and connection on the host; a caller
 * without CAP_SYS_ADMIN sees only those of files opened with its
 * effective uid.
 */
#define KVREG_CONNS_SIZE_VER0	40
struct kvreg_conns {
	__u32 size;
	__u32 flags;
	__u64 error;
	__u32 error_size;
	__u32 count;		/* out: entries (may exceed capacity) */
	__u32 capacity;
	__u32 entry_size;	/* sizeof(struct kvreg_conn_info) */
	__u64 entries;
};

#define KVREG_IOC_MAGIC		0xCB
#define KVREG_IOC_ABI_VERSION	_IO(KVREG_IOC_MAGIC, 0x00)
#define KVREG_IOC_DEVICES	_IO(KVREG_IOC_MAGIC, 0x01)
#define KVREG_IOC_REGISTER	_IO(KVREG_IOC_MAGIC, 0x02)
#define KVREG_IOC_DEREGISTER	_IO(KVREG_IOC_MAGIC, 0x03)
#define KVREG_IOC_QUERY		_IO(KVREG_IOC_MAGIC, 0x04)
#define KVREG_IOC_TRANSFER	_IO(KVREG_IOC_MAGIC, 0x05)
#define KVREG_IOC_STATS		_IO(KVREG_IOC_MAGIC, 0x06)
#define KVREG_IOC_SET_BUDGET	_IO(KVREG_IOC_MAGIC, 0x07)
#define KVREG_IOC_PROCS		_IO(KVREG_IOC_MAGIC, 0x08)
#define KVREG_IOC_FEATURES	_IO(KVREG_IOC_MAGIC, 0x09)
#define KVREG_IOC_LISTEN	_IO(KVREG_IOC_MAGIC, 0x0a)
#define KVREG_IOC_EXPORT	_IO(KVREG_IOC_MAGIC, 0x0b)
#define KVREG_IOC_IMPORT	_IO(KVREG_IOC_MAGIC, 0x0c)
#define KVREG_IOC_UNIMPORT	_IO(KVREG_IOC_MAGIC, 0x0d)
#define KVREG_IOC_SUBMIT	_IO(KVREG_IOC_MAGIC, 0x0e)
#define KVREG_IOC_REAP		_IO(KVREG_IOC_MAGIC, 0x0f)
#define KVREG_IOC_CONNS		_IO(KVREG_IOC_MAGIC, 0x10)
#define KVREG_IOC_UNEXPORT	_IO(KVREG_IOC_MAGIC, 0x11)
#define KVREG_IOC_UNLISTEN	_IO(KVREG_IOC_MAGIC, 0x12)
#define KVREG_IOC_REKEY		_IO(KVREG_IOC_MAGIC, 0x13)

#endif /* _UAPI_KVREG_H */
