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
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/nsproxy.h>
#include <net/net_namespace.h>

#include "kvreg.h"

/* The first published sizes of the ABI structs: the least a caller passes. */
static_assert(sizeof(struct kvreg_abi_version) == 16);
static_assert(sizeof(struct kvreg_device_info) == KVREG_DEVICE_INFO_SIZE_VER0);
static_assert(sizeof(struct kvreg_devices) == KVREG_DEVICES_SIZE_VER0);
static_assert(sizeof(struct kvreg_key) == KVREG_KEY_SIZE_VER0);
static_assert(sizeof(struct kvreg_register) == KVREG_REGISTER_SIZE_VER0);
static_assert(sizeof(struct kvreg_deregister) == KVREG_DEREGISTER_SIZE_VER0);
static_assert(sizeof(struct kvreg_query) == KVREG_QUERY_SIZE_VER0);
static_assert(sizeof(struct kvreg_transfer) == KVREG_TRANSFER_SIZE_VER0);
static_assert(sizeof(struct kvreg_stats) == KVREG_STATS_SIZE_VER1);
static_assert(sizeof(struct kvreg_budget) == KVREG_BUDGET_SIZE_VER0);
static_assert(sizeof(struct kvreg_proc_info) == KVREG_PROC_INFO_SIZE_VER0);
static_assert(sizeof(struct kvreg_procs) == KVREG_PROCS_SIZE_VER0);
static_assert(sizeof(struct kvreg_features) == KVREG_FEATURES_SIZE_VER0);
static_assert(sizeof(struct kvreg_error) == KVREG_ERROR_SIZE_VER1);
static_assert(sizeof(struct kvreg_listen) == KVREG_LISTEN_SIZE_VER0);
static_assert(sizeof(struct kvreg_export) == KVREG_EXPORT_SIZE_VER0);
static_assert(sizeof(struct kvreg_import) == KVREG_IMPORT_SIZE_VER1);
static_assert(sizeof(struct kvreg_unimport) == KVREG_UNIMPORT_SIZE_VER0);
static_assert(sizeof(struct kvreg_op) == KVREG_OP_SIZE_VER0);
static_assert(sizeof(struct kvreg_submit) == KVREG_SUBMIT_SIZE_VER0);
static_assert(sizeof(struct kvreg_completion) == KVREG_COMPLETION_SIZE_VER0);
static_assert(sizeof(struct kvreg_reap) == KVREG_REAP_SIZE_VER0);
static_assert(sizeof(struct kvreg_conn_info) == KVREG_CONN_INFO_SIZE_VER1);
static_assert(sizeof(struct kvreg_conns) == KVREG_CONNS_SIZE_VER0);
static_assert(sizeof(struct kvreg_unexport) == KVREG_UNEXPORT_SIZE_VER0);
static_assert(sizeof(struct kvreg_unlisten) == KVREG_UNLISTEN_SIZE_VER0);
static_assert(sizeof(struct kvreg_rekey) == KVREG_REKEY_SIZE_VER0);

static struct dentry *kvreg_debugfs;

/* The longest hold inject_hold_teardown takes: a test's, not a hang. */
#define KVREG_HOLD_TEARDOWN_MAX_MS	60000

/* Reads the holds in force; "INDEX MS" holds that device's for MS. */
static ssize_t kvreg_hold_teardown_read(struct file *file, char __user *buf,
					size_t len, loff_t *pos)
{
	char text[16];
	int n = scnprintf(text, sizeof(text), "%d\n",
			  atomic_read(&kvreg_teardown_holds));

	return simple_read_from_buffer(buf, len, pos, text, n);
}

static ssize_t kvreg_hold_teardown_write(struct file *file,
					 const char __user *buf, size_t len,
					 loff_t *pos)
{
	char text[32];
	u32 index, ms;
	int ret;

	if (len >= sizeof(text))
		return -EINVAL;
	if (copy_from_user(text, buf, len))
		return -EFAULT;
	text[len] = '\0';
	if (sscanf(text, "%u %u", &index, &ms) != 2 ||
	    ms > KVREG_HOLD_TEARDOWN_MAX_MS)
		return -EINVAL;
	ret = kvreg_dev_hold_teardown(index, ms);
	return ret ? ret : len;
}

