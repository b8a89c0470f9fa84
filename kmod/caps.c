// SPDX-License-Identifier: GPL-2.0-only
/*
 * Caps on what a process, or a peer through it, makes kvreg allocate
 * beside pinned memory: endpoints and imported regions (and their chunk
 * tables) of a process, connections accepted on one endpoint and from
 * one peer address, completions a file has not reaped. Each is a module
 * parameter whose default a real KV node does not reach; each refusal
 * names the cap with its limit, usage and request.
 *
 * The process counters are kvreg_mm's, under kvreg_caps_lock (a leaf);
 * the per-endpoint ones are counted under kvreg_file.lock (conn.c).
 */
#include <linux/module.h>

#include "kvreg.h"

unsigned int kvreg_max_endpoints_per_process = 256;
module_param_named(max_endpoints_per_process,
		   kvreg_max_endpoints_per_process, uint, 0644);
MODULE_PARM_DESC(max_endpoints_per_process,
		 "Endpoints (LISTEN) one process may hold (default 256)");

unsigned int kvreg_max_conns_per_endpoint = 4096;
module_param_named(max_conns_per_endpoint, kvreg_max_conns_per_endpoint,
		   uint, 0644);
MODULE_PARM_DESC(max_conns_per_endpoint,
		 "Connections one endpoint accepts at once (default 4096)");

unsigned int kvreg_max_conns_per_peer = 256;
module_param_named(max_conns_per_peer, kvreg_max_conns_per_peer, uint, 0644);
MODULE_PARM_DESC(max_conns_per_peer,
		 "Connections one endpoint accepts at once from one peer address (default 256)");

unsigned int kvreg_max_imports_per_process = 65536;
module_param_named(max_imports_per_process, kvreg_max_imports_per_process,
		   uint, 0644);
MODULE_PARM_DESC(max_imports_per_process,
		 "Regions one process may hold imported (default 65536)");

unsigned int kvreg_max_desc_chunks = KVREG_DESC_MAX_CHUNKS;
module_param_named(max_desc_chunks, kvreg_max_desc_chunks, uint, 0644);
MODULE_PARM_DESC(max_desc_chunks,
		 "Chunks (remote MRs) one descriptor may list, all paths counted (default 1048576)");

unsigned long kvreg_max_import_chunks_per_process = 4UL << 20;
module_param_named(max_import_chunks_per_process,
		   kvreg_max_import_chunks_per_process, ulong, 0644);
MODULE_PARM_DESC(max_import_chunks_per_process,
		 "Chunks one process's imported regions may hold together, 32 bytes of kernel memory each (default 4194304)");

unsigned int kvreg_max_unreaped = 65536;
module_param_named(max_unreaped, kvreg_max_unreaped, uint, 0644);
MODULE_PARM_DESC(max_unreaped,
		 "Submitted operations one open file may have in flight or unreaped (default 65536)");

unsigned int kvreg_op_timeout_ms = 30000;
module_param_named(op_timeout_ms, kvreg_op_timeout_ms, uint, 0644);
MODULE_PARM_DESC(op_timeout_ms,
		 "How long a transfer's work requests may take before they are flushed and the call fails with OP_TIMEOUT (default 30000)");

static DEFINE_SPINLOCK(kvreg_caps_lock);

/* A cap's refusal: @limit, @usage and @request as the record carries. */
int kvreg_cap_refuse(struct kvreg_error *err, u32 reason, u64 limit,
		     u64 usage, u64 request)
{
	kvreg_set_error(err, reason, KVREG_NO_DEVICE_INDEX);
	err->limit = limit;
	err->usage = usage;
	err->request = request;
	return -EDQUOT;
}

