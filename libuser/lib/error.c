// SPDX-License-Identifier: MIT OR GPL-2.0-only
#include <arpa/inet.h>
#include <grp.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const kvreg_argument_names[] = {
	[KVREG_ARG_NONE] = "argument",
	[KVREG_ARG_SIZE] = "struct size",
	[KVREG_ARG_FLAGS] = "flags",
	[KVREG_ARG_RESERVED] = "reserved field",
	[KVREG_ARG_ADDRESS] = "address",
	[KVREG_ARG_LENGTH] = "length",
	[KVREG_ARG_ACCESS] = "access flags",
	[KVREG_ARG_DEVICE] = "device index",
	[KVREG_ARG_HANDLE] = "handle",
	[KVREG_ARG_OFFSET] = "local offset",
	[KVREG_ARG_OPCODE] = "opcode",
	[KVREG_ARG_KEYS] = "key array",
	[KVREG_ARG_REMOTE_OFFSET] = "remote offset",
	[KVREG_ARG_POINTER] = "pointer",
	[KVREG_ARG_ENDPOINT] = "endpoint",
	[KVREG_ARG_DESCRIPTOR] = "descriptor",
	[KVREG_ARG_TIMEOUT] = "timeout",
	[KVREG_ARG_NET_ADDRESS] = "network address",
};

/* What to do about a bad argument, by which argument it is. */
static const char *const kvreg_argument_fixes[] = {
	[KVREG_ARG_NONE] = "check the call against its man page",
	[KVREG_ARG_SIZE] = "build against the kvreg header of the module "
			   "you run",
	[KVREG_ARG_FLAGS] = "pass only the flags the call's man page lists",
	[KVREG_ARG_RESERVED] = "zero every reserved field",
	[KVREG_ARG_ADDRESS] = "pass the address of memory this process has "
			      "mapped",
	[KVREG_ARG_LENGTH] = "pass a length that ends inside this process's "
			     "address space",
	[KVREG_ARG_ACCESS] = "use only KVREG_ACCESS_* flags",
	[KVREG_ARG_DEVICE] = "use a device index 'kvregctl devices' lists",
	[KVREG_ARG_HANDLE] = "pass a handle this open /dev/kvreg returned",
	[KVREG_ARG_OFFSET] = "keep the local offset within the registration",
	[KVREG_ARG_OPCODE] = "use KVREG_OP_WRITE or KVREG_OP_READ",
	[KVREG_ARG_KEYS] = "pass a writable array of keys_capacity entries "
			   "of key_size >= sizeof(struct kvreg_key) bytes",
	[KVREG_ARG_REMOTE_OFFSET] = "keep the remote offset within the "
				    "registration",
	[KVREG_ARG_POINTER] = "pass the pointer the call's man page says it "
			      "needs, not NULL",
	[KVREG_ARG_ENDPOINT] = "use an endpoint kvreg_listen() returned on "
			       "this open /dev/kvreg",
	[KVREG_ARG_DESCRIPTOR] = "pass the whole descriptor kvreg_export() "
				 "wrote, and for export a buffer of at least "
				 "the size it asks for",
	[KVREG_ARG_TIMEOUT] = "pass a timeout of at most 60000 ms, or 0 for "
			      "the default",
	[KVREG_ARG_NET_ADDRESS] = "pass one IPv4 or IPv6 address of a local "
				  "interface, as text, not a wildcard",
};

#define KVREG_NR_ARGS	(sizeof(kvreg_argument_names) / \
			 sizeof(kvreg_argument_names[0]))

struct kvreg_reason_text {
	uint32_t reason;
	const char *name;	/* kvreg_strerror() */
	const char *fix;	/* what to do about it */
};

