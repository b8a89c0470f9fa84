/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvreg internals, registration layer: a registration, its pages and
 * their mapping on each device, and its exports: args.c, pin.c, parallel.c,
 * plan.c, runs.c, mr.c, export.c, reg.c, trace.c.
 */
#ifndef KVREG_REG_H
#define KVREG_REG_H

#include "acct.h"

struct kvreg_endpoint;
struct kvreg_net_addr;

/*
 * A run of scatter entries whose MRs one CPU creates and maps, while other
 * CPUs do the runs after it. Groups start at entry boundaries, so each
 * starts a fresh MR and none depends on another. Pinned entries are cut
 * at KVREG_MAX_RUN so that one long physical run still spreads over CPUs.
 */
struct kvreg_mr_group {
	struct scatterlist *sg;		/* first DMA entry */
	u64 va;				/* user address it maps from */
	u32 nents;
	u32 first_mr;			/* index in the MR array */
};

/* MRs per group: 16 full 4 KiB MRs on rxe are 32 MiB. */
#define KVREG_MRS_PER_GROUP	16
#define KVREG_MAX_RUN		SZ_32M

/*
 * Where a table's runs stand at each 2 MiB stride of a registration's
 * span (from the page of its address): the run holding the stride's
 * first byte, and that run's offset in the span. A walk finds its first
 * byte from the mark before it, in at most a stride's runs, instead of
 * walking every run from the start (one per page where none merged).
 * The pinned table has marks for CPU copies, each device's DMA-mapped
 * copy for the local sides of work requests.
 */
struct kvreg_run_mark {
	struct scatterlist *sg;
	u64 start;
};

#define KVREG_RUN_MARK_SHIFT	21

/*
 * A registration's presence on one device: its pages DMA-mapped there,
 * and no MR. The local side of a work request is a list of scatter
 * entries over the mapping with the PD's local_dma_lkey, as nvme-rdma's
 * are; the MRs a peer uses are an export's (kvreg_export_dev), made in
 * the export's own PD. The registration is charged, on the budgets and
 * the rdma cgroup, the MRs one export of it takes here (@planned_mrs):
 * REGISTER refuses what could not be exported, as it did when it made
 * them.
 *
 * The owner changes it under teardown_rwsem read (no other user can see
 * a registration it is setting up or tearing down); device removal
 * under teardown_rwsem write.
 *
 * A reader of a published registration (QUERY, REGISTER's keys, TRANSFER,
 * SUBMIT) holds a reference, or kvreg_file.lock, which keeps the
 * registration, and then:
 *  - to read @sgt or @dma_marks: dev->teardown_rwsem for read, and sees
 *    @live (and !dev->dead) under it; removal frees both under write;
 *  - for @live, @planned_mrs and @page_shift as numbers to report:
 *    nothing (READ_ONCE); once published they only fall to false and 0.
 */
struct kvreg_reg_dev {
	struct kvreg_dev *dev;		/* holds a reference */
	struct kvreg_file_dev *fdev;	/* the file's PD there; a ref */
	struct kvreg_reg *reg;
	struct kvreg_dev_user user;	/* on dev->users while @mapped */
	bool mapped;			/* @sgt is DMA-mapped */
	bool live;			/* usable: mapped and charged */
	bool charged;			/* MRs charged; kvreg_acct_lock */
	u32 page_shift;			/* of an export's MRs here */
	u32 planned_mrs;		/* an export's MRs here: charged */
	u32 cg_charged;			/* rdma cgroup objects charged */
#ifdef CONFIG_CGROUP_RDMA
	struct rdma_cgroup *cg;
#endif
	struct sg_table sgt;		/* this device's DMA-mapped copy */
	struct kvreg_run_mark *dma_marks;	/* into @sgt's DMA runs */
};

struct kvreg_exported;

/*
 * An export's MRs on one device (export.c): the registration's pages,
 * as @rd maps them, registered again in the export's own PD with the
 * access exported. Made under teardown_rwsem read; device removal takes them
 * down under it for write (@live falls), before @rd and @pd go.
 */
struct kvreg_export_dev {
	struct kvreg_exported *ex;
	struct kvreg_reg_dev *rd;
	struct kvreg_file_dev *pd;	/* the export's; a reference */
	struct kvreg_dev_user user;	/* on dev->users while @live */
	bool live;
	bool charged;			/* @nr_mrs on the budgets */
	u32 nr_mrs;
	struct ib_mr **mrs;
	u32 cg_charged;
#ifdef CONFIG_CGROUP_RDMA
	struct rdma_cgroup *cg;
#endif
};

