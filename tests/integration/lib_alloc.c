// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * libkvreg's own allocations failing: kvreg_open, kvreg_register (its
 * handle) and kvreg_import each give -ENOMEM with NO_MEMORY and leave
 * nothing behind: no descriptor open, nothing pinned, registered or
 * charged, no region imported; kvreg_register's fitting of its key array
 * after the module registered may fail and changes nothing. Each call
 * then succeeds once memory is back.
 *
 * The failures are injected by linking with --wrap (Makefile): calloc and
 * realloc of this program and of the static library go through the
 * wrappers below, and fail once when armed.
 */
#include <dirent.h>
#include <sys/mman.h>

#include "kvexport.h"

#define ADDR	"192.0.2.1"
/* 4 KiB pages, so an export of it takes more than 16 MRs. */
#define SPLIT_LEN	(64ULL << 20)

void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

static int fail_calloc, fail_realloc;

void *__wrap_calloc(size_t n, size_t size)
{
	if (fail_calloc) {
		fail_calloc = 0;
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	if (fail_realloc) {
		fail_realloc = 0;
		errno = ENOMEM;
		return NULL;
	}
	return __real_realloc(p, size);
}

static unsigned int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	CHECK(d, "opendir /proc/self/fd");
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * @len bytes of base pages no two of which are physically adjacent, so
 * that a registration of them needs 4 KiB MR pages and more than 16 MRs:
 * each page is faulted in between two pages of a spacer, which a fresh
 * guest would otherwise hand out in one contiguous run.
 */
static uint8_t *scattered(uint64_t len)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *spacer = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t off;

	CHECK(p != MAP_FAILED && spacer != MAP_FAILED, "mmap: %s",
	      strerror(errno));
	CHECK(!madvise(p, len, MADV_NOHUGEPAGE) &&
	      !madvise(spacer, len, MADV_NOHUGEPAGE), "madvise: %s",
	      strerror(errno));
	for (off = 0; off < len; off += SZ_4K) {
		p[off] = 1;
		spacer[off] = 1;
	}
	munmap(spacer, len);
	return p;
}

#define CHECK_NO_MEMORY(ret, err, what)					\
	CHECK((ret) == -ENOMEM &&					\
	      (err).reason == KVREG_REASON_NO_MEMORY,			\
	      "%s with its allocation failing: %d reason %u", what,	\
	      ret, (err).reason)

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg_remote *r = NULL;
	struct kvreg_mr *mr = NULL;
	struct kvt_exporter *x;
	struct kvreg_error err;
	struct kvt_snap before;
	struct kvreg *kv = NULL;
	unsigned int fds, nkeys;
	uint8_t *buf, *pool;
	int ret;

	/* kvreg_open: its handle, before the device is opened. */
	fds = open_fds();
	fail_calloc = 1;
	ret = kvreg_open(&kv, &err);
	CHECK_NO_MEMORY(ret, err, "kvreg_open");
	CHECK(!kv && !fail_calloc, "kvreg_open left a handle, or never "
	      "allocated");
	CHECK(open_fds() == fds, "kvreg_open left %u descriptors open",
	      open_fds() - fds);
	kv = kvt_open();
	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");

	/* kvreg_register: its handle, before the module is asked. */
	buf = scattered(SPLIT_LEN);
	kvt_fill(buf, SPLIT_LEN, 0x31);
	before = kvt_snap(kv);
	fail_calloc = 1;
	ret = kvreg_register(kv, buf, SZ_2M, KVREG_ACCESS_ALL,
			     1ULL << devs[0].index, &mr, &err);
	CHECK_NO_MEMORY(ret, err, "kvreg_register");
	CHECK(!mr && !fail_calloc, "kvreg_register left a handle, or never "
	      "allocated");
	kvt_check_unchanged(kv, &before, "kvreg_register without memory");

	/*
	 * Its key array is cut to the keys it got (one per device) once the
	 * module registered: that realloc failing keeps the larger array,
	 * and the registration is whole.
	 */
	fail_realloc = 1;
	CHECK_OK(kvreg_register(kv, buf, SPLIT_LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &mr, &err), &err);
	CHECK(!fail_realloc, "kvreg_register never fitted its key array");
	kvreg_mr_keys(mr, &nkeys);
	CHECK(nkeys == 1 &&
	      kvreg_mr_key_at(mr, devs[0].index, SPLIT_LEN - 1) &&
	      kvreg_mr_key_at(mr, devs[0].index, 0)->mrs > 16,
	      "%llu bytes of 4 KiB pages on one device: %u keys, want one "
	      "of more than 16 MRs", (unsigned long long)SPLIT_LEN, nkeys);
	CHECK_OK(kvreg_transfer(kv, KVREG_OP_WRITE, devs[0].index, mr, 0, mr,
				SZ_2M, SZ_4K, &err), &err);
	CHECK(!memcmp(buf, buf + SZ_2M, SZ_4K), "copy within the registration");
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	mr = NULL;
	kvt_check_unchanged(kv, &before, "a registration whose keys were not "
			    "fitted, deregistered");
	printf("open and register without memory: NO_MEMORY, nothing left; "
	       "a key array not fitted is kept (%u key)\n", nkeys);

	/* kvreg_import: its handle, before the module connects. */
	pool = mmap(NULL, SZ_2M, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pool != MAP_FAILED, "mmap");
	x = kvt_exporter_start(kv, pool, SZ_2M, devs[0].index, ADDR);
	before = kvt_snap(kv);
	fail_calloc = 1;
	ret = kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err);
	CHECK_NO_MEMORY(ret, err, "kvreg_import");
	CHECK(!r && !fail_calloc, "kvreg_import left a region, or never "
	      "allocated");
	kvt_check_unchanged(kv, &before, "kvreg_import without memory");

	/* Each call works once memory is back, with the bytes right. */
	CHECK_OK(kvreg_register(kv, buf, SPLIT_LEN, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &mr, &err), &err);
	CHECK_OK(kvreg_import(kv, x->desc, x->desc_size, 0, &r, &err), &err);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_WRITE, mr, SPLIT_LEN - SZ_2M,
				       r, 0, SZ_2M, &err), &err);
	CHECK(kvt_mismatch(pool, 0, SZ_2M, 0x31, SPLIT_LEN - SZ_2M) < 0,
	      "the exporter's pool differs from what was written");
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	kvt_exporter_kill(x);
	kvreg_close(kv);
	printf("import without memory: NO_MEMORY, nothing imported; all three "
	       "work again after\n");
	return T_PASS;
}