static const struct kvreg_reason_text kvreg_reasons[] = {
	{ KVREG_REASON_NONE, "success", "" },
	/* The fix depends on the argument: kvreg_argument_fixes. */
	{ KVREG_REASON_BAD_ARGUMENT, "invalid argument",
	  "check the call against its man page" },
	{ KVREG_REASON_NO_DEVICE, "no RDMA device",
	  "check 'kvregctl devices' and 'rdma link'; load the NIC driver "
	  "or choose a device that exists" },
	{ KVREG_REASON_DEVICE_NOT_ACTIVE, "RDMA device not active",
	  "bring the port up ('rdma link', 'ip link') and retry" },
	{ KVREG_REASON_DEVICE_REMOVED, "RDMA device removed",
	  "its keys are revoked; register again on a present device" },
	{ KVREG_REASON_UNMAPPED_ADDRESS, "address not mapped",
	  "register only memory this process has mapped" },
	{ KVREG_REASON_NO_KERNEL_MEMORY, "kernel out of memory",
	  "free memory on the host or register a smaller buffer" },
	{ KVREG_REASON_DEVICE_REFUSED, "RDMA driver refused",
	  "see the kernel log of the device; the driver's errno is given" },
	{ KVREG_REASON_UNKNOWN_HANDLE, "unknown registration handle",
	  "use a handle this open /dev/kvreg returned and has not "
	  "deregistered" },
	{ KVREG_REASON_OUT_OF_RANGE, "range outside the registration",
	  "keep offset + length within the registered length" },
	{ KVREG_REASON_ACCESS_DENIED, "registration lacks the access",
	  "register with the access flags the operation needs" },
	{ KVREG_REASON_TRANSFER_FAILED, "RDMA transfer failed",
	  "the work completion status says why; a revoked or wrong key "
	  "gives a remote access error" },
	{ KVREG_REASON_NOT_PERMITTED, "operation not permitted",
	  "raising a budget above the module default needs "
	  "CAP_SYS_RESOURCE; the process list needs CAP_SYS_ADMIN" },
	{ KVREG_REASON_TOO_LARGE, "exceeds the device's max_mr_size",
	  "register on a device with a larger max_mr_size" },
	{ KVREG_REASON_PROC_MR_BUDGET, "per-process MR budget exceeded",
	  "deregister unused buffers or raise kvreg.max_mrs_per_process" },
	{ KVREG_REASON_PROC_BYTES_BUDGET,
	  "per-process pinned-memory budget exceeded",
	  "deregister unused buffers or raise kvreg.max_bytes_per_process" },
	{ KVREG_REASON_HOST_CEILING, "host-wide kvreg pinning ceiling reached",
	  "wait for other processes to release memory or raise "
	  "kvreg.host_max_bytes" },
	{ KVREG_REASON_DEVICE_MR_RESERVE, "device MR reserve reached",
	  "deregister unused buffers, lower kvreg.device_mr_reserve_percent "
	  "or set kvreg.max_mrs_per_device" },
	{ KVREG_REASON_MEMLOCK_EXCEEDED, "RLIMIT_MEMLOCK exceeded",
	  "raise the memlock limit (ulimit -l, LimitMEMLOCK= in systemd, "
	  "--ulimit memlock in containers) or grant CAP_IPC_LOCK" },
	{ KVREG_REASON_MEMLOCK_ZERO, "RLIMIT_MEMLOCK is 0",
	  "this process may not pin memory at all: raise the memlock limit "
	  "(ulimit -l, LimitMEMLOCK=, --ulimit memlock) or grant CAP_IPC_LOCK" },
	{ KVREG_REASON_RDMA_CGROUP, "rdma cgroup limit reached",
	  "raise hca_object in the cgroup's rdma.max" },
	{ KVREG_REASON_DEVICE_EXHAUSTED, "RDMA device out of resources",
	  "deregister unused buffers; 'rdma resource show mr' shows who "
	  "holds the device's MRs" },
	{ KVREG_REASON_NOT_HOST_MEMORY, "not host memory",
	  "device memory (a GPU or PCI BAR mapping) cannot be registered; "
	  "register host memory (anonymous, memfd, hugetlb)" },
	{ KVREG_REASON_FILE_BACKED, "file-backed memory",
	  "long-term pins of file pages are refused; use anonymous, "
	  "memfd/shmem or hugetlbfs memory" },
	{ KVREG_REASON_READ_ONLY, "read-only memory",
	  "map it writable, or register it with remote read access only" },
	{ KVREG_REASON_OVERLAP, "overlaps an existing registration",
	  "register exactly the same range to share it, deregister the "
	  "other first, or pass KVREG_REG_F_ALLOW_OVERLAP" },
	{ KVREG_REASON_FOREIGN_PROCESS, "/dev/kvreg file of another process",
	  "open /dev/kvreg in this process; a file is not shared across "
	  "fork or fd passing" },
	{ KVREG_REASON_DESC_TRUNCATED, "descriptor truncated",
	  "pass every byte kvreg_export() wrote; check the control plane "
	  "that carried it" },
	{ KVREG_REASON_DESC_BAD_MAGIC, "not a kvreg descriptor",
	  "pass a descriptor written by kvreg_export()" },
	{ KVREG_REASON_DESC_VERSION, "descriptor version not supported",
	  "run the same kvreg release on both nodes" },
	{ KVREG_REASON_DESC_CORRUPT, "descriptor corrupt",
	  "its checksum or layout is wrong: export it again and check the "
	  "control plane that carried it" },
	{ KVREG_REASON_ADDRESS_NOT_LOCAL, "address not on this node",
	  "listen on an address of a local interface ('ip addr') in this "
	  "network namespace" },
	{ KVREG_REASON_NO_RDMA_FOR_ADDRESS, "no RDMA device for the address",
	  "use an address of an interface with an RDMA device ('rdma link'); "
	  "for Soft-RoCE: rdma link add rxe0 type rxe netdev IFACE" },
	{ KVREG_REASON_ADDRESS_UNRESOLVED, "peer address not resolvable",
	  "check the route and neighbour to the peer ('ip route get ADDR') "
	  "and that the descriptor names its address" },
	{ KVREG_REASON_ROUTE_UNRESOLVED, "no RDMA route to the peer",
	  "check the RDMA device's link and GID table ('rdma link', "
	  "'ibv_devinfo -v')" },
	{ KVREG_REASON_CONN_NO_LISTENER, "no kvreg endpoint at the peer",
	  "the exporting process closed its endpoint or exited: get a fresh "
	  "descriptor from it" },
	{ KVREG_REASON_CONN_BAD_SECRET, "peer refused the connection's secret",
	  "the exporter revoked that export (unexported, deregistered, "
	  "rekeyed, closed its endpoint) or the descriptor was altered: get "
	  "a fresh descriptor" },
	{ KVREG_REASON_CONN_VERSION, "peer speaks another connection version",
	  "run the same kvreg release on both nodes" },
	{ KVREG_REASON_CONN_REJECTED, "peer rejected the connection",
	  "the CM status is given; see the peer's kernel log" },
	{ KVREG_REASON_CONN_TIMEOUT, "peer did not answer in time",
	  "check that the peer node is up and reachable over RDMA, or "
	  "raise the timeout" },
	/*
	 * The rail is mended by the module (docs/remote.md, Rails): a
	 * retry is the first step, a new descriptor only for a new export.
	 */
	{ KVREG_REASON_CONN_LOST, "connection to the peer lost",
	  "the peer closed its endpoint, exited, lost its device or stopped "
	  "answering; kvreg connects the rail again by itself: retry once "
	  "'kvregctl conns' shows it up, or import the exporter's new "
	  "descriptor if it started again" },
	{ KVREG_REASON_REMOTE_ACCESS, "peer refused the remote access",
	  "the exporter revoked the region (unexported, deregistered, "
	  "closed its endpoint) or the range lies outside it: import the "
	  "exporter's new descriptor" },
	{ KVREG_REASON_ADDRESS_IN_USE, "port already in use",
	  "listen on another port, or port 0 to have one chosen" },
	{ KVREG_REASON_UNKNOWN_ENDPOINT, "unknown endpoint",
	  "use an endpoint kvreg_listen() returned on this open /dev/kvreg" },
	{ KVREG_REASON_QUEUE_FULL, "connection's queue full",
	  "reap completions (kvreg_reap()), then submit the rest" },
	{ KVREG_REASON_TOO_MANY_PIECES,
	  "operation needs too many work requests",
	  "split it, or back the local buffer with huge pages: an operation "
	  "takes at most KVREG_OP_MAX_PIECES work requests, each ending at an "
	  "MR boundary of the remote side or after 32 runs of the local "
	  "buffer (a run per page of scattered base pages)" },
	{ KVREG_REASON_NOT_EXPORTED, "not exported through that endpoint",
	  "there is nothing to revoke: it was never exported there, or was "
	  "revoked already (unexported, deregistered)" },
	{ KVREG_REASON_ENDPOINT_LIMIT, "too many endpoints",
	  "close endpoints this process no longer uses (kvreg_unlisten()), "
	  "or have an administrator raise kvreg.max_endpoints_per_process" },
	{ KVREG_REASON_ENDPOINT_CONN_LIMIT,
	  "endpoint accepts no more connections",
	  "importers of this endpoint hold too many connections: unimport "
	  "regions no longer used, or have the exporting node's "
	  "administrator raise kvreg.max_conns_per_endpoint" },
	{ KVREG_REASON_PEER_CONN_LIMIT,
	  "endpoint accepts no more connections from this node",
	  "processes of this node hold too many connections to the "
	  "endpoint: share one import per process, or have the exporting "
	  "node's administrator raise kvreg.max_conns_per_peer" },
	{ KVREG_REASON_IMPORT_LIMIT, "too many imported regions",
	  "unimport regions no longer used (kvreg_unimport()), or have an "
	  "administrator raise kvreg.max_imports_per_process" },
	{ KVREG_REASON_DESC_CHUNK_LIMIT, "descriptor lists too many chunks",
	  "the exporter's registration is split into more MRs than this "
	  "node takes: register it backed by huge pages, export a smaller "
	  "one, or raise kvreg.max_desc_chunks on this node" },
	{ KVREG_REASON_IMPORT_CHUNK_LIMIT, "imported regions hold too many "
	  "chunks",
	  "unimport regions no longer used, or have an administrator raise "
	  "kvreg.max_import_chunks_per_process" },
	{ KVREG_REASON_COMPLETION_LIMIT, "too many operations not reaped",
	  "reap completions (kvreg_reap()) before submitting more" },
	{ KVREG_REASON_OP_TIMEOUT, "operation timed out",
	  "its work requests did not complete in time and were flushed: "
	  "check the device and the peer ('kvregctl conns'), or raise "
	  "kvreg.op_timeout_ms" },
	{ KVREG_REASON_INTERRUPTED, "interrupted",
	  "the caller got a fatal signal; what was in flight was flushed" },
	{ KVREG_REASON_PEER_PROTOCOL, "peer broke the protocol",
	  "the node at that address answered what no kvreg endpoint of "
	  "this version answers (an accept that is not kvreg's): check what "
	  "listens there and where the descriptor came from" },
	{ KVREG_REASON_MODULE_NOT_LOADED, "kvreg module not loaded",
	  "load it with 'modprobe kvreg' (install it with DKMS, see the "
	  "README)" },
	{ KVREG_REASON_ABI_MISMATCH, "kvreg ABI mismatch",
	  "install a kvreg module and libkvreg of the same release" },
	{ KVREG_REASON_NOT_OPEN, "kvreg not open",
	  "call kvreg_open() first and check its result" },
	{ KVREG_REASON_DEVICE_ACCESS, "cannot use /dev/kvreg",
	  "check the owner and mode of /dev/kvreg, or ask an administrator" },
	{ KVREG_REASON_NO_MEMORY, "out of memory in libkvreg",
	  "free memory in this process" },
	{ KVREG_REASON_BAD_FD, "/dev/kvreg file descriptor unusable",
	  "it was closed (or replaced) behind libkvreg: close the context "
	  "with kvreg_close() only, and open a new one" },
};