static const struct file_operations kvreg_hold_teardown_fops = {
	.owner = THIS_MODULE,
	.read = kvreg_hold_teardown_read,
	.write = kvreg_hold_teardown_write,
	.llseek = default_llseek,
};

/* What every argument struct but kvreg_abi_version begins with. */
struct kvreg_arg_head {
	u32 size;
	u32 flags;
	u64 error;
	u32 error_size;
};

#define KVREG_HEAD_CHECK(type)						\
	static_assert(offsetof(type, flags) == 4 &&			\
		      offsetof(type, error) == 8 &&			\
		      offsetof(type, error_size) == 16)
KVREG_HEAD_CHECK(struct kvreg_devices);
KVREG_HEAD_CHECK(struct kvreg_register);
KVREG_HEAD_CHECK(struct kvreg_deregister);
KVREG_HEAD_CHECK(struct kvreg_query);
KVREG_HEAD_CHECK(struct kvreg_transfer);
KVREG_HEAD_CHECK(struct kvreg_stats);
KVREG_HEAD_CHECK(struct kvreg_budget);
KVREG_HEAD_CHECK(struct kvreg_procs);
KVREG_HEAD_CHECK(struct kvreg_features);
KVREG_HEAD_CHECK(struct kvreg_listen);
KVREG_HEAD_CHECK(struct kvreg_export);
KVREG_HEAD_CHECK(struct kvreg_import);
KVREG_HEAD_CHECK(struct kvreg_unimport);
KVREG_HEAD_CHECK(struct kvreg_submit);
KVREG_HEAD_CHECK(struct kvreg_reap);
KVREG_HEAD_CHECK(struct kvreg_conns);

/* Room for any argument struct this module knows. */
union kvreg_args {
	struct kvreg_arg_head head;
	struct kvreg_devices devices;
	struct kvreg_register reg;
	struct kvreg_deregister dereg;
	struct kvreg_query query;
	struct kvreg_transfer transfer;
	struct kvreg_stats stats;
	struct kvreg_budget budget;
	struct kvreg_procs procs;
	struct kvreg_features features;
	struct kvreg_listen listen;
	struct kvreg_export export;
	struct kvreg_import import;
	struct kvreg_unimport unimport;
	struct kvreg_submit submit;
	struct kvreg_reap reap;
	struct kvreg_conns conns;
};

static int kvreg_cmd_devices(struct kvreg_file *kf, void *karg,
			     struct kvreg_error *err)
{
	struct kvreg_devices *arg = karg;
	struct kvreg_device_info info;
	u64 present;
	u32 bit;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->count)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	if (arg->capacity && (arg->entry_size < KVREG_DEVICE_INFO_SIZE_VER0 ||
			      arg->entry_size > KVREG_MAX_ARG_SIZE))
		return kvreg_bad_size(err, KVREG_ARG_SIZE, arg->entry_size);
	present = kvreg_devices_present();
	for_each_set_bit(bit, (unsigned long *)&present, KVREG_MAX_DEVICES) {
		/* Removed since the snapshot: not listed. */
		if (kvreg_fill_device_info(bit, &info))
			continue;
		if (arg->count < arg->capacity &&
		    kvreg_copy_entry(arg->entries, arg->entry_size, arg->count,
				     &info, sizeof(info))) {
			kvreg_bad_arg(err, KVREG_ARG_POINTER);
			return -EFAULT;
		}
		arg->count++;
	}
	return 0;
}

static int kvreg_cmd_stats(struct kvreg_file *kf, void *karg,
			   struct kvreg_error *err)
{
	struct kvreg_stats *st = karg;

	if (st->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	/* Everything past the head is output. */
	memset((char *)st + sizeof(struct kvreg_arg_head), 0,
	       sizeof(*st) - sizeof(struct kvreg_arg_head));
	st->registrations = atomic64_read(&kvreg_nr_regs);
	st->mrs = atomic64_read(&kvreg_nr_mrs);
	st->devices = hweight64(kvreg_devices_present());
	kvreg_file_stats(kf, st);
	kvreg_caps_stats(kf->km, st);
	kvreg_ops_stats(kf, st);
	return 0;
}

static int kvreg_cmd_procs(struct kvreg_file *kf, void *karg,
			   struct kvreg_error *err)
{
	struct kvreg_procs *arg = karg;

