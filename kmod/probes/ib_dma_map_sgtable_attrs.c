// SPDX-License-Identifier: GPL-2.0-only
/* Compiles where ib_core maps and unmaps a whole sg_table. */
#include <rdma/ib_verbs.h>

int kvreg_probe(struct ib_device *dev, struct sg_table *sgt);
int kvreg_probe(struct ib_device *dev, struct sg_table *sgt)
{
	ib_dma_unmap_sgtable_attrs(dev, sgt, DMA_BIDIRECTIONAL, 0);
	return ib_dma_map_sgtable_attrs(dev, sgt, DMA_BIDIRECTIONAL, 0);
}