static const struct kvreg_reason_text *kvreg_reason_lookup(uint32_t reason)
{
	size_t i;

	for (i = 0; i < sizeof(kvreg_reasons) / sizeof(kvreg_reasons[0]); i++)
		if (kvreg_reasons[i].reason == reason)
			return &kvreg_reasons[i];
	return NULL;
}

const char *kvreg_strerror(uint32_t reason)
{
	const struct kvreg_reason_text *t = kvreg_reason_lookup(reason);

	return t ? t->name : "unknown kvreg reason";
}

/* Bytes as an exact binary unit when there is one: "64 MiB", "5000 bytes". */
static const char *kvreg_bytes(uint64_t v, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	int u = -1;

	if (v == KVREG_UNLIMITED)
		return "unlimited";
	while (u < 3 && v >= 1024 && !(v % 1024)) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%llu bytes", (unsigned long long)v);
	else
		snprintf(buf, size, "%llu %s", (unsigned long long)v, units[u]);
	return buf;
}

/* "U of L <what>, this registration needs R more" */
static void kvreg_usage_clause(char *buf, size_t size,
			       const struct kvreg_error *err, bool bytes,
			       const char *what)
{
	char u[32], l[32], r[32];

	if (bytes)
		snprintf(buf, size,
			 ": %s of %s %s, this registration needs %s more",
			 kvreg_bytes(err->usage, u, sizeof(u)),
			 kvreg_bytes(err->limit, l, sizeof(l)), what,
			 kvreg_bytes(err->request, r, sizeof(r)));
	else
		snprintf(buf, size,
			 ": %llu of %llu %s, this registration needs %llu more",
			 (unsigned long long)err->usage,
			 (unsigned long long)err->limit, what,
			 (unsigned long long)err->request);
}

