/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvreg internal definitions.
 *
 * Lock order, outermost first:
 *   kvreg_file.ep_mutex (endpoints and exports; never taken by a CM
 *   callback, so it may be held across rdma_destroy_id())
 *   kvreg_file.lock
 *     kvreg_dev.teardown_rwsem (read by users, write by device removal)
 *       kvreg_qp.mutex (of a file's QP on that device)
 *       kvreg_acct_lock (budgets and charges; held only briefly)
 *       kvreg_dev.users_lock
 *   kvreg_devs_lock (device table) is never held across any of the above.
 *   kvreg_net_lock (net_list.c: the list of endpoints and connections) is
 *   innermost: taken under kvreg_file.lock or alone, and takes nothing.
 *
 * A file's rails to one endpoint (rails.c): kvreg_peer.mutex (connecting
 * and swapping rails) is taken alone or before kvreg_file.lock;
 * kvreg_peer.lock (a spinlock, also from the CQ's softirq) is innermost.
 *
 * kvreg_endpoint.mutex is taken alone or under kvreg_file.lock, before a
 * device's teardown_rwsem; a CM callback takes it (for the secret and the
 * endpoint's PD), so it is never held across rdma_destroy_id() either.
 * The RDMA CM holds its id's handler_mutex while it calls kvreg (which
 * then takes kvreg_file.lock): no kvreg lock but kvreg_file.ep_mutex is
 * held across rdma_destroy_id(), rdma_listen() or the like.
 */
#ifndef KVREG_H
#define KVREG_H

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

/* Work requests posted in one chain: bounds the send queue and the CQ. */
#define KVREG_WR_BATCH		128
#define KVREG_SQ_DEPTH		(KVREG_WR_BATCH + 1)	/* +1: ib_drain_sq */
#define KVREG_CQ_DEPTH		(2 * KVREG_SQ_DEPTH)
#define KVREG_HUGE_SHIFT	21
/* The largest MR page kvreg asks for: a 1 GiB hugetlb page's. */
#define KVREG_MAX_PAGE_SHIFT	30
/* A registration's chain not completed by then is flushed. */
#define KVREG_WR_TIMEOUT	(30 * HZ)
#define KVREG_GID_SCAN		16
/*
 * The QP's ACK timeout, 4.096 us * 2^16 = 268 ms: with six retries a
 * peer that vanished is known in about 2 s, on both sides (the exporter
 * through its keepalive), not at the mercy of a path record.
 */
#define KVREG_ACK_TIMEOUT	16
#define KVREG_RETRY_COUNT	6

/*
 * Something built on a device (a file's PD and QP, a registration's MRs)
 * that device removal must take down. @remove runs with teardown_rwsem
 * held for write, after the user was taken off the list; users are
 * removed newest first, so what was built on another goes before it.
 */
struct kvreg_dev_user {
	struct list_head node;		/* on kvreg_dev.users */
	void (*remove)(struct kvreg_dev_user *user);
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
	/*
	 * rxe before its 6.4 rewrite reads one pointer past its page-list
	 * table when a copy ends at the last entry of a full table (the
	 * table is full when the list length is a multiple of
	 * RXE_BUF_PER_MAP): MR page lists are sized to stay out of that.
	 */
	bool page_list_overread;
};

/*
 * A kernel RC QP connected to itself, with a CQ of its own: the engine that
 * fast-registers and moves data for one file on one device (qp.c).
 */
struct kvreg_qp {
	struct kvreg_dev *dev;
	struct ib_cq *cq;
	struct ib_qp *qp;
	/*
	 * Serialises posting on @qp and reconnecting it; @ready is written
	 * under it and read without it only to be reported.
	 */
	struct mutex mutex;
	bool ready;
	/*
	 * Connected to a peer through the RDMA CM: an error state is final
	 * (the peer is gone or refused us), not something to reconnect.
	 */
	bool cm_peer;
	/*
	 * An importer's QP: kvreg, not the CM, moves it through its states,
	 * so that it never accepts incoming RDMA (qp.c). It keeps
	 * KVREG_KEEPALIVE_RECVS empty receives posted for the exporter's
	 * keepalive SENDs, each posted again from @recv_cqe when used.
	 */
	bool own_states;
	struct ib_cqe recv_cqe;
};

/* An accepted connection's sends: a keepalive and ib_drain_sq()'s marker. */
#define KVREG_PASSIVE_SQ_DEPTH	2

