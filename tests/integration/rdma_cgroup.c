// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * A container's rdma.max applies to kvreg as it does to verbs: each MR an
 * export makes (and each a registration would make, charged at REGISTER),
 * and each PD with its QP that kvreg makes for a file or an export, is an
 * hca_object of the rdma cgroup of the process that made it.
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include "kvtest.h"

#define CG "/sys/fs/cgroup"
#define TEST_CG CG "/kvreg-test"
/* A file's PD on a device (it has no engine: REGISTER makes no MR). */
#define KVT_FILE_PD_OBJECTS 1u
/* An export's PD and its engine QP, on a device. */
#define KVT_EXPORT_PD_OBJECTS 2u

static void get(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	CHECK(f && fgets(buf, (int)size, f), "read %s", path);
	fclose(f);
}

/* The hca_object count charged to the test's cgroup. */
static unsigned int charged(void)
{
	char text[128], *at;

	get(TEST_CG "/rdma.current", text, sizeof(text));
	at = strstr(text, "hca_object=");
	CHECK(at, "rdma.current: %s", text);
	return (unsigned int)strtoul(at + strlen("hca_object="), NULL, 10);
}

static void set_max(const struct kvreg_device_info *dev, const char *objects)
{
	char text[128];

	snprintf(text, sizeof(text), "%s hca_object=%s", dev->name, objects);
	CHECK(!kvt_put(TEST_CG "/rdma.max", text), "rdma.max %s: %s", text,
	      strerror(errno));
}

static void set_limit(const struct kvreg_device_info *dev, unsigned int n)
{
	char text[32];

	snprintf(text, sizeof(text), "%u", n);
	set_max(dev, text);
}

/*
 * An EXPORT makes a PD, its engine QP and MRs, in the export's own
 * domain. A limit that refuses the PD's QP, and then one that lets half
 * the MRs through: each refused, with what it charged given back. Before,
 * the half charged stayed charged for good, and the PD and QP were not
 * charged at all.
 */