const char *kvreg_hint(uint32_t out_flags)
{
	if (out_flags & KVREG_REG_OUT_HUGE_HINT)
		return "registered with MR pages smaller than 2 MiB although "
		       "huge pages "
		       "back part of the buffer: back all of it with huge "
		       "pages (hugetlb, or THP with MADV_HUGEPAGE) and align "
		       "its address and length to 2 MiB to get 2 MiB MR pages";
	return "";
}

/* The name of the group that owns the device node, or its number. */
static void kvreg_access_group(const struct kvreg_error *err, char *buf,
			       size_t size)
{
	struct group grp, *found = NULL;
	char scratch[1024];

	if (getgrgid_r((gid_t)err->limit, &grp, scratch, sizeof(scratch),
		       &found) || !found)
		snprintf(buf, size, "%llu", (unsigned long long)err->limit);
	else
		snprintf(buf, size, "%s", found->gr_name);
}

/* "/dev/kvreg is mode 0660, group kvreg, and this process is not in it" */
static void kvreg_access_clause(const struct kvreg_error *err, char *buf,
				size_t size)
{
	char group[64];

	kvreg_access_group(err, group, sizeof(group));
	snprintf(buf, size,
		 ": %s is mode %04llo, group %s, and this process is not in it",
		 KVREG_DEVICE_PATH, (unsigned long long)err->usage, group);
}

