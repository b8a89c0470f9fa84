// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for kvreg's pure logic: MR planning and page size, argument
 * checks, duplicate and overlap rules, budget arithmetic, error records,
 * a transfer's local side from a registration's DMA runs.
 * Built as kvreg_kunit.ko against a kernel with CONFIG_KUNIT; it runs at
 * insmod and reports in /sys/kernel/debug/kunit/kvreg/results.
 */
#include <kunit/test.h>
#include <linux/mm_types.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "kvreg.h"

#define MIB(x)	((u64)(x) << 20)

/* A DMA-mapped table with the given runs, as a device would have it. */
static struct sg_table *fake_sgt(struct kunit *test, const u64 *addr,
				 const u32 *len, unsigned int n)
{
	struct sg_table *sgt = kunit_kzalloc(test, sizeof(*sgt), GFP_KERNEL);
	struct scatterlist *sg;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, sgt);
	KUNIT_ASSERT_EQ(test, sg_alloc_table(sgt, n, GFP_KERNEL), 0);
	for_each_sg(sgt->sgl, sg, n, i) {
		sg_dma_address(sg) = addr[i];
		sg_dma_len(sg) = len[i];
	}
	sgt->nents = n;
	return sgt;
}

static void plan_fits_in_one(struct kunit *test)
{
	const u64 a[] = { 0x100000 };
	const u32 l[] = { 100 * SZ_4K };
	struct sg_table *sgt = fake_sgt(test, a, l, 1);

	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 0, PAGE_SHIFT, 512), 1U);
	sg_free_table(sgt);
}

/* A chunk that fills inside an entry leaves its last page to the next. */
static void plan_split_inside_entry(struct kunit *test)
{
	const u64 a[] = { 0x100000 };
	const u32 l[] = { 1027 * SZ_4K };
	struct sg_table *sgt = fake_sgt(test, a, l, 1);

	/* 511 + 511 + 5, as ib_sg_to_pages() maps it. */
	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 0, PAGE_SHIFT, 512), 3U);
	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 0, PAGE_SHIFT, 1027), 1U);
	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 0, PAGE_SHIFT, 1026), 2U);
	sg_free_table(sgt);
}

/* Filling exactly at an entry's end wastes nothing. */
static void plan_exact_entries(struct kunit *test)
{
	const u64 a[] = { 0x100000, 0x900000 };
	const u32 l[] = { 512 * SZ_4K, 512 * SZ_4K };
	struct sg_table *sgt = fake_sgt(test, a, l, 2);

	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 0, PAGE_SHIFT, 512), 2U);
	sg_free_table(sgt);
}

/* An offset into the first page does not add a page. */
static void plan_first_offset(struct kunit *test)
{
	const u64 a[] = { 0x100000 };
	const u32 l[] = { 2 * SZ_4K };
	struct sg_table *sgt = fake_sgt(test, a, l, 1);

	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 100, PAGE_SHIFT, 2), 1U);
	sg_free_table(sgt);
}

static void plan_huge_pages(struct kunit *test)
{
	const u64 a[] = { MIB(64) };
	const u32 l[] = { MIB(16) };
	struct sg_table *sgt = fake_sgt(test, a, l, 1);

	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 0, 21, 512), 1U);
	/* 8 huge pages, 4 per MR: 3 + 3 + 2. */
	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 0, 21, 4), 3U);
	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 0, 21, 1), 0U);
	sg_free_table(sgt);
}

/* An MR that takes @max pages, as a driver's set_page() bounds it. */
struct fake_mr {
	struct ib_mr mr;
	u32 pages, max;
};

static int fake_set_page(struct ib_mr *mr, u64 addr)
{
	struct fake_mr *f = container_of(mr, struct fake_mr, mr);

	if (f->pages == f->max)
		return -ENOMEM;
	f->pages++;
	return 0;
}

/* The MRs ib_sg_to_pages() itself fills, one after the other. */
static u32 mrs_by_ib_core(struct kunit *test, struct sg_table *sgt,
			  unsigned int first_offset, u32 shift, u32 max)
{
	struct fake_mr *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct scatterlist *sg = sgt->sgl;
	unsigned int offset = first_offset;
	int nents = sgt->nents, mapped;
	u32 n = 0;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->mr.page_size = BIT(shift);
	f->max = max;
	while (nents > 0) {
		f->pages = 0;
		n++;
		mapped = ib_sg_to_pages(&f->mr, sg, nents, &offset,
					fake_set_page);
		if (mapped < 0 || (!mapped && !offset) || n > 100000)
			return 0;
		nents -= mapped;
		while (mapped--)
			sg = sg_next(sg);
	}
	return n;
}