	if (!capable(CAP_SYS_ADMIN)) {
		kvreg_set_error(err, KVREG_REASON_NOT_PERMITTED,
				KVREG_NO_DEVICE_INDEX);
		return -EPERM;
	}
	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->capacity && (arg->entry_size < KVREG_PROC_INFO_SIZE_VER0 ||
			      arg->entry_size > KVREG_MAX_ARG_SIZE))
		return kvreg_bad_size(err, KVREG_ARG_SIZE, arg->entry_size);
	return kvreg_acct_procs(arg, err);
}

static int kvreg_cmd_conns(struct kvreg_file *kf, void *karg,
			   struct kvreg_error *err)
{
	struct kvreg_conns *arg = karg;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->count)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	if (arg->capacity && (arg->entry_size < KVREG_CONN_INFO_SIZE_VER0 ||
			      arg->entry_size > KVREG_MAX_ARG_SIZE))
		return kvreg_bad_size(err, KVREG_ARG_SIZE, arg->entry_size);
	return kvreg_net_conns(arg, err);
}

static int kvreg_cmd_features(struct kvreg_file *kf, void *karg,
			      struct kvreg_error *err)
{
	struct kvreg_features *arg = karg;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	arg->max_devices = KVREG_MAX_DEVICES;
	arg->features = KVREG_FEATURE_FILE_PD |
			KVREG_FEATURE_PARALLEL_TRANSFER |
			KVREG_FEATURE_REMOTE | KVREG_FEATURE_SUBMIT |
			KVREG_FEATURE_CONNS | KVREG_FEATURE_RAILS |
			KVREG_FEATURE_REVOCABLE_EXPORTS |
			KVREG_FEATURE_EXPORT_PD |
			KVREG_FEATURE_REGISTER_NO_MR;
	return 0;
}

static int kvreg_cmd_register(struct kvreg_file *kf, void *karg,
			      struct kvreg_error *err)
{
	return kvreg_register(kf, karg, err);
}

static int kvreg_cmd_deregister(struct kvreg_file *kf, void *karg,
				struct kvreg_error *err)
{
	struct kvreg_deregister *arg = karg;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	return kvreg_deregister(kf, arg->handle, err);
}

static int kvreg_cmd_query(struct kvreg_file *kf, void *karg,
			   struct kvreg_error *err)
{
	return kvreg_query(kf, karg, err);
}

static int kvreg_cmd_transfer(struct kvreg_file *kf, void *karg,
			      struct kvreg_error *err)
{
	return kvreg_transfer(kf, karg, err);
}

static int kvreg_cmd_listen(struct kvreg_file *kf, void *karg,
			    struct kvreg_error *err)
{
	return kvreg_listen(kf, karg, err);
}

static int kvreg_cmd_export(struct kvreg_file *kf, void *karg,
			    struct kvreg_error *err)
{
	return kvreg_export(kf, karg, err);
}

static int kvreg_cmd_import(struct kvreg_file *kf, void *karg,
			    struct kvreg_error *err)
{
	return kvreg_import(kf, karg, err);
}

static int kvreg_cmd_unimport(struct kvreg_file *kf, void *karg,
			      struct kvreg_error *err)
{
	struct kvreg_unimport *arg = karg;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	return kvreg_unimport(kf, arg->remote, err);
}

/**
 * kvreg_cmd_unexport() - KVREG_IOC_UNEXPORT: revoke one export.
 * @kf: the exporting file
 * @karg: struct kvreg_unexport
 * @err: the error record
 *
 * Return: 0 once no peer can reach the registration through the
 * endpoint, or -errno with the reason in @err.
 */
static int kvreg_cmd_unexport(struct kvreg_file *kf, void *karg,
			      struct kvreg_error *err)
{
	return kvreg_unexport(kf, karg, err);
}

/**
 * kvreg_cmd_unlisten() - KVREG_IOC_UNLISTEN: close an endpoint.
 * @kf: the file that listened
 * @karg: struct kvreg_unlisten
 * @err: the error record
 *
 * Return: 0 once nothing listens, no accepted connection is left and no
 * export of the endpoint works, or -errno with the reason in @err.
 */
static int kvreg_cmd_unlisten(struct kvreg_file *kf, void *karg,
			      struct kvreg_error *err)
{
	struct kvreg_unlisten *arg = karg;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	return kvreg_unlisten(kf, arg->endpoint, err);
}

