/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvreg internals, network layer: descriptors, connections, endpoints,
 * the rails to a peer, imported regions and the operations on them:
 * desc.c, conn.c, endpoint.c, rails.c, net_list.c, remote.c, ops.c.
 */
#ifndef KVREG_NET_H
#define KVREG_NET_H

#include <linux/hashtable.h>

#include "reg.h"

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
 * side only responds): its QP lives in the PD of the export whose secret
 * the peer presented.
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
	bool rep_bad;			/* the accept was not kvreg's */
	/*
	 * Active: who destroys @cm_id if the device goes while IMPORT is
	 * still connecting (KVREG_CONNECTING): the connecting caller, which
	 * still uses the id; once it finished (KVREG_CONNECTED), the CM.
	 */
	atomic_t connect_state;
	/* Passive: unlink when it drops (later, while its port is down). */
	struct delayed_work close_work;
	/*
	 * Active, twice every kvreg_keepalive_ms: a zero-length RDMA WRITE,
	 * which touches no memory and needs no key, and whose failure says
	 * the exporter is gone. Passive, every kvreg_keepalive_ms: a look at
	 * the QP's expected receive PSN, which every packet of the importer
	 * moves on; one that stands still for KVREG_KEEPALIVE_STUCK periods
	 * is a peer gone without a DREQ, and the connection is let go; so
	 * is one accepted and not established within as many periods. No
	 * receive is ever posted.
	 */
	struct delayed_work keepalive;
	struct ib_cqe keepalive_cqe;
	atomic_t keepalive_busy;	/* active: a WRITE is pending */
	u32 keepalive_stuck;		/* periods without progress */
	/*
	 * Its period, fixed when it connects: active, the module's;
	 * passive, the longer of the module's and the one the importer
	 * said in its request. 0: none.
	 */
	u32 keepalive_ms;
	u32 keepalive_psn;		/* passive: rq_psn at the last look */
	/* Active: the address it connects to, and the export's secret. */
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
	/* Passive, while listed: its address's count on @ep; kf->lock. */
	struct kvreg_addr_count *addr_count;
	/* Active: its connect was told to stop (kvreg_connect_stop()). */
	bool abandoned;
};

/*
 * Lets a connect that a work item waits on (the mend's) be stopped by
 * whoever would otherwise wait for that work: kvreg_conn_connect() puts
 * its connection here while it connects, and kvreg_connect_stop() wakes
 * its wait, now and for any later connect.
 */
struct kvreg_connect_stop {
	spinlock_t lock;		/* @conn, @stopped */
	struct kvreg_conn *conn;	/* connecting now; under @lock */
	bool stopped;			/* under @lock */
};

/*
 * How many connections an endpoint holds from one peer address, kept as
 * they are listed and unlisted (under kf->lock), so that a request is
 * weighed against max_conns_per_peer without walking them all.
 */
struct kvreg_addr_count {
	struct hlist_node node;		/* in kvreg_endpoint.addr_counts */
	struct kvreg_net_addr addr;
	u32 conns;
};

/*
 * A connection request an endpoint has not answered yet. The CM's
 * callback only queues it: kvreg_conn_accept_work() checks the secret
 * and the caps and answers, where a wait on kvreg's locks holds up no
 * other user of the host's CM. Until then the id's events come to
 * kvreg_accept_cm_handler().
 */
