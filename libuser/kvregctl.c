// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* kvregctl: look at kvreg from the shell. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvreg.h"

/* The one version number is dkms.conf's; the Makefile passes it. */
#ifndef KVREG_VERSION
#error "KVREG_VERSION is not set: build kvregctl with the Makefile"
#endif

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

static const char *kvregctl_bytes(uint64_t v, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = 0;

	if (v == KVREG_UNLIMITED)
		return "unlimited";
	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", d, units[u]);
	return buf;
}

static void kvregctl_row(const char *what, uint64_t used, uint64_t limit,
			 bool bytes)
{
	char u[32], l[32];

	if (bytes)
		printf("%-26s %12s of %s\n", what,
		       kvregctl_bytes(used, u, sizeof(u)),
		       kvregctl_bytes(limit, l, sizeof(l)));
	else if (limit == KVREG_UNLIMITED)
		printf("%-26s %12llu of unlimited\n", what,
		       (unsigned long long)used);
	else
		printf("%-26s %12llu of %llu\n", what,
		       (unsigned long long)used, (unsigned long long)limit);
}

static int kvregctl_stats(struct kvreg *kv)
{
	struct kvreg_error err;
	struct kvreg_stats st;
	int ret;

	ret = kvreg_stats(kv, &st, &err);
	if (ret)
		return kvregctl_fail("stats", &err, ret);
	printf("this process\n");
	kvregctl_row("  MRs", st.proc_mrs, st.proc_max_mrs, false);
	kvregctl_row("  pinned", st.proc_pinned_bytes,
		     st.proc_max_pinned_bytes, true);
	kvregctl_row("  RLIMIT_MEMLOCK", st.memlock_used, st.memlock_limit,
		     true);
	kvregctl_row("  endpoints", st.proc_endpoints, st.proc_max_endpoints,
		     false);
	kvregctl_row("  imported regions", st.proc_imports,
		     st.proc_max_imports, false);
	kvregctl_row("  imported chunks", st.proc_import_chunks,
		     st.proc_max_import_chunks, false);
	printf("this open file\n");
	kvregctl_row("  unreaped operations", st.file_unreaped,
		     st.max_unreaped, false);
	printf("  %-24s %12llu\n", "accepted connections",
	       (unsigned long long)st.file_conns);
	printf("caps\n");
	printf("  %-24s %12u\n", "connections per endpoint",
	       st.max_conns_per_endpoint);
	printf("  %-24s %12u\n", "  from one peer address",
	       st.max_conns_per_peer);
	printf("  %-24s %12llu\n", "chunks per descriptor",
	       (unsigned long long)st.max_desc_chunks);
	printf("  %-24s %9u ms\n", "operation deadline", st.op_timeout_ms);
	printf("host (all processes)\n");
	kvregctl_row("  pinned", st.host_pinned_bytes,
		     st.host_max_pinned_bytes, true);
	printf("  %-24s %12llu\n", "registrations",
	       (unsigned long long)st.registrations);
	printf("  %-24s %12llu\n", "MRs", (unsigned long long)st.mrs);
	printf("  %-24s %12u\n", "devices", st.devices);
	printf("  %-24s %11u%%\n", "device MRs kept for others",
	       st.device_mr_reserve_percent);
	return 0;
}

static int kvregctl_ps(struct kvreg *kv)
{
	struct kvreg_proc_info procs[256];
	struct kvreg_error err;
	unsigned int n, i;
	char p[32], m[32];
	int ret;

	ret = kvreg_procs(kv, procs, 256, &n, &err);
	if (ret)
		return kvregctl_fail("ps", &err, ret);
	printf("%-8s %-16s %5s %6s %14s %14s\n", "PID", "COMMAND", "FILES",
	       "REGS", "MRS", "PINNED");
	for (i = 0; i < n && i < 256; i++) {
		char mrs[32];

		snprintf(mrs, sizeof(mrs), "%llu/%llu",
			 (unsigned long long)procs[i].mrs,
			 (unsigned long long)procs[i].max_mrs);
		printf("%-8u %-16.16s %5u %6llu %14s %6s/%-7s\n", procs[i].pid,
		       procs[i].comm, procs[i].files,
		       (unsigned long long)procs[i].registrations, mrs,
		       kvregctl_bytes(procs[i].pinned_bytes, p, sizeof(p)),
		       kvregctl_bytes(procs[i].max_pinned_bytes, m, sizeof(m)));
	}
	return 0;
}