/*
 * Entries that go on where the previous ended (cut by a segment limit,
 * not by a gap) are one run to ib_sg_to_pages(): the plan must count
 * their MRs as it fills them, whatever the MR size.
 */
static void plan_contiguous_entries(struct kunit *test)
{
	/* 2 MiB pages: cuts 4 KiB past a boundary, a gap on one. */
	static const u64 thp[] = { MIB(64) + SZ_4K, MIB(96) + SZ_4K,
				   MIB(97), MIB(128) };
	static const u32 thp_len[] = { MIB(32), MIB(1) - SZ_4K, MIB(3),
				       MIB(6) };
	/* Short runs inside one page, and a run that ends mid-page. */
	static const u64 odd[] = { MIB(10), MIB(11), MIB(11) + SZ_64K,
				   MIB(12), MIB(20) };
	static const u32 odd_len[] = { MIB(1), SZ_64K, MIB(1) - SZ_64K,
				       MIB(5), MIB(2) };
	static const u32 maxes[] = { 2, 3, 4, 5, 511 };
	struct sg_table *sgt;
	unsigned int m;

	sgt = fake_sgt(test, thp, thp_len, ARRAY_SIZE(thp));
	for (m = 0; m < ARRAY_SIZE(maxes); m++)
		KUNIT_EXPECT_EQ_MSG(test, kvreg_plan_mrs(sgt, 0, 21, maxes[m]),
				    mrs_by_ib_core(test, sgt, 0, 21, maxes[m]),
				    "2 MiB runs, %u pages per MR", maxes[m]);
	sg_free_table(sgt);
	sgt = fake_sgt(test, odd, odd_len, ARRAY_SIZE(odd));
	for (m = 0; m < ARRAY_SIZE(maxes); m++) {
		KUNIT_EXPECT_EQ_MSG(test, kvreg_plan_mrs(sgt, 0, 20, maxes[m]),
				    mrs_by_ib_core(test, sgt, 0, 20, maxes[m]),
				    "1 MiB pages, %u per MR", maxes[m]);
		KUNIT_EXPECT_EQ_MSG(test,
				    kvreg_plan_mrs(sgt, 100, 12, maxes[m]),
				    mrs_by_ib_core(test, sgt, 100, 12,
						   maxes[m]),
				    "4 KiB pages, %u per MR", maxes[m]);
	}
	sg_free_table(sgt);
}

/* A 1 GiB page in 32 MiB entries: one 1 GiB MR page, one MR. */
static void plan_gigantic_page(struct kunit *test)
{
	struct kvreg_dev *kdev = kunit_kzalloc(test, sizeof(*kdev), GFP_KERNEL);
	struct kvreg_reg *reg = kunit_kzalloc(test, sizeof(*reg), GFP_KERNEL);
	u64 addr[32];
	u32 len[32];
	struct sg_table *sgt;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, kdev);
	KUNIT_ASSERT_NOT_NULL(test, reg);
	for (i = 0; i < 32; i++) {
		addr[i] = MIB(3072) + i * MIB(32);
		len[i] = MIB(32);
	}
	sgt = fake_sgt(test, addr, len, 32);
	kdev->page_size_cap = 0xfffff000;
	reg->addr = MIB(1024) * 5;
	reg->length = MIB(1024);
	KUNIT_EXPECT_EQ(test, kvreg_pick_page_shift(kdev, reg, sgt), 30U);
	KUNIT_EXPECT_EQ(test, kvreg_plan_mrs(sgt, 0, 30, 511), 1U);
	KUNIT_EXPECT_EQ(test, mrs_by_ib_core(test, sgt, 0, 30, 511), 1U);
	/* No 1 GiB pages on the device: the largest it has. */
	kdev->page_size_cap = SZ_4K | SZ_2M;
	KUNIT_EXPECT_EQ(test, kvreg_pick_page_shift(kdev, reg, sgt), 21U);
	/* A gap 2 MiB into it bounds the page at 2 MiB. */
	kdev->page_size_cap = 0xfffff000;
	addr[1] += MIB(2);
	sg_free_table(sgt);
	sgt = fake_sgt(test, addr, len, 32);
	KUNIT_EXPECT_EQ(test, kvreg_pick_page_shift(kdev, reg, sgt), 21U);
	sg_free_table(sgt);
}

