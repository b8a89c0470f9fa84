// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Races and lifetimes: threads sharing one file; munmap, mprotect and
 * mremap against registration; fork with live registrations; device
 * removal during transfers, and during QUERY and REGISTER; rmmod while in
 * use. Each race counts both of its sides and fails unless both occurred
 * (a transfer that moved bytes and one whose handle died under it, a
 * registration made and one refused). After each: no kernel report (the
 * runner checks), nothing left pinned or charged. A kill inside REGISTER
 * is kill9's, which proves the kill fell inside the call.
 *   races NETDEV_OF_THE_SECOND_DEVICE
 */
#include <pthread.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "kvtransfer.h"

#define BUF	(64 * SZ_4K)

static struct kvreg *kv;
static struct kvreg_device_info devs[KVREG_MAX_DEVICES];
static unsigned int ndev;
static uint8_t *shared_buf;
static _Atomic uint64_t live[16];
static atomic_bool stop;
/* The shared-file race's two sides, and its registrations. */
static atomic_int moved, died_under, registered;

static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Registers and deregisters slices of one buffer, on one shared file. */
static void *registrar(void *arg)
{
	uint64_t s = (uintptr_t)arg;
	double t0 = kvt_now();
	int i;

	/*
	 * 300 at least, then on until a transfer saw its handle die under
	 * it (rare where rxe moves bytes inside the post, as 5.10's does:
	 * 0 of 900 once), for at most 60 s: the check below needs the race.
	 */
	for (i = 0; i < 300 || (!atomic_load(&died_under) &&
				kvt_now() - t0 < 60); i++) {
		uint64_t off = rnd_next(&s) % (BUF / 2);
		uint64_t len = 1 + rnd_next(&s) % (BUF / 2);
		unsigned int slot = rnd_next(&s) % 16;
		/*
		 * Bare handles, not libkvreg's: any thread may deregister
		 * one, and no library handle may outlive its registration.
		 */
		struct kvreg_register r = {
			.size = sizeof(r),
			.flags = KVREG_REG_F_ALLOW_OVERLAP,
			.addr = (uintptr_t)(shared_buf + off),
			.length = len,
			.access = KVREG_ACCESS_ALL,
		};
		uint64_t h;

		if (ioctl(kvreg_fd(kv), KVREG_IOC_REGISTER, &r))
			continue;
		atomic_fetch_add(&registered, 1);
		h = atomic_exchange(&live[slot], r.handle);
		if (h) {
			struct kvreg_deregister d = {
				.size = sizeof(d), .handle = h,
			};

			/* Another thread may have taken it: ENOENT is fine. */
			ioctl(kvreg_fd(kv), KVREG_IOC_DEREGISTER, &d);
		}
	}
	return NULL;
}

/*
 * Transfers between whatever handles are live, and queries them. A
 * handle whose slot a registrar emptied between the mover's read of it
 * and the transfer's return was deregistered while the transfer was on
 * its way or in the kernel: the race, counted whatever the transfer said.
 */
static void *mover(void *arg)
{
	uint64_t s = (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		unsigned int ls = rnd_next(&s) % 16, rs = rnd_next(&s) % 16;
		struct kvreg_transfer t = {
			.size = sizeof(t),
			.opcode = 1 + rnd_next(&s) % 2,
			.device_index = devs[rnd_next(&s) % ndev].index,
			.local_handle = atomic_load(&live[ls]),
			.remote_handle = atomic_load(&live[rs]),
			.length = 1 + rnd_next(&s) % 64,
		};
		struct kvreg_query q = {
			.size = sizeof(q), .handle = t.local_handle,
		};
		int ret = ioctl(kvreg_fd(kv), KVREG_IOC_TRANSFER, &t) ?
			  -errno : 0;

		CHECK(!ret || ret == -ENOENT || ret == -ERANGE ||
		      ret == -ENODEV, "transfer: %d", ret);
		if (!ret)
			atomic_fetch_add(&moved, 1);
		if (t.local_handle && t.remote_handle &&
		    (atomic_load(&live[ls]) != t.local_handle ||
		     atomic_load(&live[rs]) != t.remote_handle))
			atomic_fetch_add(&died_under, 1);
		ioctl(kvreg_fd(kv), KVREG_IOC_QUERY, &q);
	}
	return NULL;
}

