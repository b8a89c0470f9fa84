// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The ioctl ABI takes every struct from its first published size up, and
 * refuses what it does not understand: shorter structs, longer ones with a
 * non-zero tail or past KVREG_MAX_ARG_SIZE, unknown flags, non-zero
 * reserved fields, unknown commands. The error record goes where the
 * caller points, as much as it has room for: none, the first published
 * size, or a larger record whose tail the module zeroes.
 */
#include <stddef.h>
#include <sys/socket.h>
#include <sys/ioctl.h>

#include "kvtest.h"

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * Rails: IMPORT's second size has outputs that must come in zero, and
 * LISTEN's one flag needs an endpoint of the file.
 */
static void check_rails_heads(int fd)
{
	struct kvreg_import im = {
		.size = sizeof(im), .error_size = sizeof(struct kvreg_error),
		.rails = 1,
	};
	struct kvreg_listen ln = {
		.size = sizeof(ln), .error_size = sizeof(struct kvreg_error),
		.flags = KVREG_LISTEN_F_ADD_ADDRESS, .endpoint = 12345,
		.addr = { .family = AF_INET, .addr = { 192, 0, 2, 1 } },
	};
	struct kvreg_error e;

	CHECK(sizeof(im) == KVREG_IMPORT_SIZE_VER1, "import size");
	im.error = (uintptr_t)&e;
	CHECK(xioctl(fd, KVREG_IOC_IMPORT, &im) == -EINVAL &&
	      e.argument == KVREG_ARG_RESERVED, "IMPORT with rails set");
	im.rails = 0;
	im.paths = 2;
	CHECK(xioctl(fd, KVREG_IOC_IMPORT, &im) == -EINVAL &&
	      e.argument == KVREG_ARG_RESERVED, "IMPORT with paths set");
	ln.error = (uintptr_t)&e;
	CHECK(xioctl(fd, KVREG_IOC_LISTEN, &ln) == -ENOENT &&
	      e.reason == KVREG_REASON_UNKNOWN_ENDPOINT,
	      "LISTEN adding to an endpoint that is not there");
}

/*
 * The remote commands as the others: the first size and up, no shorter,
 * no non-zero tail, no unknown flag, no non-zero reserved field.
 */
static void check_remote_heads(int fd)
{
	static const struct {
		unsigned long cmd;
		uint32_t ver0;
		uint32_t known;		/* its latest size, which the module reads */
		uint32_t reserved_at;	/* offset of a reserved __u32 */
	} cmds[] = {
		{ KVREG_IOC_LISTEN, KVREG_LISTEN_SIZE_VER0, KVREG_LISTEN_SIZE_VER0,
		  offsetof(struct kvreg_listen, reserved) },
		{ KVREG_IOC_EXPORT, KVREG_EXPORT_SIZE_VER0, KVREG_EXPORT_SIZE_VER0,
		  offsetof(struct kvreg_export, reserved) },
		{ KVREG_IOC_IMPORT, KVREG_IMPORT_SIZE_VER0, KVREG_IMPORT_SIZE_VER1,
		  offsetof(struct kvreg_import, reserved) },
		{ KVREG_IOC_UNIMPORT, KVREG_UNIMPORT_SIZE_VER0,
		  KVREG_UNIMPORT_SIZE_VER0,
		  offsetof(struct kvreg_unimport, reserved) },
		{ KVREG_IOC_UNEXPORT, KVREG_UNEXPORT_SIZE_VER0,
		  KVREG_UNEXPORT_SIZE_VER0,
		  offsetof(struct kvreg_unexport, reserved) },
		{ KVREG_IOC_UNLISTEN, KVREG_UNLISTEN_SIZE_VER0,
		  KVREG_UNLISTEN_SIZE_VER0,
		  offsetof(struct kvreg_unlisten, reserved) },
		{ KVREG_IOC_REKEY, KVREG_REKEY_SIZE_VER0, KVREG_REKEY_SIZE_VER0,
		  offsetof(struct kvreg_rekey, reserved) },
		/* Output fields must come in zero, as reserved ones do. */
		{ KVREG_IOC_SUBMIT, KVREG_SUBMIT_SIZE_VER0, KVREG_SUBMIT_SIZE_VER0,
		  offsetof(struct kvreg_submit, accepted) },
		{ KVREG_IOC_REAP, KVREG_REAP_SIZE_VER0, KVREG_REAP_SIZE_VER0,
		  offsetof(struct kvreg_reap, count) },
		{ KVREG_IOC_CONNS, KVREG_CONNS_SIZE_VER0, KVREG_CONNS_SIZE_VER0,
		  offsetof(struct kvreg_conns, count) },
	};
	uint8_t arg[256];
	struct kvreg_register *h = (struct kvreg_register *)arg;
	struct kvreg_error e;
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		memset(arg, 0, sizeof(arg));
		h->size = cmds[i].ver0;
		h->error = (uintptr_t)&e;
		h->error_size = sizeof(e);
		h->flags = 1U << 30;
		CHECK(xioctl(fd, cmds[i].cmd, arg) == -EINVAL &&
		      e.argument == KVREG_ARG_FLAGS, "command %#lx flags",
		      cmds[i].cmd);
		h->flags = 0;
		arg[cmds[i].reserved_at] = 1;
		CHECK(xioctl(fd, cmds[i].cmd, arg) == -EINVAL &&
		      e.argument == KVREG_ARG_RESERVED, "command %#lx reserved",
		      cmds[i].cmd);
		arg[cmds[i].reserved_at] = 0;
		h->size = cmds[i].ver0 - 8;
		CHECK(xioctl(fd, cmds[i].cmd, arg) == -EINVAL,
		      "command %#lx short", cmds[i].cmd);
		h->size = cmds[i].known + 8;
		arg[cmds[i].known + 3] = 1;
		CHECK(xioctl(fd, cmds[i].cmd, arg) == -E2BIG,
		      "command %#lx non-zero tail", cmds[i].cmd);
	}
	check_rails_heads(fd);
}

