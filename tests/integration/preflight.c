// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * kvreg_preflight() says no when the registration would be refused, with
 * the registration's own reason, errno and numbers; and yes for a buffer
 * that then registers and moves its bytes. MRs are counted for the worst
 * case (no two pages contiguous), so a pre-flight may ask for more MRs
 * than the registration turns out to need, never fewer.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include "kvtest.h"
#include "kvtransfer.h"

/* The pre-flight and the registration agree on errno, reason, numbers. */
static void kvt_same_refusal(struct kvreg *kv, void *p, uint64_t len,
			     uint64_t mask, int errnum, uint32_t reason)
{
	struct kvreg_error pre, reg;
	struct kvreg_mr *mr;
	char msg[512];
	int ret;

	ret = kvreg_preflight(kv, len, mask, 0, &pre);
	kvreg_format_error(&pre, ret, msg, sizeof(msg));
	printf("pre-flight of %llu bytes: %s\n", (unsigned long long)len, msg);
	CHECK(ret == -errnum && pre.reason == reason,
	      "pre-flight: %d reason %u, want %d reason %u", ret, pre.reason,
	      -errnum, reason);
	CHECK_FAILS(kvreg_register(kv, p, len, KVREG_ACCESS_ALL, mask, &mr,
				   &reg), &reg, errnum, reason);
	CHECK(pre.limit == reg.limit && pre.usage == reg.usage &&
	      (reason == KVREG_REASON_PROC_MR_BUDGET ?
	       pre.request >= reg.request : pre.request == reg.request),
	      "numbers: pre-flight %llu/%llu/%llu, registration %llu/%llu/%llu",
	      (unsigned long long)pre.limit, (unsigned long long)pre.usage,
	      (unsigned long long)pre.request, (unsigned long long)reg.limit,
	      (unsigned long long)reg.usage, (unsigned long long)reg.request);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	const uint64_t len = 4 * SZ_2M;
	struct kvreg_error err;
	struct rlimit rl;
	uint64_t mask;
	uint8_t *a, *b;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	mask = 1ULL << devs[0].index;
	/*
	 * Scattered: the registration needs the MRs the pre-flight counts.
	 * Contiguous pages would get larger MR pages and fewer MRs, and the
	 * registration would fit where the worst case does not.
	 */
	a = kvt_map_anon_scattered(len);
	b = kvt_map_anon(len);

	/* Room everywhere: yes, and the registration works. */
	CHECK_OK(kvreg_preflight(kv, len, mask, 0, &err), &err);
	kvt_roundtrip(kv, a, b, len, devs[0].index, KVT_BASE_PAGES);

	/* A process budget of 1 MR: 8 MiB of 4 KiB pages needs more. */
	CHECK_OK(kvreg_set_budget(kv, KVREG_BUDGET_F_MRS, 1, 0, NULL, &err),
		 &err);
	kvt_same_refusal(kv, a, len, mask, EDQUOT,
			 KVREG_REASON_PROC_MR_BUDGET);
	CHECK_OK(kvreg_set_budget(kv, KVREG_BUDGET_F_DEFAULTS, 0, 0, NULL,
				  &err), &err);

	/* A byte budget of 2 MiB. */
	CHECK_OK(kvreg_set_budget(kv, KVREG_BUDGET_F_BYTES, 0, SZ_2M, NULL,
				  &err), &err);
	kvt_same_refusal(kv, a, len, mask, EDQUOT,
			 KVREG_REASON_PROC_BYTES_BUDGET);
	CHECK_OK(kvreg_set_budget(kv, KVREG_BUDGET_F_DEFAULTS, 0, 0, NULL,
				  &err), &err);

	/* RLIMIT_MEMLOCK of 2 MiB, without CAP_IPC_LOCK. */
	if (kvt_stats(kv).memlock_limit == KVREG_UNLIMITED &&
	    geteuid() == 0) {
		pid_t pid = fork();
		int status;

		CHECK(pid >= 0, "fork");
		if (!pid) {
			struct kvreg *mine;

			rl.rlim_cur = rl.rlim_max = SZ_2M;
			CHECK(!setrlimit(RLIMIT_MEMLOCK, &rl), "setrlimit");
			CHECK(!setgid(65534) && !setuid(65534),
			      "drop privileges");
			mine = kvt_open();
			kvt_same_refusal(mine, a, len, mask, ENOMEM,
					 KVREG_REASON_MEMLOCK_EXCEEDED);
			kvreg_close(mine);
			fflush(stdout);
			_exit(0);
		}
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      !WEXITSTATUS(status), "memlock child failed");
	}

	/* No such device. */
	CHECK(kvreg_preflight(kv, len, 1ULL << 63, 0, &err) == -ENODEV &&
	      err.reason == KVREG_REASON_NO_DEVICE, "device 63: reason %u",
	      err.reason);
	CHECK(kvreg_preflight(kv, len, mask, 0x80, &err) == -EINVAL &&
	      err.reason == KVREG_REASON_BAD_ARGUMENT, "unknown flag");
	kvreg_close(kv);
	return T_PASS;
}