/* Forks while the others register: children scribble on their copy. */
static void *forker(void *arg)
{
	int *forks = arg, status;

	while (!atomic_load(&stop)) {
		pid_t pid = fork();

		CHECK(pid >= 0, "fork");
		if (!pid) {
			memset(shared_buf, 0xEE, BUF);
			_exit(0);
		}
		CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
		(*forks)++;
	}
	return NULL;
}

static void shared_file(void)
{
	pthread_t reg[3], mov[2], fork_thread;
	struct kvreg_deregister d = { .size = sizeof(d) };
	int i, forks = 0;
	uint64_t off;

	/* One value everywhere: the movers' copies cannot change it. */
	memset(shared_buf, 0x5A, BUF);
	fflush(stdout);
	pthread_create(&fork_thread, NULL, forker, &forks);
	for (i = 0; i < 3; i++)
		pthread_create(&reg[i], NULL, registrar, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < 2; i++)
		pthread_create(&mov[i], NULL, mover, (void *)(uintptr_t)(i + 7));
	for (i = 0; i < 3; i++)
		pthread_join(reg[i], NULL);
	atomic_store(&stop, true);
	for (i = 0; i < 2; i++)
		pthread_join(mov[i], NULL);
	pthread_join(fork_thread, NULL);
	for (i = 0; i < 16; i++) {
		d.handle = atomic_exchange(&live[i], 0);
		if (d.handle)
			ioctl(kvreg_fd(kv), KVREG_IOC_DEREGISTER, &d);
	}
	for (off = 0; off < BUF; off++)
		CHECK(shared_buf[off] == 0x5A,
		      "a fork child's write reached byte %llu of the parent",
		      (unsigned long long)off);
	CHECK(registered > 0 && moved > 0 && died_under > 0 && forks > 0,
	      "the shared-file race did not happen: %d registrations, %d "
	      "transfers moved, %d whose handle was deregistered under them, "
	      "%d forks",
	      atomic_load(&registered), atomic_load(&moved),
	      atomic_load(&died_under), forks);
	printf("shared file: %d registrations by 3 threads; 2 movers moved "
	       "%d times and found %d handles deregistered under them; %d "
	       "forks\n", atomic_load(&registered), atomic_load(&moved),
	       atomic_load(&died_under), forks);
}

/* The address space changes under registrations. */
static void *remapper(void *arg)
{
	uint8_t *p = arg;

	while (!atomic_load(&stop)) {
		munmap(p + 16 * SZ_4K, 8 * SZ_4K);
		mmap(p + 16 * SZ_4K, 8 * SZ_4K, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		mprotect(p + 32 * SZ_4K, 4 * SZ_4K, PROT_READ);
		mprotect(p + 32 * SZ_4K, 4 * SZ_4K, PROT_READ | PROT_WRITE);
	}
	return NULL;
}

static void address_space(void)
{
	uint8_t *p = kvt_map_anon(BUF);
	struct kvreg_error err;
	struct kvreg_mr *mr;
	int i, ok = 0, refused = 0;
	pthread_t t;
	void *moved;

	atomic_store(&stop, false);
	pthread_create(&t, NULL, remapper, p);
	for (i = 0; i < 300; i++) {
		int ret = kvreg_register(kv, p, BUF, KVREG_ACCESS_ALL, 0, &mr,
					 &err);

		if (!ret) {
			ok++;
			CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
			continue;
		}
		refused++;
		CHECK(err.reason == KVREG_REASON_UNMAPPED_ADDRESS ||
		      err.reason == KVREG_REASON_READ_ONLY,
		      "refused for reason %u", err.reason);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);

	/*
	 * Registered, then moved and unmapped: the pins hold the pages.
	 * A fresh mapping: the loop above split @p into several VMAs, which
	 * mremap() cannot move as one.
	 */
	p = kvt_map_anon(BUF);
	CHECK_OK(kvreg_register(kv, p, BUF, KVREG_ACCESS_ALL, 0, &mr, &err),
		 &err);
	moved = mremap(p, BUF, 2 * BUF, MREMAP_MAYMOVE);
	CHECK(moved != MAP_FAILED, "mremap: %s", strerror(errno));
	CHECK(!munmap(moved, 2 * BUF), "munmap");
	CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
	CHECK(ok > 0 && refused > 0, "the address-space race did not happen: "
	      "%d registered, %d refused while remapping", ok, refused);
	printf("address space: %d registered, %d refused while remapping\n",
	       ok, refused);
}

/* The child's writes never reach the parent's registered pages. */
static void fork_registered(void)
{
	uint8_t *a = kvt_map_anon(BUF), *b = kvt_map_anon(BUF);
	struct kvreg_mr *ma, *mb;
	struct kvreg_error err;
	uint32_t dev = devs[0].index;
	int status;
	pid_t pid;

	kvt_fill(a, BUF, 0x91);
	CHECK_OK(kvreg_register(kv, a, BUF, KVREG_ACCESS_ALL, 1ULL << dev, &ma,
				&err), &err);
	CHECK_OK(kvreg_register(kv, b, BUF, KVREG_ACCESS_ALL, 1ULL << dev, &mb,
				&err), &err);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		memset(a, 0xEE, BUF);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "wait");
	kvt_xfer(kv, KVREG_OP_WRITE, dev, ma, 0, mb, 0, BUF);
	CHECK(kvt_mismatch(b, 0, BUF, 0x91, 0) < 0,
	      "the child's writes reached the registered pages");
	/* And the parent's own writes still do. */
	kvt_fill(a, BUF, 0x92);
	kvt_xfer(kv, KVREG_OP_WRITE, dev, ma, 0, mb, 0, BUF);
	CHECK(kvt_mismatch(b, 0, BUF, 0x92, 0) < 0, "parent write after fork");
	CHECK_OK(kvreg_deregister(kv, mb, &err), &err);
	CHECK_OK(kvreg_deregister(kv, ma, &err), &err);
	printf("fork: the parent's registration stayed its own\n");
}

