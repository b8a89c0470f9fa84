// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Random and mutated ioctls from several processes on several files:
 * sizes, flags, reserved fields, handles, device indexes and addresses
 * (unmapped, kernel, read-only, wrapping, misaligned), endpoints on good
 * and bad addresses, descriptors exported and then imported whole or
 * mutated (connections made and dropped), in any order, with files shared
 * across fork, under caps low enough to be hit often (endpoints, imports,
 * chunks, connections, unreaped operations). Every answer must be 0 or an
 * errno that ioctl gives, and afterwards nothing may be left pinned or
 * charged.
 *   fuzz CALLS [SEED [PROCESSES]]
 */
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "kvdesc.h"
#include "kvtest.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return kvt_rnd(&rng_state);
}

static uint64_t pick(const uint64_t *v, size_t n)
{
	return v[rnd() % n];
}

#define PICK(arr) pick(arr, sizeof(arr) / sizeof(arr[0]))

static uint64_t addrs[8], lens[8], handles[32], endpoints[8], remotes[8];
/* Operations for SUBMIT, refilled at random before each. */
static struct kvreg_op fops[8];
/* The last descriptor EXPORT wrote: IMPORT gets it whole or mutated. */
static uint8_t desc[4096];
static uint32_t desc_size;

static void setup_addresses(void)
{
	uint8_t *rw = kvt_map_anon(64 * SZ_4K);
	uint8_t *ro = kvt_map_anon(4 * SZ_4K);
	uint8_t *gone = kvt_map_anon(4 * SZ_4K);

	CHECK(!mprotect(ro, 4 * SZ_4K, PROT_READ), "mprotect");
	CHECK(!munmap(gone, 4 * SZ_4K), "munmap");
	addrs[0] = (uintptr_t)rw;
	addrs[1] = (uintptr_t)rw + 1 + rnd() % SZ_4K;
	addrs[2] = (uintptr_t)ro;
	addrs[3] = (uintptr_t)gone;
	addrs[4] = 0xffff888000000000ULL;	/* kernel direct map */
	addrs[5] = 0;
	addrs[6] = (uint64_t)-SZ_4K;
	addrs[7] = (uintptr_t)rw + 60 * SZ_4K;
	lens[0] = 0;
	lens[1] = 1;
	lens[2] = SZ_4K;
	lens[3] = 3 * SZ_4K + 17;
	lens[4] = 64 * SZ_4K;
	lens[5] = 1ULL << 40;
	lens[6] = (uint64_t)-1;
	lens[7] = SZ_2M;
}

static void mutate(void *arg, size_t size)
{
	uint8_t *p = arg;

	switch (rnd() % 8) {
	case 0:	/* a random byte anywhere after the size */
		p[4 + rnd() % (size - 4)] = (uint8_t)rnd();
		break;
	case 1:	/* flags */
		((uint32_t *)arg)[1] = (uint32_t)(1U << (rnd() % 32));
		break;
	case 2:	/* size */
		((uint32_t *)arg)[0] = (uint32_t)PICK(((uint64_t[]){
			0, 4, 8, size - 8, size + 8, 4096, 1U << 31 }));
		break;
	default:
		break;
	}
}

/*
 * The kernel writes where output pointers point, as many entries as it
 * has, at the stride the caller gives: after mutating, point them at a
 * scratch area large enough for any stride we allow, or at an address the
 * kernel must refuse, so the fuzzer never corrupts itself.
 */
#define SCRATCH_STRIDE	512
static uint8_t *scratch;	/* 64 entries at the largest stride */

static uint64_t out_ptr(void)
{
	return rnd() % 4 ? (uintptr_t)scratch :
	       PICK(((uint64_t[]){ 0, 0xffff888000000000ULL, addrs[2],
				   addrs[3] }));
}

/* Records land here, of whatever size the call claims room for. */
static uint8_t error_room[256];