/*
 * A registration exported through one endpoint: a capability that
 * UNEXPORT, DEREGISTER, UNLISTEN and close revoke. Made and revoked under
 * kvreg_file.ep_mutex, which also protects @ep_node and @nr_devs;
 * @reg_node is under kvreg_file.lock.
 *
 * It has a secret and a protection domain on each device of its own: a
 * connection that presents @secret is accepted into @pds, where only this
 * export's MRs live. So a descriptor's holder reaches this export and no
 * other of the endpoint, whatever rkey it guesses, and an export made
 * again after UNEXPORT (new secret, new PDs) is out of reach of whoever
 * held the old descriptor. @secret, @secret_node and @pds are under the
 * endpoint's mutex, which the accept work takes.
 */
struct kvreg_exported {
	struct list_head ep_node;	/* on kvreg_endpoint.exports */
	struct list_head reg_node;	/* on kvreg_reg.exports */
	struct kvreg_endpoint *ep;
	struct kvreg_reg *reg;		/* a reference: its pages stay mapped */
	u32 access;			/* KVREG_ACCESS_REMOTE_* granted */
	u32 nr_devs;
	struct kvreg_export_dev devs[KVREG_DESC_MAX_PATHS];
	u8 secret[KVREG_SECRET_LEN];
	struct hlist_node secret_node;	/* on kvreg_endpoint.by_secret */
	struct list_head pds;		/* kvreg_file_dev.file_node */
};

struct kvreg_reg {
	u64 handle;
	u64 addr;
	u64 length;
	u32 access;			/* KVREG_ACCESS_* */
	int ib_access;
	bool writable;
	unsigned int gup_flags;		/* set by kvreg_check_memory() */
	bool huge_backed;		/* hugetlb or 2 MiB runs underneath */
	u32 refs;			/* callers'; kvreg_file.lock */
	/*
	 * Lifetime: one for the handle table, one for each transfer using
	 * it, so a transfer holds its registrations, not the file's lock.
	 * The last put unpins and frees, after an RCU grace period: a
	 * lookup without the file's lock (kvreg_reg_get()) may still be
	 * trying this reference.
	 */
	struct kref kref;
	struct rcu_head rcu;
	/* On kvreg_file.by_range while in kvreg_file.regs; same lock. */
	struct rb_node range_node;
	u64 range_subtree_last;
	u64 dev_mask;			/* devices asked for */
	struct kvreg_mm *km;
	unsigned long nr_pages;		/* base pages pinned */
	struct sg_append_table pinned;	/* the pinned pages, built once */
	/* Into @pinned, built with it and freed with it: fixed between. */
	struct kvreg_run_mark *run_marks;
	bool all_hugetlb;		/* every VMA of the range is hugetlb */
	bool thp_advised;		/* every other one is MADV_HUGEPAGE */
	/*
	 * hugetlb and THP: one pin per folio (per page where PTEs map it),
	 * these pages; else one per page, found through @pinned.
	 */
	struct page **folio_pins;
	unsigned long nr_folio_pins;
	/* kvreg_exported.reg_node: where it is exported; kvreg_file.lock. */
	struct list_head exports;
	u32 nr_devs;
	struct kvreg_reg_dev devs[];
};

/* parallel.c */
int kvreg_parallel_init(void);
void kvreg_parallel_exit(void);
int kvreg_parallel(unsigned int nr_chunks,
		   int (*fn)(void *ctx, unsigned int chunk), void *ctx,
		   struct mm_struct *mm);

/* pin.c */
int kvreg_pin(struct kvreg_reg *reg, unsigned int max_segment,
	      struct kvreg_error *err);
void kvreg_unpin(struct kvreg_reg *reg);

/* runs.c: pure, no locks. */
struct kvreg_run_mark *kvreg_mark_runs(struct sg_table *sgt, bool dma,
				       u64 span);
u32 kvreg_reg_dev_sges(struct kvreg_reg_dev *rd, u64 va, u64 *len,
		       struct ib_sge *sge, u32 max, u32 lkey,
		       struct kvreg_run_mark *at);

/* args.c */
int kvreg_access_to_ib(u32 access);
int kvreg_check_register(struct kvreg_register *arg, u64 present,
			 struct kvreg_error *err);
void kvreg_range_insert(struct kvreg_file *kf, struct kvreg_reg *reg);
void kvreg_range_remove(struct kvreg_file *kf, struct kvreg_reg *reg);
struct kvreg_reg *kvreg_find_same(struct kvreg_file *kf,
				  struct kvreg_register *arg, u64 mask,
				  struct kvreg_error *err, int *ret);

/* plan.c: pure arithmetic, no locks, no allocation. */
u32 kvreg_pick_page_shift(struct kvreg_dev *kdev, struct kvreg_reg *reg,
			  struct sg_table *sgt);
u32 kvreg_plan_mrs(struct sg_table *sgt, unsigned int first_offset,
		   u32 page_shift, u32 pages_per_mr);