/* rmmod refused because the file is open, not for any other reason. */
static void rmmod_in_use(void)
{
	char line[256], said[512] = "";
	FILE *f = popen("rmmod kvreg 2>&1", "r");
	int status;

	CHECK(f, "popen");
	while (fgets(line, sizeof(line), f))
		if (strlen(said) + strlen(line) < sizeof(said))
			strcat(said, line);
	status = pclose(f);
	CHECK(status != 0 && strstr(said, "in use"),
	      "rmmod while /dev/kvreg is open: status %#x, said: %s", status,
	      said);
}

struct removal_arg {
	struct kvreg_mr *a, *b;
	uint32_t dev;
	int ok, gone;
};

static void *remote_mover(void *arg)
{
	struct removal_arg *r = arg;
	struct kvreg_error err;

	while (!atomic_load(&stop)) {
		int ret = kvreg_transfer(kv, KVREG_OP_WRITE, r->dev, r->a, 0,
					 r->b, 0, BUF, &err);

		if (!ret)
			r->ok++;
		else if (ret == -ENODEV)
			r->gone++;
		else
			CHECK(0, "transfer during removal: %d reason %u", ret,
			      err.reason);
	}
	return NULL;
}

static void remove_during_transfers(const char *netdev)
{
	uint8_t *a = kvt_map_anon(BUF), *b = kvt_map_anon(BUF);
	struct removal_arg r = { .dev = devs[1].index };
	struct kvreg_error err;
	char cmd[256];
	pthread_t t;

	CHECK_OK(kvreg_register(kv, a, BUF, KVREG_ACCESS_ALL, 0, &r.a, &err),
		 &err);
	CHECK_OK(kvreg_register(kv, b, BUF, KVREG_ACCESS_ALL, 0, &r.b, &err),
		 &err);
	atomic_store(&stop, false);
	pthread_create(&t, NULL, remote_mover, &r);
	usleep(300000);
	snprintf(cmd, sizeof(cmd), "rdma link delete %s", devs[1].name);
	CHECK(!system(cmd), "%s", cmd);
	usleep(200000);
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	CHECK(r.ok > 0 && r.gone > 0, "%d transfers before, %d refused after",
	      r.ok, r.gone);
	CHECK_OK(kvreg_deregister(kv, r.b, &err), &err);
	CHECK_OK(kvreg_deregister(kv, r.a, &err), &err);
	snprintf(cmd, sizeof(cmd), "rdma link add %s type rxe netdev %s",
		 devs[1].name, netdev);
	CHECK(!system(cmd), "%s", cmd);
	printf("device removal: %d transfers before it, %d refused after\n",
	       r.ok, r.gone);
}

