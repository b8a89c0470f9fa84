// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * iproute2's `rdma res show mr` shows kvreg's MRs as the administrator
 * expects: none for a registration (REGISTER makes no MR), one line per
 * MR of an export, owned by [kvreg], with the descriptor's rkeys and the
 * lengths its chunks cover; gone once the export is revoked.
 */
#include "kvtest.h"
#include "kvtransfer.h"

struct res_mr {
	unsigned int rkey, lkey;
	unsigned long long mrlen;
};

/* kvreg's MRs on a device, as `rdma res show mr dev NAME` lists them. */
static unsigned int res_show_mr(const char *dev, struct res_mr *out,
				unsigned int capacity)
{
	char cmd[128], line[512];
	unsigned int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma res show mr dev %s 2>&1", dev);
	f = popen(cmd, "r");
	CHECK(f, "popen %s", cmd);
	while (fgets(line, sizeof(line), f)) {
		struct res_mr m;
		char *p;

		if (!strstr(line, "comm [kvreg]"))
			continue;
		p = strstr(line, " rkey ");
		CHECK(p && sscanf(p, " rkey %x lkey %x mrlen %llu", &m.rkey,
				  &m.lkey, &m.mrlen) == 3,
		      "unexpected line: %s", line);
		if (n < capacity)
			out[n] = m;
		n++;
	}
	CHECK(pclose(f) == 0, "%s failed", cmd);
	return n;
}

static const struct res_mr *find_rkey(const struct res_mr *mrs,
				      unsigned int n, unsigned int rkey)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (mrs[i].rkey == rkey)
			return &mrs[i];
	return NULL;
}

int main(void)
{
	struct kvreg_device_info devs[KVREG_MAX_DEVICES];
	const uint64_t len = 3 * SZ_2M + 5 * SZ_4K;
	struct res_mr listed[256];
	struct kvreg *kv = kvt_open();
	const struct kvreg_desc_chunk *c;
	struct kvreg_mr *ma, *mb;
	struct kvreg_remote *r;
	struct kvreg_error err;
	unsigned int chunks, before, n, i, mine = 0;
	uint64_t ep;
	unsigned long long sum = 0;
	uint8_t *a, *b;

	if (!kvt_devices(kv, devs))
		kvt_skip("no RDMA device");
	if (system("rdma res show mr >/dev/null 2>&1"))
		kvt_skip("no rdma tool (iproute2)");
	before = res_show_mr(devs[0].name, listed, 256);

	/* Scattered pages: an export takes several MRs on the device. */
	a = kvt_map_anon_scattered(len);
	b = kvt_map_anon(len);
	kvt_fill(a, len, 0x3c);
	memset(b, 0, len);
	CHECK_OK(kvreg_register(kv, a, len, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &ma, &err), &err);
	CHECK_OK(kvreg_register(kv, b, len, KVREG_ACCESS_ALL,
				1ULL << devs[0].index, &mb, &err), &err);
	kvt_xfer(kv, KVREG_OP_WRITE, devs[0].index, ma, 0, mb, 0, len);
	CHECK(kvt_mismatch(b, 0, len, 0x3c, 0) < 0, "WRITE mismatch at %lld",
	      (long long)kvt_mismatch(b, 0, len, 0x3c, 0));

	n = res_show_mr(devs[0].name, listed, 256);
	CHECK(n == before, "%u kvreg MRs listed after two REGISTERs and a "
	      "copy, %u before: REGISTER made MRs", n, before);

	/* Exported: its MRs are the descriptor's chunks, and listed. */
	r = kvt_self_import(kv, ma, devs[0].index, &ep);
	n = res_show_mr(devs[0].name, listed, 256);
	CHECK(n <= 256, "%u MRs listed", n);
	chunks = le32toh(kvt_desc_path(kvt_self_desc)->nr_chunks);
	c = kvt_desc_chunks(kvt_self_desc);
	for (i = 0; i < chunks; i++) {
		const struct res_mr *m = find_rkey(listed, n,
						   le32toh(c[i].rkey));

		CHECK(m, "chunk %u (rkey %#x) is not in rdma res show mr", i,
		      le32toh(c[i].rkey));
		CHECK(m->mrlen == le64toh(c[i].length),
		      "rkey %#x: mrlen %llu, want %llu", m->rkey, m->mrlen,
		      (unsigned long long)le64toh(c[i].length));
		sum += m->mrlen;
		mine++;
	}
	CHECK(mine > 1 && sum == len && n == before + mine &&
	      mine == kvreg_mr_key_at(ma, devs[0].index, 0)->mrs,
	      "%u MRs cover %llu of %llu bytes, %u listed (%u before), the "
	      "key said %u", mine, sum, (unsigned long long)len, n, before,
	      kvreg_mr_key_at(ma, devs[0].index, 0)->mrs);
	memset(b, 0, len);
	CHECK_OK(kvreg_transfer_remote(kv, KVREG_OP_READ, mb, 0, r, 0, len,
				       &err), &err);
	CHECK(kvt_mismatch(b, 0, len, 0x3c, 0) < 0, "READ mismatch at %lld",
	      (long long)kvt_mismatch(b, 0, len, 0x3c, 0));
	printf("rdma res show mr: no MR of two registrations; %u of their "
	       "export, %llu bytes in all, as the descriptor says\n", mine,
	       sum);
	CHECK_OK(kvreg_unimport(kv, r, &err), &err);
	CHECK_OK(kvreg_unlisten(kv, ep, &err), &err);
	n = res_show_mr(devs[0].name, listed, 256);
	CHECK(n == before, "%u kvreg MRs listed after UNLISTEN, %u before",
	      n, before);

	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	n = res_show_mr(devs[0].name, listed, 256);
	CHECK(n == before, "%u kvreg MRs listed after deregistration, %u "
	      "before", n, before);
	kvreg_close(kv);
	return T_PASS;
}
