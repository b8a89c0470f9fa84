/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvreg internals, device layer: an RDMA device as kvreg sees it, its
 * QPs (a file's own, and those connected to peers) and a file's PD on it:
 * device.c, qp.c, file_dev.c. Lock order: kvreg.h.
 */
#ifndef KVREG_DEV_H
#define KVREG_DEV_H

#include <linux/kref.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include "compat.h"

#include "../include/uapi/kvreg.h"

struct kvreg_chain_wait;
struct kvreg_error;
struct kvreg_file;

/* Work requests posted in one chain: bounds the send queue and the CQ. */
#define KVREG_WR_BATCH		128
#define KVREG_SQ_DEPTH		(KVREG_WR_BATCH + 1)	/* +1: ib_drain_sq */
#define KVREG_CQ_DEPTH		(2 * KVREG_SQ_DEPTH)
#define KVREG_HUGE_SHIFT	21
/* The largest MR page kvreg asks for: a 1 GiB hugetlb page's. */
#define KVREG_MAX_PAGE_SHIFT	30
/* A PSN is 24 bits on the wire. */
#define KVREG_PSN_MASK		0xffffff
/* A registration's chain not completed by then is flushed. */
#define KVREG_WR_TIMEOUT	(30 * HZ)
/*
 * Scatter entries a transfer's work request takes at most, when the
 * device allows that many: its local side is the registration's DMA
 * mapping, a run per entry, through the PD's local_dma_lkey.
 */
#define KVREG_WR_SGES		32
#define KVREG_GID_SCAN		16
/*
 * The QP's ACK timeout, 4.096 us * 2^17 = 537 ms, the one the RDMA CM
 * itself gives RoCE (packet lifetime 16, plus one): with six retries a
 * peer that vanished is known in about 4 s, on both sides (the exporter
 * through its keepalive), set on every QP rather than left to a path
 * record. At 2^16 a transfer between two debug-kernel guests on a
 * loaded host once ran out of retries (1.9 s).
 */
#define KVREG_ACK_TIMEOUT	17
#define KVREG_RETRY_COUNT	6

/*
 * Something built on a device (a file's PD, a registration's mapping, an
 * export's MRs, a connection) that device removal must take down.
 * @remove runs with teardown_rwsem held for write, after the user was
 * taken off the list; users are removed newest first, so what was built
 * on another goes before it. Users that @post work requests go before
 * all others: a connection's work addresses registrations' mappings
 * through the PD's local_dma_lkey, which no MR's death revokes, so its QP
 * is drained before any mapping goes, whichever came first.
 */
struct kvreg_dev_user {
	struct list_head node;		/* on kvreg_dev.users */
	void (*remove)(struct kvreg_dev_user *user);
	bool posts;
};

struct kvreg_dev {
	struct kref ref;
	struct ib_device *ibdev;
	u32 index;
	u32 port;

	/*
	 * Read-held by everything that uses a PD, QP or MR of this device;
	 * write-held by kvreg_remove_one() while it sets @dead and removes
	 * every user on @users.
	 */
	struct rw_semaphore teardown_rwsem;
	bool dead;
	/* Set before removal waits for the rwsem; read locklessly. */
	bool dying;

	/* Protects @users between concurrent users (under the rwsem read). */
	spinlock_t users_lock;
	struct list_head users;
	atomic64_t nr_mrs;

	/* Port state, kept current by @event_handler; read locklessly. */
	bool port_active;
	struct ib_event_handler event_handler;

	/* Device limits, read once at add time. */
	u64 max_mr_size;
	u64 page_size_cap;
	u32 max_mr;
	u32 max_fast_reg_pages;
	unsigned int max_seg_size;
	u32 wr_sges;			/* KVREG_WR_SGES, or the device's max */
	/*
	 * rxe before its 6.4 rewrite reads one pointer past its page-list
	 * table when a copy ends at the last entry of a full table (the
	 * table is full when the list length is a multiple of
	 * RXE_BUF_PER_MAP): MR page lists are sized to stay out of that.
	 */
	bool page_list_overread;
};

/*
 * A kernel RC QP connected to itself, on entries of a pooled CQ: the
 * engine that fast-registers and moves data for one file on one device
 * (qp.c). A CM QP (conn.c) is one too.
 */
struct kvreg_qp {
	struct kvreg_dev *dev;
	struct ib_cq *cq;
	/* What @qp holds of @cq, given back to the device's pool. */
	u32 cq_entries;
	struct ib_qp *qp;
	/*
	 * Serialises posting on @qp and reconnecting it; @ready is written
	 * under it and read without it only to be reported.
	 */
	struct mutex mutex;
	/*
	 * SUBMIT's posts (ops.c), which must not wait behind a synchronous
	 * chain that holds @mutex for its whole wait: a CM QP's @ready falls
	 * under both, so a poster holding either sees it before it posts.
	 */
	spinlock_t post_lock;
	bool ready;
	/*
	 * Connected to a peer through the RDMA CM: an error state is final
	 * (the peer is gone or refused us), not something to reconnect.
	 */
	bool cm_peer;
	/*
	 * An importer's QP: kvreg, not the CM, moves it through its states,
	 * so that it never accepts incoming RDMA (qp.c), and it posts no
	 * receive, so that no SEND of the peer lands (a SEND with
	 * Invalidate would invalidate before kvreg saw it).
	 */
	bool own_states;
	/*
	 * The wait of the chain posted last, under @mutex. Allocated on its
	 * own: a QP that goes with a chain it could not flush leaves it
	 * allocated, as a late completion may still be polled into it.
	 */
	struct kvreg_chain_wait *chain;
	/*
	 * Under @mutex: that chain timed out and its flush failed, so it may
	 * still run. Nothing is posted on the QP until its last completion
	 * is in (qp.c).
	 */
	bool chain_owed;
	/*
	 * A CM QP's, set once, before the flush, when a chain's caller was
	 * killed in its wait: the error state is its owner's death, which
	 * the file's release follows, not a fault for a mend to repair.
	 */
	bool killed;
};

/* An accepted connection's sends: ib_drain_sq()'s marker. */
#define KVREG_PASSIVE_SQ_DEPTH	1

/*
 * A protection domain of kvreg's on one device (file_dev.c): an open
 * file's own (on kvreg_file.devs, held by each of its registrations there
 * and its importer's connections), which holds no MR and needs no engine,
 * or an export's (on kvreg_exported.pds, held by its MRs and the
 * connections that presented its secret), with the engine QP that
 * fast-registers those MRs. @pd and @qp are set up under teardown_rwsem
 * read and taken down under it for write by device removal (@pd becomes
 * NULL); use them under teardown_rwsem read, with the device not dead.
 */
struct kvreg_file_dev {
	struct kref ref;
	struct list_head file_node;	/* on the owner's list; its lock */
	struct kvreg_dev *dev;		/* holds a reference */
	struct kvreg_dev_user user;	/* on dev->users while @pd is set */
	struct ib_pd *pd;
	bool engine;			/* @qp is made with @pd */
	struct kvreg_qp qp;
	u32 cg_charged;			/* @pd and @qp, while @pd is set */
#ifdef CONFIG_CGROUP_RDMA
	struct rdma_cgroup *cg;		/* of the task that made them */
#endif
};

/* rxe's page-list entries per table page (PAGE_SIZE / rxe_phys_buf). */
#define KVREG_RXE_BUFS_PER_MAP	(PAGE_SIZE / 16)

/* device.c */
int kvreg_devices_init(void);
void kvreg_devices_exit(void);
struct kvreg_dev *kvreg_dev_get(u32 index);
void kvreg_dev_put(struct kvreg_dev *kdev);
u64 kvreg_devices_present(void);
int kvreg_fill_device_info(u32 index, struct kvreg_device_info *info);
/* Both with teardown_rwsem held for read (or write, for del). */
void kvreg_dev_user_add(struct kvreg_dev *kdev, struct kvreg_dev_user *user);
void kvreg_dev_user_del(struct kvreg_dev *kdev, struct kvreg_dev_user *user);

struct kvreg_dev *kvreg_dev_find(struct ib_device *ibdev);
extern atomic_t kvreg_teardown_holds;
int kvreg_dev_hold_teardown(u32 index, u32 ms);

/* qp.c */
int kvreg_qp_create(struct kvreg_qp *q, struct kvreg_dev *kdev,
		    struct ib_pd *pd);
void kvreg_qp_destroy(struct kvreg_qp *q);
int kvreg_qp_create_cm(struct kvreg_qp *q, struct kvreg_dev *kdev,
		       struct ib_pd *pd, struct rdma_cm_id *cm_id,
		       bool own_states,
		       void (*event_handler)(struct ib_event *, void *),
		       void *ctx);
int kvreg_qp_own_rts(struct kvreg_qp *q, struct rdma_cm_id *cm_id);
void kvreg_qp_destroy_cm(struct kvreg_qp *q, struct rdma_cm_id *cm_id);
bool kvreg_qp_path_ready(struct kvreg_dev *kdev);
/* Called with q->mutex held; chains are at most KVREG_WR_BATCH long. */
/*
 * Waits up to @timeout jiffies, or until a fatal signal (-EINTR); either
 * flushes the QP first. A chain whose flush fails is left to run, and
 * the next one on @q waits for it first, as long again at most.
 */
int kvreg_post_chain(struct kvreg_qp *q, struct ib_send_wr *first,
		     struct ib_send_wr *last, unsigned long timeout,
		     enum ib_wc_status *wc_status);

/* file_dev.c */
struct kvreg_file_dev *kvreg_pd_get(struct list_head *devs,
				    struct kvreg_dev *kdev, bool engine,
				    struct kvreg_error *err);
void kvreg_pds_release(struct list_head *devs);
struct kvreg_file_dev *kvreg_file_dev_get(struct kvreg_file *kf,
					  struct kvreg_dev *kdev,
					  struct kvreg_error *err);
void kvreg_file_dev_put(struct kvreg_file_dev *fdev);
void kvreg_file_devs_release(struct kvreg_file *kf);

#endif /* KVREG_DEV_H */