static void sanitize(unsigned long cmd, void *arg)
{
	struct kvreg_register *r = arg;

	if (cmd != KVREG_IOC_ABI_VERSION) {
		r->error = (uintptr_t)error_room;
		r->error_size %= sizeof(error_room);
	}
	struct kvreg_query *q = arg;
	struct kvreg_devices *d = arg;
	struct kvreg_procs *p = arg;

	if (cmd == KVREG_IOC_REGISTER) {
		r->keys = out_ptr();
		r->key_size %= SCRATCH_STRIDE;
	} else if (cmd == KVREG_IOC_QUERY) {
		q->keys = out_ptr();
		q->key_size %= SCRATCH_STRIDE;
	} else if (cmd == KVREG_IOC_DEVICES) {
		d->entries = out_ptr();
		d->entry_size %= SCRATCH_STRIDE;
	} else if (cmd == KVREG_IOC_PROCS || cmd == KVREG_IOC_CONNS) {
		/* The two share their layout up to the entries. */
		p->entries = out_ptr();
		p->entry_size %= SCRATCH_STRIDE;
	} else if (cmd == KVREG_IOC_EXPORT) {
		struct kvreg_export *x = arg;

		x->desc = out_ptr();
		x->desc_capacity %= 64 * SCRATCH_STRIDE;
	} else if (cmd == KVREG_IOC_REAP) {
		struct kvreg_reap *rp = arg;

		rp->entries = out_ptr();
		rp->entry_size %= SCRATCH_STRIDE;
		rp->capacity %= 64 * SCRATCH_STRIDE / 512;
		rp->timeout_ms %= 50;
	} else if (cmd == KVREG_IOC_SUBMIT) {
		struct kvreg_submit *sb = arg;

		sb->ops = rnd() % 8 ? (uintptr_t)fops : out_ptr();
		sb->op_size %= 2 * sizeof(struct kvreg_op);
		sb->count %= 9;
	} else if (cmd == KVREG_IOC_IMPORT) {
		struct kvreg_import *im = arg;

		/* A short timeout: most mutations make a peer nobody is. */
		im->timeout_ms %= 300;
		if (rnd() % 8)
			im->desc = (uintptr_t)desc;
		else
			im->desc = PICK(((uint64_t[]){ 0, addrs[3], addrs[4] }));
		im->desc_size %= sizeof(desc) + 1;
	}
}

/*
 * What each ioctl may answer: every one 0, EPERM (another process's file),
 * E2BIG (a larger struct with a non-zero tail), EINVAL and EFAULT; then
 * its own, by the reasons it gives (kvreg(7)). A number past the last
 * ioctl is ENOTTY and nothing else.
 */
#define KVREG_NR_IOCTLS	0x14
static const int allowed[KVREG_NR_IOCTLS][16] = {
	[0x00] = { 0 },					/* ABI_VERSION */
	[0x01] = { 0 },					/* DEVICES */
	[0x02] = { EACCES, EEXIST, ENODEV, EOPNOTSUPP, EDQUOT, ENOMEM,
		   ENOSPC, EAGAIN, EIO, ENOENT },	/* REGISTER */
	[0x03] = { ENOENT },				/* DEREGISTER */
	[0x04] = { ENOENT, ENOMEM },			/* QUERY */
	[0x05] = { ENOENT, EIO, ENODEV, ERANGE, ENOTCONN, EACCES,
		   ENETDOWN, ETIMEDOUT, EINTR, ENOMEM },	/* TRANSFER */
	[0x06] = { 0 },					/* STATS */
	[0x07] = { EDQUOT },				/* SET_BUDGET */
	[0x08] = { ENOMEM },				/* PROCS */
	[0x09] = { 0 },					/* FEATURES */
	[0x0a] = { ENOENT, ENODEV, EADDRINUSE, EADDRNOTAVAIL, EDQUOT,
		   ENOMEM },				/* LISTEN */
	[0x0b] = { ENOENT, ENODEV, ENOSPC, ENOMEM, EACCES, EDQUOT,
		   EIO },				/* EXPORT */
	[0x0c] = { ENODEV, EPROTO, ECONNREFUSED, EDQUOT, ENOENT, ENOMEM,
		   ETIMEDOUT, EHOSTUNREACH, ENOTCONN, EINTR, EAGAIN,
		   ENETDOWN },				/* IMPORT */
	[0x0d] = { ENOENT },				/* UNIMPORT */
	[0x0e] = { ENOENT, ERANGE, ENOTCONN, EAGAIN, ENOMEM, EACCES,
		   EDQUOT, ENODEV, ENETDOWN },		/* SUBMIT */
	[0x0f] = { EINTR },				/* REAP */
	[0x10] = { ENOMEM },				/* CONNS */
	[0x11] = { ENOENT },				/* UNEXPORT */
	[0x12] = { ENOENT },				/* UNLISTEN */
	[0x13] = { ENOENT, ENOMEM },			/* REKEY */
};