/* A register call at @size bytes (its tail from @tail), record at @rec. */
#define BIG_ENTRY	(1U << 20)

/* What a 1 MiB entry size gets: EINVAL naming the field, and the bound. */
static void refused_size(int ret, const struct kvreg_error *e, uint32_t arg,
			 const char *what)
{
	CHECK(ret == -EINVAL && e->reason == KVREG_REASON_BAD_ARGUMENT &&
	      e->argument == arg && e->limit == KVREG_MAX_ARG_SIZE &&
	      e->request == BIG_ENTRY,
	      "%s of 1 MiB: ret %d reason %u argument %u limit %llu request %llu",
	      what, ret, e->reason, e->argument, (unsigned long long)e->limit,
	      (unsigned long long)e->request);
}

/*
 * Arrays' entry sizes, from their first published size up to
 * KVREG_MAX_ARG_SIZE: past it, each call that takes an array refuses,
 * before it writes an entry or registers anything.
 */
static void check_entry_sizes(int fd, void *buf)
{
	struct kvreg_devices d = { .size = sizeof(d) };
	struct kvreg_register r = { .size = sizeof(r) };
	struct kvreg_query q = { .size = sizeof(q) };
	struct kvreg_procs pr = { .size = sizeof(pr) };
	static struct kvreg_error e;
	static uint8_t entries[SZ_4K];

	d.error = r.error = q.error = pr.error = (uintptr_t)&e;
	d.error_size = r.error_size = q.error_size = pr.error_size = sizeof(e);
	d.capacity = pr.capacity = r.keys_capacity = q.keys_capacity = 1;
	d.entries = pr.entries = r.keys = q.keys = (uintptr_t)entries;
	d.entry_size = pr.entry_size = r.key_size = q.key_size = BIG_ENTRY;
	refused_size(xioctl(fd, KVREG_IOC_DEVICES, &d), &e, KVREG_ARG_SIZE,
		     "DEVICES' entry size");
	refused_size(xioctl(fd, KVREG_IOC_PROCS, &pr), &e, KVREG_ARG_SIZE,
		     "PROCS' entry size");
	r.addr = (uintptr_t)buf;
	r.length = SZ_4K;
	r.access = KVREG_ACCESS_ALL;
	refused_size(xioctl(fd, KVREG_IOC_REGISTER, &r), &e, KVREG_ARG_KEYS,
		     "REGISTER's key size");
	refused_size(xioctl(fd, KVREG_IOC_QUERY, &q), &e, KVREG_ARG_KEYS,
		     "QUERY's key size");
	/* The largest allowed is taken. */
	d.entry_size = KVREG_MAX_ARG_SIZE;
	d.capacity = 1;
	CHECK(!xioctl(fd, KVREG_IOC_DEVICES, &d), "DEVICES' entry size of %u",
	      KVREG_MAX_ARG_SIZE);
}