static const char *kvreg_argument_name(uint32_t argument)
{
	return argument < KVREG_NR_ARGS && kvreg_argument_names[argument] ?
	       kvreg_argument_names[argument] : "argument";
}

static const char *kvreg_argument_fix(const struct kvreg_error *err)
{
	if (err->argument == KVREG_ARG_ACCESS && !err->limit && err->request)
		return "add KVREG_ACCESS_LOCAL_WRITE, or drop "
		       "KVREG_ACCESS_REMOTE_WRITE";
	return err->argument < KVREG_NR_ARGS &&
	       kvreg_argument_fixes[err->argument] ?
	       kvreg_argument_fixes[err->argument] :
	       kvreg_argument_fixes[KVREG_ARG_NONE];
}

/* Which argument, and which rule it breaks where the kernel says so. */
static void kvreg_bad_argument_detail(const struct kvreg_error *err,
				      char *buf, size_t size)
{
	const char *arg = kvreg_argument_name(err->argument);
	unsigned long long req = err->request, lim = err->limit;

	switch (err->argument) {
	case KVREG_ARG_ADDRESS:
		if (lim)
			snprintf(buf, size,
				 ": bad address 0x%llx, outside user space "
				 "(which ends at 0x%llx)",
				 (unsigned long long)err->address, lim);
		else
			snprintf(buf, size, ": bad address 0x%llx",
				 (unsigned long long)err->address);
		return;
	case KVREG_ARG_LENGTH:
		if (lim) {
			snprintf(buf, size,
				 ": bad length %llu from 0x%llx, past the end "
				 "of user space (0x%llx)", req,
				 (unsigned long long)err->address, lim);
			return;
		}
		break;
	case KVREG_ARG_DESCRIPTOR:
		if (req > lim) {
			snprintf(buf, size,
				 ": descriptor of %llu bytes, room for %llu",
				 req, lim);
			return;
		}
		break;
	case KVREG_ARG_ACCESS:
		if (lim && (req & ~lim)) {
			snprintf(buf, size,
				 ": bad access flags 0x%llx: unknown bits "
				 "0x%llx (known: 0x%llx)", req, req & ~lim, lim);
			return;
		}
		if (req) {
			snprintf(buf, size,
				 ": bad access flags 0x%llx: remote write "
				 "without local write, which verbs forbids",
				 req);
			return;
		}
		break;
	default:
		break;
	}
	snprintf(buf, size, ": bad %s", arg);
}