/* Addresses to listen on: ours, a wildcard, one that is not here. */
static void pick_net_addr(struct kvreg_net_addr *a)
{
	static const uint8_t ips[][4] = {
		{ 192, 0, 2, 1 }, { 0, 0, 0, 0 }, { 192, 0, 2, 99 },
	};

	a->family = rnd() % 8 ? AF_INET : (uint16_t)rnd();
	a->port = rnd() % 2 ? 0 : (uint16_t)(18000 + rnd() % 4);
	memcpy(a->addr, ips[rnd() % 3], 4);
}

/*
 * What IMPORT answered to resealed descriptors with one field of their
 * layout changed, summed over the workers (shared memory): a checksum
 * that holds sends them to the layout check, so a DESC_CORRUPT is that
 * check's refusal, and a connect's answer means the whole parser passed.
 */
struct import_tally {
	unsigned long sealed;		/* IMPORTs of such descriptors */
	unsigned long layout_refused;	/* DESC_CORRUPT */
	unsigned long parsed;		/* 0, or a connect's reason */
};
static struct import_tally *tally;

/* One field the layout check reads, set to an edge or next to its value. */
static void change_desc_field(void)
{
	struct kvreg_desc_head *h = (struct kvreg_desc_head *)desc;
	struct kvreg_desc_path *p = kvt_desc_path(desc);
	struct kvreg_desc_chunk *c = kvt_desc_chunks(desc);
	uint64_t v = PICK(((uint64_t[]){ 0, 1, 2, 7, 8, 9, 31, 32, 33, 0xff,
					 0x100, 0xffff, 0x10000, 0x7fffffff,
					 0xffffffff, 1ULL << 32, SZ_4K,
					 (uint64_t)-1, (uint64_t)-SZ_4K }));
	bool next = rnd() % 2;	/* next to the field's value, or an edge */

	if ((uint8_t *)(c + 1) > desc + desc_size)
		c = NULL;
	switch (rnd() % (c ? 12 : 9)) {
	case 0:
		h->head_size = (uint16_t)(next ? h->head_size + 8U : v);
		break;
	case 1:
		h->total_size = (uint32_t)(next ? h->total_size - 8U : v);
		break;
	case 2:
		h->nr_paths = (uint16_t)(next ? h->nr_paths + 1U : v);
		break;
	case 3:
		h->length = next ? h->length + SZ_4K : v;
		break;
	case 4:
		h->access = (uint32_t)v;
		break;
	case 5:
		h->reserved = (uint16_t)v;
		break;
	case 6:
		p->nr_chunks = (uint32_t)(next ? p->nr_chunks + 1U : v);
		break;
	case 7:
		p->family = (uint16_t)v;
		break;
	case 8:
		p->reserved = (uint32_t)v;
		break;
	case 9:
		c->length = next ? c->length + SZ_4K : v;
		break;
	case 10:
		c->iova = v;
		break;
	default:
		c->reserved = (uint32_t)v;
		break;
	}
}

/* A field changed for certain: an edge value may be the one it had. */
static void mutate_desc_field(void)
{
	uint8_t before[sizeof(desc)];
	int tries = 0;

	memcpy(before, desc, desc_size);
	do
		change_desc_field();
	while (!memcmp(before, desc, desc_size) && ++tries < 8);
	if (!memcmp(before, desc, desc_size))
		((struct kvreg_desc_head *)desc)->reserved ^= 1;
}

