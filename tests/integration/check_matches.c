// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * kvregctl check SIZE (which asks kvreg_preflight()) exits 0 exactly when
 * registering SIZE bytes on every device would succeed: for root, for an
 * unprivileged user whose memlock limit is too small, and on both sides of
 * the boundary of every limit the module enforces: RLIMIT_MEMLOCK, the
 * process's bytes and MRs, the host ceiling and a device's MRs, with
 * another registration already holding some of them. A user the node's
 * mode keeps out of /dev/kvreg is told so by both (DEVICE_ACCESS). And
 * kvregctl --version reports the module's ABI and features as the library
 * reads them.
 *   check_matches KVREGCTL
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kvtest.h"

#define PARAMS	"/sys/module/kvreg/parameters/"
#define PARAM	PARAMS "max_bytes_per_process"

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
	pid_t pid;

	fflush(stdout);		/* or the child prints it again */
	pid = fork();
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

/*
 * With module parameter @name at @value, a registration of @fits bytes
 * (if not 0) succeeds and one of @fails bytes (if not 0) fails, by both.
 */
static void boundary(struct kvreg *kv, const char *kvregctl, const char *name,
		     unsigned long long value, uint64_t fits, uint64_t fails)
{
	char path[256];
	unsigned long long saved;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	saved = kvt_read_param(path);
	kvt_write_param(path, value);
	if (fits)
		agree(kv, kvregctl, fits, 0, 0, false);
	if (fails)
		agree(kv, kvregctl, fails, 1, 0, false);
	kvt_write_param(path, saved);
	printf("%s = %llu: %llu bytes fit, %llu do not\n", name, value,
	       (unsigned long long)fits, (unsigned long long)fails);
}

/*
 * A device's MRs, with a registration of this process already holding one
 * on each: a cap of two leaves room for one more, a cap of one none.
 */
static void device_boundary(struct kvreg *kv, const char *kvregctl)
{
	struct kvreg_error err;
	struct kvreg_mr *mr;
	uint8_t *p = kvt_map_anon(64 << 10);

	CHECK_OK(kvreg_register(kv, p, 64 << 10, KVREG_ACCESS_ALL, 0, &mr,
				&err), &err);
	boundary(kv, kvregctl, "max_mrs_per_device", 2, 64 << 10, 0);
	boundary(kv, kvregctl, "max_mrs_per_device", 1, 0, 64 << 10);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
}

/*
 * /dev/kvreg as udev leaves it (0660, root's group here): a user outside
 * the group is refused at open, with the mode and the group named, and
 * kvregctl check says no too.
 */
static void device_access(struct kvreg *parent, const char *kvregctl)
{
	struct stat st;
	int status;
	pid_t pid;

	CHECK(!stat("/dev/kvreg", &st), "stat /dev/kvreg");
	CHECK(!chmod("/dev/kvreg", 0660), "chmod /dev/kvreg");
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct kvreg_error err;
		struct kvreg *kv;
		char msg[512];
		int ret;

		kvreg_close(parent);
		CHECK(!setgid(65534) && !setuid(65534), "setuid");
		ret = kvreg_open(&kv, &err);
		kvreg_format_error(&err, ret, msg, sizeof(msg));
		CHECK(ret == -EACCES &&
		      err.reason == KVREG_REASON_DEVICE_ACCESS &&
		      strstr(msg, "0660") && strstr(msg, "group"),
		      "an outsider opening /dev/kvreg: %d: %s", ret, msg);
		printf("refused as expected: %s\n", msg);
		CHECK(check_says(kvregctl, 1 << 20) == 1,
		      "kvregctl check said yes to an outsider");
		exit(T_PASS);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == T_PASS, "the outsider's check failed");
	CHECK(!chmod("/dev/kvreg", st.st_mode & 07777), "chmod back");
}

/*
 * kvregctl --version reports the module as the library sees it: its
 * ioctl ABI and feature bits.
 */
static void version_says(struct kvreg *kv, const char *kvregctl)
{
	char cmd[512], first[256], second[256], want[256];
	struct kvreg_error err;
	uint64_t features;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s --version", kvregctl);
	f = popen(cmd, "r");
	CHECK(f, "popen %s", cmd);
	CHECK(fgets(first, sizeof(first), f) && fgets(second, sizeof(second), f),
	      "kvregctl --version printed less than two lines");
	CHECK(pclose(f) == 0, "kvregctl --version failed");
	CHECK_OK(kvreg_features(kv, &features, &err), &err);
	snprintf(want, sizeof(want), "module: ioctl ABI %u, features %#llx\n",
		 kvreg_module_abi_version(kv), (unsigned long long)features);
	CHECK(!strncmp(first, "kvregctl ", 9), "kvregctl --version: %s", first);
	CHECK(!strcmp(second, want), "kvregctl --version says \"%.*s\", the "
	      "library \"%.*s\"", (int)strcspn(second, "\n"), second,
	      (int)strcspn(want, "\n"), want);
	printf("kvregctl --version: %s", second);
}

int main(int argc, char **argv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	unsigned long long saved;
	unsigned int ndev;

	if (argc != 2)
		kvt_skip("usage: check_matches KVREGCTL");
	ndev = kvt_devices(kv, devs);
	if (!ndev)
		kvt_skip("no RDMA device");
	version_says(kv, argv[1]);
	agree(kv, argv[1], 8 << 20, 0, 0, false);
	agree(kv, argv[1], 8 << 20, 1, 1 << 20, true);
	agree(kv, argv[1], 512 << 10, 0, 1 << 20, true);

	saved = kvt_read_param(PARAM);
	kvt_write_param(PARAM, 4 << 20);
	agree(kv, argv[1], 8 << 20, 1, 0, false);
	agree(kv, argv[1], 2 << 20, 0, 0, false);
	/* Each limit's boundary: exactly at it fits, a page more does not. */
	agree(kv, argv[1], 4 << 20, 0, 0, false);
	agree(kv, argv[1], (4 << 20) + SZ_4K, 1, 0, false);
	kvt_write_param(PARAM, saved);

	agree(kv, argv[1], 1 << 20, 0, 1 << 20, true);
	agree(kv, argv[1], (1 << 20) + SZ_4K, 1, 1 << 20, true);

	boundary(kv, argv[1], "host_max_bytes", 4 << 20, 4 << 20,
		 (4 << 20) + SZ_4K);
	/* 64 KiB is one MR a device: ndev MRs in all. */
	boundary(kv, argv[1], "max_mrs_per_process", ndev, 64 << 10, 0);
	boundary(kv, argv[1], "max_mrs_per_process", ndev - 1, 0, 64 << 10);
	device_boundary(kv, argv[1]);
	device_access(kv, argv[1]);
	kvreg_close(kv);
	return T_PASS;
}
