#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""What a hierarchical-cache storage backend does at start-up, in Python.

The same steps as hicache_backend.c: pre-flight the host KV pool, allocate
it from hugetlb pages with a page-first layout (each KV page holds K and V
of every layer for its tokens), register it once on every RDMA device,
move KV pages through it, shut down. A refusal is raised as an exception
that names the reason and carries the numbers, e.g.

    kvreg.MemlockExceeded: RLIMIT_MEMLOCK exceeded: 8 MiB of 8 MiB locked,
    this registration needs 32 MiB more (ENOMEM); raise the memlock ...

    hicache_backend.py [pool MiB] [KV pages to move]
"""

import mmap
import os
import sys

import kvreg

LAYERS, PAGE_TOKENS, TOKEN_BYTES = 8, 16, 1024
KV_PAGE_BYTES = 2 * LAYERS * PAGE_TOKENS * TOKEN_BYTES
HUGE_PAGE = 2 << 20
MAP_HUGETLB = getattr(mmap, "MAP_HUGETLB", 0x40000)


def hugetlb(nbytes):
    return mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE |
                     mmap.MAP_ANONYMOUS | MAP_HUGETLB)


def kv_page():
    """A KV page's worth of bytes no other page shares."""
    return os.urandom(KV_PAGE_BYTES)


def main():
    pool_mib = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    moves = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    pool_bytes = -(-(pool_mib << 20) // HUGE_PAGE) * HUGE_PAGE
    slots = pool_bytes // KV_PAGE_BYTES

    with kvreg.open() as kv:
        devices = kv.devices()
        # 1. Would it fit? Ask before allocating.
        try:
            kv.preflight(pool_bytes, hugetlb=True)
        except kvreg.KvregError as e:
            print("pre-flight of the host KV pool: %s" % e, file=sys.stderr)
            print("(%s: limit %d, usage %d, request %d)" %
                  (type(e).__name__, e.limit, e.usage, e.request),
                  file=sys.stderr)
            return 1
        print("pre-flight: %d MiB on %d device(s) fits every limit" %
              (pool_bytes >> 20, len(devices)))

        # 2. The pool, page-first, from hugetlb; a staging buffer.
        pool = hugetlb(pool_bytes)
        staging = hugetlb(HUGE_PAGE)

        # 3. Registered once, on every device.
        with kv.register(pool) as pool_mr, \
                kv.register(staging, 2 * KV_PAGE_BYTES) as staging_mr:
            shift = pool_mr.keys_on(devices[0].index)[0].page_shift
            print("pool: %d KV pages of %d KiB, on %d device(s), %s" %
                  (slots, KV_PAGE_BYTES >> 10, len(pool_mr.keys),
                   "2 MiB MR pages" if shift == 21 else "small MR pages"))

            # 4. Write-back and load-back, spread over the devices.
            for m in range(moves):
                slot = (m * 7919) % slots
                dev = devices[m % len(devices)].index
                page = kv_page()
                staging[:KV_PAGE_BYTES] = page
                kv.transfer(kvreg.OP_WRITE, dev, staging_mr, 0, pool_mr,
                            slot * KV_PAGE_BYTES, KV_PAGE_BYTES)
                staging[KV_PAGE_BYTES:2 * KV_PAGE_BYTES] = \
                    bytes(KV_PAGE_BYTES)
                kv.transfer(kvreg.OP_READ, dev, staging_mr, KV_PAGE_BYTES,
                            pool_mr, slot * KV_PAGE_BYTES, KV_PAGE_BYTES)
                back = staging[KV_PAGE_BYTES:2 * KV_PAGE_BYTES]
                stored = pool[slot * KV_PAGE_BYTES:
                              (slot + 1) * KV_PAGE_BYTES]
                if back != page or stored != page:
                    print("KV page %d differs after the round trip" % m,
                          file=sys.stderr)
                    return 1
            print("moved %d KV pages through the pool, all bytes checked" %
                  moves)
        # 5. Deregistered on leaving the block; the pool can go.
        pool.close()
        staging.close()
    print("shut down cleanly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
