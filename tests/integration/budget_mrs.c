// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The per-process MR budget: shared by every file the process opens,
 * refused with the numbers, lowered freely, raised above the module
 * default only with CAP_SYS_RESOURCE, and following a default an admin
 * changes at run time.
 */
#include <sys/wait.h>

#include "kvtest.h"

#define PARAM "/sys/module/kvreg/parameters/max_mrs_per_process"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open(), *kv2 = kvt_open();
	struct kvreg_mr *mrs[3], *extra;
	struct kvt_snap before;
	struct kvreg_stats st;
	struct kvreg_budget now;
	struct kvreg_error err;
	uint64_t dflt, dev_mask;
	char msg[512];
	int i, status;
	pid_t pid;
	uint8_t *p;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev_mask = 1ULL << devs[0].index;
	before = kvt_snap(kv);
	st = kvt_stats(kv);
	dflt = st.proc_max_mrs;
	CHECK(st.proc_mrs == 0, "fresh process holds %llu MRs",
	      (unsigned long long)st.proc_mrs);

	/* Lower it to 3: any process may. */
	CHECK_OK(kvreg_set_budget(kv, KVREG_BUDGET_F_MRS, 3, 0, &now, &err),
		 &err);
	CHECK(now.max_mrs == 3, "budget now %llu", (unsigned long long)now.max_mrs);
	p = kvt_map_anon(4 * SZ_4K);
	for (i = 0; i < 3; i++)
		CHECK_OK(kvreg_register(kv, p + i * SZ_4K, SZ_4K,
					KVREG_ACCESS_ALL, dev_mask, &mrs[i],
					&err), &err);
	/* A second file of the same process draws on the same budget. */
	CHECK_FAILS(kvreg_register(kv2, p + 3 * SZ_4K, SZ_4K, KVREG_ACCESS_ALL,
				   dev_mask, &extra, &err),
		    &err, EDQUOT, KVREG_REASON_PROC_MR_BUDGET);
	CHECK(err.limit == 3 && err.usage == 3 && err.request == 1,
	      "limit %llu usage %llu request %llu",
	      (unsigned long long)err.limit, (unsigned long long)err.usage,
	      (unsigned long long)err.request);
	kvreg_format_error(&err, -EDQUOT, msg, sizeof(msg));
	CHECK(strstr(msg, "3 of 3 MRs in use, this registration needs 1 more"),
	      "%s", msg);
	st = kvt_stats(kv2);
	CHECK(st.proc_mrs == 3 && st.proc_max_mrs == 3 && st.file_mrs == 0,
	      "stats of the second file: proc %llu/%llu file %llu",
	      (unsigned long long)st.proc_mrs,
	      (unsigned long long)st.proc_max_mrs,
	      (unsigned long long)st.file_mrs);

	/* Raising above the default needs CAP_SYS_RESOURCE. */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct kvreg *mine;

		CHECK(!setgid(65534) && !setuid(65534), "drop privileges");
		mine = kvt_open();
		CHECK_FAILS(kvreg_set_budget(mine, KVREG_BUDGET_F_MRS, dflt + 1,
					     0, NULL, &err),
			    &err, EPERM, KVREG_REASON_NOT_PERMITTED);
		CHECK(err.limit == dflt && err.request == dflt + 1, "numbers");
		/* Up to the default is fine, even unprivileged. */
		CHECK_OK(kvreg_set_budget(mine, KVREG_BUDGET_F_MRS, dflt, 0,
					  NULL, &err), &err);
		kvreg_close(mine);
		/* Their contexts, copied by fork, free the copied handles. */
		kvreg_close(kv2);
		kvreg_close(kv);
		exit(T_PASS);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "unprivileged child failed");
	CHECK_OK(kvreg_set_budget(kv, KVREG_BUDGET_F_MRS, dflt + 10, 0, &now,
				  &err), &err);
	CHECK(now.max_mrs == dflt + 10, "root raise");

	/* Back to the module default, which the admin changes at run time. */
	CHECK_OK(kvreg_set_budget(kv, KVREG_BUDGET_F_DEFAULTS, 0, 0, &now,
				  &err), &err);
	kvt_write_param(PARAM, 4);
	st = kvt_stats(kv);
	CHECK(st.proc_max_mrs == 4, "default followed: %llu",
	      (unsigned long long)st.proc_max_mrs);
	CHECK_OK(kvreg_register(kv2, p + 3 * SZ_4K, SZ_4K, KVREG_ACCESS_ALL,
				dev_mask, &extra, &err), &err);
	kvt_write_param(PARAM, dflt);

	CHECK_OK(kvreg_deregister(kv2, extra, &err), &err);
	for (i = 0; i < 3; i++)
		CHECK_OK(kvreg_deregister(kv, mrs[i], &err), &err);
	kvt_check_unchanged(kv, &before, "after the budget test");
	kvreg_close(kv2);
	kvreg_close(kv);
	return T_PASS;
}
