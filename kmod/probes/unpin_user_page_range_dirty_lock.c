// SPDX-License-Identifier: GPL-2.0-only
/* Compiles where unpin_user_page_range_dirty_lock() exists. */
#include <linux/mm.h>

void kvreg_probe(struct page *page);
void kvreg_probe(struct page *page)
{
	unpin_user_page_range_dirty_lock(page, 1, true);
}
