// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* A zero-length buffer registers as a no-op: success, nothing created. */
#include "kvtest.h"

int main(void)
{
	struct kvreg *kv = kvt_open();
	struct kvt_snap before = kvt_snap(kv);
	struct kvreg_error err;
	struct kvreg_mr *mr;
	unsigned int nkeys;
	char stack_byte;

	CHECK_OK(kvreg_register(kv, &stack_byte, 0, KVREG_ACCESS_ALL, 0, &mr,
				&err), &err);
	CHECK(kvreg_mr_handle(mr) == KVREG_HANDLE_NONE, "handle %llu",
	      (unsigned long long)kvreg_mr_handle(mr));
	kvreg_mr_keys(mr, &nkeys);
	CHECK(nkeys == 0, "%u keys for zero bytes", nkeys);
	/* Even a NULL address: nothing is touched. */
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	CHECK_OK(kvreg_register(kv, NULL, 0, 0, 0, &mr, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvt_check_unchanged(kv, &before, "after zero-length REGISTER");
	kvreg_close(kv);
	return T_PASS;
}