/*
 * The descriptor EXPORT wrote, whole or mutated: one byte flipped (the
 * checksum refuses it), or one field of its layout changed and the
 * checksum made again so that the layout check sees it. True for the
 * latter, when IMPORT is given the whole of it.
 */
static bool prepare_import(struct kvreg_import *im)
{
	bool sealed = false;

	im->desc_size = desc_size;
	im->timeout_ms = 100 + rnd() % 200;
	if (desc_size && rnd() % 2) {
		if (rnd() % 2) {
			mutate_desc_field();
			kvt_reseal(desc, desc_size);
			sealed = true;
		} else {
			desc[rnd() % desc_size] ^= (uint8_t)(1 + rnd() % 255);
		}
	}
	if (rnd() % 8 == 0) {
		im->desc_size = (uint32_t)(rnd() % (desc_size + 8));
		sealed = false;
	}
	return sealed;
}

/* Where IMPORT of a resealed descriptor got to, from its answer. */
static void count_import(int ret, const struct kvreg_import *im)
{
	const struct kvreg_error *err = (const void *)error_room;

	if (im->error != (uintptr_t)error_room ||
	    im->error_size < KVREG_ERROR_SIZE_VER0 ||
	    im->size != sizeof(*im) || im->flags ||
	    im->desc != (uintptr_t)desc || im->desc_size != desc_size)
		return;
	__atomic_fetch_add(&tally->sealed, 1, __ATOMIC_RELAXED);
	if (ret && err->reason == KVREG_REASON_DESC_CORRUPT)
		__atomic_fetch_add(&tally->layout_refused, 1,
				   __ATOMIC_RELAXED);
	else if (!ret || (err->reason >= KVREG_REASON_ADDRESS_UNRESOLVED &&
			  err->reason <= KVREG_REASON_CONN_LOST) ||
		 err->reason == KVREG_REASON_NO_RDMA_FOR_ADDRESS ||
		 err->reason == KVREG_REASON_ENDPOINT_CONN_LIMIT ||
		 err->reason == KVREG_REASON_PEER_CONN_LIMIT)
		__atomic_fetch_add(&tally->parsed, 1, __ATOMIC_RELAXED);
}

static void check_errno(int ret, unsigned long cmd)
{
	unsigned int nr = _IOC_NR(cmd), i;

	if (nr >= KVREG_NR_IOCTLS) {
		CHECK(ret == -ENOTTY, "ioctl %#lx past the last answered %d",
		      cmd, ret);
		return;
	}
	if (!ret || ret == -EPERM || ret == -E2BIG || ret == -EINVAL ||
	    ret == -EFAULT)
		return;
	for (i = 0; i < 16 && allowed[nr][i]; i++)
		if (ret == -allowed[nr][i])
			return;
	CHECK(0, "ioctl %#lx answered %d, which it does not give", cmd, ret);
}