static void pages_per_mr_limits(struct kunit *test)
{
	struct kvreg_dev kdev = {
		.max_fast_reg_pages = 512, .max_mr_size = MIB(1),
	};

	KUNIT_EXPECT_EQ(test, kvreg_pages_per_mr(&kdev, PAGE_SHIFT), 256U);
	kdev.max_mr_size = U64_MAX;
	KUNIT_EXPECT_EQ(test, kvreg_pages_per_mr(&kdev, PAGE_SHIFT), 512U);
	KUNIT_EXPECT_EQ(test, kvreg_pages_per_mr(&kdev, 21), 512U);
	/* rxe: never a full page-list table (its over-read). */
	kdev.page_list_overread = true;
	KUNIT_EXPECT_EQ(test, kvreg_pages_per_mr(&kdev, PAGE_SHIFT), 511U);
	kdev.max_fast_reg_pages = 300;
	KUNIT_EXPECT_EQ(test, kvreg_pages_per_mr(&kdev, PAGE_SHIFT), 300U);
}

static void page_shift_choice(struct kunit *test)
{
	static const u64 aligned[] = { MIB(64) + 0x3000, MIB(80) };
	static const u32 len[] = { MIB(2) - 0x3000, MIB(4) };
	static const u64 skewed[] = { MIB(64) + 0x5000, MIB(80) };
	static const u64 small[] = { 0x10000, 0x31000 };
	static const u32 small_len[] = { SZ_8K, SZ_8K };
	/* Lock debugging makes these large: not on the stack. */
	struct kvreg_dev *kdev = kunit_kzalloc(test, sizeof(*kdev), GFP_KERNEL);
	struct kvreg_reg *reg = kunit_kzalloc(test, sizeof(*reg), GFP_KERNEL);
	struct sg_table *sgt;

	KUNIT_ASSERT_NOT_NULL(test, kdev);
	KUNIT_ASSERT_NOT_NULL(test, reg);
	kdev->page_size_cap = 0xfffff000;

	/* VA and DMA agree modulo 2 MiB, inner boundaries aligned: 2 MiB. */
	reg->addr = MIB(2) * 100 + 0x3000;
	sgt = fake_sgt(test, aligned, len, 2);
	KUNIT_EXPECT_EQ(test, kvreg_pick_page_shift(kdev, reg, sgt), 21U);
	KUNIT_EXPECT_TRUE(test, reg->huge_backed);
	/* The device cannot: base pages, still huge-backed. */
	kdev->page_size_cap = SZ_4K;
	KUNIT_EXPECT_EQ(test, kvreg_pick_page_shift(kdev, reg, sgt),
			(u32)PAGE_SHIFT);
	sg_free_table(sgt);

	kdev->page_size_cap = 0xfffff000;
	/* VA and DMA agree modulo 8 KiB only: the largest page that fits. */
	sgt = fake_sgt(test, skewed, len, 2);
	KUNIT_EXPECT_EQ(test, kvreg_pick_page_shift(kdev, reg, sgt), 13U);
	/* ... if the device has it. */
	kdev->page_size_cap = SZ_4K | SZ_2M;
	KUNIT_EXPECT_EQ(test, kvreg_pick_page_shift(kdev, reg, sgt),
			(u32)PAGE_SHIFT);
	kdev->page_size_cap = 0xfffff000;
	sg_free_table(sgt);

	reg->huge_backed = false;
	reg->addr = 0x10000;
	sgt = fake_sgt(test, small, small_len, 2);
	KUNIT_EXPECT_EQ(test, kvreg_pick_page_shift(kdev, reg, sgt),
			(u32)PAGE_SHIFT);
	KUNIT_EXPECT_FALSE(test, reg->huge_backed);
	sg_free_table(sgt);
}

/* A record as the ioctl layer hands it to a command. */
static struct kvreg_error no_error(void)
{
	return (struct kvreg_error) { .device_index = KVREG_NO_DEVICE_INDEX };
}

static struct kvreg_register valid_register(void)
{
	return (struct kvreg_register) {
		.size = sizeof(struct kvreg_register),
		.addr = 0x10000,
		.length = SZ_64K,
		.access = KVREG_ACCESS_ALL,
	};
}

