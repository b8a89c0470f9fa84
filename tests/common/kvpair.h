// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The control plane of the tests between two guests (tests/guest/pair.sh):
 * a directory both share, where a file appears whole or not at all.
 */
#ifndef KVPAIR_H
#define KVPAIR_H

#include "kvtransfer.h"

/* How long a side waits for the other's file before it fails. */
#define WAIT_S	600

static inline void put_file(const char *dir, const char *name,
			    const void *data, size_t size)
{
	char tmp[512], path[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.%s", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(tmp, "w");
	CHECK(f && fwrite(data, 1, size, f) == size && !fclose(f),
	      "write %s: %s", tmp, strerror(errno));
	/* Whole or not at all, as the other guest sees it. */
	CHECK(!rename(tmp, path), "rename %s", path);
}

/*
 * True once a side of the pair test this process is (tests/guest/
 * pair-side.sh names it) has failed: the file it waits for will not come.
 */
static inline bool kvp_other_failed(const char *dir)
{
	static const char *const roles[] = { "export", "import" };
	const char *test = getenv("KVREG_PAIR_TEST");
	char path[512];
	int i;

	for (i = 0; test && i < 2; i++) {
		snprintf(path, sizeof(path), "%s/failed-%s-%s", dir, test,
			 roles[i]);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

/* Wait up to @wait_s for the other side's file: a side that failed
 * writes nothing, and the other must not wait for it. */
static inline size_t get_file_within(const char *dir, const char *name,
				     void *data, size_t cap, int wait_s)
{
	char path[512];
	size_t n = 0;
	FILE *f = NULL;
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (i = 0; i < wait_s * 10 && !f; i++) {
		f = fopen(path, "r");
		if (f)
			break;
		CHECK(!kvp_other_failed(dir), "%s will not come: "
		      "the other side of %s failed", path,
		      getenv("KVREG_PAIR_TEST"));
		usleep(100 * 1000);
	}
	CHECK(f, "%s never came", path);
	n = fread(data, 1, cap, f);
	fclose(f);
	return n;
}

static inline size_t get_file(const char *dir, const char *name,
			      void *data, size_t cap)
{
	return get_file_within(dir, name, data, cap, WAIT_S);
}

/*
 * Import @desc, trying again for a minute: the other guest's link, or a
 * link or device that just came back, may not answer the first REQs
 * (no neighbour entry or GID yet). Each failure is printed, and whether
 * @ping_addr (if any) answers a ping, so that one that never stops says
 * why.
 */
static inline struct kvreg_remote *kvp_import(struct kvreg *kv,
					      const uint8_t *desc, size_t n,
					      const char *ping_addr)
{
	struct kvreg_remote *r = NULL;
	struct kvreg_error err;
	double t0 = kvt_now();
	char m[512], cmd[128];
	int ret;

	for (;;) {
		ret = kvreg_import(kv, desc, n, 5000, &r, &err);
		if (!ret || kvt_now() - t0 > 60)
			break;
		kvreg_format_error(&err, ret, m, sizeof(m));
		printf("importer: %.1f s: %s\n", kvt_now() - t0, m);
		snprintf(cmd, sizeof(cmd),
			 "busybox ping -c 1 -W 1 %s > /dev/null 2>&1",
			 ping_addr ? ping_addr : "");
		if (ping_addr && system(cmd))
			printf("importer: no ping answer from %s\n", ping_addr);
		usleep(500 * 1000);
	}
	CHECK_OK(ret, &err);
	if (kvt_now() - t0 > 1)
		printf("importer: connected after %.1f s\n", kvt_now() - t0);
	return r;
}

/* The main() of a program with a side on each guest: export or import. */
static inline int kvp_roles(int argc, char **argv,
			    int (*exporter)(const char *dir),
			    int (*importer)(const char *dir))
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "export"))
		return exporter(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "import"))
		return importer(argv[2]);
	fprintf(stderr, "usage: %s export DIR | import DIR\n", argv[0]);
	return T_FAIL;
}

#endif /* KVPAIR_H */