static void one_call(int fd)
{
	union {
		struct kvreg_register reg;
		struct kvreg_deregister dereg;
		struct kvreg_query query;
		struct kvreg_transfer xfer;
		struct kvreg_devices devs;
		struct kvreg_stats stats;
		struct kvreg_budget budget;
		struct kvreg_procs procs;
		struct kvreg_conns conns;
		struct kvreg_abi_version abi;
		struct kvreg_listen listen;
		struct kvreg_export export;
		struct kvreg_import import;
		struct kvreg_unimport unimport;
		struct kvreg_unexport unexport;
		struct kvreg_unlisten unlisten;
		struct kvreg_rekey rekey;
		struct kvreg_submit submit;
		struct kvreg_reap reap;
		uint8_t raw[256];
	} a;
	uint8_t saved[sizeof(desc)];
	bool mutated_desc = false, sealed = false;
	unsigned long cmd;
	size_t size;
	int ret;

	memset(&a, 0, sizeof(a));
	switch (rnd() % 14) {
	case 0: case 1: case 2:
		cmd = KVREG_IOC_REGISTER;
		size = sizeof(a.reg);
		a.reg.addr = PICK(addrs) + (rnd() % 4 ? 0 : rnd() % SZ_4K);
		a.reg.length = PICK(lens);
		a.reg.access = rnd() % 4 ? KVREG_ACCESS_ALL : (uint32_t)rnd();
		a.reg.device_mask = rnd() % 3 ? 0 : rnd() % 8;
		a.reg.keys_capacity = rnd() % 10;
		a.reg.key_size = rnd() % 4 ? sizeof(struct kvreg_key) :
				 rnd() % 64;
		a.reg.flags = rnd() % 5 ? 0 : KVREG_REG_F_ALLOW_OVERLAP;
		break;
	case 3:
		cmd = KVREG_IOC_DEREGISTER;
		size = sizeof(a.dereg);
		a.dereg.handle = rnd() % 4 ? PICK(handles) : rnd();
		break;
	case 4:
		cmd = KVREG_IOC_QUERY;
		size = sizeof(a.query);
		a.query.handle = PICK(handles);
		a.query.keys_capacity = rnd() % 10;
		a.query.key_size = sizeof(struct kvreg_key);
		break;
	case 5: case 6:
		cmd = KVREG_IOC_TRANSFER;
		size = sizeof(a.xfer);
		if (rnd() % 3 == 0) {
			a.xfer.flags = KVREG_TRANSFER_F_REMOTE_REGION;
			a.xfer.remote_handle = PICK(remotes);
		}
		a.xfer.opcode = 1 + rnd() % 3;
		a.xfer.device_index = rnd() % 3;
		a.xfer.local_handle = PICK(handles);
		if (!a.xfer.flags)
			a.xfer.remote_handle = PICK(handles);
		a.xfer.local_offset = rnd() % 3 ? rnd() % SZ_4K : rnd();
		a.xfer.remote_offset = rnd() % 3 ? rnd() % SZ_4K : rnd();
		a.xfer.length = rnd() % 3 ? 1 + rnd() % (2 * SZ_4K) : rnd();
		break;
	case 7:
		cmd = KVREG_IOC_DEVICES;
		size = sizeof(a.devs);
		a.devs.capacity = rnd() % 5;
		a.devs.entry_size = sizeof(struct kvreg_device_info);
		break;
	case 8:
		cmd = PICK(((uint64_t[]){ KVREG_IOC_STATS, KVREG_IOC_ABI_VERSION,
					  KVREG_IOC_PROCS, KVREG_IOC_CONNS }));
		size = cmd == KVREG_IOC_STATS ? sizeof(a.stats) :
		       cmd == KVREG_IOC_PROCS ? sizeof(a.procs) :
		       cmd == KVREG_IOC_CONNS ? sizeof(a.conns) :
		       sizeof(a.abi);
		a.procs.capacity = rnd() % 8;
		a.procs.entry_size = cmd == KVREG_IOC_CONNS ?
				     sizeof(struct kvreg_conn_info) :
				     sizeof(struct kvreg_proc_info);
		break;
	case 10:
		switch (rnd() % 4) {
		case 0:
			cmd = KVREG_IOC_UNLISTEN;
			size = sizeof(a.unlisten);
			a.unlisten.endpoint = rnd() % 4 ? PICK(endpoints) :
					      rnd();
			break;
		case 1:
			cmd = KVREG_IOC_REKEY;
			size = sizeof(a.rekey);
			a.rekey.endpoint = rnd() % 4 ? PICK(endpoints) : rnd();
			break;
		default:
			cmd = KVREG_IOC_LISTEN;
			size = sizeof(a.listen);
			pick_net_addr(&a.listen.addr);
			break;
		}
		break;
	case 11:
		if (rnd() % 2) {
			cmd = KVREG_IOC_EXPORT;
			size = sizeof(a.export);
			a.export.endpoint = PICK(endpoints);
			a.export.handle = PICK(handles);
			a.export.desc_capacity = rnd() % 4 ? 4096 : rnd();
		} else if (rnd() % 2) {
			cmd = KVREG_IOC_UNEXPORT;
			size = sizeof(a.unexport);
			a.unexport.endpoint = PICK(endpoints);
			a.unexport.handle = rnd() % 4 ? PICK(handles) : rnd();
		} else {
			cmd = KVREG_IOC_UNIMPORT;
			size = sizeof(a.unimport);
			a.unimport.remote = rnd() % 4 ? PICK(remotes) : rnd();
		}
		break;
	case 13:
		if (rnd() % 2) {
			unsigned int i;

			cmd = KVREG_IOC_SUBMIT;
			size = sizeof(a.submit);
			for (i = 0; i < 8; i++)
				fops[i] = (struct kvreg_op) {
					.opcode = 1 + rnd() % 3,
					.flags = rnd() % 16 ? 0 : 1,
					.local_handle = PICK(handles),
					.local_offset = rnd() % 3 ?
						rnd() % SZ_4K : rnd(),
					.remote = PICK(remotes),
					.remote_offset = rnd() % 3 ?
						rnd() % SZ_4K : rnd(),
					.length = rnd() % 3 ?
						1 + rnd() % (4 * SZ_4K) : rnd(),
					.user_data = rnd(),
				};
			a.submit.ops = (uintptr_t)fops;
			a.submit.op_size = sizeof(struct kvreg_op);
			a.submit.count = 1 + rnd() % 8;
		} else {
			cmd = KVREG_IOC_REAP;
			size = sizeof(a.reap);
			a.reap.entry_size = sizeof(struct kvreg_completion);
			a.reap.capacity = rnd() % 8;
			a.reap.min_complete = rnd() % 2;
			a.reap.timeout_ms = rnd() % 20;
		}
		break;
	case 12:
		cmd = KVREG_IOC_IMPORT;
		size = sizeof(a.import);
		memcpy(saved, desc, sizeof(desc));
		mutated_desc = true;
		sealed = prepare_import(&a.import);
		break;
	default:
		cmd = rnd() % 2 ? KVREG_IOC_SET_BUDGET :
		      _IO(KVREG_IOC_MAGIC, 9 + rnd() % 200);
		size = sizeof(a.budget);
		a.budget.flags = rnd() % 8;
		a.budget.max_mrs = 16 + rnd() % 4096;
		a.budget.max_pinned_bytes = SZ_2M + rnd() % (64 * SZ_2M);
		break;
	}
	a.reg.size = (uint32_t)size;
	if (cmd != KVREG_IOC_ABI_VERSION && rnd() % 2)
		a.reg.error_size = sizeof(struct kvreg_error) + rnd() % 64;
	if (rnd() % 4 == 0)
		mutate(&a, size);
	sanitize(cmd, &a);
	memset(error_room, 0, sizeof(error_room));
	ret = ioctl(fd, cmd, &a) ? -errno : 0;
	check_errno(ret, cmd);
	if (sealed)
		count_import(ret, &a.import);
	if (mutated_desc)
		memcpy(desc, saved, sizeof(desc));
	if (!ret && cmd == KVREG_IOC_REGISTER && a.reg.handle)
		handles[rnd() % 32] = a.reg.handle;
	if (!ret && cmd == KVREG_IOC_LISTEN)
		endpoints[rnd() % 8] = a.listen.endpoint;
	if (!ret && cmd == KVREG_IOC_IMPORT)
		remotes[rnd() % 8] = a.import.remote;
	if (!ret && cmd == KVREG_IOC_EXPORT &&
	    a.export.desc == (uintptr_t)scratch &&
	    a.export.desc_size <= sizeof(desc)) {
		memcpy(desc, scratch, a.export.desc_size);
		desc_size = a.export.desc_size;
	}
}