/*
 * QUERY and REGISTER hand out keys by walking each device's MR array,
 * which device removal frees: they must see the array whole or not at all.
 */
struct query_arg {
	struct kvreg_mr *mr;
	uint8_t *buf;
	int queries, registered, refused;
};

static void *querier(void *arg)
{
	struct query_arg *q = arg;
	struct kvreg_key keys[64];
	struct kvreg_error err;
	struct kvreg_query info;

	while (!atomic_load(&stop)) {
		CHECK_OK(kvreg_query(kv, kvreg_mr_handle(q->mr), &info, keys, 64,
				     &err), &err);
		q->queries++;
	}
	return NULL;
}

static void *reregistrar(void *arg)
{
	struct query_arg *q = arg;
	struct kvreg_error err;
	struct kvreg_mr *mr;

	while (!atomic_load(&stop)) {
		int ret = kvreg_register(kv, q->buf, 16 * SZ_4K,
					 KVREG_ACCESS_ALL, 0, &mr, &err);

		if (!ret) {
			CHECK_OK(kvreg_deregister(kv, mr, &err), &err);
			q->registered++;
		} else {
			CHECK(ret == -ENODEV, "register during removal: %d "
			      "reason %u", ret, err.reason);
			q->refused++;
		}
	}
	return NULL;
}

static void remove_during_queries(const char *netdev)
{
	const uint64_t len = 1536 * SZ_4K;	/* several MRs a device */
	struct query_arg q = { .buf = kvt_map_anon(16 * SZ_4K) };
	uint8_t *a = kvt_map_anon_scattered(len);
	struct kvreg_error err;
	pthread_t t[3];
	char cmd[256];
	int i;

	ndev = kvt_devices(kv, devs);
	CHECK(ndev >= 2, "devices back: %u", ndev);
	CHECK_OK(kvreg_register(kv, a, len, KVREG_ACCESS_ALL, 0, &q.mr, &err),
		 &err);
	atomic_store(&stop, false);
	pthread_create(&t[0], NULL, querier, &q);
	pthread_create(&t[1], NULL, querier, &q);
	pthread_create(&t[2], NULL, reregistrar, &q);
	usleep(300000);
	snprintf(cmd, sizeof(cmd), "rdma link delete %s", devs[1].name);
	CHECK(!system(cmd), "%s", cmd);
	usleep(300000);
	atomic_store(&stop, true);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(q.queries > 0 && q.registered > 0, "%d queries, %d registrations",
	      q.queries, q.registered);
	CHECK_OK(kvreg_deregister(kv, q.mr, &err), &err);
	snprintf(cmd, sizeof(cmd), "rdma link add %s type rxe netdev %s",
		 devs[1].name, netdev);
	CHECK(!system(cmd), "%s", cmd);
	printf("device removal: %d queries and %d registrations around it, "
	       "%d refused\n", q.queries, q.registered, q.refused);
}

int main(int argc, char **argv)
{
	struct kvt_snap before;

	if (argc != 2)
		kvt_skip("usage: races NETDEV");
	kv = kvt_open();
	ndev = kvt_devices(kv, devs);
	if (ndev < 2)
		kvt_skip("needs two RDMA devices");
	shared_buf = kvt_map_anon(BUF);
	before = kvt_snap(kv);

	shared_file();
	kvt_check_unchanged(kv, &before, "after the shared-file race");
	address_space();
	kvt_check_unchanged(kv, &before, "after the address-space race");
	fork_registered();
	kvt_check_unchanged(kv, &before, "after fork");
	remove_during_transfers(argv[1]);
	kvt_check_unchanged(kv, &before, "after removal during transfers");
	remove_during_queries(argv[1]);
	kvt_check_unchanged(kv, &before, "after removal during queries");

	/* In use: the module must refuse to go, for that reason. */
	rmmod_in_use();
	CHECK(kvt_devices(kv, devs) >= 2, "kvreg unusable after rmmod attempt");
	kvreg_close(kv);
	printf("rmmod refused while /dev/kvreg was open\n");
	return T_PASS;
}