/* Receives an importer's QP keeps posted for the exporter's keepalives. */
#define KVREG_KEEPALIVE_RECVS	4

/*
 * A protection domain of kvreg's on one device and the loopback QP that
 * fast-registers and moves data in it (file_dev.c): an open file's own
 * (on kvreg_file.devs, held by each of its registrations there), or an
 * endpoint's (on kvreg_endpoint.devs, held by its exports' MRs and the
 * connections it accepted). @pd and @qp are set up under
 * teardown_rwsem read and taken down under it for write by device removal
 * (@pd becomes NULL); use them under teardown_rwsem read, with the device
 * not dead.
 */
struct kvreg_file_dev {
	struct kref ref;
	struct list_head file_node;	/* on the owner's list; its lock */
	struct kvreg_dev *dev;		/* holds a reference */
	struct kvreg_dev_user user;	/* on dev->users while @pd is set */
	struct ib_pd *pd;
	struct kvreg_qp qp;
};

/* rxe's page-list entries per table page (PAGE_SIZE / rxe_phys_buf). */
#define KVREG_RXE_BUFS_PER_MAP	(PAGE_SIZE / 16)

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
	u32 first_mr;			/* index in kvreg_reg_dev.mrs */
};

/* MRs per group: 16 full 4 KiB MRs on rxe are 32 MiB. */
#define KVREG_MRS_PER_GROUP	16
#define KVREG_MAX_RUN		SZ_32M

/*
 * A registration's presence on one device. The owner changes it under
 * teardown_rwsem read (no other user can see a registration it is
 * setting up or tearing down); device removal under teardown_rwsem write.
 *
 * A reader of a published registration (QUERY, REGISTER's keys, TRANSFER)
 * holds kvreg_file.lock, which keeps the registration, and then:
 *  - to dereference @mrs or @sgt: dev->teardown_rwsem for read, and sees
 *    @live (and !dev->dead) under it; removal frees both under write;
 *  - for @live, @nr_mrs and @page_shift as numbers to report: nothing
 *    (READ_ONCE); once published they only fall to false and 0.
 */
struct kvreg_reg_dev {
	struct kvreg_dev *dev;		/* holds a reference */
	struct kvreg_file_dev *fdev;	/* the PD its MRs live in; a ref */
	struct kvreg_reg *reg;
	struct kvreg_dev_user user;	/* on dev->users while @mapped */
	bool mapped;			/* @sgt is DMA-mapped */
	bool live;			/* the MRs are registered */
	bool charged;			/* MRs charged; kvreg_acct_lock */
	u32 page_shift;
	u32 planned_mrs;
	u32 nr_mrs;			/* allocated so far */
	u32 cg_charged;			/* rdma cgroup objects charged */
#ifdef CONFIG_CGROUP_RDMA
	struct rdma_cgroup *cg;
#endif
	struct ib_mr **mrs;		/* planned_mrs long; NULL: not made */
	struct sg_table sgt;		/* this device's DMA-mapped copy */
	/* Planned with the MRs, freed once they are mapped. */
	struct kvreg_mr_group *groups;
	u32 nr_groups;
};

struct kvreg_exported;

/*
 * An export's MRs on one device (export.c): the registration's pages,
 * as @rd maps them, registered again in the endpoint's PD with the access
 * exported. Made under teardown_rwsem read; device removal takes them
 * down under it for write (@live falls), before @rd and @pd go.
 */