static void worker(int inherited, long calls, uint64_t seed)
{
	int fds[3];
	long i;

	rng_state = seed;
	setup_addresses();
	scratch = kvt_map_anon(64 * SCRATCH_STRIDE);
	fds[0] = open(KVREG_DEVICE_PATH, O_RDWR);
	fds[1] = open(KVREG_DEVICE_PATH, O_RDWR);
	fds[2] = inherited;	/* another process's: always refused */
	CHECK(fds[0] >= 0 && fds[1] >= 0, "open");
	for (i = 0; i < calls; i++) {
		int f = rnd() % 16 == 0 ? 2 : (int)(rnd() % 2);

		one_call(fds[f]);
		/* Now and then one of our files goes, with all on it. */
		if (f != 2 && rnd() % 5000 == 0) {
			close(fds[f]);
			fds[f] = open(KVREG_DEVICE_PATH, O_RDWR);
			CHECK(fds[f] >= 0, "reopen");
		}
	}
	exit(T_PASS);
}

/*
 * Caps low enough for the fuzzer to hit each often; every process's
 * charge must be given back (the module warns at a process's last close
 * if one is not, and the runner fails a test whose log has a warning).
 */
static const char *const caps[][2] = {
	{ "max_endpoints_per_process", "3" },
	{ "max_imports_per_process", "3" },
	{ "max_import_chunks_per_process", "128" },
	{ "max_desc_chunks", "64" },
	{ "max_conns_per_endpoint", "6" },
	{ "max_conns_per_peer", "4" },
	{ "max_unreaped", "8" },
};
#define NR_CAPS		(sizeof(caps) / sizeof(caps[0]))
#define CAP_PATH	"/sys/module/kvreg/parameters/"

