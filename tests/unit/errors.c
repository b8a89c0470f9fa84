// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Every reason has a name and a sentence with its numbers and a fix;
 * unknown reasons are passed through by number, never folded into another.
 */
#include "kvtest.h"

static const uint32_t all_reasons[] = {
	KVREG_REASON_BAD_ARGUMENT, KVREG_REASON_NO_DEVICE,
	KVREG_REASON_DEVICE_NOT_ACTIVE, KVREG_REASON_DEVICE_REMOVED,
	KVREG_REASON_UNMAPPED_ADDRESS, KVREG_REASON_NO_KERNEL_MEMORY,
	KVREG_REASON_DEVICE_REFUSED, KVREG_REASON_UNKNOWN_HANDLE,
	KVREG_REASON_OUT_OF_RANGE, KVREG_REASON_ACCESS_DENIED,
	KVREG_REASON_TRANSFER_FAILED, KVREG_REASON_FAULT_INJECTED,
	KVREG_REASON_NOT_PERMITTED, KVREG_REASON_TOO_LARGE,
	KVREG_REASON_MODULE_NOT_LOADED, KVREG_REASON_ABI_MISMATCH,
	KVREG_REASON_NOT_OPEN, KVREG_REASON_DEVICE_ACCESS,
	KVREG_REASON_NO_MEMORY,
};

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
	expect(&e, -EPROTO, "module speaks ABI 7, library speaks ABI 1");

	e = rec(KVREG_REASON_OUT_OF_RANGE);
	e.limit = 4096;
	e.request = 5000;
	expect(&e, -ERANGE, "ends at byte 5000 of 4096");

	e = rec(KVREG_REASON_UNMAPPED_ADDRESS);
	e.address = 0x7f0012345000ULL;
	expect(&e, -EFAULT, "0x7f0012345000");

	e = rec(KVREG_REASON_BAD_ARGUMENT);
	e.argument = KVREG_ARG_ACCESS;
	expect(&e, -EINVAL, "bad access flags");

	e = rec(KVREG_REASON_DEVICE_REMOVED);
	e.device_index = 3;
	expect(&e, -ENODEV, "on device 3");

	e = rec(KVREG_REASON_TRANSFER_FAILED);
	e.wc_status = 10;
	expect(&e, -EIO, "status 10");

	e = rec(KVREG_REASON_DEVICE_REFUSED);
	e.driver_errno = -524;
	expect(&e, -EIO, "driver error -524");

	e = rec(KVREG_REASON_MODULE_NOT_LOADED);
	expect(&e, -ENOENT, "modprobe kvreg");

	/* A reason this library does not know: by number, errno kept. */
	e = rec(9999);
	expect(&e, -EIO, "kvreg reason 9999 (Input/output error)");
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
