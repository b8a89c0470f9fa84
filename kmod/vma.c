// SPDX-License-Identifier: GPL-2.0-only
/*
 * Refuse what kvreg must not pin, before anything is pinned: the caller
 * gets the reason and the first address it applies to. Long-term pins are
 * for host memory only: anonymous, shmem/memfd/SysV shm, and hugetlbfs.
 */
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/magic.h>

#include "kvreg.h"

static int kvreg_vma_refuse(struct kvreg_error *err, u32 reason,
			    unsigned long addr, int errnum)
{
	kvreg_set_error(err, reason, KVREG_NO_DEVICE_INDEX);
	err->address = addr;
	return errnum;
}

/*
 * Host memory is anonymous (a private mapping of /dev/zero included: the
 * kernel makes it anonymous but leaves vm_file set), shmem or hugetlbfs.
 * Anything else with a file behind it is page cache. Every shmem file
 * (tmpfs, memfd, SysV shm, a shared /dev/zero) lives on a tmpfs
 * superblock. shmem_mapping() says the same, but on 5.10 it is a function
 * not exported to modules; the superblock reads alike on every kernel.
 */
static bool kvreg_vma_is_host_memory(struct vm_area_struct *vma)
{
	return vma_is_anonymous(vma) || is_vm_hugetlb_page(vma) ||
	       (vma->vm_file &&
		vma->vm_file->f_mapping->host->i_sb->s_magic == TMPFS_MAGIC);
}

int kvreg_check_memory(struct kvreg_reg *reg, struct kvreg_error *err)
{
	unsigned long addr = reg->addr & PAGE_MASK;
	unsigned long end = PAGE_ALIGN(reg->addr + reg->length);
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	int ret = 0;

	if (mmap_read_lock_killable(mm)) {
		kvreg_set_error(err, KVREG_REASON_INTERRUPTED,
				KVREG_NO_DEVICE_INDEX);
		return -EINTR;
	}
	reg->all_hugetlb = true;
	reg->thp_advised = true;
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr) {
			ret = kvreg_vma_refuse(err,
					       KVREG_REASON_UNMAPPED_ADDRESS,
					       addr, -EFAULT);
			break;
		}
		/* A GPU BAR, a device's registers: no struct page to pin. */
		if (vma->vm_flags & (VM_IO | VM_PFNMAP)) {
			ret = kvreg_vma_refuse(err,
					       KVREG_REASON_NOT_HOST_MEMORY,
					       addr, -EFAULT);
			break;
		}
		/* Page cache of a real file: writeback and truncate fight
		 * long-term pins.
		 */
		if (!kvreg_vma_is_host_memory(vma)) {
			ret = kvreg_vma_refuse(err, KVREG_REASON_FILE_BACKED,
					       addr, -EOPNOTSUPP);
			break;
		}
		if (reg->writable && !(vma->vm_flags & VM_WRITE)) {
			ret = kvreg_vma_refuse(err, KVREG_REASON_READ_ONLY,
					       addr, -EACCES);
			break;
		}
		if (vma->vm_flags & VM_HUGETLB)
			reg->huge_backed = true;
		else
			reg->all_hugetlb = false;
		if (!(vma->vm_flags & (VM_HUGETLB | VM_HUGEPAGE)))
			reg->thp_advised = false;
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}