struct kvreg_accept {
	struct work_struct work;
	struct kvreg_endpoint *ep;
	struct rdma_cm_id *id;
	struct kvreg_cm_req req;	/* the request's private data */
	bool req_whole;			/* it carried all of @req */
	u8 responder_resources;		/* the READ depth it asked for */
	bool removed;			/* the id's device went; its lock */
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
 * A listening endpoint of a file: an address per rail, and its exports,
 * each with a secret and a protection domain of its own (struct
 * kvreg_exported): a connection it accepts lives in the PD of the export
 * whose secret it presented. Made, changed and freed under kf->ep_mutex;
 * a listener's CM callback may use it until rdma_destroy_id() of every
 * listener returns.
 */
struct kvreg_endpoint {
	struct list_head node;		/* on kf->endpoints; kf->lock */
	u64 handle;
	struct kvreg_file *kf;
	bool closing;			/* kf->lock: accept no connection */
	/*
	 * Protects @nr_listeners, @listeners, @by_secret and each export's
	 * secret and PDs. The accept work takes it: never wait on the CM
	 * holding it.
	 */
	struct mutex mutex;
	u32 nr_listeners;
	struct kvreg_listener *listeners[KVREG_DESC_MAX_PATHS];
	struct list_head exports;	/* kvreg_exported; kf->ep_mutex */
	/* Its exports by secret, for a connection request to find one. */
	DECLARE_HASHTABLE(by_secret, 4);
	/*
	 * PDs a revoked export left with no connection in them, at most
	 * one per device, for the next export (kvreg_file_dev.file_node).
	 */
	struct list_head spare_pds;
	u32 nr_conns;			/* on kf->conns with @ep; kf->lock */
	DECLARE_HASHTABLE(addr_counts, 6);	/* kvreg_addr_count; kf->lock */
	/*
	 * Requests queued and not answered (struct kvreg_accept); the
	 * endpoint waits for none left before it goes.
	 */
	atomic_t nr_accepts;
};

/* One path of a peer's endpoint, and the connection that serves it. */
struct kvreg_rail {
	struct kvreg_net_addr addr;
	struct kvreg_conn *conn;	/* a reference; NULL: never up */
	bool excluded;			/* its device is not in device_mask */
	/*
	 * Regions with chunks on it (the peer's @lock). One that none uses,
	 * as a failed IMPORT leaves it, is not mended: its address is not
	 * sent the secret again.
	 */
	u32 users;
	/* Why the last reconnect failed: under @mutex, read locklessly. */
	u32 mend_reason;
	s32 mend_errno;
};

/*
 * A file's rails to one export (rails.c): a connection per path of its
 * descriptors, shared by every region imported from it with the same
 * device mask (an IMPORT of the same descriptor again). Held by each of
 * those regions; the last put lets every rail go. @lock (a spinlock: the
 * CQ's softirq takes it) protects each rail's @conn, @nr_rails, @retry
 * and @closing; @mutex protects adding rails, each rail's @excluded and
 * mend state, and @mend_ms. It is not held across a connect
 * (kvreg_rail_connect() drops it), and never taken under @lock or
 * kf->lock.
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
	/* Stops the mend's connect when the last put would wait for it. */
	struct kvreg_connect_stop mend_stop;
	/*
	 * On kf->peers from its making to its release, under kf->peers_lock,
	 * imported or only held by work in flight; @aborted too.
	 */
	struct list_head file_node;
	bool aborted;
};

/*
 * An imported region (remote.c): a transfer holds a reference. Freed after
 * an RCU grace period, as kvreg_rregion_get() looks it up without a lock.
 */
struct kvreg_rregion {
	struct kref ref;
	struct rcu_head rcu;
	u64 handle;
	struct kvreg_peer *peer;	/* a reference */
	struct kvreg_mm *km;		/* charged for it, once set */
	u64 charged_chunks;
	u64 length;
	u32 access;
	/* By rail index of @peer; a rail the region is not on has none. */
	struct kvreg_rpath paths[KVREG_DESC_MAX_PATHS];
};

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
/* U64_MAX when @room bytes cannot hold what the paths claim. */
u64 kvreg_desc_claimed_chunks(const struct kvreg_desc_path *path,
			      u32 nr_paths, size_t room);
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
				      u32 timeout_ms,
				      struct kvreg_connect_stop *stop,
				      struct kvreg_error *err);
void kvreg_connect_stop(struct kvreg_connect_stop *stop);
bool kvreg_conn_usable(struct kvreg_conn *conn);
void kvreg_conn_put(struct kvreg_conn *conn);
void kvreg_conns_release(struct kvreg_file *kf);
void kvreg_endpoint_conns_cut(struct kvreg_endpoint *ep);
void kvreg_endpoint_accepts_wait(struct kvreg_endpoint *ep);
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
void kvreg_peer_leave(struct kvreg_peer *peer,
		      const struct kvreg_rregion *rr);
struct kvreg_conn *kvreg_rail_get(struct kvreg_rregion *rr,
				  struct kvreg_reg *local, u32 prefer_dev,
				  u32 tried, u32 *rail);
bool kvreg_rail_take_slots(struct kvreg_peer *peer, struct kvreg_conn **conns,
			   const u32 *slots, u32 n);
void kvreg_rail_kick(struct kvreg_peer *peer);
u32 kvreg_rails_left(const struct kvreg_rregion *rr, u32 tried);
int kvreg_rails_none_up(struct kvreg_rregion *rr, struct kvreg_reg *local,
			struct kvreg_error *err);
bool kvreg_rail_on_device(const struct kvreg_rregion *rr, u32 dev_index);
void kvreg_peer_abort(struct kvreg_peer *peer);
void kvreg_peers_abort(struct kvreg_file *kf);

/* net_list.c */
void kvreg_net_addr_of(struct kvreg_net_addr *a, const struct sockaddr *sa);
void kvreg_net_entry_init(struct kvreg_net_entry *e, struct kvreg_file *kf,
			  u32 kind);
void kvreg_net_list_listener(struct kvreg_listener *ln);
void kvreg_net_list_conn(struct kvreg_conn *conn, struct rdma_cm_id *id);
void kvreg_net_unlist(struct kvreg_net_entry *e);
void kvreg_net_start(struct kvreg_net_entry *e, u32 nr_ops);
void kvreg_net_count_ok(struct kvreg_net_entry *e, u32 nr_ops, u64 bytes);
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

#endif /* KVREG_NET_H */
