/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvreg internals, accounting layer: what a process may hold and what
 * it holds (pinned pages, MRs, the caps), and the module parameters that
 * set the limits: acct.c, caps.c, vma.c, params.c.
 */
#ifndef KVREG_ACCT_H
#define KVREG_ACCT_H

#include "dev.h"

struct kvreg_reg;
struct kvreg_reg_dev;

/*
 * One process (one mm) using kvreg: its budget and usage, shared by every
 * file it opens. Files opened by a process are bound to its mm; another
 * process using them is refused, so fork and fd passing cannot escape it.
 */
struct kvreg_mm {
	struct list_head node;		/* on kvreg_mms; kvreg_acct_lock */
	struct mm_struct *mm;		/* mmgrab()ed: for pinned_vm */
	pid_t tgid;
	char comm[TASK_COMM_LEN];
	/* Everything below is protected by kvreg_acct_lock. */
	u32 files;
	u64 own_max_mrs;		/* KVREG_UNLIMITED: module default */
	u64 own_max_bytes;
	u64 nr_mrs;
	u64 pinned_bytes;
	u64 nr_regs;
	/* These three are protected by kvreg_caps_lock (caps.c). */
	u32 nr_endpoints;
	u32 nr_imports;
	u64 nr_import_chunks;
};

/* Host-wide counters, readable through KVREG_IOC_STATS. */
extern atomic64_t kvreg_nr_regs;
extern atomic64_t kvreg_nr_mrs;
extern u64 kvreg_inject_fail_mask;
extern u32 kvreg_inject_flush_fail;

/* Module parameters: defaults an admin may change at run time. */
extern unsigned long kvreg_max_mrs_per_process;
extern unsigned long kvreg_max_bytes_per_process;
extern unsigned long kvreg_host_max_bytes;
extern unsigned int kvreg_device_mr_reserve_percent;
extern unsigned long kvreg_max_mrs_per_device;
extern unsigned int kvreg_max_threads;
extern unsigned int kvreg_keepalive_ms;
extern unsigned int kvreg_max_endpoints_per_process;
extern unsigned int kvreg_max_conns_per_endpoint;
extern unsigned int kvreg_max_conns_per_peer;
extern unsigned int kvreg_max_imports_per_process;
extern unsigned int kvreg_max_desc_chunks;
extern unsigned long kvreg_max_import_chunks_per_process;
extern unsigned int kvreg_max_unreaped;
extern unsigned int kvreg_op_timeout_ms;

/* caps.c */
int kvreg_cap_refuse(struct kvreg_error *err, u32 reason, u64 limit,
		     u64 usage, u64 request);
int kvreg_caps_charge_endpoint(struct kvreg_mm *km, struct kvreg_error *err);
void kvreg_caps_uncharge_endpoint(struct kvreg_mm *km);
int kvreg_caps_check_import(struct kvreg_mm *km, u64 chunks,
			    struct kvreg_error *err);
int kvreg_caps_charge_import(struct kvreg_mm *km, u64 chunks,
			     struct kvreg_error *err);
void kvreg_caps_uncharge_import(struct kvreg_mm *km, u64 chunks);
void kvreg_caps_stats(struct kvreg_mm *km, struct kvreg_stats *st);

/* acct.c */
struct kvreg_mm *kvreg_mm_get_current(void);
void kvreg_mm_put(struct kvreg_mm *km);
void kvreg_acct_init(void);
int kvreg_acct_charge_pages(struct kvreg_mm *km, unsigned long nr_pages,
			    struct kvreg_error *err);
void kvreg_acct_uncharge_pages(struct kvreg_mm *km, unsigned long nr_pages);
int kvreg_acct_charge_mrs(struct kvreg_reg *reg, struct kvreg_error *err);
int kvreg_acct_charge_dev_mrs(struct kvreg_mm *km, struct kvreg_dev *kdev,
			      u32 nr, struct kvreg_error *err);
void kvreg_acct_uncharge_dev_mrs(struct kvreg_mm *km, struct kvreg_dev *kdev,
				 u32 nr);
void kvreg_acct_uncharge_mrs(struct kvreg_reg_dev *rd);
int kvreg_acct_set_budget(struct kvreg_mm *km, struct kvreg_budget *b,
			  struct kvreg_error *err);
void kvreg_acct_stats(struct kvreg_mm *km, struct kvreg_stats *st);
u64 kvreg_acct_host_pinned_bytes(void);
int kvreg_acct_procs(struct kvreg_procs *arg, struct kvreg_error *err);
u64 kvreg_device_mr_limit(struct kvreg_dev *kdev);
#ifdef CONFIG_CGROUP_RDMA
int kvreg_cg_charge(struct kvreg_dev *kdev, struct rdma_cgroup **cg,
		    u32 *charged, u32 want, struct kvreg_error *err);
void kvreg_cg_uncharge(struct kvreg_dev *kdev, struct rdma_cgroup *cg,
		       u32 *charged);
#endif

/* vma.c */
int kvreg_check_memory(struct kvreg_reg *reg, struct kvreg_error *err);

#endif /* KVREG_ACCT_H */
