// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Run before the module is loaded: opening says "kvreg module not loaded"
 * with the modprobe hint, and kvregctl check fails saying the same.
 *   module_not_loaded KVREGCTL
 */
#include <sys/wait.h>

#include "kvtest.h"

int main(int argc, char **argv)
{
	struct kvreg_error err;
	struct kvreg *kv;
	char msg[512], cmd[512];
	FILE *out;
	int ret, status, found;

	if (argc != 2)
		kvt_skip("usage: module_not_loaded KVREGCTL");
	if (!access(KVREG_DEVICE_PATH, F_OK))
		kvt_skip("the module is loaded");
	ret = kvreg_open(&kv, &err);
	kvreg_format_error(&err, ret, msg, sizeof(msg));
	printf("%s\n", msg);
	CHECK(ret == -ENOENT && err.reason == KVREG_REASON_MODULE_NOT_LOADED,
	      "%d %u", ret, err.reason);
	CHECK(strstr(msg, "modprobe kvreg"), "hint missing");

	snprintf(cmd, sizeof(cmd), "%s check 1M 2>&1", argv[1]);
	out = popen(cmd, "r");
	CHECK(out, "popen");
	found = 0;
	/* Read to the end: the tool must not die writing to a closed pipe. */
	while (fgets(msg, sizeof(msg), out)) {
		printf("kvregctl: %s", msg);
		found |= !!strstr(msg, "FAIL kvreg module not loaded");
	}
	status = pclose(out);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1 && found,
	      "kvregctl check: status %d, found %d", status, found);
	return T_PASS;
}