/* "192.0.2.1 port 7471"; "" when the record names no address. */
static const char *kvreg_net_address(const struct kvreg_error *err,
				     char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN];
	int family = err->addr_family == AF_INET6 ? AF_INET6 : AF_INET;

	if (err->addr_family != AF_INET && err->addr_family != AF_INET6)
		return "";
	if (!inet_ntop(family, err->addr, ip, sizeof(ip)))
		return "";
	snprintf(buf, size, " %s port %u", ip, err->port);
	return buf;
}

/* Connections and descriptors: the address, and the numbers. */
static bool kvreg_format_remote(const struct kvreg_error *err, char *buf,
				size_t size)
{
	char where[80];
	const char *at = kvreg_net_address(err, where, sizeof(where));

	switch (err->reason) {
	case KVREG_REASON_DESC_TRUNCATED:
		snprintf(buf, size, ": %llu bytes given, %llu needed",
			 (unsigned long long)err->request,
			 (unsigned long long)err->limit);
		return true;
	case KVREG_REASON_DESC_BAD_MAGIC:
		snprintf(buf, size, ": magic 0x%08llx, want 0x%08llx",
			 (unsigned long long)err->request,
			 (unsigned long long)err->limit);
		return true;
	case KVREG_REASON_DESC_VERSION:
		snprintf(buf, size, ": version %llu, this module reads %llu",
			 (unsigned long long)err->usage,
			 (unsigned long long)err->limit);
		return true;
	case KVREG_REASON_DESC_CORRUPT:
		snprintf(buf, size, ": %llu bytes",
			 (unsigned long long)err->request);
		return true;
	case KVREG_REASON_ADDRESS_NOT_LOCAL:
	case KVREG_REASON_NO_RDMA_FOR_ADDRESS:
	case KVREG_REASON_ADDRESS_IN_USE:
		snprintf(buf, size, ":%s", at);
		return true;
	case KVREG_REASON_ADDRESS_UNRESOLVED:
	case KVREG_REASON_ROUTE_UNRESOLVED:
	case KVREG_REASON_CONN_NO_LISTENER:
	case KVREG_REASON_CONN_BAD_SECRET:
		snprintf(buf, size, ": peer%s", at);
		return true;
	case KVREG_REASON_CONN_LOST:
	case KVREG_REASON_REMOTE_ACCESS:
		if (err->wc_status)
			snprintf(buf, size, ": peer%s, work completion status %u",
				 at, err->wc_status);
		else
			snprintf(buf, size, ": peer%s", at);
		return true;
	case KVREG_REASON_CONN_VERSION:
		snprintf(buf, size, ": peer%s speaks %llu, this node %llu", at,
			 (unsigned long long)err->usage,
			 (unsigned long long)err->request);
		return true;
	case KVREG_REASON_CONN_REJECTED:
		snprintf(buf, size, ": peer%s, CM status %d", at,
			 err->driver_errno);
		return true;
	case KVREG_REASON_CONN_TIMEOUT:
		snprintf(buf, size, ": peer%s, no answer within %llu ms", at,
			 (unsigned long long)err->limit);
		return true;
	case KVREG_REASON_QUEUE_FULL:
		snprintf(buf, size, ": %llu of %llu work requests in flight, "
			 "this operation needs %llu",
			 (unsigned long long)err->usage,
			 (unsigned long long)err->limit,
			 (unsigned long long)err->request);
		return true;
	case KVREG_REASON_ENDPOINT_CONN_LIMIT:
	case KVREG_REASON_PEER_CONN_LIMIT:
		snprintf(buf, size, ": the endpoint at%s holds %llu of %llu "
			 "connections%s", at, (unsigned long long)err->usage,
			 (unsigned long long)err->limit,
			 err->reason == KVREG_REASON_PEER_CONN_LIMIT ?
			 " from this node" : "");
		return true;
	case KVREG_REASON_ENDPOINT_LIMIT:
	case KVREG_REASON_IMPORT_LIMIT:
	case KVREG_REASON_IMPORT_CHUNK_LIMIT:
	case KVREG_REASON_COMPLETION_LIMIT:
		snprintf(buf, size, ": %llu of %llu in use, this call needs "
			 "%llu more", (unsigned long long)err->usage,
			 (unsigned long long)err->limit,
			 (unsigned long long)err->request);
		return true;
	case KVREG_REASON_DESC_CHUNK_LIMIT:
		snprintf(buf, size, ": %llu chunks, at most %llu",
			 (unsigned long long)err->request,
			 (unsigned long long)err->limit);
		return true;
	case KVREG_REASON_OP_TIMEOUT:
		snprintf(buf, size, ": no completion within %llu ms",
			 (unsigned long long)err->limit);
		return true;
	case KVREG_REASON_TOO_MANY_PIECES:
		snprintf(buf, size, ": %llu bytes would need more than %llu "
			 "work requests", (unsigned long long)err->request,
			 (unsigned long long)err->limit);
		return true;
	default:
		return false;
	}
}

