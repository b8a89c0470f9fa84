// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A container's rdma.max applies to kvreg as it does to verbs: each MR is
 * an hca_object of the registering process's rdma cgroup.
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include "kvtest.h"

#define CG "/sys/fs/cgroup"
#define TEST_CG CG "/kvreg-test"

static void get(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	CHECK(f && fgets(buf, (int)size, f), "read %s", path);
	fclose(f);
}

/*
 * An EXPORT makes MRs again, in the export's PD: under a limit that
 * lets half of them through it is refused, and gives back what it had
 * charged. Before, the half charged stayed charged for good.
 */
static void export_half(struct kvreg *kv, const struct kvreg_device_info *dev,
			uint64_t dev_mask)
{
	uint64_t len = 8 * SZ_2M, ep;
	uint8_t *p = kvt_map_anon_scattered(len);
	uint8_t desc[4096];
	struct kvreg_error err;
	struct kvreg_mr *mr;
	char text[128], want[64];
	unsigned int n;
	size_t size;

	snprintf(text, sizeof(text), "%s hca_object=max", dev->name);
	CHECK(!kvt_put(TEST_CG "/rdma.max", text), "rdma.max: %s",
	      strerror(errno));
	CHECK_OK(kvreg_register(kv, p, len, KVREG_ACCESS_ALL, dev_mask, &mr,
				&err), &err);
	kvreg_mr_keys(mr, &n);
	CHECK(n >= 2, "%u MRs: too few to charge half of", n);
	snprintf(text, sizeof(text), "%s hca_object=%u", dev->name, n + n / 2);
	CHECK(!kvt_put(TEST_CG "/rdma.max", text), "rdma.max: %s",
	      strerror(errno));
	CHECK_OK(kvreg_listen(kv, "192.0.2.1", 0, &ep, NULL, &err), &err);
	CHECK_FAILS(kvreg_export(kv, ep, mr, desc, sizeof(desc), &size, &err),
		    &err, EAGAIN, KVREG_REASON_RDMA_CGROUP);
	CHECK(err.usage == n / 2 && err.request == n,
	      "the refusal: %llu of %llu charged", (unsigned long long)err.usage,
	      (unsigned long long)err.request);
	snprintf(want, sizeof(want), "hca_object=%u", n);
	get(TEST_CG "/rdma.current", text, sizeof(text));
	CHECK(strstr(text, want), "after the refused EXPORT of %u MRs, %s: want %s",
	      n, text, want);
	printf("EXPORT of %u MRs under a limit of %u more: refused, %s\n", n,
	       n / 2, want);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	get(TEST_CG "/rdma.current", text, sizeof(text));
	CHECK(strstr(text, "hca_object=0"), "after the export case: %s", text);
	munmap(p, len);
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *a, *b, *c;
	struct kvt_snap before;
	struct kvreg_error err;
	char text[128], pid[32];
	uint64_t dev_mask;
	uint8_t *p;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev_mask = 1ULL << devs[0].index;
	if (access(CG "/cgroup.controllers", F_OK) &&
	    mount("none", CG, "cgroup2", 0, NULL))
		kvt_skip("no cgroup2");
	get(CG "/cgroup.controllers", text, sizeof(text));
	if (!strstr(text, "rdma"))
		kvt_skip("no rdma cgroup controller");
	CHECK(!kvt_put(CG "/cgroup.subtree_control", "+rdma"), "enable rdma");
	CHECK(!mkdir(TEST_CG, 0755) || errno == EEXIST, "mkdir");
	snprintf(text, sizeof(text), "%s hca_object=2", devs[0].name);
	CHECK(!kvt_put(TEST_CG "/rdma.max", text), "rdma.max: %s", strerror(errno));
	snprintf(pid, sizeof(pid), "%d", getpid());
	CHECK(!kvt_put(TEST_CG "/cgroup.procs", pid), "join the cgroup");

	p = kvt_map_anon(3 * SZ_4K);
	before = kvt_snap(kv);
	CHECK_OK(kvreg_register(kv, p, SZ_4K, KVREG_ACCESS_ALL, dev_mask, &a,
				&err), &err);
	CHECK_OK(kvreg_register(kv, p + SZ_4K, SZ_4K, KVREG_ACCESS_ALL,
				dev_mask, &b, &err), &err);
	get(TEST_CG "/rdma.current", text, sizeof(text));
	CHECK(strstr(text, "hca_object=2"), "rdma.current: %s", text);
	CHECK_FAILS(kvreg_register(kv, p + 2 * SZ_4K, SZ_4K, KVREG_ACCESS_ALL,
				   dev_mask, &c, &err),
		    &err, EAGAIN, KVREG_REASON_RDMA_CGROUP);
	CHECK(err.device_index == devs[0].index && err.request == 1,
	      "device %u request %llu", err.device_index,
	      (unsigned long long)err.request);
	kvt_check_pinned(kv, &before, 2, "after the cgroup refusal");

	CHECK_OK(kvreg_deregister(kv, b, &err), &err);
	CHECK_OK(kvreg_deregister(kv, a, &err), &err);
	get(TEST_CG "/rdma.current", text, sizeof(text));
	CHECK(strstr(text, "hca_object=0"), "not uncharged: %s", text);
	kvt_check_unchanged(kv, &before, "after the cgroup test");

	export_half(kv, &devs[0], dev_mask);

	CHECK(!kvt_put(CG "/cgroup.procs", pid), "leave the cgroup");
	/*
	 * Limits back to max first: Debian 6.1's rdma cgroup frees an idle
	 * pool only when every limit is max, and removing the cgroup does
	 * not, leaving the pool to be freed (after the cgroup) when the device
	 * goes: a use-after-free in the kernel, not in kvreg.
	 */
	snprintf(text, sizeof(text), "%s hca_handle=max hca_object=max",
		 devs[0].name);
	CHECK(!kvt_put(TEST_CG "/rdma.max", text), "rdma.max back to max");
	CHECK(!rmdir(TEST_CG), "rmdir: %s", strerror(errno));
	kvreg_close(kv);
	return T_PASS;
}
