// SPDX-License-Identifier: GPL-2.0-only
/*
 * RDMA devices: one kvreg_dev per ib_device, each with a PD, a CQ and an
 * RC QP connected to itself. Keys of a kernel PD are only usable by kernel
 * QPs, so this QP is what fast-registers MRs and moves data between them.
 */
#include <linux/bottom_half.h>
#include <linux/etherdevice.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "kvreg.h"

/* Protects kvreg_devs[]: slots are published and cleared under it. */
static DEFINE_MUTEX(kvreg_devs_lock);
static struct kvreg_dev *kvreg_devs[KVREG_MAX_DEVICES];

static struct ib_client kvreg_client;

static void kvreg_dev_release(struct kref *ref)
{
	kfree(container_of(ref, struct kvreg_dev, ref));
}

void kvreg_dev_put(struct kvreg_dev *kdev)
{
	kref_put(&kdev->ref, kvreg_dev_release);
}

struct kvreg_dev *kvreg_dev_get(u32 index)
{
	struct kvreg_dev *kdev = NULL;

	if (index >= KVREG_MAX_DEVICES)
		return NULL;
	mutex_lock(&kvreg_devs_lock);
	if (kvreg_devs[index]) {
		kdev = kvreg_devs[index];
		kref_get(&kdev->ref);
	}
	mutex_unlock(&kvreg_devs_lock);
	return kdev;
}

u64 kvreg_devices_present(void)
{
	u64 mask = 0;
	u32 i;

	mutex_lock(&kvreg_devs_lock);
	for (i = 0; i < KVREG_MAX_DEVICES; i++)
		if (kvreg_devs[i])
			mask |= BIT_ULL(i);
	mutex_unlock(&kvreg_devs_lock);
	return mask;
}

int kvreg_fill_device_info(u32 index, struct kvreg_device_info *info)
{
	struct kvreg_dev *kdev = kvreg_dev_get(index);
	int ret = 0;

	if (!kdev)
		return -ENODEV;
	down_read(&kdev->teardown_rwsem);
	if (kdev->dead) {
		ret = -ENODEV;
		goto out;
	}
	memset(info, 0, sizeof(*info));
	info->index = kdev->index;
	strscpy(info->name, dev_name(&kdev->ibdev->dev), sizeof(info->name));
	/*
	 * From the port events, not ib_query_port(): a query can cost a
	 * firmware command, and some drivers log on every one.
	 */
	info->port_state = READ_ONCE(kdev->port_active) ? IB_PORT_ACTIVE :
							  IB_PORT_DOWN;
	info->max_mr_size = kdev->max_mr_size;
	info->page_size_cap = kdev->page_size_cap;
	info->max_mr = kdev->max_mr;
	info->max_fast_reg_page_list_len = kdev->max_fast_reg_pages;
	/* Reported, not relied on: no need to wait out a transfer for it. */
	if (READ_ONCE(kdev->qp_ready))
		info->flags |= KVREG_DEVICE_F_READY;
	info->mrs_in_use = atomic64_read(&kdev->nr_mrs);
out:
	up_read(&kdev->teardown_rwsem);
	kvreg_dev_put(kdev);
	return ret;
}

/*
 * Prefer a RoCE v2 GID mapped from IPv4: loopback to it needs no IPv6
 * route. Any valid GID will do on InfiniBand or when there is none.
 */
static const struct ib_gid_attr *kvreg_pick_gid(struct kvreg_dev *kdev)
{
	const struct ib_gid_attr *fallback = NULL, *attr;
	int i;

	/* The IPv4-mapped GID sits right after the link-local ones. */
	for (i = 0; i < KVREG_GID_SCAN; i++) {
		attr = rdma_get_gid_attr(kdev->ibdev, kdev->port, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw)) {
			if (fallback)
				rdma_put_gid_attr(fallback);
			return attr;
		}
		if (!fallback)
			fallback = attr;
		else
			rdma_put_gid_attr(attr);
	}
	return fallback ? fallback : ERR_PTR(-ENODEV);
}

