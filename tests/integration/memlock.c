// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * RLIMIT_MEMLOCK, as an unprivileged user sees it: exceeded and zero are
 * two different refusals with their numbers; the charge is once per
 * registration however many devices (VmPin), and CAP_IPC_LOCK bypasses it.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include "kvtest.h"

static long long vm_pin_kib(void)
{
	char line[256];
	long long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	CHECK(f, "/proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void set_memlock(rlim_t bytes)
{
	struct rlimit rl = { bytes, bytes };

	CHECK(!setrlimit(RLIMIT_MEMLOCK, &rl), "setrlimit: %s", strerror(errno));
}

/* As nobody: the limit applies. */
static void unprivileged(struct kvreg *parent)
{
	struct kvreg_mr *mr, *small;
	struct kvreg_error err;
	struct kvreg_stats st;
	struct kvreg *kv;
	uint8_t *p;

	kvreg_close(parent);
	set_memlock(64 << 10);
	CHECK(!setgid(65534) && !setuid(65534), "drop privileges");
	kv = kvt_open();
	p = kvt_map_anon(1 << 20);
	CHECK_OK(kvreg_register(kv, p, 16 << 10, KVREG_ACCESS_ALL, 0, &small,
				&err), &err);
	CHECK_FAILS(kvreg_register(kv, p + (64 << 10), 1 << 20 >> 1,
				   KVREG_ACCESS_ALL, 0, &mr, &err),
		    &err, ENOMEM, KVREG_REASON_MEMLOCK_EXCEEDED);
	CHECK(err.limit == 64 << 10 && err.usage == 16 << 10 &&
	      err.request == 512 << 10, "limit %llu usage %llu request %llu",
	      (unsigned long long)err.limit, (unsigned long long)err.usage,
	      (unsigned long long)err.request);
	st = kvt_stats(kv);
	CHECK(st.memlock_limit == 64 << 10 && st.memlock_used == 16 << 10,
	      "stats memlock %llu of %llu",
	      (unsigned long long)st.memlock_used,
	      (unsigned long long)st.memlock_limit);

	set_memlock(0);
	CHECK_FAILS(kvreg_register(kv, p + (128 << 10), 4 << 10,
				   KVREG_ACCESS_ALL, 0, &mr, &err),
		    &err, EPERM, KVREG_REASON_MEMLOCK_ZERO);
	CHECK_OK(kvreg_deregister(kv, small, &err), &err);
	kvreg_close(kv);
	exit(T_PASS);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	long long pin_before;
	struct kvt_snap before;
	struct kvreg_error err;
	struct kvreg_mr *mr;
	unsigned int ndev;
	int status;
	pid_t pid;
	uint8_t *p;

	ndev = kvt_devices(kv, devs);
	if (!ndev)
		kvt_skip("no RDMA device");
	before = kvt_snap(kv);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid)
		unprivileged(kv);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "unprivileged part failed");
	kvt_check_unchanged(kv, &before, "after the unprivileged child");

	/* Root: charged once for every device, and CAP_IPC_LOCK bypasses 0. */
	set_memlock(0);
	p = kvt_map_anon(1 << 20);
	pin_before = vm_pin_kib();
	CHECK_OK(kvreg_register(kv, p, 1 << 20, KVREG_ACCESS_ALL, 0, &mr, &err),
		 &err);
	CHECK(vm_pin_kib() - pin_before == 1024,
	      "VmPin grew by %lld KiB on %u devices, want 1024",
	      vm_pin_kib() - pin_before, ndev);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	CHECK(vm_pin_kib() == pin_before, "VmPin not given back");
	kvt_check_unchanged(kv, &before, "after the memlock test");
	kvreg_close(kv);
	return T_PASS;
}