static void check_register_refusals(struct kunit *test)
{
	struct kvreg_register r = valid_register();
	struct kvreg_error e = no_error();

	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0x3, &e), 0);

	r.flags = BIT(7);
	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0x3, &e), -EINVAL);
	KUNIT_EXPECT_EQ(test, e.argument, (u32)KVREG_ARG_FLAGS);

	/* The rule broken is told apart by limit: 0, or the known bits. */
	r = valid_register();
	e = no_error();
	r.access = KVREG_ACCESS_REMOTE_WRITE;
	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0x3, &e), -EINVAL);
	KUNIT_EXPECT_EQ(test, e.argument, (u32)KVREG_ARG_ACCESS);
	KUNIT_EXPECT_EQ(test, e.request, (u64)KVREG_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, e.limit, 0ULL);

	r = valid_register();
	e = no_error();
	r.access = BIT(12);
	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0x3, &e), -EINVAL);
	KUNIT_EXPECT_EQ(test, e.limit, (u64)KVREG_ACCESS_ALL);

	/* A kernel address is an address problem, whatever the length. */
	r = valid_register();
	e = no_error();
	r.addr = -SZ_4K;
	r.length = SZ_8K;
	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0x3, &e), -EINVAL);
	KUNIT_EXPECT_EQ(test, e.argument, (u32)KVREG_ARG_ADDRESS);
	KUNIT_EXPECT_EQ(test, e.address, (u64)-SZ_4K);

	/* A user address whose length runs past the top of user space. */
	r = valid_register();
	e = no_error();
	r.addr = SZ_4K;
	r.length = U64_MAX - SZ_8K;
	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0x3, &e), -EINVAL);
	KUNIT_EXPECT_EQ(test, e.argument, (u32)KVREG_ARG_LENGTH);

	r = valid_register();
	e = no_error();
	r.keys_capacity = 1;
	r.key_size = 8;
	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0x3, &e), -EINVAL);
	KUNIT_EXPECT_EQ(test, e.argument, (u32)KVREG_ARG_KEYS);
}

static void check_register_devices(struct kunit *test)
{
	struct kvreg_register r = valid_register();
	struct kvreg_error e = no_error();

	r.device_mask = BIT_ULL(5) | BIT_ULL(1);
	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0x3, &e), -ENODEV);
	KUNIT_EXPECT_EQ(test, e.reason, (u32)KVREG_REASON_NO_DEVICE);
	KUNIT_EXPECT_EQ(test, e.device_index, 5U);

	r = valid_register();
	e = no_error();
	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0, &e), -ENODEV);
	KUNIT_EXPECT_EQ(test, e.device_index, KVREG_NO_DEVICE_INDEX);

	/* Zero bytes need no device. */
	r = valid_register();
	e = no_error();
	r.length = 0;
	KUNIT_EXPECT_EQ(test, kvreg_check_register(&r, 0, &e), 0);
}

static void access_mapping(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kvreg_access_to_ib(KVREG_ACCESS_ALL),
			IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, kvreg_access_to_ib(KVREG_ACCESS_REMOTE_READ),
			IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, kvreg_access_to_ib(0), 0);
	/* An export of a write-only grant still needs local write. */
	KUNIT_EXPECT_EQ(test, kvreg_access_to_ib(KVREG_ACCESS_REMOTE_WRITE),
			IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
}

/* A file holding one registration [0x10000, 0x20000), all access, dev 0. */
static struct kvreg_file *file_with_one(struct kunit *test,
					struct kvreg_reg **regp)
{
	struct kvreg_file *kf = kunit_kzalloc(test, sizeof(*kf), GFP_KERNEL);
	struct kvreg_reg *reg = kunit_kzalloc(test, sizeof(*reg), GFP_KERNEL);
	u32 id;

	KUNIT_ASSERT_NOT_NULL(test, kf);
	KUNIT_ASSERT_NOT_NULL(test, reg);
	kvreg_file_init(kf);
	reg->addr = 0x10000;
	reg->length = SZ_64K;
	reg->access = KVREG_ACCESS_ALL;
	reg->dev_mask = 0x1;
	KUNIT_ASSERT_EQ(test, xa_alloc(&kf->regs, &id, reg, xa_limit_31b,
				       GFP_KERNEL), 0);
	reg->handle = id;
	mutex_lock(&kf->lock);
	kvreg_range_insert(kf, reg);
	mutex_unlock(&kf->lock);
	*regp = reg;
	return kf;
}