static void export_half(struct kvreg *kv, const struct kvreg_device_info *dev,
			uint64_t dev_mask)
{
	uint64_t len = 8 * SZ_2M, ep;
	uint8_t *p = kvt_map_anon_scattered(len);
	uint8_t desc[4096];
	struct kvreg_error err;
	struct kvreg_mr *mr;
	unsigned int n, base;
	size_t size;

	set_max(dev, "max");
	CHECK_OK(kvreg_register(kv, p, len, KVREG_ACCESS_ALL, dev_mask, &mr,
				&err), &err);
	n = kvreg_mr_key_at(mr, dev->index, 0)->mrs;
	CHECK(n >= 2, "%u MRs: too few to charge half of", n);
	base = charged();
	CHECK(base == KVT_FILE_PD_OBJECTS + n,
	      "the file's PD and %u MRs as if exported: %u charged", n,
	      base);
	CHECK_OK(kvreg_listen(kv, "192.0.2.1", 0, &ep, NULL, &err), &err);

	set_limit(dev, base + 1);
	CHECK_FAILS(kvreg_export(kv, ep, mr, desc, sizeof(desc), &size, &err),
		    &err, EAGAIN, KVREG_REASON_RDMA_CGROUP);
	CHECK(err.usage == 1 && err.request == KVT_EXPORT_PD_OBJECTS &&
	      err.device_index == dev->index,
	      "the refused export PD: %llu of %llu charged, device %u",
	      (unsigned long long)err.usage, (unsigned long long)err.request,
	      err.device_index);
	CHECK(charged() == base, "after the refused export PD: %u, want %u",
	      charged(), base);

	set_limit(dev, base + KVT_EXPORT_PD_OBJECTS + n / 2);
	CHECK_FAILS(kvreg_export(kv, ep, mr, desc, sizeof(desc), &size, &err),
		    &err, EAGAIN, KVREG_REASON_RDMA_CGROUP);
	CHECK(err.usage == n / 2 && err.request == n,
	      "the refusal: %llu of %llu charged", (unsigned long long)err.usage,
	      (unsigned long long)err.request);
	/* The PD and its QP stay, the endpoint's spare for its next export. */
	CHECK(charged() == base + KVT_EXPORT_PD_OBJECTS,
	      "after the refused EXPORT of %u MRs: %u, want %u", n, charged(),
	      base + KVT_EXPORT_PD_OBJECTS);
	printf("EXPORT of %u MRs under a limit of %u more: refused, %u charged\n",
	       n, n / 2, charged());

	set_max(dev, "max");
	CHECK_OK(kvreg_export(kv, ep, mr, desc, sizeof(desc), &size, &err),
		 &err);
	CHECK(charged() == base + KVT_EXPORT_PD_OBJECTS + n,
	      "the export (spare PD reused, %u MRs): %u, want %u", n,
	      charged(), base + KVT_EXPORT_PD_OBJECTS + n);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	CHECK(charged() == KVT_FILE_PD_OBJECTS,
	      "after the export case: %u, want the file's %u", charged(),
	      KVT_FILE_PD_OBJECTS);
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
	set_limit(&devs[0], 0);
	snprintf(pid, sizeof(pid), "%d", getpid());
	CHECK(!kvt_put(TEST_CG "/cgroup.procs", pid), "join the cgroup");

	p = kvt_map_anon(3 * SZ_4K);
	before = kvt_snap(kv);
	/*
	 * The file's first use of the device makes its PD (no engine QP:
	 * the file makes no MR), before the MRs an export would make are
	 * charged. None allowed: the PD is refused.
	 */
	CHECK_FAILS(kvreg_register(kv, p, SZ_4K, KVREG_ACCESS_ALL, dev_mask,
				   &a, &err),
		    &err, EAGAIN, KVREG_REASON_RDMA_CGROUP);
	CHECK(err.device_index == devs[0].index && err.usage == 0 &&
	      err.request == KVT_FILE_PD_OBJECTS,
	      "the file's PD: device %u, %llu of %llu charged",
	      err.device_index, (unsigned long long)err.usage,
	      (unsigned long long)err.request);
	CHECK(charged() == 0, "after the refused PD: %u charged", charged());
	kvt_check_unchanged(kv, &before, "after the refused PD");

	set_limit(&devs[0], KVT_FILE_PD_OBJECTS + 2);
	CHECK_OK(kvreg_register(kv, p, SZ_4K, KVREG_ACCESS_ALL, dev_mask, &a,
				&err), &err);
	CHECK_OK(kvreg_register(kv, p + SZ_4K, SZ_4K, KVREG_ACCESS_ALL,
				dev_mask, &b, &err), &err);
	CHECK(charged() == KVT_FILE_PD_OBJECTS + 2,
	      "the PD and two MRs as if exported: %u charged", charged());
	CHECK_FAILS(kvreg_register(kv, p + 2 * SZ_4K, SZ_4K, KVREG_ACCESS_ALL,
				   dev_mask, &c, &err),
		    &err, EAGAIN, KVREG_REASON_RDMA_CGROUP);
	CHECK(err.device_index == devs[0].index && err.request == 1,
	      "device %u request %llu", err.device_index,
	      (unsigned long long)err.request);
	kvt_check_pinned(kv, &before, 2, "after the cgroup refusal");

	CHECK_OK(kvreg_deregister(kv, b, &err), &err);
	CHECK_OK(kvreg_deregister(kv, a, &err), &err);
	CHECK(charged() == KVT_FILE_PD_OBJECTS,
	      "MRs not uncharged: %u, want the file's %u", charged(),
	      KVT_FILE_PD_OBJECTS);
	kvt_check_unchanged(kv, &before, "after the cgroup test");

	export_half(kv, &devs[0], dev_mask);

	/* The file's PD goes with it, and so does its charge. */
	kvreg_close(kv);
	CHECK(charged() == 0, "after close: %u charged", charged());
	printf("file and export PDs charged and given back, close leaves 0\n");

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
	return T_PASS;
}