/* The numbers that go with a reason, as one clause; "" when none. */
static void kvreg_format_detail(const struct kvreg_error *err, char *buf,
				size_t size)
{
	char l[32], r[32];

	buf[0] = '\0';
	if (kvreg_format_remote(err, buf, size))
		return;
	switch (err->reason) {
	case KVREG_REASON_BAD_ARGUMENT:
		kvreg_bad_argument_detail(err, buf, size);
		break;
	case KVREG_REASON_BAD_FD:
		snprintf(buf, size, ": fd %llu", (unsigned long long)err->usage);
		break;
	case KVREG_REASON_UNMAPPED_ADDRESS:
		snprintf(buf, size, ": first bad page at 0x%llx",
			 (unsigned long long)err->address);
		break;
	case KVREG_REASON_NOT_HOST_MEMORY:
		snprintf(buf, size, " at 0x%llx (VM_IO/VM_PFNMAP mapping)",
			 (unsigned long long)err->address);
		break;
	case KVREG_REASON_FILE_BACKED:
	case KVREG_REASON_READ_ONLY:
		snprintf(buf, size, " at 0x%llx",
			 (unsigned long long)err->address);
		break;
	case KVREG_REASON_OVERLAP:
		snprintf(buf, size,
			 ": registration %llu covers [0x%llx, 0x%llx)",
			 (unsigned long long)err->usage,
			 (unsigned long long)err->address,
			 (unsigned long long)(err->address + err->limit));
		break;
	case KVREG_REASON_OUT_OF_RANGE:
		/* Apart, never summed: offset + length may not fit. */
		snprintf(buf, size,
			 ": %s %llu + length %llu passes the end of the "
			 "registration (%llu bytes)",
			 kvreg_argument_name(err->argument == KVREG_ARG_NONE ?
					     KVREG_ARG_OFFSET : err->argument),
			 (unsigned long long)err->address,
			 (unsigned long long)err->request,
			 (unsigned long long)err->limit);
		break;
	case KVREG_REASON_TOO_LARGE:
		snprintf(buf, size, ": %s requested, max_mr_size %s",
			 kvreg_bytes(err->request, r, sizeof(r)),
			 kvreg_bytes(err->limit, l, sizeof(l)));
		break;
	case KVREG_REASON_PROC_MR_BUDGET:
		kvreg_usage_clause(buf, size, err, false, "MRs in use");
		break;
	case KVREG_REASON_DEVICE_MR_RESERVE:
		kvreg_usage_clause(buf, size, err, false,
				   "MRs kvreg may use there in use");
		break;
	case KVREG_REASON_PROC_BYTES_BUDGET:
		kvreg_usage_clause(buf, size, err, true, "pinned");
		break;
	case KVREG_REASON_HOST_CEILING:
		kvreg_usage_clause(buf, size, err, true,
				   "pinned by all processes");
		break;
	case KVREG_REASON_MEMLOCK_EXCEEDED:
		kvreg_usage_clause(buf, size, err, true, "locked");
		break;
	case KVREG_REASON_MEMLOCK_ZERO:
		snprintf(buf, size, ": this registration needs %s",
			 kvreg_bytes(err->request, r, sizeof(r)));
		break;
	case KVREG_REASON_RDMA_CGROUP:
		snprintf(buf, size,
			 ": rdma.max allowed %llu of the %llu objects this "
			 "call needs there (its MRs, or a PD, and an "
			 "export's QP, on the device's first use)",
			 (unsigned long long)err->usage,
			 (unsigned long long)err->request);
		break;
	case KVREG_REASON_FOREIGN_PROCESS:
		/* STATS carries no record: the owner is not known there. */
		if (err->usage)
			snprintf(buf, size, ": it belongs to process %llu",
				 (unsigned long long)err->usage);
		else
			snprintf(buf, size, ": it belongs to another process");
		break;
	case KVREG_REASON_ABI_MISMATCH:
		snprintf(buf, size,
			 ": module speaks ABI %llu, library speaks ABI %llu",
			 (unsigned long long)err->usage,
			 (unsigned long long)err->request);
		break;
	case KVREG_REASON_ACCESS_DENIED:
		snprintf(buf, size, ": needs access 0x%llx, has 0x%llx",
			 (unsigned long long)err->request,
			 (unsigned long long)err->usage);
		break;
	case KVREG_REASON_TRANSFER_FAILED:
		snprintf(buf, size, ": work completion status %u",
			 err->wc_status);
		break;
	case KVREG_REASON_NOT_PERMITTED:
		if (err->request)
			snprintf(buf, size, ": asked for %llu, default %llu",
				 (unsigned long long)err->request,
				 (unsigned long long)err->limit);
		break;
	case KVREG_REASON_DEVICE_REFUSED:
	case KVREG_REASON_DEVICE_EXHAUSTED:
		/* A fast registration the device completed in error. */
		if (err->wc_status)
			snprintf(buf, size,
				 ": driver error %d, work completion status %u",
				 err->driver_errno, err->wc_status);
		else
			snprintf(buf, size, ": driver error %d",
				 err->driver_errno);
		break;
	case KVREG_REASON_DEVICE_ACCESS:
		if (err->request == 1)
			kvreg_access_clause(err, buf, size);
		break;
	case KVREG_REASON_MODULE_NOT_LOADED:
		snprintf(buf, size, ": %s does not exist", KVREG_DEVICE_PATH);
		break;
	default:
		break;
	}
}

