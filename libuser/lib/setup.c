// SPDX-License-Identifier: MIT OR GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int kvreg__check_abi(uint32_t module_abi, struct kvreg_error *err)
{
	if (module_abi == KVREG_ABI_VERSION)
		return 0;
	kvreg__lib_error(err, KVREG_REASON_ABI_MISMATCH, -EPROTO);
	if (err) {
		err->usage = module_abi;
		err->request = KVREG_ABI_VERSION;
	}
	return -EPROTO;
}

/*
 * Refused by the node's permissions: which group owns it, so the message
 * can say which group to join (packages install it 0660 root:kvreg).
 */
static void kvreg_access_detail(const char *path, struct kvreg_error *err)
{
	struct stat st;

	if (!err || stat(path, &st))
		return;
	err->limit = st.st_gid;
	err->usage = st.st_mode & 07777;
	err->request = 1;
}

int kvreg_open_path(struct kvreg **kvp, const char *path,
		    struct kvreg_error *err)
{
	struct kvreg_abi_version abi = { .size = sizeof(abi) };
	struct kvreg *kv;
	int ret;

	if (!kvp || !path)
		return kvreg__bad_pointer(err);
	*kvp = NULL;
	kv = calloc(1, sizeof(*kv));
	if (!kv)
		return kvreg__lib_error(err, KVREG_REASON_NO_MEMORY, -ENOMEM);
	kv->handles.prev = &kv->handles;
	kv->handles.next = &kv->handles;
	atomic_flag_clear(&kv->handles_lock);
	kv->fd = open(path, O_RDWR | O_CLOEXEC);
	if (kv->fd < 0) {
		ret = -errno;
		free(kv);
		if (ret == -ENOENT || ret == -ENXIO || ret == -ENODEV)
			return kvreg__lib_error(err,
						KVREG_REASON_MODULE_NOT_LOADED,
						ret);
		kvreg__lib_error(err, KVREG_REASON_DEVICE_ACCESS, ret);
		if (ret == -EACCES || ret == -EPERM)
			kvreg_access_detail(path, err);
		return ret;
	}
	/* Refuse to go on with a module that speaks another ABI. */
	ret = kvreg__ioctl(kv, KVREG_IOC_ABI_VERSION, &abi);
	if (ret == -ENOTTY)
		ret = kvreg__check_abi(0, err);
	else if (!ret)
		ret = kvreg__check_abi(abi.abi_version, err);
	else
		kvreg__lib_error(err, KVREG_REASON_DEVICE_ACCESS, ret);
	if (ret) {
		close(kv->fd);
		free(kv);
		return ret;
	}
	kv->abi_version = abi.abi_version;
	ret = kvreg_features(kv, &kv->features, err);
	if (ret) {
		close(kv->fd);
		free(kv);
		return ret;
	}
	*kvp = kv;
	return 0;
}

int kvreg_open(struct kvreg **kvp, struct kvreg_error *err)
{
	const char *path = getenv("KVREG_DEVICE");

	return kvreg_open_path(kvp, path && *path ? path : KVREG_DEVICE_PATH,
			       err);
}

static void kvreg_handles_lock(struct kvreg *kv)
{
	while (atomic_flag_test_and_set_explicit(&kv->handles_lock,
						 memory_order_acquire))
		;
}

static void kvreg_handles_unlock(struct kvreg *kv)
{
	atomic_flag_clear_explicit(&kv->handles_lock, memory_order_release);
}

void kvreg__handle_add(struct kvreg *kv, struct kvreg_link *link)
{
	kvreg_handles_lock(kv);
	link->next = kv->handles.next;
	link->prev = &kv->handles;
	kv->handles.next->prev = link;
	kv->handles.next = link;
	kvreg_handles_unlock(kv);
}

void kvreg__handle_del(struct kvreg *kv, struct kvreg_link *link)
{
	kvreg_handles_lock(kv);
	link->prev->next = link->next;
	link->next->prev = link->prev;
	kvreg_handles_unlock(kv);
}

void kvreg_close(struct kvreg *kv)
{
	struct kvreg_link *link, *next;

	if (!kv)
		return;
	/* The module releases every registration and import with the fd. */
	close(kv->fd);
	for (link = kv->handles.next; link != &kv->handles; link = next) {
		next = link->next;
		free(link);
	}
	free(kv);
}

int kvreg_fd(const struct kvreg *kv)
{
	return kv ? kv->fd : -1;
}

uint32_t kvreg_module_abi_version(const struct kvreg *kv)
{
	return kv ? kv->abi_version : 0;
}

bool kvreg_has_feature(const struct kvreg *kv, uint64_t feature)
{
	return kv && feature && (kv->features & feature) == feature;
}
