// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* The library used before the device is opened: -EBADF, "not open". */
#include "kvtest.h"

static struct kvreg_error err;

#define EXPECT_NOT_OPEN(call)						\
	do {								\
		int r_;							\
		memset(&err, 0, sizeof(err));				\
		r_ = (call);						\
		CHECK(r_ == -EBADF && err.reason == KVREG_REASON_NOT_OPEN, \
		      #call ": %d %u", r_, err.reason);			\
	} while (0)

int main(void)
{
	struct kvreg_device_info devs[1];
	struct kvreg_stats st;
	struct kvreg_mr *mr;
	char buf[64] = { 0 }, msg[256];

	EXPECT_NOT_OPEN(kvreg_register(NULL, buf, sizeof(buf), 0, 0, &mr, &err));
	EXPECT_NOT_OPEN(kvreg_deregister(NULL, NULL, &err));
	EXPECT_NOT_OPEN(kvreg_query(NULL, 1, NULL, NULL, 0, &err));
	EXPECT_NOT_OPEN(kvreg_devices(NULL, devs, 1, NULL, &err));
	EXPECT_NOT_OPEN(kvreg_stats(NULL, &st, &err));
	EXPECT_NOT_OPEN(kvreg_transfer(NULL, KVREG_OP_WRITE, 0, NULL, 0, NULL,
				       0, 1, &err));
	EXPECT_NOT_OPEN(kvreg_listen(NULL, "192.0.2.1", 0, NULL, NULL, &err));
	EXPECT_NOT_OPEN(kvreg_import(NULL, buf, sizeof(buf), 0, NULL, &err));
	EXPECT_NOT_OPEN(kvreg_unimport(NULL, NULL, &err));
	EXPECT_NOT_OPEN(kvreg_reap(NULL, NULL, 0, 0, 0, NULL, &err));
	CHECK(kvreg_fd(NULL) == -1, "fd of NULL");
	kvreg_close(NULL);
	kvreg_format_error(&err, -EBADF, msg, sizeof(msg));
	CHECK(strstr(msg, "kvreg not open") && strstr(msg, "kvreg_open()"),
	      "message: %s", msg);
	printf("%s\n", msg);
	return T_PASS;
}