int kvreg_format_error(const struct kvreg_error *err, int errnum,
		       char *buf, size_t size)
{
	const struct kvreg_reason_text *t;
	char detail[512], device[48] = "", name[32], fix[256], group[64];
	const char *what_to_do;

	if (!err || err->reason == KVREG_REASON_NONE)
		return snprintf(buf, size, "%s", errnum ?
				strerror(errnum < 0 ? -errnum : errnum) :
				"success");
	t = kvreg_reason_lookup(err->reason);
	/* Unknown to this library: by number, never as another reason. */
	if (!t)
		return snprintf(buf, size, "kvreg reason %u (%s)", err->reason,
				kvreg__errno_name(errnum, name, sizeof(name)));
	kvreg_format_detail(err, detail, sizeof(detail));
	if (err->device_index != KVREG_NO_DEVICE_INDEX)
		snprintf(device, sizeof(device), " on device %u",
			 err->device_index);
	what_to_do = t->fix;
	if (err->reason == KVREG_REASON_BAD_ARGUMENT)
		what_to_do = kvreg_argument_fix(err);
	/* Refused by the node's group: say which group to join, and how. */
	if (err->reason == KVREG_REASON_DEVICE_ACCESS && err->request == 1) {
		kvreg_access_group(err, group, sizeof(group));
		snprintf(fix, sizeof(fix),
			 "add the user to group %s (as root: usermod -aG %s "
			 "USER) and log in again", group, group);
		what_to_do = fix;
	}
	return snprintf(buf, size, "%s%s%s (%s); %s", t->name, device, detail,
			kvreg__errno_name(errnum, name, sizeof(name)),
			what_to_do);
}