static int reg_at(int fd, const void *buf, uint32_t size, uint8_t tail,
		  struct kvreg_error *rec, uint32_t rec_size)
{
	static uint8_t big[KVREG_MAX_ARG_SIZE + 64];
	struct kvreg_register *r = (struct kvreg_register *)big;

	memset(big, 0, sizeof(big));
	memset(big + sizeof(*r), tail, sizeof(big) - sizeof(*r));
	r->size = size;
	r->addr = (uintptr_t)buf;
	r->length = SZ_4K;
	r->access = 1U << 9;	/* refused: the record says why */
	r->error = (uintptr_t)rec;
	r->error_size = rec_size;
	return xioctl(fd, KVREG_IOC_REGISTER, r);
}

int main(void)
{
	struct kvreg_abi_version abi = { .size = sizeof(abi) };
	struct kvreg_features feat = { .size = sizeof(feat) };
	struct {
		struct kvreg_error e;
		uint8_t more[24];
	} rec;
	struct kvreg_register r;
	struct kvreg_transfer t;
	struct kvreg_devices d;
	struct kvreg_error e;
	struct kvt_snap st0;
	struct kvreg_stats st1;
	struct kvreg *kv = kvt_open();
	int fd = kvreg_fd(kv), ret;
	uint8_t *buf = kvt_map_anon(4 * SZ_4K);
	size_t i;

	st0 = kvt_snap(kv);
	CHECK(!xioctl(fd, KVREG_IOC_ABI_VERSION, &abi), "ABI ioctl");
	CHECK(abi.abi_version == KVREG_ABI_VERSION, "ABI %u", abi.abi_version);

	/* Features: asked, not guessed; what this module has is set. */
	CHECK(!xioctl(fd, KVREG_IOC_FEATURES, &feat), "features");
	CHECK((feat.features & KVREG_FEATURE_FILE_PD) &&
	      feat.max_devices == KVREG_MAX_DEVICES, "features %#llx",
	      (unsigned long long)feat.features);
	CHECK(kvreg_has_feature(kv, KVREG_FEATURE_FILE_PD) &&
	      kvreg_has_feature(kv, KVREG_FEATURE_RAILS) &&
	      kvreg_has_feature(kv, KVREG_FEATURE_REGISTER_NO_MR) &&
	      !kvreg_has_feature(kv, 1ULL << 63), "kvreg_has_feature");
	feat.flags = 1;
	feat.error = (uintptr_t)&e;
	feat.error_size = sizeof(e);
	CHECK(xioctl(fd, KVREG_IOC_FEATURES, &feat) == -EINVAL &&
	      e.argument == KVREG_ARG_FLAGS, "features flags");

	/* Sizes: the first published one, larger with a zero tail, ... */
	memset(&rec, 0x5a, sizeof(rec));
	CHECK(reg_at(fd, buf, KVREG_REGISTER_SIZE_VER0, 0, &rec.e,
		     sizeof(rec.e)) == -EINVAL &&
	      rec.e.reason == KVREG_REASON_BAD_ARGUMENT &&
	      rec.e.argument == KVREG_ARG_ACCESS, "VER0: %u %u", rec.e.reason,
	      rec.e.argument);
	CHECK(rec.more[0] == 0x5a, "wrote past the record's size");
	CHECK(reg_at(fd, buf, KVREG_REGISTER_SIZE_VER0 + 64, 0, &rec.e,
		     sizeof(rec.e)) == -EINVAL &&
	      rec.e.argument == KVREG_ARG_ACCESS, "zero tail");
	/* ... refused with a non-zero tail, and past the cap. */
	CHECK(reg_at(fd, buf, KVREG_REGISTER_SIZE_VER0 + 64, 1, &rec.e,
		     sizeof(rec.e)) == -E2BIG, "non-zero tail");
	CHECK(reg_at(fd, buf, KVREG_MAX_ARG_SIZE + 8, 0, &rec.e,
		     sizeof(rec.e)) == -E2BIG, "past KVREG_MAX_ARG_SIZE");
	CHECK(reg_at(fd, buf, KVREG_REGISTER_SIZE_VER0 - 8, 0, &rec.e,
		     sizeof(rec.e)) == -EINVAL, "short size");

	/* The record: none asked for, larger (tail zeroed), too small. */
	CHECK(reg_at(fd, buf, sizeof(r), 0, NULL, 0) == -EINVAL, "no record");
	memset(&rec, 0x5a, sizeof(rec));
	CHECK(reg_at(fd, buf, sizeof(r), 0, &rec.e, sizeof(rec)) == -EINVAL &&
	      rec.e.argument == KVREG_ARG_ACCESS, "larger record");
	for (i = 0; i < sizeof(rec.more); i++)
		CHECK(!rec.more[i], "record tail byte %zu not zeroed", i);
	CHECK(reg_at(fd, buf, sizeof(r), 0, &rec.e, 8) == -EINVAL,
	      "record smaller than its first size");
	/* Room past the cap is refused, not zeroed gigabyte by gigabyte. */
	CHECK(reg_at(fd, buf, sizeof(r), 0, &rec.e, KVREG_MAX_ARG_SIZE + 8) ==
	      -E2BIG, "record larger than KVREG_MAX_ARG_SIZE");
	/* A record of the first published size: nothing written past it. */
	memset(&rec, 0x5a, sizeof(rec));
	CHECK(reg_at(fd, buf, sizeof(r), 0, &rec.e, KVREG_ERROR_SIZE_VER0) ==
	      -EINVAL && rec.e.argument == KVREG_ARG_ACCESS &&
	      rec.e.addr_family == 0x5a5a, "VER0 record");
	/* A record the module cannot write: EFAULT, nothing registered. */
	CHECK(reg_at(fd, buf, sizeof(r), 0, (void *)8, sizeof(rec.e)) ==
	      -EFAULT, "unwritable record");

	/* Unknown flag, and reserved. */
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.addr = (uintptr_t)buf;
	r.length = SZ_4K;
	r.error = (uintptr_t)&e;
	r.error_size = sizeof(e);
	r.flags = 1U << 31;
	ret = xioctl(fd, KVREG_IOC_REGISTER, &r);
	CHECK(ret == -EINVAL && e.reason == KVREG_REASON_BAD_ARGUMENT &&
	      e.argument == KVREG_ARG_FLAGS, "unknown flag: %d %u %u", ret,
	      e.reason, e.argument);
	r.flags = 0;
	r.reserved = 1;
	ret = xioctl(fd, KVREG_IOC_REGISTER, &r);
	CHECK(ret == -EINVAL && e.argument == KVREG_ARG_RESERVED,
	      "register reserved: %d %u", ret, e.argument);

	/* Transfer: unknown flag, opcode. */
	memset(&t, 0, sizeof(t));
	t.size = sizeof(t);
	t.error = (uintptr_t)&e;
	t.error_size = sizeof(e);
	t.flags = 1U << 7;
	t.opcode = KVREG_OP_WRITE;
	t.length = 1;
	ret = xioctl(fd, KVREG_IOC_TRANSFER, &t);
	CHECK(ret == -EINVAL && e.argument == KVREG_ARG_FLAGS,
	      "transfer flag: %d %u", ret, e.argument);
	t.flags = 0;
	t.opcode = 9;
	ret = xioctl(fd, KVREG_IOC_TRANSFER, &t);
	CHECK(ret == -EINVAL && e.argument == KVREG_ARG_OPCODE,
	      "transfer opcode: %d %u", ret, e.argument);

	/* Devices: entry size smaller than an entry, with its record. */
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.error = (uintptr_t)&e;
	d.error_size = sizeof(e);
	d.capacity = 1;
	d.entry_size = 8;
	CHECK(xioctl(fd, KVREG_IOC_DEVICES, &d) == -EINVAL &&
	      e.reason == KVREG_REASON_BAD_ARGUMENT &&
	      e.argument == KVREG_ARG_SIZE, "entry_size: reason %u", e.reason);

	check_remote_heads(fd);
	check_entry_sizes(fd, buf);

	/* ABI version: flags must be zero. */
	abi.flags = 1;
	abi.abi_version = 0;
	abi.max_devices = 0;
	CHECK(xioctl(fd, KVREG_IOC_ABI_VERSION, &abi) == -EINVAL, "abi flags");

	/* Unknown commands, of our magic and of another. */
	CHECK(xioctl(fd, _IO(KVREG_IOC_MAGIC, 0x7f), &r) == -ENOTTY,
	      "unknown command");
	CHECK(xioctl(fd, _IOWR('T', 1, int), &r) == -ENOTTY, "foreign command");

	kvt_check_unchanged(kv, &st0, "after refused calls");
	st1 = kvt_stats(kv);
	CHECK(st1.file_registrations == 0, "refused calls left a registration");
	kvreg_close(kv);
	return T_PASS;
}
