// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * What memory registers: anonymous, memfd (shmem), hugetlb memfd, a
 * private mapping of /dev/zero, read-only memory for remote reads. What is refused, before anything is
 * pinned, each with its reason and address: file-backed mappings, write
 * access on read-only memory.
 *   memory_kinds [REGULAR_FILE]
 * REGULAR_FILE (this program by default) must be on a disk-like file
 * system: a copy on tmpfs is shmem, which registers like anonymous memory.
 */
#include <sys/mman.h>

#include "kvtransfer.h"

static void *map_memfd(uint64_t len, unsigned int flags)
{
	int fd = memfd_create("kvreg-test", flags);
	void *p;

	if (fd < 0 || ftruncate(fd, (off_t)len)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	return p;
}

int main(int argc, char **argv)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	struct kvreg_mr *mr, *ro_mr, *local;
	struct kvt_snap before;
	struct kvreg_error err;
	uint8_t *a, *b, *ro, *file;
	uint32_t dev;
	int fd;

	(void)argc;
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	dev = devs[0].index;
	before = kvt_snap(kv);

	/* memfd is shmem: registers and moves data. */
	a = map_memfd(16 * SZ_4K, 0);
	b = map_memfd(16 * SZ_4K, 0);
	CHECK(a && b, "memfd");
	kvt_roundtrip(kv, a, b, 16 * SZ_4K, dev, KVT_BASE_PAGES);

	/* A hugetlb memfd gets huge MR pages. */
	a = map_memfd(2 * SZ_2M, MFD_HUGETLB);
	b = map_memfd(2 * SZ_2M, MFD_HUGETLB);
	/* run-tests.sh reserves huge pages: a part that cannot run fails. */
	CHECK(a && b, "no hugetlb memfd: this part cannot run");
	kvt_roundtrip(kv, a, b, 2 * SZ_2M, dev, KVT_HUGE_PAGES);

	/*
	 * A private mapping of /dev/zero is anonymous memory, though its VMA
	 * keeps the file: it registers and moves data.
	 */
	fd = open("/dev/zero", O_RDWR);
	CHECK(fd >= 0, "open /dev/zero");
	a = mmap(NULL, 8 * SZ_4K, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	b = mmap(NULL, 8 * SZ_4K, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(a != MAP_FAILED && b != MAP_FAILED, "mmap /dev/zero");
	memset(a, 0, 8 * SZ_4K);
	memset(b, 0, 8 * SZ_4K);
	kvt_roundtrip(kv, a, b, 8 * SZ_4K, dev, KVT_BASE_PAGES);

	/* Read-only memory: refused for write access, fine to be read. */
	ro = mmap(NULL, 4 * SZ_4K, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED, "mmap");
	kvt_fill(ro, 4 * SZ_4K, 0x66);
	CHECK(!mprotect(ro, 4 * SZ_4K, PROT_READ), "mprotect");
	CHECK_FAILS(kvreg_register(kv, ro, 4 * SZ_4K, KVREG_ACCESS_ALL, 0, &mr,
				   &err), &err, EACCES, KVREG_REASON_READ_ONLY);
	CHECK(err.address == (uintptr_t)ro, "address %#llx",
	      (unsigned long long)err.address);
	CHECK_OK(kvreg_register(kv, ro, 4 * SZ_4K, KVREG_ACCESS_REMOTE_READ,
				1ULL << dev, &ro_mr, &err), &err);
	a = kvt_map_anon(4 * SZ_4K);
	CHECK_OK(kvreg_register(kv, a, 4 * SZ_4K, KVREG_ACCESS_ALL, 1ULL << dev,
				&local, &err), &err);
	kvt_xfer(kv, KVREG_OP_READ, dev, local, 0, ro_mr, 0, 4 * SZ_4K);
	CHECK(kvt_mismatch(a, 0, 4 * SZ_4K, 0x66, 0) < 0, "READ of read-only");
	CHECK_OK(kvreg_deregister(kv, local, &err), &err);
	CHECK_OK(kvreg_deregister(kv, ro_mr, &err), &err);

	/* A regular file's page cache: refused, even for reading. */
	fd = open(argc > 1 ? argv[1] : argv[0], O_RDONLY);
	CHECK(fd >= 0, "open %s", argc > 1 ? argv[1] : argv[0]);
	file = mmap(NULL, SZ_4K, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(file != MAP_FAILED, "mmap file");
	CHECK_FAILS(kvreg_register(kv, file, SZ_4K, KVREG_ACCESS_REMOTE_READ, 0,
				   &mr, &err),
		    &err, EOPNOTSUPP, KVREG_REASON_FILE_BACKED);
	CHECK(err.address == (uintptr_t)file, "address");

	kvt_check_unchanged(kv, &before, "after the memory kinds");
	kvreg_close(kv);
	return T_PASS;
}
