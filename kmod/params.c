// SPDX-License-Identifier: GPL-2.0-only
/*
 * Module parameters (defaults an admin may change at run time, read with
 * READ_ONCE where they are used) and host-wide counters.
 */
#include <linux/module.h>

#include "kvreg.h"

atomic64_t kvreg_nr_regs = ATOMIC64_INIT(0);
atomic64_t kvreg_nr_mrs = ATOMIC64_INIT(0);
/*
 * debugfs (root) fault injection for the rollback test: REGISTER fails on
 * the devices set here, after each is fully set up, as a driver EIO. Not
 * ABI: no reason code of its own.
 */
u64 kvreg_inject_fail_mask;
/*
 * debugfs (root) fault injection for integration/flush_failed: the next
 * this many flushes of a late or killed chain fail, as a driver's
 * ib_modify_qp() may, and the chain runs on. Not ABI.
 */
u32 kvreg_inject_flush_fail;

unsigned long kvreg_max_mrs_per_process = 4096;
module_param_named(max_mrs_per_process, kvreg_max_mrs_per_process, ulong,
		   0644);
MODULE_PARM_DESC(max_mrs_per_process,
		 "MRs one process may hold, every device and chunk counted (default 4096)");

unsigned long kvreg_max_bytes_per_process;
module_param_named(max_bytes_per_process, kvreg_max_bytes_per_process, ulong,
		   0644);
MODULE_PARM_DESC(max_bytes_per_process,
		 "Bytes one process may pin (default: half of RAM)");

unsigned long kvreg_host_max_bytes;
module_param_named(host_max_bytes, kvreg_host_max_bytes, ulong, 0644);
MODULE_PARM_DESC(host_max_bytes,
		 "Bytes all processes together may pin (default: 3/4 of RAM)");

unsigned int kvreg_device_mr_reserve_percent = 50;
module_param_named(device_mr_reserve_percent,
		   kvreg_device_mr_reserve_percent, uint, 0644);
MODULE_PARM_DESC(device_mr_reserve_percent,
		 "Share of each device's max_mr kvreg leaves to others (default 50)");

unsigned long kvreg_max_mrs_per_device;
module_param_named(max_mrs_per_device, kvreg_max_mrs_per_device, ulong,
		   0644);
MODULE_PARM_DESC(max_mrs_per_device,
		 "MRs kvreg may hold on one device; 0: by device_mr_reserve_percent");

unsigned int kvreg_max_threads = 32;
module_param_named(max_threads, kvreg_max_threads, uint, 0644);
MODULE_PARM_DESC(max_threads,
		 "CPUs one registration may use to pin, map and unpin a large buffer; 1 pins on the caller's CPU only (default 32)");

unsigned int kvreg_keepalive_ms = 2000;
module_param_named(keepalive_ms, kvreg_keepalive_ms, uint, 0644);
MODULE_PARM_DESC(keepalive_ms,
		 "Keepalive period (ms, at most 65535): an importer writes a zero-length RDMA WRITE twice a period and says its period when it connects, and an exporter lets a peer go whose packets stopped for three of the longer of the two, or that did not complete its connection within three; fixed per connection when it connects; 0: never, on every connection (default 2000)");
