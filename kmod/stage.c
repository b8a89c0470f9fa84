// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where registration time goes: cumulative time and calls per stage,
 * readable (and reset by any write) at debugfs kvreg/stages. Stages are
 * wall-clock time of the registering thread, except the cpu_ ones: the
 * sum over every CPU working on the stage they are part of. Two clock
 * reads per stage per call cost nothing next to the stages themselves, so
 * they stay on in production where a slow start-up needs explaining.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "kvreg.h"

static const char * const kvreg_stage_names[KVREG_NR_STAGES] = {
	[KVREG_STAGE_REGISTER]		= "register",
	[KVREG_STAGE_DEVICES]		= "devices",
	[KVREG_STAGE_CHECK_MEMORY]	= "check_memory",
	[KVREG_STAGE_PIN]		= "pin",
	[KVREG_STAGE_SG_BUILD]		= "pin_sg_build",
	[KVREG_STAGE_DMA_MAP]		= "dma_map",
	[KVREG_STAGE_ALLOC_MR]		= "alloc_map_mr",
	[KVREG_STAGE_ALLOC_MR_ONLY]	= "cpu_ib_alloc_mr",
	[KVREG_STAGE_MAP_MR_SG]		= "cpu_ib_map_mr_sg",
	[KVREG_STAGE_POST_REG]		= "post_reg_mr",
	[KVREG_STAGE_PUBLISH]		= "publish",
	[KVREG_STAGE_DEREGISTER]	= "deregister",
	[KVREG_STAGE_DEREG_MR]		= "dereg_mr",
	[KVREG_STAGE_DMA_UNMAP]		= "dma_unmap",
	[KVREG_STAGE_UNPIN]		= "unpin",
};

struct kvreg_stage_count {
	atomic64_t ns;
	atomic64_t calls;
};

static struct kvreg_stage_count kvreg_stages[KVREG_NR_STAGES];

void kvreg_stage_end(enum kvreg_stage stage, u64 start_ns)
{
	atomic64_add(ktime_get_ns() - start_ns, &kvreg_stages[stage].ns);
	atomic64_inc(&kvreg_stages[stage].calls);
}

static int kvreg_stages_show(struct seq_file *m, void *unused)
{
	int i;

	seq_puts(m, "stage calls total_ns\n");
	for (i = 0; i < KVREG_NR_STAGES; i++)
		seq_printf(m, "%s %lld %lld\n", kvreg_stage_names[i],
			   atomic64_read(&kvreg_stages[i].calls),
			   atomic64_read(&kvreg_stages[i].ns));
	return 0;
}

static int kvreg_stages_open(struct inode *inode, struct file *file)
{
	return single_open(file, kvreg_stages_show, NULL);
}

static ssize_t kvreg_stages_reset(struct file *file, const char __user *buf,
				  size_t len, loff_t *ppos)
{
	int i;

	for (i = 0; i < KVREG_NR_STAGES; i++) {
		atomic64_set(&kvreg_stages[i].ns, 0);
		atomic64_set(&kvreg_stages[i].calls, 0);
	}
	return len;
}

static const struct file_operations kvreg_stages_fops = {
	.owner = THIS_MODULE,
	.open = kvreg_stages_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.write = kvreg_stages_reset,
	.release = single_release,
};

void kvreg_stages_debugfs(struct dentry *dir)
{
	debugfs_create_file("stages", 0600, dir, NULL, &kvreg_stages_fops);
}
