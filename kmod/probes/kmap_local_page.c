// SPDX-License-Identifier: GPL-2.0-only
/* Compiles where kmap_local_page() exists (5.11). */
#include <linux/highmem.h>

void kvreg_probe(struct page *page);
void kvreg_probe(struct page *page)
{
	void *addr = kmap_local_page(page);

	kunmap_local(addr);
}
