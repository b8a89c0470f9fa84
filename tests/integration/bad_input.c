// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Bad input gets a specific error and leaves nothing behind: unmapped and
 * partly unmapped ranges, wrapping ranges, forbidden access combinations,
 * unknown devices, transfers out of range or without the access they need.
 */
#include "kvtransfer.h"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvt_snap before;
	struct kvreg_mr *mr, *ro;
	struct kvreg_error err;
	uint8_t *p, *q;
	char msg[512];
	uint32_t dev;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	before = kvt_snap(kv);

	/* A hole in the middle: the first page pins, then all is undone. */
	p = kvt_map_anon(3 * SZ_4K);
	CHECK(!munmap(p + SZ_4K, SZ_4K), "munmap");
	CHECK_FAILS(kvreg_register(kv, p, 3 * SZ_4K, KVREG_ACCESS_ALL, 0, &mr,
				   &err), &err, EFAULT,
		    KVREG_REASON_UNMAPPED_ADDRESS);
	/* The first page was pinned before the hole was found: released. */
	kvt_check_unchanged(kv, &before, "after a partly unmapped range");
	CHECK(err.address == (uintptr_t)(p + SZ_4K),
	      "first bad address %#llx, want %p",
	      (unsigned long long)err.address, (void *)(p + SZ_4K));

	/* Nothing mapped at all. */
	CHECK_FAILS(kvreg_register(kv, p + SZ_4K, SZ_4K, KVREG_ACCESS_ALL, 0,
				   &mr, &err), &err, EFAULT,
		    KVREG_REASON_UNMAPPED_ADDRESS);

	/* A kernel address: the address is what is wrong, and is named. */
	CHECK_FAILS(kvreg_register(kv, (void *)0xffff888000000000ULL, SZ_4K,
				   KVREG_ACCESS_ALL, 0, &mr, &err), &err,
		    EINVAL, KVREG_REASON_BAD_ARGUMENT);
	CHECK(err.argument == KVREG_ARG_ADDRESS &&
	      err.address == 0xffff888000000000ULL, "argument %u address %#llx",
	      err.argument, (unsigned long long)err.address);
	kvreg_format_error(&err, -EINVAL, msg, sizeof(msg));
	CHECK(strstr(msg, "0xffff888000000000"), "%s", msg);
	/* A range that wraps the address space. */
	CHECK_FAILS(kvreg_register(kv, p, UINT64_MAX - SZ_4K,
				   KVREG_ACCESS_ALL, 0, &mr, &err), &err,
		    EINVAL, KVREG_REASON_BAD_ARGUMENT);
	CHECK(err.argument == KVREG_ARG_LENGTH, "argument %u", err.argument);

	/* Remote write without local write is forbidden by verbs. */
	q = kvt_map_anon(2 * SZ_4K);
	CHECK_FAILS(kvreg_register(kv, q, SZ_4K, KVREG_ACCESS_REMOTE_WRITE, 0,
				   &mr, &err), &err, EINVAL,
		    KVREG_REASON_BAD_ARGUMENT);
	CHECK(err.argument == KVREG_ARG_ACCESS &&
	      err.request == KVREG_ACCESS_REMOTE_WRITE, "argument %u",
	      err.argument);
	kvreg_format_error(&err, -EINVAL, msg, sizeof(msg));
	CHECK(strstr(msg, "remote write without local write"), "%s", msg);

	/* A device that does not exist. */
	CHECK_FAILS(kvreg_register(kv, q, SZ_4K, KVREG_ACCESS_ALL, 1ULL << 63,
				   &mr, &err), &err, ENODEV,
		    KVREG_REASON_NO_DEVICE);
	CHECK(err.device_index == 63, "device index %u", err.device_index);

	/* Transfers: out of range, and without the access needed. */
	CHECK_OK(kvreg_register(kv, q, 2 * SZ_4K, KVREG_ACCESS_ALL,
				1ULL << dev, &mr, &err), &err);
	/* A read-only view of the same pages: an overlap, asked for. */
	CHECK_OK(kvreg_register_flags(kv, q, SZ_4K, KVREG_ACCESS_REMOTE_READ,
				      1ULL << dev, KVREG_REG_F_ALLOW_OVERLAP,
				      &ro, &err), &err);
	CHECK_FAILS(kvreg_transfer(kv, KVREG_OP_WRITE, dev, mr, SZ_4K, mr, 0,
				   SZ_4K + 1, &err), &err, ERANGE,
		    KVREG_REASON_OUT_OF_RANGE);
	CHECK(err.argument == KVREG_ARG_OFFSET && err.limit == 2 * SZ_4K &&
	      err.address == SZ_4K && err.request == SZ_4K + 1,
	      "argument %u limit %llu offset %llu length %llu", err.argument,
	      (unsigned long long)err.limit, (unsigned long long)err.address,
	      (unsigned long long)err.request);
	/* The remote side is named, and 2^64 - 1 + 2 does not wrap to 1. */
	CHECK_FAILS(kvreg_transfer(kv, KVREG_OP_WRITE, dev, mr, 0, mr,
				   UINT64_MAX, 2, &err), &err, ERANGE,
		    KVREG_REASON_OUT_OF_RANGE);
	kvreg_format_error(&err, -ERANGE, msg, sizeof(msg));
	CHECK(err.argument == KVREG_ARG_REMOTE_OFFSET &&
	      strstr(msg, "remote offset 18446744073709551615 + length 2"),
	      "%s", msg);
	CHECK_FAILS(kvreg_transfer(kv, KVREG_OP_WRITE, dev, mr, 0, ro, 0, 16,
				   &err), &err, EACCES,
		    KVREG_REASON_ACCESS_DENIED);
	CHECK_FAILS(kvreg_transfer(kv, KVREG_OP_READ, dev, ro, 0, mr, 0, 16,
				   &err), &err, EACCES,
		    KVREG_REASON_ACCESS_DENIED);
	CHECK_FAILS(kvreg_transfer(kv, KVREG_OP_WRITE, 63, mr, 0, mr, 16, 16,
				   &err), &err, ENODEV, KVREG_REASON_NO_DEVICE);
	CHECK_OK(kvreg_deregister(kv, ro, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);

	kvt_check_unchanged(kv, &before, "after bad input");
	kvreg_close(kv);
	return T_PASS;
}