/**
 * kvreg_cmd_rekey() - KVREG_IOC_REKEY: a new secret for an endpoint.
 * @kf: the file that listened
 * @karg: struct kvreg_rekey
 * @err: the error record
 *
 * Return: 0 once descriptors exported before cannot connect and the
 * connections made with them are cut, or -errno with the reason in @err.
 */
static int kvreg_cmd_rekey(struct kvreg_file *kf, void *karg,
			   struct kvreg_error *err)
{
	struct kvreg_rekey *arg = karg;

	if (arg->flags)
		return kvreg_bad_arg(err, KVREG_ARG_FLAGS);
	if (arg->reserved)
		return kvreg_bad_arg(err, KVREG_ARG_RESERVED);
	return kvreg_rekey(kf, arg->endpoint, err);
}

static int kvreg_cmd_submit(struct kvreg_file *kf, void *karg,
			    struct kvreg_error *err)
{
	return kvreg_submit(kf, karg, err);
}

static int kvreg_cmd_reap(struct kvreg_file *kf, void *karg,
			  struct kvreg_error *err)
{
	return kvreg_reap(kf, karg, err);
}

static int kvreg_cmd_budget(struct kvreg_file *kf, void *karg,
			    struct kvreg_error *err)
{
	return kvreg_acct_set_budget(kf->km, karg, err);
}

/*
 * A file belongs to the process that opened it: its budget, its memlock
 * charge and its pages. Another process (a fork child, a receiver of the
 * fd) may close it; of the calls on it, only the ones that concern no
 * process (DEVICES, FEATURES, PROCS, CONNS) answer it.
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

struct kvreg_cmd {
	unsigned int cmd;
	u32 size_ver0;		/* the least a caller may pass */
	u32 size;		/* what this module knows */
	bool owner_only;	/* the file's own process only */
	int (*handler)(struct kvreg_file *kf, void *karg,
		       struct kvreg_error *err);
};

#define KVREG_CMD(_cmd, type, ver0, owner, fn)				\
	{ .cmd = (_cmd), .size_ver0 = (ver0), .size = sizeof(type),	\
	  .owner_only = (owner), .handler = (fn) }

static const struct kvreg_cmd kvreg_cmds[] = {
	KVREG_CMD(KVREG_IOC_DEVICES, struct kvreg_devices,
		  KVREG_DEVICES_SIZE_VER0, false, kvreg_cmd_devices),
	KVREG_CMD(KVREG_IOC_REGISTER, struct kvreg_register,
		  KVREG_REGISTER_SIZE_VER0, true, kvreg_cmd_register),
	KVREG_CMD(KVREG_IOC_DEREGISTER, struct kvreg_deregister,
		  KVREG_DEREGISTER_SIZE_VER0, true, kvreg_cmd_deregister),
	KVREG_CMD(KVREG_IOC_QUERY, struct kvreg_query,
		  KVREG_QUERY_SIZE_VER0, true, kvreg_cmd_query),
	KVREG_CMD(KVREG_IOC_TRANSFER, struct kvreg_transfer,
		  KVREG_TRANSFER_SIZE_VER0, true, kvreg_cmd_transfer),
	KVREG_CMD(KVREG_IOC_STATS, struct kvreg_stats,
		  KVREG_STATS_SIZE_VER0, true, kvreg_cmd_stats),
	KVREG_CMD(KVREG_IOC_SET_BUDGET, struct kvreg_budget,
		  KVREG_BUDGET_SIZE_VER0, true, kvreg_cmd_budget),
	KVREG_CMD(KVREG_IOC_PROCS, struct kvreg_procs,
		  KVREG_PROCS_SIZE_VER0, false, kvreg_cmd_procs),
	KVREG_CMD(KVREG_IOC_FEATURES, struct kvreg_features,
		  KVREG_FEATURES_SIZE_VER0, false, kvreg_cmd_features),
	KVREG_CMD(KVREG_IOC_LISTEN, struct kvreg_listen,
		  KVREG_LISTEN_SIZE_VER0, true, kvreg_cmd_listen),
	KVREG_CMD(KVREG_IOC_EXPORT, struct kvreg_export,
		  KVREG_EXPORT_SIZE_VER0, true, kvreg_cmd_export),
	KVREG_CMD(KVREG_IOC_IMPORT, struct kvreg_import,
		  KVREG_IMPORT_SIZE_VER0, true, kvreg_cmd_import),
	KVREG_CMD(KVREG_IOC_UNIMPORT, struct kvreg_unimport,
		  KVREG_UNIMPORT_SIZE_VER0, true, kvreg_cmd_unimport),
	KVREG_CMD(KVREG_IOC_SUBMIT, struct kvreg_submit,
		  KVREG_SUBMIT_SIZE_VER0, true, kvreg_cmd_submit),
	KVREG_CMD(KVREG_IOC_REAP, struct kvreg_reap,
		  KVREG_REAP_SIZE_VER0, true, kvreg_cmd_reap),
	KVREG_CMD(KVREG_IOC_CONNS, struct kvreg_conns,
		  KVREG_CONNS_SIZE_VER0, false, kvreg_cmd_conns),
	KVREG_CMD(KVREG_IOC_UNEXPORT, struct kvreg_unexport,
		  KVREG_UNEXPORT_SIZE_VER0, true, kvreg_cmd_unexport),
	KVREG_CMD(KVREG_IOC_UNLISTEN, struct kvreg_unlisten,
		  KVREG_UNLISTEN_SIZE_VER0, true, kvreg_cmd_unlisten),
	KVREG_CMD(KVREG_IOC_REKEY, struct kvreg_rekey,
		  KVREG_REKEY_SIZE_VER0, true, kvreg_cmd_rekey),
};