/* "192.0.2.1:4791", "[fe80::1]:4791". */
static const char *kvregctl_addr(const struct kvreg_net_addr *a, char *buf,
				 size_t size)
{
	char ip[INET6_ADDRSTRLEN];

	if (a->family != AF_INET && a->family != AF_INET6)
		return "-";
	if (!inet_ntop(a->family, a->addr, ip, sizeof(ip)))
		return "?";
	snprintf(buf, size, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip,
		 a->port);
	return buf;
}

static int kvregctl_conns(struct kvreg *kv)
{
	static const char *const kinds[] = { "?", "endpoint", "active",
					     "passive" };
	static const char *const states[] = { "?", "LISTENING", "CONNECTING",
					      "ESTABLISHED", "LOST" };
	struct kvreg_conn_info conns[256];
	char local[64], peer[64], b[32], rail[32];
	struct kvreg_error err;
	unsigned int n, i;
	int ret;

	ret = kvreg_conns(kv, conns, 256, &n, &err);
	if (ret)
		return kvregctl_fail("conns", &err, ret);
	printf("%-8s %-12s %-8s %-11s %-3s %-22s %-22s %-7s %8s %10s %8s "
	       "%10s %9s %s\n", "PID", "COMMAND", "KIND", "STATE", "DEV",
	       "LOCAL", "PEER", "RAIL", "INFLIGHT", "OPS", "FAILED", "BYTES",
	       "FAILOVERS", "RECONNECT");
	for (i = 0; i < n && i < 256; i++) {
		const struct kvreg_conn_info *c = &conns[i];

		/* Group:rail/rails, as one peer's rails share a group. */
		if (c->rail_group)
			snprintf(rail, sizeof(rail), "%llu:%u/%u",
				 (unsigned long long)c->rail_group, c->rail,
				 c->rails);
		else
			snprintf(rail, sizeof(rail), "-");
		/* A rail that is down: why the module's last try failed. */
		printf("%-8u %-12.12s %-8s %-11s %-3u %-22s %-22s %-7s %8u "
		       "%10llu %8llu %10s %9llu %s\n", c->pid, c->comm,
		       kinds[c->kind < 4 ? c->kind : 0],
		       states[c->state < 5 ? c->state : 0], c->device_index,
		       kvregctl_addr(&c->local, local, sizeof(local)),
		       kvregctl_addr(&c->peer, peer, sizeof(peer)), rail,
		       c->inflight, (unsigned long long)c->ops,
		       (unsigned long long)c->ops_failed,
		       kvregctl_bytes(c->bytes, b, sizeof(b)),
		       (unsigned long long)c->failovers,
		       c->state == KVREG_CONN_STATE_LOST && c->mend_reason ?
		       kvreg_strerror(c->mend_reason) : "-");
	}
	if (n > 256)
		printf("(%u more not shown)\n", n - 256);
	return 0;
}

/* "64M", "1G", "4096": bytes. */
static int kvregctl_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	int shift = 0;

	switch (*end) {
	case 'T': case 't': shift += 10; /* fall through */
	case 'G': case 'g': shift += 10; /* fall through */
	case 'M': case 'm': shift += 10; /* fall through */
	case 'K': case 'k': shift += 10; end++; break;
	default: break;
	}
	if (end == s || *end || !v)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static uint64_t kvregctl_read_u64(const char *path, uint64_t fallback)
{
	unsigned long long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return fallback;
	if (fscanf(f, "%llu", &v) != 1)
		v = fallback;
	fclose(f);
	return v;
}

static bool kvregctl_verdict(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return ok;
}

/*
 * The pre-flight of a registration of SIZE bytes on every device: each
 * limit the module reports it enforces, with its usage, then the verdict
 * of kvreg_preflight() itself, so that this tool and the library cannot
 * disagree. Free hugepages are the one thing checked here alone: they
 * decide whether the pool can be allocated, not registered.
 */
