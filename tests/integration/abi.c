// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The ioctl ABI refuses what it does not understand: short or oversized
 * structs with non-zero tails, unknown flags, non-zero reserved fields,
 * unknown commands. A longer struct with a zero tail is accepted (newer
 * userspace, older module).
 */
#include <sys/ioctl.h>

#include "kvtest.h"

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

int main(void)
{
	struct kvreg_abi_version abi = { .size = sizeof(abi) };
	struct {
		struct kvreg_register r;
		uint64_t tail;
	} big;
	struct kvreg_register r;
	struct kvreg_transfer t;
	struct kvreg_devices d;
	struct kvreg_stats st1;
	struct kvt_snap st0;
	struct kvreg *kv = kvt_open();
	int fd = kvreg_fd(kv), ret;
	uint8_t *buf = kvt_map_anon(4 * SZ_4K);

	st0 = kvt_snap(kv);
	CHECK(!xioctl(fd, KVREG_IOC_ABI_VERSION, &abi), "ABI ioctl");
	CHECK(abi.abi_version == KVREG_ABI_VERSION, "ABI %u", abi.abi_version);

	/* Shorter than the published size. */
	memset(&r, 0, sizeof(r));
	r.size = 8;
	CHECK(xioctl(fd, KVREG_IOC_REGISTER, &r) == -EINVAL, "short size");

	/* Longer, with a non-zero tail the module cannot know. */
	memset(&big, 0, sizeof(big));
	big.r.size = sizeof(big);
	big.r.addr = (uintptr_t)buf;
	big.r.length = SZ_4K;
	big.r.access = KVREG_ACCESS_LOCAL_WRITE;
	big.tail = 1;
	CHECK(xioctl(fd, KVREG_IOC_REGISTER, &big) == -E2BIG, "non-zero tail");
	/* Longer with a zero tail: accepted, zero length is a no-op. */
	big.tail = 0;
	big.r.length = 0;
	CHECK(!xioctl(fd, KVREG_IOC_REGISTER, &big), "zero tail refused");

	/* Unknown flag. */
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.addr = (uintptr_t)buf;
	r.length = SZ_4K;
	r.flags = 1U << 31;
	ret = xioctl(fd, KVREG_IOC_REGISTER, &r);
	CHECK(ret == -EINVAL && r.error.reason == KVREG_REASON_BAD_ARGUMENT &&
	      r.error.argument == KVREG_ARG_FLAGS, "unknown flag: %d %u %u",
	      ret, r.error.reason, r.error.argument);

	/* Unknown access bit. */
	r.flags = 0;
	r.access = 1U << 9;
	ret = xioctl(fd, KVREG_IOC_REGISTER, &r);
	CHECK(ret == -EINVAL && r.error.argument == KVREG_ARG_ACCESS,
	      "access: %d %u", ret, r.error.argument);

	/* Transfer: unknown flag, reserved, opcode. */
	memset(&t, 0, sizeof(t));
	t.size = sizeof(t);
	t.flags = 1U << 7;
	t.opcode = KVREG_OP_WRITE;
	t.length = 1;
	ret = xioctl(fd, KVREG_IOC_TRANSFER, &t);
	CHECK(ret == -EINVAL && t.error.argument == KVREG_ARG_FLAGS,
	      "transfer flag: %d %u", ret, t.error.argument);
	t.flags = 0;
	t.reserved = 3;
	ret = xioctl(fd, KVREG_IOC_TRANSFER, &t);
	CHECK(ret == -EINVAL && t.error.argument == KVREG_ARG_RESERVED,
	      "transfer reserved: %d %u", ret, t.error.argument);
	t.reserved = 0;
	t.opcode = 9;
	ret = xioctl(fd, KVREG_IOC_TRANSFER, &t);
	CHECK(ret == -EINVAL && t.error.argument == KVREG_ARG_OPCODE,
	      "transfer opcode: %d %u", ret, t.error.argument);

	/* Devices: entry size smaller than an entry; reserved. */
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.capacity = 1;
	d.entry_size = 8;
	CHECK(xioctl(fd, KVREG_IOC_DEVICES, &d) == -EINVAL, "entry_size");
	d.entry_size = sizeof(struct kvreg_device_info);
	d.reserved = 1;
	CHECK(xioctl(fd, KVREG_IOC_DEVICES, &d) == -EINVAL, "devices reserved");

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
