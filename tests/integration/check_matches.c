// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * kvregctl check SIZE exits 0 exactly when registering SIZE bytes on every
 * device would succeed: for root, for an unprivileged user whose memlock
 * limit is too small, and against a per-process default lowered by the
 * admin.
 *   check_matches KVREGCTL
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include "kvtest.h"

#define PARAM "/sys/module/kvreg/parameters/max_bytes_per_process"

static int check_says(const char *kvregctl, uint64_t size)
{
	char cmd[512];
	int status;

	snprintf(cmd, sizeof(cmd), "%s check %llu", kvregctl,
		 (unsigned long long)size);
	status = system(cmd);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) <= 1,
	      "kvregctl check: status %d", status);
	return WEXITSTATUS(status);
}

static int register_says(uint64_t size)
{
	struct kvreg *kv = kvt_open();
	struct kvreg_error err;
	struct kvreg_mr *mr;
	char msg[512];
	uint8_t *p = kvt_map_anon(size);
	int ret = kvreg_register(kv, p, size, KVREG_ACCESS_ALL, 0, &mr, &err);

	kvreg_format_error(&err, ret, msg, sizeof(msg));
	printf("register %llu bytes: %s\n", (unsigned long long)size,
	       ret ? msg : "ok");
	if (!ret)
		kvreg_deregister(kv, mr, &err);
	kvreg_close(kv);
	munmap(p, size);
	return ret ? 1 : 0;
}

/* Both verdicts, in a process of its own (the check is one too). */
static void agree(struct kvreg *parent, const char *kvregctl, uint64_t size,
		  int want, rlim_t memlock, bool drop)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	if (!pid) {
		kvreg_close(parent);
		if (drop) {
			struct rlimit rl = { memlock, memlock };

			CHECK(!setrlimit(RLIMIT_MEMLOCK, &rl), "setrlimit");
			CHECK(!setgid(65534) && !setuid(65534), "setuid");
		}
		CHECK(check_says(kvregctl, size) == want,
		      "check of %llu bytes: want %d",
		      (unsigned long long)size, want);
		CHECK(register_says(size) == want,
		      "register of %llu bytes: want %d",
		      (unsigned long long)size, want);
		exit(T_PASS);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "verdicts differ");
}

int main(int argc, char **argv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	unsigned long long saved;

	if (argc != 2)
		kvt_skip("usage: check_matches KVREGCTL");
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	agree(kv, argv[1], 8 << 20, 0, 0, false);
	agree(kv, argv[1], 8 << 20, 1, 1 << 20, true);
	agree(kv, argv[1], 512 << 10, 0, 1 << 20, true);

	saved = kvt_read_param(PARAM);
	kvt_write_param(PARAM, 4 << 20);
	agree(kv, argv[1], 8 << 20, 1, 0, false);
	agree(kv, argv[1], 2 << 20, 0, 0, false);
	kvt_write_param(PARAM, saved);
	kvreg_close(kv);
	return T_PASS;
}