static int kvregctl_check(struct kvreg *kv, uint64_t size, bool hugetlb)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	uint64_t pages = (size + (2ULL << 20) - 1) / (2ULL << 20);
	struct kvreg_error err;
	struct kvreg_stats st;
	unsigned int n, i;
	char a[32], b[32], c[32], msg[512];
	bool ok = true;
	int ret;

	ret = kvreg_devices(kv, devs, KVREG_MAX_DEVICES, &n, &err);
	if (!ret)
		ret = kvreg_stats(kv, &st, &err);
	if (ret)
		return kvregctl_fail("check", &err, ret);
	kvregctl_verdict(true, "kvreg module loaded, ABI %u",
			 kvreg_module_abi_version(kv));

	ok &= kvregctl_verdict(n > 0, "RDMA devices: %u", n);
	for (i = 0; i < n && i < KVREG_MAX_DEVICES; i++) {
		ok &= kvregctl_verdict(devs[i].port_state == 4 &&
				       (devs[i].flags & KVREG_DEVICE_F_READY),
				       "device %u %s: port %s, kernel QP %s",
				       devs[i].index, devs[i].name,
				       devs[i].port_state == 4 ? "ACTIVE" :
				       "not active",
				       devs[i].flags & KVREG_DEVICE_F_READY ?
				       "ready" : "not ready");
		kvregctl_verdict(true, "device %u MRs: %llu in use of %llu "
				 "kvreg may use, %u pages an MR",
				 devs[i].index,
				 (unsigned long long)devs[i].mrs_in_use,
				 (unsigned long long)devs[i].mr_limit,
				 hugetlb ? devs[i].mr_pages_huge :
				 devs[i].mr_pages_base);
	}
	kvregctl_verdict(true, "RLIMIT_MEMLOCK: %s locked of %s",
			 kvregctl_bytes(st.memlock_used, a, 32),
			 kvregctl_bytes(st.memlock_limit, b, 32));
	kvregctl_verdict(true, "process pinned budget: %s of %s",
			 kvregctl_bytes(st.proc_pinned_bytes, a, 32),
			 kvregctl_bytes(st.proc_max_pinned_bytes, b, 32));
	kvregctl_verdict(true, "process MR budget: %llu of %llu",
			 (unsigned long long)st.proc_mrs,
			 (unsigned long long)st.proc_max_mrs);
	kvregctl_verdict(true, "host pinning ceiling: %s of %s",
			 kvregctl_bytes(st.host_pinned_bytes, a, 32),
			 kvregctl_bytes(st.host_max_pinned_bytes, b, 32));
	ret = kvreg_preflight(kv, size, 0,
			      hugetlb ? KVREG_PREFLIGHT_F_HUGETLB : 0, &err);
	if (ret)
		kvreg_format_error(&err, ret, msg, sizeof(msg));
	ok &= kvregctl_verdict(!ret, "registering %s on every device: %s",
			       kvregctl_bytes(size, c, 32),
			       ret ? msg : "every limit has room");
	if (hugetlb) {
		uint64_t free_pages = kvregctl_read_u64(
			"/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
			0);

		ok &= kvregctl_verdict(free_pages >= pages,
				       "free 2 MiB hugepages: %llu, needs %llu",
				       (unsigned long long)free_pages,
				       (unsigned long long)pages);
	}
	printf("%s\n", ok ? "a registration of this size would succeed" :
	       "a registration of this size would fail");
	return ok ? 0 : 1;
}

/*
 * A peer's pool, before relying on it: the descriptor read, the endpoint
 * resolved and connected (as kvreg_import() does), and one 4 KiB READ.
 */
static int kvregctl_check_peer(struct kvreg *kv, const char *path)
{
	static uint8_t desc[1 << 20];
	static uint8_t page[4096] __attribute__((aligned(4096)));
	struct kvreg_remote *r = NULL;
	struct kvreg_mr *mr = NULL;
	struct kvreg_error err;
	char msg[512];
	size_t n;
	FILE *f = fopen(path, "rb");
	int ret;

	if (!f) {
		printf("FAIL descriptor %s: %s\n", path, strerror(errno));
		return 1;
	}
	n = fread(desc, 1, sizeof(desc), f);
	fclose(f);
	ret = kvreg_import(kv, desc, n, 0, &r, &err);
	if (ret) {
		kvreg_format_error(&err, ret, msg, sizeof(msg));
		kvregctl_verdict(false, "connect: %s", msg);
		goto out;
	}
	kvregctl_verdict(true, "descriptor: %zu bytes, a region of %llu bytes, "
			 "connected through device %u", n,
			 (unsigned long long)kvreg_remote_length(r),
			 kvreg_remote_device(r));
	ret = kvreg_register(kv, page, sizeof(page), KVREG_ACCESS_LOCAL_WRITE,
			     1ULL << kvreg_remote_device(r), &mr, &err);
	if (!ret)
		ret = kvreg_transfer_remote(kv, KVREG_OP_READ, mr, 0, r, 0,
					    sizeof(page), &err);
	if (ret)
		kvreg_format_error(&err, ret, msg, sizeof(msg));
	kvregctl_verdict(!ret, "READ of 4 KiB from the peer: %s",
			 ret ? msg : "arrived");
out:
	if (mr)
		kvreg_deregister(kv, mr, NULL);
	if (r)
		kvreg_unimport(kv, r, NULL);
	printf("%s\n", ret ? "the peer cannot be used" :
	       "the peer's pool can be used");
	return ret ? 1 : 0;
}

