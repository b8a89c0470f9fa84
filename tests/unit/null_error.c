// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Every call accepts a NULL error record, whether it fails before the
 * kernel (no context, NULL pointers), in the kernel, or because the
 * context's descriptor was closed underneath; and every failure that
 * does get a record carries a reason, never 0.
 */
#include <fcntl.h>

#include "internal.h"
#include "kvtest.h"

static char buf[SZ_4K];

/* Each call once with a NULL record and once with one: same errno. */
static void all_calls(struct kvreg *kv, bool expect_fail)
{
	struct kvreg_device_info devs[2];
	struct kvreg_error err;
	struct kvreg_mr *mr = NULL;
	struct kvreg_query q;
	struct kvreg_stats st;
	struct kvreg_budget b;
	struct kvreg_proc_info procs[2];
	struct kvreg_key keys[2];
	struct kvreg_remote *rem = NULL;
	uint64_t ep = 0;
	size_t size;
	unsigned int n;
	int with, without, i;

#define BOTH(call_with_err)						\
	do {								\
		struct kvreg_error *errp = NULL;			\
		without = (call_with_err);				\
		memset(&err, 0xa5, sizeof(err));			\
		errp = &err;						\
		with = (call_with_err);					\
		CHECK(with == without, "%s: %d with a record, %d without", \
		      #call_with_err, with, without);			\
		CHECK(!expect_fail || (with < 0 && err.reason),		\
		      "%s: %d, reason %u", #call_with_err, with,	\
		      err.reason);					\
		(void)errp;						\
	} while (0)

	BOTH(kvreg_devices(kv, devs, 2, &n, errp));
	BOTH(kvreg_stats(kv, &st, errp));
	BOTH(kvreg_set_budget(kv, KVREG_BUDGET_F_MRS, 1, 0, &b, errp));
	BOTH(kvreg_procs(kv, procs, 2, &n, errp));
	BOTH(kvreg_register(kv, buf, sizeof(buf), KVREG_ACCESS_ALL, 0, &mr,
			    errp));
	BOTH(kvreg_register_flags(kv, buf, sizeof(buf), KVREG_ACCESS_ALL, 0,
				  0, &mr, errp));
	BOTH(kvreg_query(kv, 1, &q, keys, 2, errp));
	BOTH(kvreg_preflight(kv, sizeof(buf), 0, 0, errp));
	BOTH(kvreg_transfer(kv, KVREG_OP_WRITE, 0, mr, 0, mr, 0, 1, errp));
	BOTH(kvreg_deregister(kv, mr, errp));
	BOTH(kvreg_listen(kv, "192.0.2.1", 0, &ep, NULL, errp));
	BOTH(kvreg_listen(kv, "not an address", 0, &ep, NULL, errp));
	BOTH(kvreg_export(kv, 1, mr, buf, sizeof(buf), &size, errp));
	BOTH(kvreg_import(kv, buf, 64, 0, &rem, errp));
	BOTH(kvreg_transfer_remote(kv, KVREG_OP_WRITE, mr, 0, rem, 0, 1,
				   errp));
	BOTH(kvreg_unimport(kv, rem, errp));
	BOTH(kvreg_unexport(kv, ep, mr, errp));
	BOTH(kvreg_unexport(kv, ep, NULL, errp));
	BOTH(kvreg_rekey(kv, ep, errp));
	BOTH(kvreg_unlisten(kv, ep, errp));
	{
		struct kvreg_completion comp[2];
		struct kvreg_op op;

		kvreg_op_prep(&op, KVREG_OP_READ, mr, 0, rem, 0, 1, 7);
		BOTH(kvreg_submit(kv, &op, 1, &n, errp));
		BOTH(kvreg_reap(kv, comp, 2, 0, 0, &n, errp));
		BOTH(kvreg_submit(kv, NULL, 1, &n, errp));
	}
	/* NULL where a pointer is needed: refused, with a record or not. */
	BOTH(kvreg_register(kv, buf, sizeof(buf), KVREG_ACCESS_ALL, 0, NULL,
			    errp));
	BOTH(kvreg_stats(kv, NULL, errp));
	BOTH(kvreg_deregister(kv, NULL, errp));
	for (i = 0; i < 2; i++)
		CHECK(kvreg_format_error(i ? &err : NULL, -EINVAL, buf,
					 sizeof(buf)) > 0, "format");
#undef BOTH
}

int main(void)
{
	struct kvreg_error err;
	struct kvreg *kv;
	int fd;

	/* No context at all. */
	all_calls(NULL, true);
	CHECK(kvreg_open_path(NULL, "/dev/null", NULL) == -EINVAL, "NULL kvp");
	CHECK(kvreg_open_path(&kv, "/nonexistent/kvreg", NULL) == -ENOENT,
	      "missing node");
	CHECK(kvreg_open(NULL, NULL) == -EINVAL, "kvreg_open(NULL)");

	/*
	 * A context whose descriptor is not /dev/kvreg any more: closed and
	 * its number reused by another file, as when a program closes fds
	 * it did not open.
	 */
	kv = calloc(1, sizeof(*kv));
	CHECK(kv, "calloc");
	kv->abi_version = KVREG_ABI_VERSION;
	/* No handles given out: an empty list, as kvreg_open() makes it. */
	kv->handles.prev = &kv->handles;
	kv->handles.next = &kv->handles;
	kv->fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	CHECK(kv->fd >= 0, "open /dev/null");
	all_calls(kv, true);
	CHECK(kvreg_stats(kv, (struct kvreg_stats[1]){ 0 }, &err) == -ENOTTY &&
	      err.reason == KVREG_REASON_BAD_FD &&
	      err.usage == (uint64_t)kv->fd, "reused fd: reason %u usage %llu",
	      err.reason, (unsigned long long)err.usage);

	/* Closed outright. */
	fd = kv->fd;
	close(fd);
	all_calls(kv, true);
	CHECK(kvreg_devices(kv, NULL, 0, NULL, &err) == -EBADF &&
	      err.reason == KVREG_REASON_BAD_FD, "closed fd: reason %u",
	      err.reason);
	kv->fd = -1;
	kvreg_close(kv);
	return T_PASS;
}