static void same_and_overlap(struct kunit *test)
{
	struct kvreg_reg *reg, *found;
	struct kvreg_file *kf = file_with_one(test, &reg);
	struct kvreg_register r = valid_register();
	struct kvreg_error e = no_error();
	int ret;

	mutex_lock(&kf->lock);
	found = kvreg_find_same(kf, &r, 0x1, &e, &ret);
	KUNIT_EXPECT_PTR_EQ(test, found, reg);
	KUNIT_EXPECT_EQ(test, ret, 0);

	/* Same range, other devices: an overlap, with the range named. */
	found = kvreg_find_same(kf, &r, 0x3, &e, &ret);
	KUNIT_EXPECT_NULL(test, found);
	KUNIT_EXPECT_EQ(test, ret, -EEXIST);
	KUNIT_EXPECT_EQ(test, e.reason, (u32)KVREG_REASON_OVERLAP);
	KUNIT_EXPECT_EQ(test, e.address, 0x10000ULL);
	KUNIT_EXPECT_EQ(test, e.limit, (u64)SZ_64K);
	KUNIT_EXPECT_EQ(test, e.usage, reg->handle);

	/* Partial overlap, allowed. */
	r = valid_register();
	e = no_error();
	r.addr = 0x1f000;
	r.flags = KVREG_REG_F_ALLOW_OVERLAP;
	KUNIT_EXPECT_NULL(test, kvreg_find_same(kf, &r, 0x1, &e, &ret));
	KUNIT_EXPECT_EQ(test, ret, 0);

	/* Touching is not overlapping. */
	r = valid_register();
	e = no_error();
	r.addr = 0x20000;
	KUNIT_EXPECT_NULL(test, kvreg_find_same(kf, &r, 0x1, &e, &ret));
	KUNIT_EXPECT_EQ(test, ret, 0);
	r.addr = 0x10000 - SZ_64K;
	KUNIT_EXPECT_NULL(test, kvreg_find_same(kf, &r, 0x1, &e, &ret));
	KUNIT_EXPECT_EQ(test, ret, 0);
	mutex_unlock(&kf->lock);
	xa_destroy(&kf->regs);
}

static void device_mr_limit(struct kunit *test)
{
	struct kvreg_dev kdev = { .max_mr = 524287 };
	unsigned long cap = kvreg_max_mrs_per_device;
	unsigned int pct = kvreg_device_mr_reserve_percent;

	kvreg_max_mrs_per_device = 0;
	kvreg_device_mr_reserve_percent = 50;
	KUNIT_EXPECT_EQ(test, kvreg_device_mr_limit(&kdev), 262143ULL);
	kvreg_device_mr_reserve_percent = 250;	/* clamped to 100 */
	KUNIT_EXPECT_EQ(test, kvreg_device_mr_limit(&kdev), 0ULL);
	kvreg_max_mrs_per_device = 8;
	KUNIT_EXPECT_EQ(test, kvreg_device_mr_limit(&kdev), 8ULL);
	kvreg_max_mrs_per_device = 1 << 30;	/* never past max_mr */
	KUNIT_EXPECT_EQ(test, kvreg_device_mr_limit(&kdev), 524287ULL);
	kvreg_max_mrs_per_device = cap;
	kvreg_device_mr_reserve_percent = pct;
}

/* A process and a registration on one device, outside any real mm. */
struct acct_fixture {
	struct mm_struct *mm;
	struct kvreg_mm km;
	struct kvreg_dev kdev;
	struct kvreg_reg *reg;
};