u32 kvreg_plan_groups(struct sg_table *sgt, u64 addr, u32 page_shift,
		      u32 pages_per_mr, u64 group_pages,
		      struct kvreg_mr_group *groups, u32 *nr_groups);
u32 kvreg_max_groups(struct sg_table *sgt, unsigned long nr_pages,
		     u64 group_pages);
u32 kvreg_mr_alloc_pages(struct kvreg_dev *kdev, u64 va, u64 left,
			 u32 page_shift, u32 pages_per_mr);
u32 kvreg_pages_per_mr(struct kvreg_dev *kdev, u32 page_shift);

/* mr.c */
int kvreg_reg_dev_prepare(struct kvreg_reg *reg, struct kvreg_reg_dev *rd,
			  struct kvreg_error *err);
int kvreg_reg_dev_commit(struct kvreg_reg_dev *rd, struct kvreg_error *err);
void kvreg_reg_dev_teardown(struct kvreg_reg_dev *rd);
int kvreg_mrs_make(struct kvreg_reg_dev *rd, struct kvreg_file_dev *pd,
		   int ib_access, struct ib_mr ***mrsp,
		   struct kvreg_error *err);
void kvreg_mrs_free(struct ib_mr **mrs, u32 nr);

/* export.c */
int kvreg_exported_get(struct kvreg_endpoint *ep, struct kvreg_reg *reg,
		       struct kvreg_exported **exp, struct kvreg_error *err);
struct kvreg_exported *kvreg_exported_find(struct kvreg_endpoint *ep,
					   struct kvreg_reg *reg);
struct kvreg_export_dev *kvreg_exported_on(struct kvreg_exported *ex,
					   struct kvreg_dev *kdev);
void kvreg_exported_revoke(struct kvreg_exported *ex);
/* Under @ep's mutex: the export whose secret is @secret, or NULL. */
struct kvreg_exported *kvreg_export_by_secret(struct kvreg_endpoint *ep,
					      const u8 *secret);
void kvreg_exports_rekey(struct kvreg_endpoint *ep);
void kvreg_reg_revoke_exports(struct kvreg_file *kf, struct kvreg_reg *reg);

/*
 * trace.c: per-stage time, for profiles (the kvreg_stage tracepoint; its
 * names are trace.h's, in this order).
 */
enum kvreg_stage {
	KVREG_STAGE_REGISTER,		/* the whole ioctl, up to PUBLISH */
	KVREG_STAGE_DEVICES,		/* the file's PD on each */
	KVREG_STAGE_CHECK_MEMORY,
	KVREG_STAGE_PIN,		/* includes SG_BUILD */
	KVREG_STAGE_SG_BUILD,
	KVREG_STAGE_DMA_MAP,
	/* EXPORT's, since REGISTER makes no MR: */
	KVREG_STAGE_ALLOC_MR,		/* wall clock of the two below */
	KVREG_STAGE_ALLOC_MR_ONLY,	/* summed over CPUs */
	KVREG_STAGE_MAP_MR_SG,		/* summed over CPUs */
	KVREG_STAGE_POST_REG,
	KVREG_STAGE_PUBLISH,		/* handle, range tree, keys out */
	KVREG_STAGE_DEREGISTER,		/* its last put: unmap, unpin */
	KVREG_STAGE_DEREG_MR,		/* an export's, when revoked */
	KVREG_STAGE_DMA_UNMAP,
	KVREG_STAGE_UNPIN,
	KVREG_NR_STAGES
};

u64 kvreg_stage_begin(void);
void kvreg_stage_end(enum kvreg_stage stage, u64 start_ns);

/* reg.c */
void kvreg_file_init(struct kvreg_file *kf);
void kvreg_file_release(struct kvreg_file *kf);
int kvreg_register(struct kvreg_file *kf, struct kvreg_register *arg,
		   struct kvreg_error *err);
int kvreg_deregister(struct kvreg_file *kf, u64 handle,
		     struct kvreg_error *err);
int kvreg_query(struct kvreg_file *kf, struct kvreg_query *arg,
		struct kvreg_error *err);
void kvreg_file_stats(struct kvreg_file *kf, struct kvreg_stats *st);
struct kvreg_reg *kvreg_reg_lookup(struct kvreg_file *kf, u64 handle);
struct kvreg_reg *kvreg_reg_get(struct kvreg_file *kf, u64 handle);
void kvreg_reg_put(struct kvreg_reg *reg);
/* Keys taken under kvreg_file.lock, copied out after it is dropped. */
struct kvreg_keys {
	struct kvreg_key *keys;
	u32 n;				/* all of them */
	u32 room;			/* taken: at most the caller's room */
};

int kvreg_keys_snap(struct kvreg_reg *reg, u32 capacity, struct kvreg_keys *k);
int kvreg_keys_put_user(struct kvreg_keys *k, u64 uptr, u32 key_size);

#endif /* KVREG_REG_H */
