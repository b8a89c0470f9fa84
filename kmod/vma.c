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

/* What is_cow_mapping() says, which 5.10's headers do not have. */
static bool kvreg_vma_is_private(struct vm_area_struct *vma)
{
	return (vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) == VM_MAYWRITE;
}

/*
 * How the range is pinned. A registration that the device may write is
 * pinned for writing. One it may only read is pinned for reading where
 * the memory is shared, but for writing where it is private: before 6.2
 * a long-term pin for reading takes the shared zero page of memory never
 * written (and, on 5.10, the page a child still shares since fork()), so
 * the owner's next write moves the owner to a new page while the device
 * keeps reading the old one. ib_umem pinned every MR for writing
 * (FOLL_FORCE where the mapping is read-only) until 6.2 made GUP unshare
 * such pages for FOLL_LONGTERM itself. No header tells the two apart, so
 * kvreg does this on every kernel; on 6.2+ it costs what the unsharing
 * costs there, a page for each page never written. A range that also
 * has memory FOLL_FORCE may not write (a read-only shared mapping, a
 * read-only hugetlb one) is pinned for reading, as 6.2+ does it.
 */
static unsigned int kvreg_gup_flags(struct kvreg_reg *reg, bool private_rw,
				    bool private_ro, bool unforceable)
{
	if (reg->writable)
		return FOLL_LONGTERM | FOLL_WRITE;
	if (!(private_rw || private_ro) || unforceable)
		return FOLL_LONGTERM;
	return FOLL_LONGTERM | FOLL_WRITE | (private_ro ? FOLL_FORCE : 0);
}

/**
 * kvreg_check_memory - refuse what must not be pinned, and say how to pin
 * the rest
 * @reg: a registration not yet pinned; its gup_flags, huge_backed,
 *	all_hugetlb and thp_advised are set here
 * @err: the reason and the first address it applies to, on a refusal
 *
 * Return: 0, or -EFAULT, -EOPNOTSUPP, -EACCES or -EINTR with @err set.
 */
int kvreg_check_memory(struct kvreg_reg *reg, struct kvreg_error *err)
{
	unsigned long addr = reg->addr & PAGE_MASK;
	unsigned long end = PAGE_ALIGN(reg->addr + reg->length);
	bool private_rw = false, private_ro = false, unforceable = false;
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
		if (!kvreg_vma_is_private(vma))
			unforceable |= !(vma->vm_flags & VM_WRITE);
		else if (vma->vm_flags & VM_WRITE)
			private_rw = true;
		else if (vma->vm_flags & VM_HUGETLB)
			unforceable = true;	/* GUP refuses FOLL_FORCE */
		else
			private_ro = true;
		if (vma->vm_flags & VM_HUGETLB)
			reg->huge_backed = true;
		else
			reg->all_hugetlb = false;
		if (!(vma->vm_flags & (VM_HUGETLB | VM_HUGEPAGE)))
			reg->thp_advised = false;
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	reg->gup_flags = kvreg_gup_flags(reg, private_rw, private_ro,
					 unforceable);
	return ret;
}