static void acct_setup(struct kunit *test, struct acct_fixture *f,
		       u32 planned)
{
	f->mm = kunit_kzalloc(test, sizeof(*f->mm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->mm);
	f->km.mm = f->mm;
	f->km.own_max_mrs = KVREG_UNLIMITED;
	f->km.own_max_bytes = KVREG_UNLIMITED;
	f->kdev.max_mr = 100;
	atomic64_set(&f->kdev.nr_mrs, 0);
	f->reg = kunit_kzalloc(test, struct_size(f->reg, devs, 1), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->reg);
	f->reg->km = &f->km;
	f->reg->nr_devs = 1;
	f->reg->devs[0].dev = &f->kdev;
	f->reg->devs[0].reg = f->reg;
	f->reg->devs[0].planned_mrs = planned;
}

static void budget_mrs(struct kunit *test)
{
	unsigned long dflt = kvreg_max_mrs_per_process;
	struct kvreg_error err = {};
	struct acct_fixture f = {};

	acct_setup(test, &f, 3);
	kvreg_max_mrs_per_process = 4;
	f.km.nr_mrs = 2;
	KUNIT_EXPECT_EQ(test, kvreg_acct_charge_mrs(f.reg, &err), -EDQUOT);
	KUNIT_EXPECT_EQ(test, err.reason, (u32)KVREG_REASON_PROC_MR_BUDGET);
	KUNIT_EXPECT_EQ(test, err.limit, 4ULL);
	KUNIT_EXPECT_EQ(test, err.usage, 2ULL);
	KUNIT_EXPECT_EQ(test, err.request, 3ULL);
	KUNIT_EXPECT_FALSE(test, f.reg->devs[0].charged);

	/* Within budget: the process and the device are charged once. */
	f.km.nr_mrs = 1;
	memset(&err, 0, sizeof(err));
	KUNIT_EXPECT_EQ(test, kvreg_acct_charge_mrs(f.reg, &err), 0);
	KUNIT_EXPECT_EQ(test, f.km.nr_mrs, 4ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f.kdev.nr_mrs), 3LL);
	kvreg_acct_uncharge_mrs(&f.reg->devs[0]);
	kvreg_acct_uncharge_mrs(&f.reg->devs[0]);	/* only once */
	KUNIT_EXPECT_EQ(test, f.km.nr_mrs, 1ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f.kdev.nr_mrs), 0LL);
	kvreg_max_mrs_per_process = dflt;
}

static void budget_device_reserve(struct kunit *test)
{
	unsigned int pct = kvreg_device_mr_reserve_percent;
	struct kvreg_error err = {};
	struct acct_fixture f = {};

	acct_setup(test, &f, 3);
	kvreg_device_mr_reserve_percent = 50;
	atomic64_set(&f.kdev.nr_mrs, 48);
	KUNIT_EXPECT_EQ(test, kvreg_acct_charge_mrs(f.reg, &err), -ENOSPC);
	KUNIT_EXPECT_EQ(test, err.reason, (u32)KVREG_REASON_DEVICE_MR_RESERVE);
	KUNIT_EXPECT_EQ(test, err.limit, 50ULL);
	KUNIT_EXPECT_EQ(test, err.usage, 48ULL);
	KUNIT_EXPECT_EQ(test, err.request, 3ULL);
	KUNIT_EXPECT_EQ(test, f.km.nr_mrs, 0ULL);
	kvreg_device_mr_reserve_percent = pct;
}

