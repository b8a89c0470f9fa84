// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvreg: register host memory for RDMA through the kernel.
 *
 * /dev/kvreg and its ioctls. Each open file owns its registrations; they
 * all go when the file's last reference goes, which is also what happens
 * to a process killed with SIGKILL.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kvreg.h"

/* The published sizes of the ABI structs: the least a caller may pass. */
static_assert(sizeof(struct kvreg_error) == 56);
static_assert(sizeof(struct kvreg_abi_version) == 16);
static_assert(sizeof(struct kvreg_device_info) == 112);
static_assert(sizeof(struct kvreg_devices) == 32);
static_assert(sizeof(struct kvreg_key) == 32);
static_assert(sizeof(struct kvreg_register) == 128);
static_assert(sizeof(struct kvreg_deregister) == 72);
static_assert(sizeof(struct kvreg_query) == 144);
static_assert(sizeof(struct kvreg_transfer) == 128);
static_assert(sizeof(struct kvreg_stats) == 120);
static_assert(sizeof(struct kvreg_budget) == 80);
static_assert(sizeof(struct kvreg_proc_info) == 64);
static_assert(sizeof(struct kvreg_procs) == 32);

static struct dentry *kvreg_debugfs;

/*
 * Copy in an argument struct that begins with its size: at least the
 * published size, at most anything whose unknown tail is zero.
 */