struct kvreg_export_dev {
	struct kvreg_exported *ex;
	struct kvreg_reg_dev *rd;
	struct kvreg_file_dev *pd;	/* the endpoint's; a reference */
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
 */
struct kvreg_exported {
	struct list_head ep_node;	/* on kvreg_endpoint.exports */
	struct list_head reg_node;	/* on kvreg_reg.exports */
	struct kvreg_endpoint *ep;
	struct kvreg_reg *reg;		/* a reference: its pages stay mapped */
	u32 access;			/* KVREG_ACCESS_REMOTE_* granted */
	u32 nr_devs;
	struct kvreg_export_dev devs[KVREG_DESC_MAX_PATHS];
};

struct kvreg_reg {
	u64 handle;
	u64 addr;
	u64 length;
	u32 access;			/* KVREG_ACCESS_* */
	int ib_access;
	bool writable;
	bool huge_backed;		/* hugetlb or 2 MiB runs underneath */
	u32 refs;			/* callers'; kvreg_file.lock */
	/*
	 * Lifetime: one for the handle table, one for each transfer using
	 * it, so a transfer holds its registrations, not the file's lock.
	 * The last put unpins and frees.
	 */
	struct kref kref;
	/* On kvreg_file.by_range while in kvreg_file.regs; same lock. */
	struct rb_node range_node;
	u64 range_subtree_last;
	u64 dev_mask;			/* devices asked for */
	struct kvreg_mm *km;
	unsigned long nr_pages;		/* base pages pinned */
	struct sg_append_table pinned;	/* the pinned pages, built once */
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

/* One MR of a remote region: region offsets [start, start + length). */
struct kvreg_rchunk {
	u64 start;
	u64 iova;
	u64 length;
	u32 rkey;
};

/* A region's MRs on one path's device: they tile the whole region. */
struct kvreg_rpath {
	u32 nr_chunks;
	struct kvreg_rchunk *chunks;	/* kvmalloc'ed, in region order */
};

/* A descriptor as IMPORT read it (desc.c). */
struct kvreg_desc {
	u64 length;
	u64 nr_chunks;			/* every path's */
	u32 access;
	u32 nr_paths;
	struct kvreg_net_addr addrs[KVREG_DESC_MAX_PATHS];
	struct kvreg_rpath paths[KVREG_DESC_MAX_PATHS];
	u8 secret[KVREG_SECRET_LEN];
};

/*
 * An endpoint's or a connection's place on the host-wide list that
 * KVREG_IOC_CONNS reads (net_list.c). Owner and addresses are set before
 * it is listed and never change; the counters are atomic, updated from
 * the CQ's softirq.
 */
struct kvreg_net_entry {
	struct list_head node;		/* kvreg_net_lock */
	u32 kind;			/* enum kvreg_conn_kind */
	pid_t tgid;
	kuid_t uid;
	char comm[TASK_COMM_LEN];
	u64 endpoint;
	struct kvreg_net_addr local;
	struct kvreg_net_addr peer;
	atomic_t inflight;
	atomic64_t ops;
	atomic64_t ops_failed;
	atomic64_t bytes;
	atomic64_t failovers;
	u32 last_wc_status;		/* WRITE_ONCE/READ_ONCE */
	u32 device_index;		/* a listener's */
};

struct kvreg_peer;

/* kvreg_conn.connect_state of an active connection. */
enum {
	KVREG_CONNECTING,
	KVREG_CONNECTED,
	KVREG_CONNECT_REMOVED,		/* its device went first */
};

/*
 * One RDMA CM connection (conn.c), serving one open file, on the device
 * the CM routed it through. Active (this file imported a region of the
 * peer, and posts): its QP lives in the file's PD and takes no RDMA.
 * Passive (accepted on one of this file's endpoints; the peer posts, this
 * side only responds): its QP lives in the endpoint's PD.
 *
 * Lifetime: a reference for the file's list (passive) or for each remote
 * region (active), one for a queued @close_work. The last put tears the
 * QP down and destroys @cm_id, so it must not come from a CM callback.
 */
struct kvreg_conn {
	struct kref ref;
	struct kvreg_net_entry entry;
	struct list_head file_node;	/* passive: on kf->conns; kf->lock */
	struct kvreg_file *kf;
	/* Passive: the endpoint it was accepted on, while on kf->conns. */
	struct kvreg_endpoint *ep;
	struct kvreg_dev *dev;		/* a reference, once routed */
	struct kvreg_file_dev *fdev;	/* the PD of its QP; a reference */
	struct kvreg_dev_user user;	/* on dev->users while @qp_live */
	/*
	 * Whoever swaps it to NULL destroys it: the last put, or the CM
	 * itself on DEVICE_REMOVAL (after removal took the QP down).
	 */
	struct rdma_cm_id *cm_id;
	struct kvreg_qp q;
	/*
	 * kvreg_conn_abort() may run beside a teardown (both under the
	 * teardown_rwsem read), and a late REP's CM callback beside the
	 * teardown of a connect that timed out: @qp_gone, set under
	 * @abort_mutex before the QP is destroyed, keeps both off a QP that
	 * is going.
	 */
	struct mutex abort_mutex;
	bool qp_gone;
	atomic_t submit_free;		/* SQ slots left for SUBMIT */
	bool qp_live;			/* under dev->teardown_rwsem */
	bool passive;
	bool established;		/* read locklessly */
	bool lost;			/* disconnected; read locklessly */
	unsigned long close_queued;	/* bit 0: @close_work was queued */
	/* Active: the CM's answer to the step the importer waits on. */
	struct completion cm_done;
	enum rdma_cm_event_type cm_event;
	int cm_status;
	u16 rej_reason;			/* a kvreg peer's, or 0 */
	u16 rej_version;
	u32 rej_limit;			/* a cap's numbers, with its reason */
	u32 rej_usage;
	/*
	 * Active: who destroys @cm_id if the device goes while IMPORT is
	 * still connecting (KVREG_CONNECTING): the connecting caller, which
	 * still uses the id; once it finished (KVREG_CONNECTED), the CM.
	 */
	atomic_t connect_state;
	/* Passive: unlink when it drops (later, while its port is down). */
	struct delayed_work close_work;
	/*
	 * Passive: an empty SEND every kvreg_keepalive_ms, into a receive
	 * the importer keeps posted (its QP takes no RDMA, so no RDMA WRITE
	 * would do); a peer gone without a DREQ fails it at the retry
	 * limit, and the connection is let go.
	 */
	struct delayed_work keepalive;
	struct ib_cqe keepalive_cqe;
	atomic_t keepalive_busy;
	u32 keepalive_stuck;		/* periods a SEND has been pending */
	/* Active: the address it connects to, and the endpoint's secret. */
	struct kvreg_net_addr peer;
	u8 secret[KVREG_SECRET_LEN];
	u64 device_mask;		/* local devices it may use; 0: any */
	/*
	 * Active: the rail it is (rails.c), set before it is listed; the
	 * peer outlives it on the list. @lost_fn runs (from the CM's
	 * callback) when it goes down, so the rail is mended.
	 */
	struct kvreg_peer *rail_peer;
	u32 rail;
	void (*lost_fn)(struct kvreg_conn *conn);
};

struct kvreg_endpoint;

/* LISTEN's backlog, at most: ucma's default max_backlog. */
#define KVREG_MAX_BACKLOG	1024

/*
 * One address an endpoint listens on (endpoint.c), allocated on its own:
 * its address is its CM id's context. Set before it is put on the
 * endpoint; then only @cm_id changes: swapped to NULL by whoever
 * destroys it (see kvreg_conn.cm_id).
 */
struct kvreg_listener {
	struct kvreg_endpoint *ep;
	struct kvreg_net_entry entry;
	struct rdma_cm_id *cm_id;
	struct kvreg_dev *dev;		/* the address's device; a ref */
	struct kvreg_net_addr addr;	/* as bound, port included */
};

/*
 * A listening endpoint of a file: one secret, an address per rail, and a
 * protection domain of its own on each device it listens on, where the
 * connections it accepts and the MRs of its exports live, and nothing
 * else. Made, changed and freed under kf->ep_mutex; a listener's CM
 * callback may use it until rdma_destroy_id() of every listener returns.
 */
struct kvreg_endpoint {
	struct list_head node;		/* on kf->endpoints; kf->lock */
	u64 handle;
	struct kvreg_file *kf;
	bool closing;			/* kf->lock: accept no connection */
	/*
	 * Protects @secret, @secret_gen, @nr_listeners, @listeners and
	 * @devs. A CM callback takes it: never call into the CM holding it.
	 */
	struct mutex mutex;
	u8 secret[KVREG_SECRET_LEN];
	/*
	 * Bumped with each new secret: a connection let in with the one
	 * before is refused when it would be listed (see REKEY).
	 */
	u32 secret_gen;
	u32 nr_listeners;
	struct kvreg_listener *listeners[KVREG_DESC_MAX_PATHS];
	struct list_head devs;		/* kvreg_file_dev.file_node */
	struct list_head exports;	/* kvreg_exported; kf->ep_mutex */
	u32 nr_conns;			/* on kf->conns with @ep; kf->lock */
};

/* One path of a peer's endpoint, and the connection that serves it. */
struct kvreg_rail {
	struct kvreg_net_addr addr;
	struct kvreg_conn *conn;	/* a reference; NULL: never up */
	bool excluded;			/* its device is not in device_mask */
	/* Why the last reconnect failed: under @mutex, read locklessly. */
	u32 mend_reason;
	s32 mend_errno;
};

/*
 * A file's rails to one endpoint (rails.c): a connection per path of its
 * descriptors, shared by every region imported from it with the same
 * device mask. Held by each of those regions; the last put lets every
 * rail go. @lock (a spinlock: the CQ's softirq takes it) protects each
 * rail's @conn, @nr_rails, @retry and @closing; @mutex protects adding
 * rails, each rail's @excluded and mend state, and @mend_ms. It is not
 * held across a connect (kvreg_rail_connect() drops it), and never taken
 * under @lock or kf->lock.
 */
struct kvreg_peer {
	struct kref ref;
	struct kvreg_file *kf;
	u64 id;
	u64 device_mask;
	u8 secret[KVREG_SECRET_LEN];
	struct mutex mutex;		/* see above */
	spinlock_t lock;		/* see above */
	u32 nr_rails;
	struct kvreg_rail rails[KVREG_DESC_MAX_PATHS];
	u32 next;			/* round robin among equals */
	bool closing;
	/* Rails that are down are connected again from here. */
	struct delayed_work mend;
	unsigned int mend_ms;
};

/* An imported region (remote.c): a transfer holds a reference. */
struct kvreg_rregion {
	struct kref ref;
	u64 handle;
	struct kvreg_peer *peer;	/* a reference */
	struct kvreg_mm *km;		/* charged for it, once set */
	u64 charged_chunks;
	u64 length;
	u32 access;
	/* By rail index of @peer; a rail the region is not on has none. */
	struct kvreg_rpath paths[KVREG_DESC_MAX_PATHS];
};

struct kvreg_file {
	/*
	 * Serialises LISTEN, EXPORT, UNEXPORT, UNLISTEN, REKEY and the
	 * revocation in DEREGISTER: endpoints and exports change, and are
	 * freed, only under it. See the lock order at the top.
	 */
	struct mutex ep_mutex;
	/*
	 * Protects @regs, @by_range, @devs, every registration's @refs,
	 * @endpoints, @conns, @remotes and @closing. Taken before any
	 * device's teardown_rwsem; never held across rdma_destroy_id().
	 */
	struct mutex lock;
	struct xarray regs;		/* by handle */
	struct list_head devs;		/* kvreg_file_dev.file_node */
	struct rb_root_cached by_range;	/* the same, by address range */
	u32 next_handle;
	struct kvreg_mm *km;		/* the opener's; fixed for life */
	kuid_t uid;			/* the opener's effective uid */
	/* The opener's: where rails are connected, from work items too. */
	struct net *net;
	/*
	 * The opener's memory cgroup (a reference, or NULL): what a peer's
	 * connection or a rail's mend allocates, outside the opener's own
	 * calls, is charged there.
	 */
	struct mem_cgroup *memcg;
	struct list_head endpoints;	/* kvreg_endpoint.node */
	struct list_head conns;		/* passive kvreg_conn.file_node */
	struct xarray remotes;		/* kvreg_rregion, by handle */
	u64 next_endpoint;
	bool closing;			/* release has begun */

