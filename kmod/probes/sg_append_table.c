// SPDX-License-Identifier: GPL-2.0-only
/* Compiles where struct sg_append_table and its allocator exist. */
#include <linux/scatterlist.h>

int kvreg_probe(struct sg_append_table *table, struct page **pages);
int kvreg_probe(struct sg_append_table *table, struct page **pages)
{
	return sg_alloc_append_table_from_pages(table, pages, 1, 0, PAGE_SIZE,
						UINT_MAX, 0, GFP_KERNEL);
}
