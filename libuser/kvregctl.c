// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* kvregctl: look at kvreg from the shell. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvreg.h"

static const char *const kvreg_port_states[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};

static int kvregctl_fail(const char *what, const struct kvreg_error *err,
			 int ret)
{
	char msg[512];

	kvreg_format_error(err, ret, msg, sizeof(msg));
	fprintf(stderr, "kvregctl: %s: %s\n", what, msg);
	return 1;
}

static int kvregctl_devices(struct kvreg *kv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_error err;
	unsigned int n, i;
	int ret;

	ret = kvreg_devices(kv, devs, KVREG_MAX_DEVICES, &n, &err);
	if (ret)
		return kvregctl_fail("devices", &err, ret);
	printf("%-5s %-16s %-7s %-5s %10s %12s %14s %8s\n", "INDEX", "NAME",
	       "PORT", "QP", "MAX_MR", "MAX_MR_SIZE", "FASTREG_PAGES",
	       "KVREG_MR");
	for (i = 0; i < n && i < KVREG_MAX_DEVICES; i++) {
		const struct kvreg_device_info *d = &devs[i];

		printf("%-5u %-16s %-7s %-5s %10u %#12llx %14u %8llu\n",
		       d->index, d->name,
		       d->port_state < 6 ? kvreg_port_states[d->port_state] :
		       "?", d->flags & KVREG_DEVICE_F_READY ? "ready" : "down",
		       d->max_mr, (unsigned long long)d->max_mr_size,
		       d->max_fast_reg_page_list_len,
		       (unsigned long long)d->mrs_in_use);
	}
	if (!n)
		printf("(no RDMA device: add one, e.g. 'rdma link add rxe0 "
		       "type rxe netdev eth0')\n");
	return 0;
}

static int kvregctl_stats(struct kvreg *kv)
{
	struct kvreg_error err;
	struct kvreg_stats st;
	int ret;

	ret = kvreg_stats(kv, &st, &err);
	if (ret)
		return kvregctl_fail("stats", &err, ret);
	printf("devices         %u\n", st.devices);
	printf("registrations   %llu\n", (unsigned long long)st.registrations);
	printf("pinned_pages    %llu\n", (unsigned long long)st.pinned_pages);
	printf("mrs             %llu\n", (unsigned long long)st.mrs);
	return 0;
}

static void kvregctl_usage(FILE *out)
{
	fprintf(out, "usage: kvregctl devices|stats\n"
		"  devices  RDMA devices kvreg uses, with their limits\n"
		"  stats    host-wide registrations, pinned pages and MRs\n");
}

int main(int argc, char **argv)
{
	struct kvreg_error err;
	struct kvreg *kv;
	int ret;

	if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		kvregctl_usage(argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : 2;
	}
	if (strcmp(argv[1], "devices") && strcmp(argv[1], "stats")) {
		kvregctl_usage(stderr);
		return 2;
	}
	ret = kvreg_open(&kv, &err);
	if (ret)
		return kvregctl_fail("open", &err, ret);
	ret = !strcmp(argv[1], "devices") ? kvregctl_devices(kv) :
					     kvregctl_stats(kv);
	kvreg_close(kv);
	return ret;
}