static unsigned long long saved[NR_CAPS];
static pid_t fuzz_parent;
/*
 * The parent's file, reachable from a global: the workers, forked with
 * it, exit without freeing it, and LeakSanitizer must not call it lost.
 */
static struct kvreg *parent_kv;

static void set_caps(void)
{
	char path[128];
	size_t i;

	for (i = 0; i < NR_CAPS; i++) {
		snprintf(path, sizeof(path), CAP_PATH "%s", caps[i][0]);
		saved[i] = kvt_read_param(path);
		CHECK(!kvt_put(path, caps[i][1]), "%s", path);
	}
}

/* At the parent's exit, failed or not: the later tests need the defaults. */
static void restore_caps(void)
{
	char path[128], text[32];
	size_t i;

	if (getpid() != fuzz_parent)
		return;
	for (i = 0; i < NR_CAPS; i++) {
		snprintf(path, sizeof(path), CAP_PATH "%s", caps[i][0]);
		snprintf(text, sizeof(text), "%llu\n", saved[i]);
		kvt_put(path, text);
	}
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 100000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) :
			(uint64_t)time(NULL);
	int procs = argc > 3 ? atoi(argv[3]) : 4, i, status, failed = 0;
	struct kvreg *kv = kvt_open();
	struct kvt_snap before = kvt_snap(kv);
	int shared = open(KVREG_DEVICE_PATH, O_RDWR);

	parent_kv = kv;
	printf("fuzz: %ld calls from %d processes, seed %#llx\n", calls, procs,
	       (unsigned long long)seed);
	tally = mmap(NULL, sizeof(*tally), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(tally != MAP_FAILED, "mmap");
	CHECK(shared >= 0, "open");
	fuzz_parent = getpid();
	set_caps();
	atexit(restore_caps);
	fflush(stdout);
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		CHECK(pid >= 0, "fork");
		if (!pid)
			worker(shared, calls / procs, seed + (uint64_t)i + 1);
	}
	for (i = 0; i < procs; i++) {
		CHECK(wait(&status) > 0, "wait");
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	}
	close(shared);
	CHECK(!failed, "a fuzz process failed (seed %#llx)",
	      (unsigned long long)seed);
	printf("IMPORT of %lu resealed descriptors with a field changed: %lu "
	       "refused by the layout check, %lu through the parser to a "
	       "connect\n", tally->sealed, tally->layout_refused,
	       tally->parsed);
	/*
	 * About 0.3 and 0.2 per 100 calls: a sixth of that is the floor.
	 * Unsealed, every changed descriptor stops at the checksum.
	 */
	CHECK(tally->layout_refused >= (unsigned long)calls / 2000 &&
	      tally->parsed >= (unsigned long)calls / 3000,
	      "the mutated descriptors stopped reaching the layout check "
	      "(%lu) or the connect (%lu)", tally->layout_refused,
	      tally->parsed);
	kvt_check_unchanged(kv, &before, "after fuzzing");
	kvreg_close(kv);
	return T_PASS;
}
