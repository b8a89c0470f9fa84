// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Every reason has a name and a sentence with its numbers and a fix;
 * unknown reasons are passed through by number, never folded into another.
 */
#include "kvtest.h"

/* all_reasons[] and all_arguments[]: every one the headers define. */
#include "kvreg_names.h"

static void expect(const struct kvreg_error *err, int errnum,
		   const char *needle)
{
	char msg[512];

	kvreg_format_error(err, errnum, msg, sizeof(msg));
	CHECK(strstr(msg, needle), "\"%s\" lacks \"%s\"", msg, needle);
	printf("%s\n", msg);
}

static struct kvreg_error rec(uint32_t reason)
{
	struct kvreg_error e;

	memset(&e, 0, sizeof(e));
	e.reason = reason;
	e.device_index = KVREG_NO_DEVICE_INDEX;
	return e;
}

int main(void)
{
	struct kvreg_error e;
	char small[8];
	size_t i;
	int n;

	for (i = 0; i < sizeof(all_reasons) / sizeof(all_reasons[0]); i++) {
		const char *name = kvreg_strerror(all_reasons[i]);
		char msg[512];

		CHECK(strcmp(name, "unknown kvreg reason"),
		      "reason %u has no name", all_reasons[i]);
		e = rec(all_reasons[i]);
		kvreg_format_error(&e, -EINVAL, msg, sizeof(msg));
		/* "<name> (...); <fix>": a cause and something to do. */
		CHECK(!strncmp(msg, name, strlen(name)) && strstr(msg, "; ") &&
		      strlen(strstr(msg, "; ")) > 10,
		      "reason %u: \"%s\"", all_reasons[i], msg);
	}

	e = rec(KVREG_REASON_ABI_MISMATCH);
	e.usage = 7;
	e.request = KVREG_ABI_VERSION;
	expect(&e, -EPROTO, "module speaks ABI 7, library speaks ABI 2");

	/* Refused by the node's group: the group by name, and how to join. */
	e = rec(KVREG_REASON_DEVICE_ACCESS);
	e.limit = 0;
	e.usage = 0660;
	e.request = 1;
	expect(&e, -EACCES, "/dev/kvreg is mode 0660, group root, and this "
	       "process is not in it (EACCES); add the user to group root "
	       "(as root: usermod -aG root USER) and log in again");

	/* Which side, and numbers that do not wrap at 2^64. */
	e = rec(KVREG_REASON_OUT_OF_RANGE);
	e.argument = KVREG_ARG_REMOTE_OFFSET;
	e.limit = 4096;
	e.address = UINT64_MAX;
	e.request = 2;
	expect(&e, -ERANGE, "remote offset 18446744073709551615 + length 2 "
	       "passes the end of the registration (4096 bytes)");
	e.argument = KVREG_ARG_OFFSET;
	e.address = 4096;
	e.request = 1;
	expect(&e, -ERANGE, "local offset 4096 + length 1");

	e = rec(KVREG_REASON_UNMAPPED_ADDRESS);
	e.address = 0x7f0012345000ULL;
	expect(&e, -EFAULT, "0x7f0012345000");

	/* A bad argument says what is wrong with it, and no "fix the call". */
	e = rec(KVREG_REASON_BAD_ARGUMENT);
	e.argument = KVREG_ARG_ACCESS;
	e.request = KVREG_ACCESS_REMOTE_WRITE;
	expect(&e, -EINVAL, "bad access flags 0x2: remote write without "
	       "local write, which verbs forbids (EINVAL); add "
	       "KVREG_ACCESS_LOCAL_WRITE");
	e.request = 0x201;
	e.limit = KVREG_ACCESS_ALL;
	expect(&e, -EINVAL, "unknown bits 0x200 (known: 0x7)");
	e = rec(KVREG_REASON_BAD_ARGUMENT);
	e.argument = KVREG_ARG_ADDRESS;
	e.address = 0xffff888000000000ULL;
	e.limit = 0x7ffffffff000ULL;
	expect(&e, -EINVAL, "bad address 0xffff888000000000, outside user "
	       "space");
	for (i = 0; i < sizeof(all_arguments) / sizeof(all_arguments[0]);
	     i++) {
		char msg[512];

		e = rec(KVREG_REASON_BAD_ARGUMENT);
		e.argument = all_arguments[i];
		kvreg_format_error(&e, -EINVAL, msg, sizeof(msg));
		CHECK(!strstr(msg, "fix the call") && strstr(msg, "; ") &&
		      strlen(strstr(msg, "; ")) > 10, "argument %u: \"%s\"",
		      all_arguments[i], msg);
	}

	e = rec(KVREG_REASON_BAD_FD);
	e.usage = 7;
	expect(&e, -EBADF, "descriptor unusable: fd 7 (EBADF)");

	e = rec(KVREG_REASON_DEVICE_REMOVED);
	e.device_index = 3;
	expect(&e, -ENODEV, "on device 3");

	e = rec(KVREG_REASON_TRANSFER_FAILED);
	e.wc_status = 10;
	expect(&e, -EIO, "status 10");

	e = rec(KVREG_REASON_DEVICE_REFUSED);
	e.driver_errno = -524;
	expect(&e, -EIO, "driver error -524");
	e.driver_errno = -EIO;
	e.wc_status = 4;
	expect(&e, -EIO, "driver error -5, work completion status 4");

	e = rec(KVREG_REASON_MODULE_NOT_LOADED);
	expect(&e, -ENOENT, "modprobe kvreg");

	/* The sentences users act on, with their numbers. */
	e = rec(KVREG_REASON_PROC_MR_BUDGET);
	e.limit = 4096;
	e.usage = 4096;
	e.request = 2;
	expect(&e, -EDQUOT, "per-process MR budget exceeded: 4096 of 4096 "
	       "MRs in use, this registration needs 2 more (EDQUOT); "
	       "deregister unused buffers or raise "
	       "kvreg.max_mrs_per_process");

	e = rec(KVREG_REASON_PROC_BYTES_BUDGET);
	e.limit = 1ULL << 30;
	e.usage = 768ULL << 20;
	e.request = 512ULL << 20;
	expect(&e, -EDQUOT, ": 768 MiB of 1 GiB pinned, this registration "
	       "needs 512 MiB more");

	e = rec(KVREG_REASON_HOST_CEILING);
	e.limit = 12ULL << 30;
	e.usage = 12ULL << 30;
	e.request = 5000;
	expect(&e, -EDQUOT, "12 GiB of 12 GiB pinned by all processes, this "
	       "registration needs 5000 bytes more");
	expect(&e, -EDQUOT, "raise kvreg.host_max_bytes");

	e = rec(KVREG_REASON_DEVICE_MR_RESERVE);
	e.device_index = 1;
	e.limit = 262143;
	e.usage = 262143;
	e.request = 1;
	expect(&e, -ENOSPC, "device MR reserve reached on device 1: 262143 "
	       "of 262143");

	e = rec(KVREG_REASON_MEMLOCK_EXCEEDED);
	e.limit = 64 << 10;
	e.usage = 16 << 10;
	e.request = 1 << 20;
	expect(&e, -ENOMEM, "RLIMIT_MEMLOCK exceeded: 16 KiB of 64 KiB "
	       "locked, this registration needs 1 MiB more (ENOMEM)");
	expect(&e, -ENOMEM, "ulimit -l");

	e = rec(KVREG_REASON_MEMLOCK_ZERO);
	e.request = 1 << 20;
	expect(&e, -EPERM, "RLIMIT_MEMLOCK is 0: this registration needs "
	       "1 MiB (EPERM)");

	e = rec(KVREG_REASON_RDMA_CGROUP);
	e.device_index = 0;
	e.usage = 2;
	e.request = 3;
	expect(&e, -EAGAIN, "rdma.max allowed 2 of the 3 objects");

	e = rec(KVREG_REASON_NOT_HOST_MEMORY);
	e.address = 0xa0000;
	expect(&e, -EFAULT, "not host memory at 0xa0000 (VM_IO/VM_PFNMAP");

	e = rec(KVREG_REASON_FILE_BACKED);
	e.address = 0x1000;
	expect(&e, -EOPNOTSUPP, "file-backed memory at 0x1000 (EOPNOTSUPP)");

	e = rec(KVREG_REASON_READ_ONLY);
	e.address = 0x2000;
	expect(&e, -EACCES, "read-only memory at 0x2000 (EACCES)");

	e = rec(KVREG_REASON_OVERLAP);
	e.address = 0x10000;
	e.limit = 0x4000;
	e.usage = 7;
	expect(&e, -EEXIST, "registration 7 covers [0x10000, 0x14000)");
	expect(&e, -EEXIST, "KVREG_REG_F_ALLOW_OVERLAP");

	e = rec(KVREG_REASON_FOREIGN_PROCESS);
	e.usage = 4242;
	expect(&e, -EPERM, "it belongs to process 4242");

	e = rec(KVREG_REASON_DEVICE_EXHAUSTED);
	e.device_index = 0;
	e.driver_errno = -ENOMEM;
	expect(&e, -ENOMEM, "out of resources on device 0: driver error -12");

	/* A reason this library does not know: by number, errno kept. */
	e = rec(9999);
	expect(&e, -EIO, "kvreg reason 9999 (EIO)");
	CHECK(!strcmp(kvreg_strerror(9999), "unknown kvreg reason"), "9999");

	/* No record: the errno alone. */
	expect(NULL, -ENOMEM, "Cannot allocate memory");

	/* Truncation is safe and reports the full length, as snprintf. */
	e = rec(KVREG_REASON_NO_DEVICE);
	n = kvreg_format_error(&e, -ENODEV, small, sizeof(small));
	CHECK(n > (int)sizeof(small) && strlen(small) == sizeof(small) - 1,
	      "truncation: %d \"%s\"", n, small);
	return T_PASS;
}
