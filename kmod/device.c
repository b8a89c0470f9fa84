// SPDX-License-Identifier: GPL-2.0-only
/*
 * RDMA devices: one kvreg_dev per ib_device, its limits and port state,
 * and the list of what is built on it (files' PDs and QPs, registrations'
 * MRs), which device removal takes down before the device goes.
 */
#include <linux/delay.h>
#include <linux/slab.h>

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

/* Holds of kvreg_dev_hold_teardown() in force, for the test to see. */
atomic_t kvreg_teardown_holds = ATOMIC_INIT(0);

/*
 * Fault injection (debugfs inject_hold_teardown, root, not ABI): hold
 * device @index's teardown lock for write for @ms, as a removal waiting
 * behind a long transfer does, so that a test can show what waits behind
 * a removal and what does not (the host's CM worker must not). Killable.
 */
int kvreg_dev_hold_teardown(u32 index, u32 ms)
{
	struct kvreg_dev *kdev = kvreg_dev_get(index);
	int ret = 0;

	if (!kdev)
		return -ENODEV;
	if (down_write_killable(&kdev->teardown_rwsem)) {
		ret = -EINTR;
		goto out;
	}
	atomic_inc(&kvreg_teardown_holds);
	if (msleep_interruptible(ms))
		ret = -EINTR;
	atomic_dec(&kvreg_teardown_holds);
	up_write(&kdev->teardown_rwsem);
out:
	kvreg_dev_put(kdev);
	return ret;
}

/* The kvreg_dev of an ib_device the CM routed through, with a reference. */
struct kvreg_dev *kvreg_dev_find(struct ib_device *ibdev)
{
	struct kvreg_dev *kdev = NULL;
	u32 i;

	mutex_lock(&kvreg_devs_lock);
	for (i = 0; i < KVREG_MAX_DEVICES; i++) {
		if (kvreg_devs[i] && kvreg_devs[i]->ibdev == ibdev) {
			kdev = kvreg_devs[i];
			kref_get(&kdev->ref);
			break;
		}
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
	/* What a file's QP needs to connect: an active port and a GID. */
	if (READ_ONCE(kdev->port_active) && kvreg_qp_path_ready(kdev))
		info->flags |= KVREG_DEVICE_F_READY;
	info->mrs_in_use = atomic64_read(&kdev->nr_mrs);
	/* The numbers REGISTER checks against, so nobody recomputes them. */
	info->mr_limit = kvreg_device_mr_limit(kdev);
	info->mr_pages_base = kvreg_pages_per_mr(kdev, PAGE_SHIFT);
	info->mr_pages_huge = kvreg_pages_per_mr(kdev, KVREG_HUGE_SHIFT);
out:
	up_read(&kdev->teardown_rwsem);
	kvreg_dev_put(kdev);
	return ret;
}

void kvreg_dev_user_add(struct kvreg_dev *kdev, struct kvreg_dev_user *user)
{
	lockdep_assert_held(&kdev->teardown_rwsem);
	spin_lock(&kdev->users_lock);
	list_add_tail(&user->node, &kdev->users);
	spin_unlock(&kdev->users_lock);
}

/* Safe on a user that removal already took off the list. */
void kvreg_dev_user_del(struct kvreg_dev *kdev, struct kvreg_dev_user *user)
{
	lockdep_assert_held(&kdev->teardown_rwsem);
	spin_lock(&kdev->users_lock);
	list_del_init(&user->node);
	spin_unlock(&kdev->users_lock);
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
	struct ib_port_attr port_attr;
	struct kvreg_dev *kdev;
	u32 index;

	if (!(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;
	/* Chunking needs two pages per MR: see kvreg_map_mrs(). */
	if (ibdev->attrs.max_fast_reg_page_list_len < 2)
		return -EOPNOTSUPP;

	kdev = kzalloc(sizeof(*kdev), GFP_KERNEL);
	if (!kdev)
		return -ENOMEM;
	kref_init(&kdev->ref);
	init_rwsem(&kdev->teardown_rwsem);
	spin_lock_init(&kdev->users_lock);
	INIT_LIST_HEAD(&kdev->users);
	atomic64_set(&kdev->nr_mrs, 0);
	kdev->ibdev = ibdev;
	kdev->port = rdma_start_port(ibdev);
	kdev->max_mr_size = ibdev->attrs.max_mr_size;
	kdev->page_size_cap = ibdev->attrs.page_size_cap;
	kdev->max_mr = ibdev->attrs.max_mr;
	kdev->max_fast_reg_pages = ibdev->attrs.max_fast_reg_page_list_len;
	kdev->max_seg_size = ib_dma_max_seg_size(ibdev);
	kdev->wr_sges = clamp_t(u32, ibdev->attrs.max_send_sge, 1,
				KVREG_WR_SGES);
	kdev->page_list_overread = ibdev->ops.driver_id == RDMA_DRIVER_RXE;

	INIT_IB_EVENT_HANDLER(&kdev->event_handler, ibdev, kvreg_event);
	ib_register_event_handler(&kdev->event_handler);
	/* After registering: an event from here on wins over this read. */
	if (!ib_query_port(ibdev, kdev->port, &port_attr) &&
	    port_attr.state == IB_PORT_ACTIVE)
		WRITE_ONCE(kdev->port_active, true);

	mutex_lock(&kvreg_devs_lock);
	for (index = 0; index < KVREG_MAX_DEVICES; index++)
		if (!kvreg_devs[index])
			break;
	if (index == KVREG_MAX_DEVICES) {
		mutex_unlock(&kvreg_devs_lock);
		ib_unregister_event_handler(&kdev->event_handler);
		kfree(kdev);
		return -ENOSPC;
	}
	kdev->index = index;
	kvreg_devs[index] = kdev;
	mutex_unlock(&kvreg_devs_lock);

	ib_set_client_data(ibdev, &kvreg_client, kdev);
	dev_info(&ibdev->dev, "kvreg: device index %u\n", index);
	return 0;
}

static void kvreg_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct kvreg_dev *kdev = client_data;
	struct kvreg_dev_user *user, *tmp;

	mutex_lock(&kvreg_devs_lock);
	kvreg_devs[kdev->index] = NULL;
	mutex_unlock(&kvreg_devs_lock);

	/*
	 * Waits for every user of this device to finish; after @dead is set
	 * none starts. The registrations stay pinned and usable on their
	 * other devices: only their mappings and exports here go.
	 * Connections first, then newest first: an export's MRs go before
	 * the mapping they map and the PD they live in.
	 */
	ib_unregister_event_handler(&kdev->event_handler);
	/* A transfer holding the rwsem stops at its next chain. */
	WRITE_ONCE(kdev->dying, true);
	down_write(&kdev->teardown_rwsem);
	kdev->dead = true;
	list_for_each_entry_safe_reverse(user, tmp, &kdev->users, node) {
		if (!user->posts)
			continue;
		list_del_init(&user->node);
		user->remove(user);
	}
	list_for_each_entry_safe_reverse(user, tmp, &kdev->users, node) {
		list_del_init(&user->node);
		user->remove(user);
	}
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