int kvreg_caps_charge_endpoint(struct kvreg_mm *km, struct kvreg_error *err)
{
	u32 max = READ_ONCE(kvreg_max_endpoints_per_process);
	int ret = 0;

	spin_lock(&kvreg_caps_lock);
	if (km->nr_endpoints >= max)
		ret = kvreg_cap_refuse(err, KVREG_REASON_ENDPOINT_LIMIT, max,
				       km->nr_endpoints, 1);
	else
		km->nr_endpoints++;
	spin_unlock(&kvreg_caps_lock);
	return ret;
}

void kvreg_caps_uncharge_endpoint(struct kvreg_mm *km)
{
	spin_lock(&kvreg_caps_lock);
	km->nr_endpoints--;
	spin_unlock(&kvreg_caps_lock);
}

/* Why one more region of @chunks chunks does not fit; 0 if it does. */
static int kvreg_caps_import_refusal(const struct kvreg_mm *km, u64 chunks,
				     struct kvreg_error *err)
{
	u64 max_chunks = READ_ONCE(kvreg_max_import_chunks_per_process);
	u32 max = READ_ONCE(kvreg_max_imports_per_process);

	lockdep_assert_held(&kvreg_caps_lock);
	if (km->nr_imports >= max)
		return kvreg_cap_refuse(err, KVREG_REASON_IMPORT_LIMIT, max,
					km->nr_imports, 1);
	if (chunks > max_chunks - min(max_chunks, km->nr_import_chunks))
		return kvreg_cap_refuse(err, KVREG_REASON_IMPORT_CHUNK_LIMIT,
					max_chunks, km->nr_import_chunks,
					chunks);
	return 0;
}

/*
 * Whether a region of @chunks chunks would fit now, charging nothing: a
 * descriptor's claim, refused before the blob is copied. Only a hint, as
 * another thread may charge in between; kvreg_caps_charge_import() is
 * the one that counts.
 */
int kvreg_caps_check_import(struct kvreg_mm *km, u64 chunks,
			    struct kvreg_error *err)
{
	int ret;

	spin_lock(&kvreg_caps_lock);
	ret = kvreg_caps_import_refusal(km, chunks, err);
	spin_unlock(&kvreg_caps_lock);
	return ret;
}

/* One imported region of @chunks chunks, before its tables are kept. */
int kvreg_caps_charge_import(struct kvreg_mm *km, u64 chunks,
			     struct kvreg_error *err)
{
	int ret;

	spin_lock(&kvreg_caps_lock);
	ret = kvreg_caps_import_refusal(km, chunks, err);
	if (!ret) {
		km->nr_imports++;
		km->nr_import_chunks += chunks;
	}
	spin_unlock(&kvreg_caps_lock);
	return ret;
}

void kvreg_caps_uncharge_import(struct kvreg_mm *km, u64 chunks)
{
	spin_lock(&kvreg_caps_lock);
	km->nr_imports--;
	km->nr_import_chunks -= chunks;
	spin_unlock(&kvreg_caps_lock);
}

void kvreg_caps_stats(struct kvreg_mm *km, struct kvreg_stats *st)
{
	spin_lock(&kvreg_caps_lock);
	st->proc_endpoints = km->nr_endpoints;
	st->proc_imports = km->nr_imports;
	st->proc_import_chunks = km->nr_import_chunks;
	spin_unlock(&kvreg_caps_lock);
	st->proc_max_endpoints = READ_ONCE(kvreg_max_endpoints_per_process);
	st->proc_max_imports = READ_ONCE(kvreg_max_imports_per_process);
	st->proc_max_import_chunks =
		READ_ONCE(kvreg_max_import_chunks_per_process);
	st->max_desc_chunks = READ_ONCE(kvreg_max_desc_chunks);
	st->max_conns_per_endpoint = READ_ONCE(kvreg_max_conns_per_endpoint);
	st->max_conns_per_peer = READ_ONCE(kvreg_max_conns_per_peer);
	st->max_unreaped = READ_ONCE(kvreg_max_unreaped);
	st->op_timeout_ms = READ_ONCE(kvreg_op_timeout_ms);
}