/* The one call without an error record, the first a client makes. */
static int kvreg_ioctl_abi(void __user *uarg)
{
	struct kvreg_abi_version abi;
	u32 usize;
	int ret;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < sizeof(abi))
		return -EINVAL;
	if (usize > KVREG_MAX_ARG_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&abi, sizeof(abi), uarg, usize);
	if (ret)
		return ret;
	if (abi.flags || abi.abi_version || abi.max_devices)
		return -EINVAL;
	abi.size = sizeof(abi);
	abi.abi_version = KVREG_ABI_VERSION;
	abi.max_devices = KVREG_MAX_DEVICES;
	return copy_to_user(uarg, &abi, sizeof(abi)) ? -EFAULT : 0;
}

/*
 * The record goes where the caller said, as much of it as the caller has
 * room for; room beyond what this module knows is zeroed.
 */
static int kvreg_error_out(const struct kvreg_arg_head *head,
			   const struct kvreg_error *err)
{
	void __user *dst = u64_to_user_ptr(head->error);
	size_t n = min_t(size_t, head->error_size, sizeof(*err));

	if (copy_to_user(dst, err, n))
		return -EFAULT;
	if (head->error_size > n && clear_user(dst + n, head->error_size - n))
		return -EFAULT;
	return 0;
}

/*
 * Copy the struct in (from its first published size up to
 * KVREG_MAX_ARG_SIZE, an unknown tail zero), run the command, and copy
 * back what the caller passed of it and the record, failed or not.
 */
static long kvreg_run_cmd(struct kvreg_file *kf, const struct kvreg_cmd *c,
			  void __user *uarg)
{
	struct kvreg_error err = { .device_index = KVREG_NO_DEVICE_INDEX };
	union kvreg_args karg;
	u32 usize;
	int ret;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < c->size_ver0)
		return -EINVAL;
	if (usize > KVREG_MAX_ARG_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&karg, c->size, uarg, usize);
	if (ret)
		return ret;
	if (karg.head.error_size &&
	    karg.head.error_size < KVREG_ERROR_SIZE_VER0)
		return -EINVAL;
	/* The record's room is zeroed past what is known: bound it too. */
	if (karg.head.error_size > KVREG_MAX_ARG_SIZE)
		return -E2BIG;
	/* A record that cannot be written fails the call before it runs. */
	if (karg.head.error_size && kvreg_error_out(&karg.head, &err))
		return -EFAULT;
	/* Tells the caller how much of its struct this module read. */
	karg.head.size = c->size;

	ret = c->owner_only ? kvreg_owner(kf, &err) : 0;
	if (!ret)
		ret = c->handler(kf, &karg, &err);
	if (copy_to_user(uarg, &karg, min(usize, c->size)))
		return -EFAULT;
	if (karg.head.error_size && kvreg_error_out(&karg.head, &err))
		return -EFAULT;
	return ret;
}

