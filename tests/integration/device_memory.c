// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Memory that is not host memory (a GPU BAR, device registers: VM_IO and
 * VM_PFNMAP mappings) is refused with its own reason, not "bad address".
 * The legacy VGA window through /dev/mem is such a mapping in any guest.
 */
#include <sys/mman.h>

#include "kvtest.h"

int main(void)
{
	struct kvreg *kv = kvt_open();
	struct kvt_snap before = kvt_snap(kv);
	struct kvreg_error err;
	struct kvreg_mr *mr;
	void *bar;
	int fd;

	fd = open("/dev/mem", O_RDWR | O_SYNC);
	if (fd < 0)
		kvt_skip("no /dev/mem");
	bar = mmap(NULL, 16 * SZ_4K, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0xA0000);
	close(fd);
	if (bar == MAP_FAILED)
		kvt_skip("cannot map the VGA window");
	CHECK_FAILS(kvreg_register(kv, bar, 16 * SZ_4K, KVREG_ACCESS_ALL, 0,
				   &mr, &err),
		    &err, EFAULT, KVREG_REASON_NOT_HOST_MEMORY);
	CHECK(err.address == (uintptr_t)bar, "address %#llx",
	      (unsigned long long)err.address);
	kvt_check_unchanged(kv, &before, "after device memory");
	kvreg_close(kv);
	return T_PASS;
}
