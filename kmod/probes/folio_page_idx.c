// SPDX-License-Identifier: GPL-2.0-only
/* Compiles where a page's folio, its size and hugetlb test exist. */
#include <linux/mm.h>

unsigned long kvreg_probe(struct page *page);
unsigned long kvreg_probe(struct page *page)
{
	struct folio *folio = page_folio(page);

	return folio_test_hugetlb(folio) + folio_nr_pages(folio) -
	       folio_page_idx(folio, page);
}
