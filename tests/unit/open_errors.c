// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Opening without the module says so, with the modprobe hint; a device
 * node that does not speak kvreg's ABI is named an ABI mismatch at open.
 */
#include "kvtest.h"

int main(void)
{
	struct kvreg_error err;
	struct kvreg *kv = (struct kvreg *)1;
	char msg[512];
	int ret;

	ret = kvreg_open_path(&kv, "/nonexistent/kvreg", &err);
	kvreg_format_error(&err, ret, msg, sizeof(msg));
	printf("%s\n", msg);
	CHECK(ret == -ENOENT && err.reason == KVREG_REASON_MODULE_NOT_LOADED,
	      "missing node: %d %u", ret, err.reason);
	CHECK(!kv, "context left set on failure");
	CHECK(strstr(msg, "kvreg module not loaded") &&
	      strstr(msg, "modprobe kvreg"), "message: %s", msg);

	/* $KVREG_DEVICE points kvreg_open elsewhere. */
	setenv("KVREG_DEVICE", "/nonexistent/elsewhere", 1);
	ret = kvreg_open(&kv, &err);
	CHECK(ret == -ENOENT && err.reason == KVREG_REASON_MODULE_NOT_LOADED,
	      "KVREG_DEVICE: %d %u", ret, err.reason);

	/* /dev/null answers no kvreg ioctl: ABI 0 against ours. */
	ret = kvreg_open_path(&kv, "/dev/null", &err);
	kvreg_format_error(&err, ret, msg, sizeof(msg));
	printf("%s\n", msg);
	CHECK(ret == -EPROTO && err.reason == KVREG_REASON_ABI_MISMATCH &&
	      err.usage == 0 && err.request == KVREG_ABI_VERSION,
	      "ABI mismatch: %d %u", ret, err.reason);
	CHECK(strstr(msg, "ABI mismatch"), "message: %s", msg);

	/* No record asked for: still the errno. */
	CHECK(kvreg_open_path(&kv, "/nonexistent/kvreg", NULL) == -ENOENT,
	      "NULL error record");
	CHECK(kvreg_open_path(NULL, "/dev/null", &err) == -EINVAL &&
	      err.reason == KVREG_REASON_BAD_ARGUMENT, "NULL out pointer");
	return T_PASS;
}