static void budget_bytes(struct kunit *test)
{
	unsigned long proc = kvreg_max_bytes_per_process;
	unsigned long host = kvreg_host_max_bytes;
	struct kvreg_error err = {};
	struct acct_fixture f = {};

	acct_setup(test, &f, 1);
	kvreg_max_bytes_per_process = 16 * PAGE_SIZE;
	kvreg_host_max_bytes = U64_MAX >> 1;
	KUNIT_EXPECT_EQ(test, kvreg_acct_charge_pages(&f.km, 12, &err), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f.mm->pinned_vm), 12LL);
	KUNIT_EXPECT_EQ(test, kvreg_acct_charge_pages(&f.km, 8, &err),
			-EDQUOT);
	KUNIT_EXPECT_EQ(test, err.reason, (u32)KVREG_REASON_PROC_BYTES_BUDGET);
	KUNIT_EXPECT_EQ(test, err.limit, 16 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, err.usage, 12 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, err.request, 8 * PAGE_SIZE);
	/* Refused: the memlock charge was taken back. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&f.mm->pinned_vm), 12LL);
	kvreg_acct_uncharge_pages(&f.km, 12);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f.mm->pinned_vm), 0LL);
	KUNIT_EXPECT_EQ(test, f.km.pinned_bytes, 0ULL);
	kvreg_max_bytes_per_process = proc;
	kvreg_host_max_bytes = host;
}

static void budget_set(struct kunit *test)
{
	unsigned long dflt = kvreg_max_mrs_per_process;
	struct kvreg_budget b = { .flags = KVREG_BUDGET_F_MRS, .max_mrs = 7 };
	struct kvreg_error e = no_error();
	struct acct_fixture f = {};

	acct_setup(test, &f, 1);
	kvreg_max_mrs_per_process = 4096;
	KUNIT_EXPECT_EQ(test, kvreg_acct_set_budget(&f.km, &b, &e), 0);
	KUNIT_EXPECT_EQ(test, b.max_mrs, 7ULL);
	KUNIT_EXPECT_EQ(test, f.km.own_max_mrs, 7ULL);

	b = (struct kvreg_budget) {
		.flags = KVREG_BUDGET_F_DEFAULTS | KVREG_BUDGET_F_MRS,
	};
	KUNIT_EXPECT_EQ(test, kvreg_acct_set_budget(&f.km, &b, &e), -EINVAL);
	KUNIT_EXPECT_EQ(test, e.argument, (u32)KVREG_ARG_FLAGS);

	b = (struct kvreg_budget) { .flags = KVREG_BUDGET_F_DEFAULTS };
	KUNIT_EXPECT_EQ(test, kvreg_acct_set_budget(&f.km, &b, &e), 0);
	KUNIT_EXPECT_EQ(test, b.max_mrs, 4096ULL);
	kvreg_max_mrs_per_process = dflt;
}

static void error_records(struct kunit *test)
{
	struct kvreg_error err = {};

	KUNIT_EXPECT_EQ(test, kvreg_bad_arg(&err, KVREG_ARG_OPCODE), -EINVAL);
	KUNIT_EXPECT_EQ(test, err.reason, (u32)KVREG_REASON_BAD_ARGUMENT);
	KUNIT_EXPECT_EQ(test, err.argument, (u32)KVREG_ARG_OPCODE);
	KUNIT_EXPECT_EQ(test, err.device_index, KVREG_NO_DEVICE_INDEX);
	kvreg_set_error(&err, KVREG_REASON_DEVICE_REMOVED, 3);
	KUNIT_EXPECT_EQ(test, err.device_index, 3U);
}

/*
 * A transfer's local side from a registration's DMA runs: entries start
 * at the byte asked for, adjacent runs merge into one entry, @max cuts
 * the length short, a 2 MiB stride's mark finds the first run, and a
 * walk goes on where it stopped unless the byte asked for is behind it.
 */