static int kvreg_arg_in(void *karg, size_t ksize, const void __user *uarg,
			u32 *usize)
{
	int ret;

	if (get_user(*usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (*usize < ksize)
		return -EINVAL;
	ret = copy_struct_from_user(karg, ksize, uarg, *usize);
	if (ret)
		return ret;
	/* Output fields and the error record start out clean. */
	*(u32 *)karg = ksize;
	return 0;
}

static int kvreg_arg_out(void __user *uarg, const void *karg, size_t ksize)
{
	return copy_to_user(uarg, karg, ksize) ? -EFAULT : 0;
}

static void kvreg_error_reset(struct kvreg_error *err)
{
	memset(err, 0, sizeof(*err));
	err->device_index = KVREG_NO_DEVICE_INDEX;
}

/*
 * Copy in a @type, evaluate @body on it as karg, and copy it back even when
 * @body failed: the error record travels in it.
 */
#define KVREG_IOCTL(type, uarg, body)					\
({									\
	void __user *uarg_ = (uarg);					\
	type karg;							\
	u32 usize;							\
	int ret = kvreg_arg_in(&karg, sizeof(karg), uarg_, &usize);	\
	if (!ret) {							\
		kvreg_error_reset(&karg.error);				\
		ret = (body);						\
		if (kvreg_arg_out(uarg_, &karg, sizeof(karg)))		\
			ret = -EFAULT;					\
	}								\
	ret;								\
})

static int kvreg_ioctl_abi(void __user *uarg)
{
	struct kvreg_abi_version abi;
	u32 usize;
	int ret;

	ret = kvreg_arg_in(&abi, sizeof(abi), uarg, &usize);
	if (ret)
		return ret;
	if (abi.flags || abi.abi_version || abi.max_devices)
		return -EINVAL;
	abi.abi_version = KVREG_ABI_VERSION;
	abi.max_devices = KVREG_MAX_DEVICES;
	return kvreg_arg_out(uarg, &abi, sizeof(abi));
}

static int kvreg_ioctl_devices(void __user *uarg)
{
	struct kvreg_device_info info;
	struct kvreg_devices arg;
	char __user *entries;
	u64 present;
	u32 usize, bit;
	int ret;

	ret = kvreg_arg_in(&arg, sizeof(arg), uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.reserved || arg.count)
		return -EINVAL;
	if (arg.capacity && arg.entry_size < sizeof(info))
		return -EINVAL;
	entries = u64_to_user_ptr(arg.entries);
	present = kvreg_devices_present();
	for_each_set_bit(bit, (unsigned long *)&present, KVREG_MAX_DEVICES) {
		/* Removed since the snapshot: not listed. */
		if (kvreg_fill_device_info(bit, &info))
			continue;
		if (arg.count < arg.capacity) {
			char __user *dst = entries +
					   (size_t)arg.count * arg.entry_size;

			if (copy_to_user(dst, &info, sizeof(info)) ||
			    clear_user(dst + sizeof(info),
				       arg.entry_size - sizeof(info)))
				return -EFAULT;
		}
		arg.count++;
	}
	return kvreg_arg_out(uarg, &arg, sizeof(arg));
}

static int kvreg_ioctl_stats(struct kvreg_file *kf, void __user *uarg)
{
	struct kvreg_stats st;
	u32 usize;
	int ret;

	ret = kvreg_arg_in(&st, sizeof(st), uarg, &usize);
	if (ret)
		return ret;
	if (st.flags)
		return -EINVAL;
	/* Everything else is output. */
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.registrations = atomic64_read(&kvreg_nr_regs);
	st.mrs = atomic64_read(&kvreg_nr_mrs);
	st.devices = hweight64(kvreg_devices_present());
	kvreg_file_stats(kf, &st);
	return kvreg_arg_out(uarg, &st, sizeof(st));
}

static int kvreg_ioctl_procs(void __user *uarg)
{
	struct kvreg_procs arg;
	u32 usize;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kvreg_arg_in(&arg, sizeof(arg), uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.reserved ||
	    (arg.capacity && arg.entry_size < sizeof(struct kvreg_proc_info)))
		return -EINVAL;
	ret = kvreg_acct_procs(&arg);
	return ret ?: kvreg_arg_out(uarg, &arg, sizeof(arg));
}

static int kvreg_check_dereg(struct kvreg_deregister *arg)
{
	if (arg->flags)
		return kvreg_bad_arg(&arg->error, KVREG_ARG_FLAGS);
	return 0;
}

/*
 * A file belongs to the process that opened it: its budget, its memlock
 * charge and its pages. Another process (a fork child, a receiver of the
 * fd) may close it, nothing else.
 */
static int kvreg_owner(struct kvreg_file *kf, struct kvreg_error *err)
{
	if (current->mm == kf->km->mm)
		return 0;
	kvreg_set_error(err, KVREG_REASON_FOREIGN_PROCESS,
			KVREG_NO_DEVICE_INDEX);
	err->usage = kf->km->tgid;
	return -EPERM;
}

/* One function a command: each argument struct gets a frame of its own. */
static noinline_for_stack int kvreg_ioctl_register(struct kvreg_file *kf,
						   void __user *uarg)
{
	return KVREG_IOCTL(struct kvreg_register, uarg,
			   kvreg_owner(kf, &karg.error) ?:
			   kvreg_register(kf, &karg));
}

static noinline_for_stack int kvreg_ioctl_deregister(struct kvreg_file *kf,
						     void __user *uarg)
{
	return KVREG_IOCTL(struct kvreg_deregister, uarg,
			   kvreg_owner(kf, &karg.error) ?:
			   kvreg_check_dereg(&karg) ?:
			   kvreg_deregister(kf, karg.handle, &karg.error));
}

static noinline_for_stack int kvreg_ioctl_query(struct kvreg_file *kf,
						void __user *uarg)
{
	return KVREG_IOCTL(struct kvreg_query, uarg,
			   kvreg_owner(kf, &karg.error) ?:
			   kvreg_query(kf, &karg));
}

static noinline_for_stack int kvreg_ioctl_transfer(struct kvreg_file *kf,
						   void __user *uarg)
{
	return KVREG_IOCTL(struct kvreg_transfer, uarg,
			   kvreg_owner(kf, &karg.error) ?:
			   kvreg_transfer(kf, &karg));
}

static noinline_for_stack int kvreg_ioctl_budget(struct kvreg_file *kf,
						 void __user *uarg)
{
	return KVREG_IOCTL(struct kvreg_budget, uarg,
			   kvreg_owner(kf, &karg.error) ?:
			   kvreg_acct_set_budget(kf->km, &karg));
}

static long kvreg_ioctl(struct file *filp, unsigned int cmd,
			unsigned long arg)
{
	struct kvreg_file *kf = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KVREG_IOC_ABI_VERSION:
		return kvreg_ioctl_abi(uarg);
	case KVREG_IOC_DEVICES:
		return kvreg_ioctl_devices(uarg);
	case KVREG_IOC_REGISTER:
		return kvreg_ioctl_register(kf, uarg);
	case KVREG_IOC_DEREGISTER:
		return kvreg_ioctl_deregister(kf, uarg);
	case KVREG_IOC_QUERY:
		return kvreg_ioctl_query(kf, uarg);
	case KVREG_IOC_TRANSFER:
		return kvreg_ioctl_transfer(kf, uarg);
	case KVREG_IOC_SET_BUDGET:
		return kvreg_ioctl_budget(kf, uarg);
	case KVREG_IOC_STATS:
		if (current->mm != kf->km->mm)
			return -EPERM;
		return kvreg_ioctl_stats(kf, uarg);
	case KVREG_IOC_PROCS:
		return kvreg_ioctl_procs(uarg);
	default:
		return -ENOTTY;
	}
}

static int kvreg_open(struct inode *inode, struct file *filp)
{
	struct kvreg_file *kf = kzalloc(sizeof(*kf), GFP_KERNEL);
	int ret;

	if (!kf)
		return -ENOMEM;
	kvreg_file_init(kf);
	kf->km = kvreg_mm_get_current();
	if (IS_ERR(kf->km)) {
		ret = PTR_ERR(kf->km);
		kfree(kf);
		return ret;
	}
	filp->private_data = kf;
	return nonseekable_open(inode, filp);
}

static int kvreg_release(struct inode *inode, struct file *filp)
{
	struct kvreg_file *kf = filp->private_data;

	kvreg_file_release(kf);
	kvreg_mm_put(kf->km);
	kfree(kf);
	return 0;
}

static const struct file_operations kvreg_fops = {
	.owner = THIS_MODULE,
	.open = kvreg_open,
	.release = kvreg_release,
	.unlocked_ioctl = kvreg_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/*
 * Every user may register: what they pin is charged to their
 * RLIMIT_MEMLOCK, their rdma cgroup and their process budget.
 */
static struct miscdevice kvreg_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kvreg",
	.fops = &kvreg_fops,
	.mode = 0666,
};

static int __init kvreg_init(void)
{
	int ret;

	kvreg_acct_init();
	ret = kvreg_parallel_init();
	if (ret)
		return ret;
	ret = kvreg_devices_init();
	if (ret)
		goto err_parallel;
	ret = misc_register(&kvreg_misc);
	if (ret)
		goto err_devices;
	kvreg_debugfs = debugfs_create_dir("kvreg", NULL);
	debugfs_create_x64("inject_fail_mask", 0600, kvreg_debugfs,
			   &kvreg_inject_fail_mask);
	kvreg_stages_debugfs(kvreg_debugfs);
	return 0;

err_devices:
	kvreg_devices_exit();
err_parallel:
	kvreg_parallel_exit();
	return ret;
}

static void __exit kvreg_exit(void)
{
	debugfs_remove_recursive(kvreg_debugfs);
	misc_deregister(&kvreg_misc);
	kvreg_devices_exit();
	kvreg_parallel_exit();
	WARN_ON(kvreg_acct_host_pinned_bytes());
}

module_init(kvreg_init);
module_exit(kvreg_exit);

MODULE_DESCRIPTION("Register host memory for RDMA through the kernel");
MODULE_AUTHOR("kvreg developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(KVREG_VERSION);