static void kvregctl_usage(FILE *out)
{
	fprintf(out, "usage: kvregctl devices | stats | ps | conns"
		" | check SIZE [--hugetlb]"
		" | check --peer DESCRIPTOR | --version\n"
		"  devices  RDMA devices kvreg uses, with their limits\n"
		"  stats    this process's usage against every limit, and the host's\n"
		"  ps       every process using kvreg (needs CAP_SYS_ADMIN)\n"
		"  conns    endpoints and connections, with operations in flight\n"
		"           (all of the host's with CAP_SYS_ADMIN, else your own)\n"
		"  check    start-up pre-flight: would registering SIZE bytes (64M, 2G)\n"
		"           on every device succeed? exit 0 only if it would\n"
		"  check --peer FILE  connect to the endpoint of a descriptor\n"
		"           (kvreg_export()'s bytes) and READ 4 KiB from it\n"
		"  --version  kvreg's version and ioctl ABI, and the loaded\n"
		"           module's ABI and features\n");
}

/* kvreg's version, and what the module in the kernel says of itself. */
static int kvregctl_version(void)
{
	struct kvreg_error err;
	uint64_t features;
	struct kvreg *kv;
	char msg[512];
	int ret;

	printf("kvregctl %s, ioctl ABI %u\n", KVREG_VERSION, KVREG_ABI_VERSION);
	ret = kvreg_open(&kv, &err);
	if (ret) {
		kvreg_format_error(&err, ret, msg, sizeof(msg));
		printf("module: %s\n", msg);
		return 0;
	}
	ret = kvreg_features(kv, &features, &err);
	if (ret)
		printf("module: ioctl ABI %u\n", kvreg_module_abi_version(kv));
	else
		printf("module: ioctl ABI %u, features %#llx\n",
		       kvreg_module_abi_version(kv),
		       (unsigned long long)features);
	kvreg_close(kv);
	return 0;
}

int main(int argc, char **argv)
{
	struct kvreg_error err;
	bool hugetlb = false;
	struct kvreg *kv;
	uint64_t size = 0;
	int ret;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		kvregctl_usage(argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : 2;
	}
	if (argc == 2 && !strcmp(argv[1], "--version"))
		return kvregctl_version();
	if (argc == 4 && !strcmp(argv[1], "check") &&
	    !strcmp(argv[2], "--peer")) {
		ret = kvreg_open(&kv, &err);
		if (ret)
			return kvregctl_fail("open", &err, ret);
		ret = kvregctl_check_peer(kv, argv[3]);
		kvreg_close(kv);
		return ret;
	}
	if (!strcmp(argv[1], "check")) {
		if (argc < 3 || kvregctl_parse_size(argv[2], &size) ||
		    (argc == 4 && strcmp(argv[3], "--hugetlb")) || argc > 4) {
			kvregctl_usage(stderr);
			return 2;
		}
		hugetlb = argc == 4;
	} else if (argc != 2 || (strcmp(argv[1], "devices") &&
				 strcmp(argv[1], "stats") &&
				 strcmp(argv[1], "ps") &&
				 strcmp(argv[1], "conns"))) {
		kvregctl_usage(stderr);
		return 2;
	}
	ret = kvreg_open(&kv, &err);
	if (ret && size) {
		char msg[512];

		/* The check reports on stdout, a line a verdict. */
		kvreg_format_error(&err, ret, msg, sizeof(msg));
		printf("FAIL %s\na registration of this size would fail\n", msg);
		return 1;
	}
	if (ret)
		return kvregctl_fail("open", &err, ret);
	if (size)
		ret = kvregctl_check(kv, size, hugetlb);
	else if (!strcmp(argv[1], "devices"))
		ret = kvregctl_devices(kv);
	else if (!strcmp(argv[1], "stats"))
		ret = kvregctl_stats(kv);
	else if (!strcmp(argv[1], "conns"))
		ret = kvregctl_conns(kv);
	else
		ret = kvregctl_ps(kv);
	kvreg_close(kv);
	return ret;
}
