/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvreg internal definitions.
 *
 * Lock order, outermost first:
 *   kvreg_file.lock
 *     kvreg_dev.teardown_rwsem (read by users, write by device removal)
 *       kvreg_dev.qp_mutex
 *       kvreg_dev.mrs_lock
 *   kvreg_devs_lock (device table) is never held across any of the above.
 */
#ifndef KVREG_H
#define KVREG_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "../include/uapi/kvreg.h"

/* Work requests posted in one chain: bounds the send queue and the CQ. */
#define KVREG_WR_BATCH		128
#define KVREG_SQ_DEPTH		(KVREG_WR_BATCH + 1)	/* +1: ib_drain_sq */
#define KVREG_CQ_DEPTH		(2 * KVREG_SQ_DEPTH)
#define KVREG_HUGE_SHIFT	21
#define KVREG_GID_SCAN		16

struct kvreg_dev {
	struct kref ref;
	struct ib_device *ibdev;
	u32 index;
	u32 port;

	/*
	 * Read-held by everything that uses pd/cq/qp or an MR of this device;
	 * write-held by kvreg_remove_one() while it sets @dead, revokes every
	 * MR on @mrs and destroys pd/cq/qp.
	 */
	struct rw_semaphore teardown_rwsem;
	bool dead;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;

	/* Serialises posting on @qp and reconnecting it; guards @qp_ready. */
	struct mutex qp_mutex;
	bool qp_ready;

	/* Protects @mrs (kvreg_reg_dev.dev_node) between concurrent users. */
	spinlock_t mrs_lock;
	struct list_head mrs;
	atomic64_t nr_mrs;

	/* Device limits, read once at add time. */
	u64 max_mr_size;
	u64 page_size_cap;
	u32 max_mr;
	u32 max_fast_reg_pages;
	unsigned int max_seg_size;
};

/* A registration's presence on one device. */
struct kvreg_reg_dev {
	struct kvreg_dev *dev;		/* holds a reference */
	struct list_head dev_node;	/* on dev->mrs while @live */
	/*
	 * True while the MRs below exist. Cleared by the owner (under
	 * teardown_rwsem read and kvreg_file.lock) or by device removal
	 * (under teardown_rwsem write).
	 */
	bool live;
	u32 page_shift;
	u32 nr_mrs;
	struct ib_mr **mrs;
	struct sg_table sgt;		/* this device's DMA-mapped copy */
};

struct kvreg_reg {
	u64 handle;
	u64 addr;
	u64 length;
	u32 access;			/* KVREG_ACCESS_* */
	int ib_access;
	bool writable;
	unsigned long nr_pages;		/* base pages pinned */
	struct sg_append_table pinned;	/* the pinned pages, built once */
	u32 nr_devs;
	struct kvreg_reg_dev devs[];
};

struct kvreg_file {
	/* Protects @regs and every registration in it. */
	struct mutex lock;
	struct xarray regs;
	u32 next_handle;
};

/* Host-wide counters, readable through KVREG_IOC_STATS. */
extern atomic64_t kvreg_pinned_pages;
extern atomic64_t kvreg_nr_regs;
extern atomic64_t kvreg_nr_mrs;
extern u64 kvreg_inject_fail_mask;

/* device.c */
int kvreg_devices_init(void);
void kvreg_devices_exit(void);
struct kvreg_dev *kvreg_dev_get(u32 index);
void kvreg_dev_put(struct kvreg_dev *kdev);
u64 kvreg_devices_present(void);
int kvreg_fill_device_info(u32 index, struct kvreg_device_info *info);

/* Called with qp_mutex held; chains are at most KVREG_WR_BATCH long. */
int kvreg_post_chain(struct kvreg_dev *kdev, struct ib_send_wr *first,
		     struct ib_send_wr *last, enum ib_wc_status *wc_status);

/* pin.c */
int kvreg_pin(struct kvreg_reg *reg, unsigned int max_segment,
	      struct kvreg_error *err);
void kvreg_unpin(struct kvreg_reg *reg);

/* mr.c */
int kvreg_reg_dev_setup(struct kvreg_reg *reg, struct kvreg_reg_dev *rd,
			struct kvreg_error *err);
void kvreg_reg_dev_teardown(struct kvreg_reg_dev *rd);
void kvreg_reg_dev_revoke(struct kvreg_reg_dev *rd);
struct ib_mr *kvreg_reg_dev_find_mr(struct kvreg_reg_dev *rd, u64 va);

/* reg.c */
void kvreg_file_init(struct kvreg_file *kf);
void kvreg_file_release(struct kvreg_file *kf);
int kvreg_register(struct kvreg_file *kf, struct kvreg_register *arg);
int kvreg_deregister(struct kvreg_file *kf, u64 handle,
		     struct kvreg_error *err);
int kvreg_query(struct kvreg_file *kf, struct kvreg_query *arg);
void kvreg_file_stats(struct kvreg_file *kf, struct kvreg_stats *st);
struct kvreg_reg *kvreg_reg_lookup(struct kvreg_file *kf, u64 handle);
int kvreg_copy_keys(struct kvreg_reg *reg, u64 uptr, u32 capacity,
		    u32 key_size);

/* transfer.c */
int kvreg_transfer(struct kvreg_file *kf, struct kvreg_transfer *arg);

static inline void kvreg_set_error(struct kvreg_error *err, u32 reason,
				   u32 device_index)
{
	err->reason = reason;
	err->device_index = device_index;
}

static inline int kvreg_bad_arg(struct kvreg_error *err, u32 argument)
{
	kvreg_set_error(err, KVREG_REASON_BAD_ARGUMENT, KVREG_NO_DEVICE_INDEX);
	err->argument = argument;
	return -EINVAL;
}

#endif /* KVREG_H */