static void sges_from_mapping(struct kunit *test)
{
	/* A 4 KiB, B 8 KiB, C 4 KiB after B, D 2 MiB, E 4 KiB. */
	const u64 a[] = { 0x10000, 0x20000, 0x22000, 0x400000, 0x900000 };
	const u32 l[] = { SZ_4K, 2 * SZ_4K, SZ_4K, SZ_2M, SZ_4K };
	const u64 span = SZ_2M + 5 * SZ_4K;
	struct sg_table *sgt = fake_sgt(test, a, l, 5);
	struct kvreg_reg *reg = kunit_kzalloc(test, struct_size(reg, devs, 1),
					      GFP_KERNEL);
	struct kvreg_run_mark at = {};
	struct kvreg_reg_dev *rd;
	struct ib_sge sge[4];
	u64 base, len;

	KUNIT_ASSERT_NOT_NULL(test, reg);
	reg->addr = 0x7f0000000100ULL;
	reg->length = span - 0x100;
	base = reg->addr & PAGE_MASK;
	rd = &reg->devs[0];
	rd->reg = reg;
	rd->sgt = *sgt;
	rd->dma_marks = kvreg_mark_runs(sgt, true, span);
	KUNIT_ASSERT_NOT_NULL(test, rd->dma_marks);
	KUNIT_EXPECT_PTR_EQ(test, rd->dma_marks[1].sg, sg_next(sg_next(
			    sg_next(sgt->sgl))));
	KUNIT_EXPECT_EQ(test, rd->dma_marks[1].start, (u64)4 * SZ_4K);

	/* From the first byte: A from its offset, then B and C as one. */
	len = 4 * SZ_4K - 0x100;
	KUNIT_EXPECT_EQ(test, kvreg_reg_dev_sges(rd, reg->addr, &len, sge, 4,
						 7, &at), 2U);
	KUNIT_EXPECT_EQ(test, len, (u64)4 * SZ_4K - 0x100);
	KUNIT_EXPECT_EQ(test, sge[0].addr, (u64)0x10100);
	KUNIT_EXPECT_EQ(test, sge[0].length, (u32)(SZ_4K - 0x100));
	KUNIT_EXPECT_EQ(test, sge[0].lkey, 7U);
	KUNIT_EXPECT_EQ(test, sge[1].addr, (u64)0x20000);
	KUNIT_EXPECT_EQ(test, sge[1].length, (u32)(3 * SZ_4K));

	/* One entry allowed: the length stops at A's end. */
	at = (struct kvreg_run_mark){};
	len = 4 * SZ_4K - 0x100;
	KUNIT_EXPECT_EQ(test, kvreg_reg_dev_sges(rd, reg->addr, &len, sge, 1,
						 7, &at), 1U);
	KUNIT_EXPECT_EQ(test, len, (u64)SZ_4K - 0x100);
	/* The next request goes on from where that one stopped: B and C. */
	KUNIT_EXPECT_PTR_EQ(test, at.sg, sg_next(sgt->sgl));
	len = 3 * SZ_4K;
	KUNIT_EXPECT_EQ(test, kvreg_reg_dev_sges(rd, base + SZ_4K, &len, sge,
						 4, 7, &at), 1U);
	KUNIT_EXPECT_EQ(test, sge[0].addr, (u64)0x20000);
	KUNIT_EXPECT_EQ(test, len, (u64)3 * SZ_4K);

	/* Inside B, behind where the walk stopped; E through its mark. */
	len = 0x800;
	KUNIT_EXPECT_EQ(test, kvreg_reg_dev_sges(rd, base + SZ_4K + 0x1800,
						 &len, sge, 4, 7, &at), 1U);
	KUNIT_EXPECT_EQ(test, sge[0].addr, (u64)0x21800);
	at = (struct kvreg_run_mark){};
	len = 0x10;
	KUNIT_EXPECT_EQ(test, kvreg_reg_dev_sges(rd, base + span - SZ_4K + 8,
						 &len, sge, 4, 7, &at), 1U);
	KUNIT_EXPECT_EQ(test, sge[0].addr, (u64)0x900008);
	KUNIT_EXPECT_EQ(test, len, (u64)0x10);
	/* Behind the walk (inside A again): the mark, not the walk. */
	len = 0x10;
	KUNIT_EXPECT_EQ(test, kvreg_reg_dev_sges(rd, reg->addr, &len, sge, 4,
						 7, &at), 1U);
	KUNIT_EXPECT_EQ(test, sge[0].addr, (u64)0x10100);

	/* Across D's end into E: two entries, not adjacent. */
	len = 0x20;
	KUNIT_EXPECT_EQ(test, kvreg_reg_dev_sges(rd, base + span - SZ_4K -
						 0x10, &len, sge, 4, 7, &at),
			2U);
	KUNIT_EXPECT_EQ(test, sge[0].addr, (u64)0x400000 + SZ_2M - 0x10);
	KUNIT_EXPECT_EQ(test, sge[1].addr, (u64)0x900000);
	KUNIT_EXPECT_EQ(test, sge[1].length, 0x10U);
	kvfree(rd->dma_marks);
	sg_free_table(sgt);
}

static struct kunit_case kvreg_cases[] = {
	KUNIT_CASE(plan_fits_in_one),
	KUNIT_CASE(plan_split_inside_entry),
	KUNIT_CASE(plan_exact_entries),
	KUNIT_CASE(plan_first_offset),
	KUNIT_CASE(plan_huge_pages),
	KUNIT_CASE(plan_contiguous_entries),
	KUNIT_CASE(plan_gigantic_page),
	KUNIT_CASE(pages_per_mr_limits),
	KUNIT_CASE(page_shift_choice),
	KUNIT_CASE(check_register_refusals),
	KUNIT_CASE(check_register_devices),
	KUNIT_CASE(access_mapping),
	KUNIT_CASE(same_and_overlap),
	KUNIT_CASE(device_mr_limit),
	KUNIT_CASE(budget_mrs),
	KUNIT_CASE(budget_device_reserve),
	KUNIT_CASE(budget_bytes),
	KUNIT_CASE(budget_set),
	KUNIT_CASE(error_records),
	KUNIT_CASE(sges_from_mapping),
	{}
};

static struct kunit_suite kvreg_suite = {
	.name = "kvreg",
	.test_cases = kvreg_cases,
};
kunit_test_suite(kvreg_suite);

MODULE_DESCRIPTION("KUnit tests for kvreg");
MODULE_LICENSE("GPL");