static long kvreg_ioctl(struct file *filp, unsigned int cmd,
			unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	size_t i;

	if (cmd == KVREG_IOC_ABI_VERSION)
		return kvreg_ioctl_abi(uarg);
	for (i = 0; i < ARRAY_SIZE(kvreg_cmds); i++)
		if (kvreg_cmds[i].cmd == cmd)
			return kvreg_run_cmd(filp->private_data,
					     &kvreg_cmds[i], uarg);
	return -ENOTTY;
}

static int kvreg_open(struct inode *inode, struct file *filp)
{
	struct kvreg_file *kf = kzalloc(sizeof(*kf), GFP_KERNEL);
	int ret;

	if (!kf)
		return -ENOMEM;
	kvreg_file_init(kf);
	kvreg_ops_init(kf);
	kf->km = kvreg_mm_get_current();
	if (IS_ERR(kf->km)) {
		ret = PTR_ERR(kf->km);
		kfree(kf);
		return ret;
	}
	kf->uid = filp->f_cred->euid;
	kf->net = get_net(current->nsproxy->net_ns);
	kf->memcg = kvreg_memcg_get_current();
	filp->private_data = kf;
	return nonseekable_open(inode, filp);
}

static int kvreg_release(struct inode *inode, struct file *filp)
{
	struct kvreg_file *kf = filp->private_data;

	/*
	 * Connections first, newest kind first: no endpoint accepts any
	 * more, imported regions drop their connections, accepted ones are
	 * disconnected; only then do the registrations they reach go.
	 */
	mutex_lock(&kf->lock);
	WRITE_ONCE(kf->closing, true);
	mutex_unlock(&kf->lock);
	kvreg_endpoints_release(kf);
	kvreg_ops_release(kf);
	kvreg_remotes_release(kf);
	kvreg_conns_release(kf);
	kvreg_file_release(kf);
	put_net(kf->net);
	kvreg_memcg_put(kf->memcg);
	kvreg_mm_put(kf->km);
	kfree(kf);
	return 0;
}

/* Readable while completions of submitted operations wait to be reaped. */
static __poll_t kvreg_poll(struct file *filp, poll_table *wait)
{
	struct kvreg_file *kf = filp->private_data;

	poll_wait(filp, &kf->cq_wait, wait);
	return kvreg_ops_ready(kf) ? EPOLLIN | EPOLLRDNORM : 0;
}

static const struct file_operations kvreg_fops = {
	.owner = THIS_MODULE,
	.open = kvreg_open,
	.release = kvreg_release,
	.poll = kvreg_poll,
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
	ret = kvreg_conn_init();
	if (ret)
		goto err_parallel;
	ret = kvreg_rails_init();
	if (ret)
		goto err_conn;
	ret = kvreg_devices_init();
	if (ret)
		goto err_rails;
	ret = misc_register(&kvreg_misc);
	if (ret)
		goto err_devices;
	kvreg_debugfs = debugfs_create_dir("kvreg", NULL);
	debugfs_create_x64("inject_fail_mask", 0600, kvreg_debugfs,
			   &kvreg_inject_fail_mask);
	debugfs_create_u32("inject_flush_fail", 0600, kvreg_debugfs,
			   &kvreg_inject_flush_fail);
	debugfs_create_file("inject_hold_teardown", 0600, kvreg_debugfs, NULL,
			    &kvreg_hold_teardown_fops);
	return 0;

err_devices:
	kvreg_devices_exit();
err_rails:
	kvreg_rails_exit();
err_conn:
	kvreg_conn_exit();
err_parallel:
	kvreg_parallel_exit();
	return ret;
}

static void __exit kvreg_exit(void)
{
	debugfs_remove_recursive(kvreg_debugfs);
	misc_deregister(&kvreg_misc);
	kvreg_devices_exit();
	kvreg_rails_exit();
	kvreg_conn_exit();
	kvreg_parallel_exit();
	WARN_ON(kvreg_acct_host_pinned_bytes());
}

module_init(kvreg_init);
module_exit(kvreg_exit);

MODULE_DESCRIPTION("Register host memory for RDMA through the kernel");
MODULE_AUTHOR("kvreg developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(KVREG_VERSION);