	/*
	 * Submitted operations (ops.c). @cq_lock (taken from the CQ's
	 * softirq too) protects @done, @nr_done and @nr_inflight; @cq_wait
	 * wakes REAP, poll() and release when one completes.
	 */
	spinlock_t cq_lock;
	struct list_head done;		/* kvreg_op.node, unreaped */
	u32 nr_done;
	u32 nr_inflight;
	wait_queue_head_t cq_wait;
	/* Parts of operations whose rail failed, for another (@cq_lock). */
	struct list_head retry;
	struct delayed_work retry_work;
};

/* Host-wide counters, readable through KVREG_IOC_STATS. */
extern atomic64_t kvreg_nr_regs;
extern atomic64_t kvreg_nr_mrs;
extern u64 kvreg_inject_fail_mask;

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

/* vma.c */
int kvreg_check_memory(struct kvreg_reg *reg, struct kvreg_error *err);

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
 * flushes the QP first.
 */
int kvreg_post_chain(struct kvreg_qp *q, struct ib_send_wr *first,
		     struct ib_send_wr *last, unsigned long timeout,
		     enum ib_wc_status *wc_status);

/* file_dev.c */
struct kvreg_file_dev *kvreg_pd_get(struct list_head *devs,
				    struct kvreg_dev *kdev,
				    struct kvreg_error *err);
void kvreg_pds_release(struct list_head *devs);
struct kvreg_file_dev *kvreg_file_dev_get(struct kvreg_file *kf,
					  struct kvreg_dev *kdev,
					  struct kvreg_error *err);
void kvreg_file_dev_put(struct kvreg_file_dev *fdev);
void kvreg_file_devs_release(struct kvreg_file *kf);

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
int kvreg_reg_dev_commit(struct kvreg_reg *reg, struct kvreg_reg_dev *rd,
			 struct kvreg_error *err);
void kvreg_reg_dev_teardown(struct kvreg_reg_dev *rd);
struct ib_mr *kvreg_reg_dev_find_mr(struct kvreg_reg_dev *rd, u64 va);
int kvreg_mrs_copy(struct kvreg_reg_dev *rd, struct kvreg_file_dev *pd,
		   int ib_access, struct ib_mr ***mrsp,
		   struct kvreg_error *err);
void kvreg_mrs_free(struct ib_mr **mrs, u32 nr);
#ifdef CONFIG_CGROUP_RDMA
int kvreg_cg_charge(struct kvreg_dev *kdev, struct rdma_cgroup **cg,
		    u32 *charged, u32 want, struct kvreg_error *err);
void kvreg_cg_uncharge(struct kvreg_dev *kdev, struct rdma_cgroup *cg,
		       u32 *charged);
#endif

/* export.c */
int kvreg_exported_get(struct kvreg_endpoint *ep, struct kvreg_reg *reg,
		       struct kvreg_exported **exp, struct kvreg_error *err);
struct kvreg_exported *kvreg_exported_find(struct kvreg_endpoint *ep,
					   struct kvreg_reg *reg);
struct kvreg_export_dev *kvreg_exported_on(struct kvreg_exported *ex,
					   struct kvreg_dev *kdev);
void kvreg_exported_revoke(struct kvreg_exported *ex);
void kvreg_reg_revoke_exports(struct kvreg_file *kf, struct kvreg_reg *reg);

/* stage.c: per-stage time, for profiles (debugfs kvreg/stages). */
enum kvreg_stage {
	KVREG_STAGE_REGISTER,		/* the whole ioctl, up to PUBLISH */
	KVREG_STAGE_DEVICES,		/* the file's PD and QP on each */
	KVREG_STAGE_CHECK_MEMORY,
	KVREG_STAGE_PIN,		/* includes SG_BUILD */
	KVREG_STAGE_SG_BUILD,
	KVREG_STAGE_DMA_MAP,
	KVREG_STAGE_ALLOC_MR,		/* wall clock of the two below */
	KVREG_STAGE_ALLOC_MR_ONLY,	/* summed over CPUs */
	KVREG_STAGE_MAP_MR_SG,		/* summed over CPUs */
	KVREG_STAGE_POST_REG,
	KVREG_STAGE_PUBLISH,		/* handle, range tree, keys out */
	KVREG_STAGE_DEREGISTER,		/* its last put: the three below */
	KVREG_STAGE_DEREG_MR,
	KVREG_STAGE_DMA_UNMAP,
	KVREG_STAGE_UNPIN,
	KVREG_NR_STAGES
};

static inline u64 kvreg_stage_begin(void)
{
	return ktime_get_ns();
}

void kvreg_stage_end(enum kvreg_stage stage, u64 start_ns);
struct dentry;
void kvreg_stages_debugfs(struct dentry *dir);

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
void kvreg_reg_put(struct kvreg_reg *reg);
/* Keys taken under kvreg_file.lock, copied out after it is dropped. */
struct kvreg_keys {
	struct kvreg_key *keys;
	u32 n;				/* all of them */
	u32 room;			/* taken: at most the caller's room */
};

int kvreg_keys_snap(struct kvreg_reg *reg, u32 capacity, struct kvreg_keys *k);
int kvreg_keys_put_user(struct kvreg_keys *k, u64 uptr, u32 key_size);

/* ops.c */
void kvreg_ops_init(struct kvreg_file *kf);
int kvreg_submit(struct kvreg_file *kf, struct kvreg_submit *arg,
		 struct kvreg_error *err);
int kvreg_reap(struct kvreg_file *kf, struct kvreg_reap *arg,
	       struct kvreg_error *err);
bool kvreg_ops_ready(struct kvreg_file *kf);
void kvreg_ops_stats(struct kvreg_file *kf, struct kvreg_stats *st);
void kvreg_ops_release(struct kvreg_file *kf);

/* desc.c: pure, no locks. */
size_t kvreg_desc_size(u32 nr_paths, u64 nr_chunks);
/* Path i: @addrs[i], and the MRs of @eds[i] (all of @ex's registration). */
void kvreg_desc_build(void *blob, size_t size,
		      const struct kvreg_exported *ex,
		      const struct kvreg_export_dev *const *eds,
		      const struct kvreg_net_addr *addrs, u32 nr_paths,
		      const u8 *secret);
/* At most @max_chunks chunks, every path counted. */
int kvreg_desc_parse(const void *blob, size_t size, u64 max_chunks,
		     struct kvreg_desc *out, struct kvreg_error *err);
void kvreg_rpaths_free(struct kvreg_rpath *paths, u32 nr);

/* conn.c */
int kvreg_conn_init(void);
void kvreg_conn_exit(void);
int kvreg_conn_accept(struct kvreg_endpoint *ep, struct rdma_cm_id *cm_id,
		      const struct rdma_cm_event *event);
struct kvreg_conn *kvreg_conn_connect(struct kvreg_file *kf,
				      const struct kvreg_net_addr *addr,
				      const u8 *secret, u64 device_mask,
				      u32 timeout_ms, struct kvreg_error *err);
bool kvreg_conn_usable(struct kvreg_conn *conn);
void kvreg_conn_put(struct kvreg_conn *conn);
void kvreg_conns_release(struct kvreg_file *kf);
void kvreg_endpoint_conns_cut(struct kvreg_endpoint *ep);
void kvreg_conn_abort(struct kvreg_conn *conn);
void kvreg_set_net_error(struct kvreg_error *err, u32 reason,
			 const struct kvreg_net_addr *addr);
int kvreg_net_sockaddr(const struct kvreg_net_addr *a,
		       struct sockaddr_storage *ss);

/* endpoint.c */
int kvreg_listen(struct kvreg_file *kf, struct kvreg_listen *arg,
		 struct kvreg_error *err);
struct kvreg_endpoint *kvreg_endpoint_find(struct kvreg_file *kf,
					   u64 handle);
int kvreg_unlisten(struct kvreg_file *kf, u64 handle,
		   struct kvreg_error *err);
int kvreg_rekey(struct kvreg_file *kf, u64 handle, struct kvreg_error *err);
void kvreg_endpoints_release(struct kvreg_file *kf);

/* rails.c */
int kvreg_rails_init(void);
void kvreg_rails_exit(void);
int kvreg_peer_import(struct kvreg_file *kf, struct kvreg_desc *desc,
		      u64 device_mask, u32 timeout_ms,
		      struct kvreg_rregion *rr, u32 *rails, u32 *device_index,
		      struct kvreg_error *err);
void kvreg_peer_put(struct kvreg_peer *peer);
struct kvreg_conn *kvreg_rail_get(struct kvreg_rregion *rr,
				  struct kvreg_reg *local, u32 prefer_dev,
				  u32 tried, u32 *rail);
bool kvreg_rail_take_slots(struct kvreg_peer *peer, struct kvreg_conn **conns,
			   const u32 *slots, u32 n);
void kvreg_rail_kick(struct kvreg_peer *peer);
u32 kvreg_rails_left(const struct kvreg_rregion *rr, u32 tried);
bool kvreg_rail_on_device(const struct kvreg_rregion *rr, u32 dev_index);
void kvreg_peer_abort(struct kvreg_peer *peer);

/* net_list.c */
void kvreg_net_addr_of(struct kvreg_net_addr *a, const struct sockaddr *sa);
void kvreg_net_entry_init(struct kvreg_net_entry *e, struct kvreg_file *kf,
			  u32 kind);
void kvreg_net_list_listener(struct kvreg_listener *ln);
void kvreg_net_list_conn(struct kvreg_conn *conn, struct rdma_cm_id *id);
void kvreg_net_unlist(struct kvreg_net_entry *e);
void kvreg_net_start(struct kvreg_net_entry *e);
void kvreg_net_count(struct kvreg_net_entry *e, u64 bytes, u32 wc_status,
		     bool ok);
int kvreg_net_conns(struct kvreg_conns *arg, struct kvreg_error *err);

/* remote.c */
int kvreg_export(struct kvreg_file *kf, struct kvreg_export *arg,
		 struct kvreg_error *err);
int kvreg_import(struct kvreg_file *kf, struct kvreg_import *arg,
		 struct kvreg_error *err);
int kvreg_unimport(struct kvreg_file *kf, u64 handle,
		   struct kvreg_error *err);
int kvreg_unexport(struct kvreg_file *kf, struct kvreg_unexport *arg,
		   struct kvreg_error *err);
struct kvreg_rregion *kvreg_rregion_get(struct kvreg_file *kf, u64 handle);
void kvreg_rregion_put(struct kvreg_rregion *rr);
const struct kvreg_rchunk *kvreg_rpath_chunk(const struct kvreg_rpath *path,
					     u64 offset);
void kvreg_remotes_release(struct kvreg_file *kf);

/* transfer.c */
/* The side of a transfer on one registration, resolved and checked. */
struct kvreg_side {
	struct kvreg_reg *reg;
	struct kvreg_reg_dev *rd;
	u64 va;
};

/*
 * Where the remote side of a transfer is: a registration of the caller
 * (@side), a region imported from a peer (@rr), or a raw address and
 * rkey; and the QP that reaches it.
 */
struct kvreg_target {
	struct kvreg_qp *q;
	struct kvreg_side *side;
	struct kvreg_rregion *rr;	/* then rva is the region offset */
	/* A region's: the rail carrying it (a reference), its chunks. */
	struct kvreg_conn *conn;
	const struct kvreg_rpath *path;
};

int kvreg_transfer(struct kvreg_file *kf, struct kvreg_transfer *arg,
		   struct kvreg_error *err);
int kvreg_transfer_resolve(struct kvreg_file *kf, struct kvreg_transfer *arg,
			   struct kvreg_side *local, struct kvreg_side *remote,
			   struct kvreg_target *t, struct kvreg_error *err);
void kvreg_transfer_release(struct kvreg_side *local,
			    struct kvreg_side *remote, struct kvreg_target *t);
/* Under teardown_rwsem read. */
int kvreg_target_live(struct kvreg_dev *kdev, struct kvreg_side *local,
		      struct kvreg_target *t, struct kvreg_error *err);
int kvreg_target_at(struct kvreg_target *t, struct kvreg_transfer *arg,
		    u64 rva, u64 *seg, u64 *raddr, u32 *rkey);
u32 kvreg_transfer_reason(int ret, enum ib_wc_status wc_status, bool peer);

static inline void kvreg_set_error(struct kvreg_error *err, u32 reason,
				   u32 device_index)
{
	err->reason = reason;
	err->device_index = device_index;
}

/* Driver failures that mean the device ran out, not a bug. */
static inline u32 kvreg_driver_reason(int ret)
{
	return ret == -ENOMEM || ret == -ENOSPC || ret == -EAGAIN ?
	       KVREG_REASON_DEVICE_EXHAUSTED : KVREG_REASON_DEVICE_REFUSED;
}

/*
 * Entry @i of a caller's array of @entry_size-byte entries (checked to be
 * at least the entry's first published size): as much of @src as the
 * entry holds, zeroes past what this module knows.
 */
static inline int kvreg_copy_entry(u64 base, u32 entry_size, u32 i,
				   const void *src, size_t len)
{
	char __user *dst = u64_to_user_ptr(base) + (size_t)i * entry_size;
	size_t n = min_t(size_t, entry_size, len);

	if (copy_to_user(dst, src, n) ||
	    (entry_size > n && clear_user(dst + n, entry_size - n)))
		return -EFAULT;
	return 0;
}

static inline int kvreg_bad_arg(struct kvreg_error *err, u32 argument)
{
	kvreg_set_error(err, KVREG_REASON_BAD_ARGUMENT, KVREG_NO_DEVICE_INDEX);
	err->argument = argument;
	return -EINVAL;
}

/*
 * A snapshot of @total entries, the first @n of them in @src (@len bytes
 * each), into the caller's list: @count says how many there were, so a
 * caller with too little room learns how much to ask for.
 */
static inline int kvreg_copy_list(u64 base, u32 entry_size, u32 *count,
				  const void *src, size_t len, u32 n,
				  u32 total, struct kvreg_error *err)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (kvreg_copy_entry(base, entry_size, i,
				     (const char *)src + i * len, len)) {
			*count = i;
			kvreg_bad_arg(err, KVREG_ARG_POINTER);
			return -EFAULT;
		}
	}
	*count = total;
	return 0;
}

#endif /* KVREG_H */