/* Bring the QP from any state to RTS, connected to itself. */
static int kvreg_qp_connect(struct kvreg_dev *kdev)
{
	const struct ib_gid_attr *gid_attr;
	struct ib_qp_attr attr = {};
	union ib_gid dgid;
	u16 vlan_id;
	int ret;

	lockdep_assert_held(&kdev->qp_mutex);
	WRITE_ONCE(kdev->qp_ready, false);

	attr.qp_state = IB_QPS_RESET;
	ret = ib_modify_qp(kdev->qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = kdev->port;
	attr.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			       IB_ACCESS_REMOTE_WRITE;
	ret = ib_modify_qp(kdev->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	gid_attr = kvreg_pick_gid(kdev);
	if (IS_ERR(gid_attr))
		return PTR_ERR(gid_attr);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = kdev->qp->qp_num;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(kdev->ibdev, kdev->port);
	rdma_ah_set_port_num(&attr.ah_attr, kdev->port);
	dgid = gid_attr->gid;
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, gid_attr->index, 64, 0);
	if (attr.ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE) {
		/* Kernel QPs must bring their own resolved L2 address. */
		ret = rdma_read_gid_l2_fields(gid_attr, &vlan_id,
					      attr.ah_attr.roce.dmac);
		if (ret) {
			rdma_put_gid_attr(gid_attr);
			return ret;
		}
	} else {
		rdma_ah_set_dlid(&attr.ah_attr, 0);
	}
	ret = ib_modify_qp(kdev->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	rdma_put_gid_attr(gid_attr);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 0;
	attr.max_rd_atomic = 16;
	ret = ib_modify_qp(kdev->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		return ret;
	WRITE_ONCE(kdev->qp_ready, true);
	return 0;
}

/*
 * A chain is signalled on its last work request only. RC completes in
 * order, so the last completion means every earlier one is done; a failed
 * earlier request still completes (errors are always reported, and the
 * rest are flushed), which is what mid_cqe records.
 */
struct kvreg_chain_wait {
	struct ib_cqe mid_cqe;
	struct ib_cqe last_cqe;
	struct completion done;
	enum ib_wc_status status;
};

static void kvreg_chain_note(struct kvreg_chain_wait *w, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS && w->status == IB_WC_SUCCESS)
		w->status = wc->status;
}

static void kvreg_mid_done(struct ib_cq *cq, struct ib_wc *wc)
{
	kvreg_chain_note(container_of(wc->wr_cqe, struct kvreg_chain_wait,
				      mid_cqe), wc);
}

static void kvreg_last_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvreg_chain_wait *w =
		container_of(wc->wr_cqe, struct kvreg_chain_wait, last_cqe);

	kvreg_chain_note(w, wc);
	complete(&w->done);
}

int kvreg_post_chain(struct kvreg_dev *kdev, struct ib_send_wr *first,
		     struct ib_send_wr *last, enum ib_wc_status *wc_status)
{
	struct kvreg_chain_wait w = {
		.mid_cqe.done = kvreg_mid_done,
		.last_cqe.done = kvreg_last_done,
		.status = IB_WC_SUCCESS,
	};
	const struct ib_send_wr *bad_wr;
	struct ib_send_wr *wr;
	int ret;

	lockdep_assert_held(&kdev->qp_mutex);
	*wc_status = IB_WC_SUCCESS;
	/* A QP left in error by an earlier failure is recovered here. */
	if (!kdev->qp_ready) {
		ret = kvreg_qp_connect(kdev);
		if (ret)
			return -ENETDOWN;
	}

	init_completion(&w.done);
	for (wr = first; wr; wr = wr->next) {
		if (wr == last) {
			wr->wr_cqe = &w.last_cqe;
			wr->send_flags |= IB_SEND_SIGNALED;
		} else {
			wr->wr_cqe = &w.mid_cqe;
			wr->send_flags &= ~IB_SEND_SIGNALED;
		}
	}

	/*
	 * Software devices (rxe) do their work in tasklets: posted from
	 * process context those wake ksoftirqd and the caller sleeps until
	 * it has run. With bottom halves off, they run right here when
	 * they are turned back on, and short chains are complete before
	 * the wait below starts. Posting is allowed in atomic context.
	 */
	local_bh_disable();
	ret = ib_post_send(kdev->qp, first, &bad_wr);
	local_bh_enable();
	if (ret) {
		/* Part of the chain may be queued: flush it before @w dies. */
		if (bad_wr != first)
			ib_drain_sq(kdev->qp);
		WRITE_ONCE(kdev->qp_ready, false);
		return ret;
	}
	if (!wait_for_completion_timeout(&w.done, KVREG_WR_TIMEOUT)) {
		struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

		/*
		 * A lost completion must not hang the caller: the error state
		 * flushes every outstanding request, the last one included,
		 * and only then may @w go.
		 */
		dev_warn(&kdev->ibdev->dev,
			 "kvreg: work requests timed out, flushing the QP\n");
		ib_modify_qp(kdev->qp, &attr, IB_QP_STATE);
		wait_for_completion(&w.done);
		WRITE_ONCE(kdev->qp_ready, false);
		*wc_status = w.status;
		return -ETIMEDOUT;
	}
	if (w.status != IB_WC_SUCCESS) {
		WRITE_ONCE(kdev->qp_ready, false);
		*wc_status = w.status;
		return -EIO;
	}
	return 0;
}

/*
 * A port that is not ACTIVE moves no data: registrations and transfers
 * on it are refused up front instead of failing in the QP.
 */
static void kvreg_event(struct ib_event_handler *handler,
			struct ib_event *event)
{
	struct kvreg_dev *kdev =
		container_of(handler, struct kvreg_dev, event_handler);

	if (event->element.port_num != kdev->port)
		return;
	if (event->event == IB_EVENT_PORT_ACTIVE)
		WRITE_ONCE(kdev->port_active, true);
	else if (event->event == IB_EVENT_PORT_ERR)
		WRITE_ONCE(kdev->port_active, false);
}

static int kvreg_add_one(struct ib_device *ibdev)
{
	struct ib_qp_init_attr init_attr = {};
	struct ib_port_attr port_attr;
	struct kvreg_dev *kdev;
	u32 index;
	int ret;

	if (!(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;

	kdev = kzalloc(sizeof(*kdev), GFP_KERNEL);
	if (!kdev)
		return -ENOMEM;
	kref_init(&kdev->ref);
	init_rwsem(&kdev->teardown_rwsem);
	mutex_init(&kdev->qp_mutex);
	spin_lock_init(&kdev->mrs_lock);
	INIT_LIST_HEAD(&kdev->mrs);
	atomic64_set(&kdev->nr_mrs, 0);
	kdev->ibdev = ibdev;
	kdev->port = rdma_start_port(ibdev);
	kdev->max_mr_size = ibdev->attrs.max_mr_size;
	kdev->page_size_cap = ibdev->attrs.page_size_cap;
	kdev->max_mr = ibdev->attrs.max_mr;
	kdev->max_fast_reg_pages = ibdev->attrs.max_fast_reg_page_list_len;
	kdev->max_seg_size = ib_dma_max_seg_size(ibdev);
	kdev->page_list_overread = ibdev->ops.driver_id == RDMA_DRIVER_RXE;
	/* Chunking needs two pages per MR: see kvreg_map_mrs(). */
	if (kdev->max_fast_reg_pages < 2) {
		ret = -EOPNOTSUPP;
		goto err_free;
	}

	kdev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(kdev->pd)) {
		ret = PTR_ERR(kdev->pd);
		goto err_free;
	}
	kdev->cq = ib_alloc_cq(ibdev, kdev, KVREG_CQ_DEPTH, 0,
			       IB_POLL_SOFTIRQ);
	if (IS_ERR(kdev->cq)) {
		ret = PTR_ERR(kdev->cq);
		goto err_pd;
	}
	init_attr.send_cq = kdev->cq;
	init_attr.recv_cq = kdev->cq;
	init_attr.cap.max_send_wr = KVREG_SQ_DEPTH;
	init_attr.cap.max_recv_wr = 1;
	init_attr.cap.max_send_sge = 1;
	init_attr.cap.max_recv_sge = 1;
	init_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	init_attr.qp_type = IB_QPT_RC;
	kdev->qp = ib_create_qp(kdev->pd, &init_attr);
	if (IS_ERR(kdev->qp)) {
		ret = PTR_ERR(kdev->qp);
		goto err_cq;
	}

	INIT_IB_EVENT_HANDLER(&kdev->event_handler, ibdev, kvreg_event);
	ib_register_event_handler(&kdev->event_handler);
	/* After registering: an event from here on wins over this read. */
	if (!ib_query_port(ibdev, kdev->port, &port_attr) &&
	    port_attr.state == IB_PORT_ACTIVE)
		WRITE_ONCE(kdev->port_active, true);

	/* A port that is not up yet is retried at first use. */
	mutex_lock(&kdev->qp_mutex);
	ret = kvreg_qp_connect(kdev);
	mutex_unlock(&kdev->qp_mutex);
	if (ret)
		dev_info(&ibdev->dev, "kvreg: QP not connected yet (%d)\n",
			 ret);

	mutex_lock(&kvreg_devs_lock);
	for (index = 0; index < KVREG_MAX_DEVICES; index++)
		if (!kvreg_devs[index])
			break;
	if (index == KVREG_MAX_DEVICES) {
		mutex_unlock(&kvreg_devs_lock);
		ret = -ENOSPC;
		goto err_events;
	}
	kdev->index = index;
	kvreg_devs[index] = kdev;
	mutex_unlock(&kvreg_devs_lock);

	ib_set_client_data(ibdev, &kvreg_client, kdev);
	dev_info(&ibdev->dev, "kvreg: device index %u\n", index);
	return 0;

err_events:
	ib_unregister_event_handler(&kdev->event_handler);
	ib_destroy_qp(kdev->qp);
err_cq:
	ib_free_cq(kdev->cq);
err_pd:
	ib_dealloc_pd(kdev->pd);
err_free:
	kfree(kdev);
	return ret;
}

static void kvreg_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct kvreg_dev *kdev = client_data;
	struct kvreg_reg_dev *rd, *tmp;

	mutex_lock(&kvreg_devs_lock);
	kvreg_devs[kdev->index] = NULL;
	mutex_unlock(&kvreg_devs_lock);

	/*
	 * Waits for every user of this device to finish; after @dead is set
	 * none starts. The registrations stay pinned and usable on their
	 * other devices: only their MRs here are revoked.
	 */
	ib_unregister_event_handler(&kdev->event_handler);
	down_write(&kdev->teardown_rwsem);
	kdev->dead = true;
	list_for_each_entry_safe(rd, tmp, &kdev->mrs, dev_node)
		kvreg_reg_dev_revoke(rd);
	ib_destroy_qp(kdev->qp);
	ib_free_cq(kdev->cq);
	ib_dealloc_pd(kdev->pd);
	up_write(&kdev->teardown_rwsem);

	dev_info(&ibdev->dev, "kvreg: device index %u removed\n", kdev->index);
	kvreg_dev_put(kdev);
}

static struct ib_client kvreg_client = {
	.name = "kvreg",
	.add = kvreg_add_one,
	.remove = kvreg_remove_one,
};

int kvreg_devices_init(void)
{
	return ib_register_client(&kvreg_client);
}

void kvreg_devices_exit(void)
{
	ib_unregister_client(&kvreg_client);
}
