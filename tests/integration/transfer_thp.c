// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* Transparent huge pages on an aligned mapping: 2 MiB MR pages. */
#include "kvtransfer.h"

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	struct kvreg *kv = kvt_open();
	const uint64_t len = 8 * SZ_2M;
	uint8_t *a, *b;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	a = kvt_map_thp(len);
	b = kvt_map_thp(len);
	if (kvt_thp_bytes(a, len) < len || kvt_thp_bytes(b, len) < len)
		kvt_skip("the kernel did not back the buffers with THP");
	kvt_roundtrip(kv, a, b, len, devs[0].index, 21);
	kvreg_close(kv);
	return T_PASS;
}
