// SPDX-License-Identifier: MIT OR GPL-2.0-only
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
	[KVREG_ARG_OFFSET] = "offset",
	[KVREG_ARG_OPCODE] = "opcode",
	[KVREG_ARG_KEYS] = "key array",
};

struct kvreg_reason_text {
	uint32_t reason;
	const char *name;	/* kvreg_strerror() */
	const char *fix;	/* what to do about it */
};

static const struct kvreg_reason_text kvreg_reasons[] = {
	{ KVREG_REASON_NONE, "success", "" },
	{ KVREG_REASON_BAD_ARGUMENT, "invalid argument",
	  "fix the call" },
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
	{ KVREG_REASON_FAULT_INJECTED, "fault injected",
	  "clear /sys/kernel/debug/kvreg/inject_fail_mask" },
	{ KVREG_REASON_NOT_PERMITTED, "operation not permitted",
	  "raw remote keys need CAP_SYS_ADMIN" },
	{ KVREG_REASON_TOO_LARGE, "exceeds a device limit",
	  "register less, or on a device with a larger max_mr_size" },
	{ KVREG_REASON_MODULE_NOT_LOADED, "kvreg module not loaded",
	  "load it with 'modprobe kvreg' (install it with DKMS, see the "
	  "README)" },
	{ KVREG_REASON_ABI_MISMATCH, "kvreg ABI mismatch",
	  "install a kvreg module and libkvreg of the same release" },
	{ KVREG_REASON_NOT_OPEN, "kvreg not open",
	  "call kvreg_open() first and check its result" },
	{ KVREG_REASON_DEVICE_ACCESS, "cannot use /dev/kvreg",
	  "run as a user allowed to open /dev/kvreg (root by default)" },
	{ KVREG_REASON_NO_MEMORY, "out of memory in libkvreg",
	  "free memory in this process" },
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

/* The numbers that go with a reason, as one clause; "" when none. */
static void kvreg_format_detail(const struct kvreg_error *err, char *buf,
				size_t size)
{
	const char *arg;

	buf[0] = '\0';
	switch (err->reason) {
	case KVREG_REASON_BAD_ARGUMENT:
		arg = err->argument < sizeof(kvreg_argument_names) /
			sizeof(kvreg_argument_names[0]) ?
			kvreg_argument_names[err->argument] : "argument";
		snprintf(buf, size, ": bad %s", arg);
		break;
	case KVREG_REASON_UNMAPPED_ADDRESS:
		snprintf(buf, size, ": first bad page at 0x%llx",
			 (unsigned long long)err->address);
		break;
	case KVREG_REASON_OUT_OF_RANGE:
		snprintf(buf, size, ": the range ends at byte %llu of %llu",
			 (unsigned long long)err->request,
			 (unsigned long long)err->limit);
		break;
	case KVREG_REASON_TOO_LARGE:
		snprintf(buf, size, ": %llu bytes requested, device limit %llu",
			 (unsigned long long)err->request,
			 (unsigned long long)err->limit);
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
	case KVREG_REASON_DEVICE_REFUSED:
		snprintf(buf, size, ": driver error %d", err->driver_errno);
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
	char detail[160], device[48] = "";

	if (!err || err->reason == KVREG_REASON_NONE)
		return snprintf(buf, size, "%s", errnum ?
				strerror(errnum < 0 ? -errnum : errnum) :
				"success");
	t = kvreg_reason_lookup(err->reason);
	if (!t)
		return snprintf(buf, size, "kvreg reason %u (%s)", err->reason,
				strerror(errnum < 0 ? -errnum : errnum));
	kvreg_format_detail(err, detail, sizeof(detail));
	if (err->device_index != KVREG_NO_DEVICE_INDEX)
		snprintf(device, sizeof(device), " on device %u",
			 err->device_index);
	return snprintf(buf, size, "%s%s%s (%s); %s", t->name, device, detail,
			strerror(errnum < 0 ? -errnum : errnum), t->fix);
}
