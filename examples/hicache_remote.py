#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""A hierarchical cache's remote storage tier, the backend side, in Python.

The host KV pool is a torch CPU tensor, page-first (one row per KV page,
K and V of every layer for its tokens), registered the way sglang
registers its host pool: the tensor itself, that is tensor.data_ptr() and
tensor.numel() * tensor.element_size(); a tensor of zero elements
registers nothing. batch_set, batch_get and batch_exists are the
operations of sglang's HiCache storage interface, over the slots of a
store that examples/hicache_remote.c serves on another node; each batch
is one submit and its completions, one status per key.

    hicache_remote.py DIR    (DIR: the control plane both nodes see)
"""

import os
import select
import sys
import time

import torch

import kvreg

LAYERS, PAGE_TOKENS, TOKEN_BYTES = 8, 16, 1024
KV_PAGE_BYTES = 2 * LAYERS * PAGE_TOKENS * TOKEN_BYTES
HOST_PAGES = 128
BATCH = 64


def wait_for(path, seconds=600):
    for _ in range(seconds * 10):
        if os.path.exists(path):
            with open(path, "rb") as f:
                return f.read()
        time.sleep(0.1)
    raise TimeoutError("%s never came" % path)


class RemoteTier:
    """The store's slots, seen from this node: keys to slots, and the host
    pool tensor registered once."""

    def __init__(self, kv, host_pool, descriptor):
        self.kv = kv
        self.host_pool = host_pool
        self.host = kv.register(host_pool)      # the tensor itself
        self.slots = kv.import_region(descriptor)
        self.nslots = self.slots.length // KV_PAGE_BYTES
        self.index = {}                         # key -> slot

    def _run(self, op, pairs):
        """pairs: [(host page, slot)]; a status per pair, in order."""
        ops = [(op, self.host, page * KV_PAGE_BYTES, self.slots,
                slot * KV_PAGE_BYTES, KV_PAGE_BYTES, i)
               for i, (page, slot) in enumerate(pairs)]
        status = [None] * len(ops)
        sent = done = 0
        while done < len(ops):
            if sent < len(ops):
                sent += self.kv.submit(ops[sent:])
            if done == sent:
                select.select([self.kv], [], [], 1.0)
            for c in self.kv.completions(min_complete=1, timeout_ms=30000):
                status[c.user_data] = c.error
                done += 1
        return status

    def batch_set(self, keys, pages):
        """Host pages[i] becomes keys[i]'s; how many were stored."""
        pairs = []
        for key, page in zip(keys, pages):
            slot = self.index.pop(key, None)
            if slot is None:
                used = set(self.index.values()) | {s for _, s in pairs}
                free = [s for s in range(self.nslots) if s not in used]
                if not free:
                    break                       # full: a real tier evicts
                slot = free[0]
            pairs.append((page, slot))
        status = self._run(kvreg.OP_WRITE, pairs)
        stored = 0
        for key, (page, slot), err in zip(keys, pairs, status):
            if err is None:                     # exists once it arrived
                self.index[key] = slot
                stored += 1
            else:
                print("batch_set: key %d: %s" % (key, err))
        return stored

    def batch_get(self, keys, pages):
        """keys[i]'s page into host pages[i]; how many were read."""
        pairs = [(page, self.index[key]) for key, page in zip(keys, pages)
                 if key in self.index]
        status = self._run(kvreg.OP_READ, pairs)
        for err in status:
            if err is not None:
                print("batch_get: %s" % err)
                break
        return sum(err is None for err in status)

    def batch_exists(self, keys):
        """How many keys, from the first, are stored."""
        n = 0
        for key in keys:
            if key not in self.index:
                break
            n += 1
        return n

    def close(self):
        self.slots.unimport()
        self.host.deregister()


def main():
    directory = sys.argv[1]
    # Page-first: one row per KV page of the host tier.
    host_pool = torch.zeros((HOST_PAGES, KV_PAGE_BYTES), dtype=torch.uint8)
    with kvreg.open() as kv:
        # sglang registers nothing for an empty pool: neither does kvreg.
        empty = kv.register(torch.empty(0, dtype=torch.uint8))
        assert empty.handle == 0, "a zero-element tensor was registered"
        empty.deregister()

        tier = RemoteTier(kv, host_pool,
                          wait_for(os.path.join(directory, "store.desc")))
        print("backend (python): %d slots imported, %d of %d rails up; "
              "host pool: a %s tensor of %d bytes, registered as itself" %
              (tier.nslots, tier.slots.rails, tier.slots.paths,
               tuple(host_pool.shape), host_pool.numel() *
               host_pool.element_size()))
        keys = [2000 + i for i in range(BATCH)]
        gen = torch.Generator().manual_seed(14)
        host_pool[:BATCH] = torch.randint(0, 256, (BATCH, KV_PAGE_BYTES),
                                          dtype=torch.uint8, generator=gen)
        written = host_pool[:BATCH].clone()
        assert tier.batch_exists(keys) == 0
        n = tier.batch_set(keys, list(range(BATCH)))
        print("batch_set: %d of %d KV pages stored" % (n, BATCH))
        assert n == BATCH
        assert tier.batch_exists(keys) == BATCH
        assert tier.batch_exists(keys + [1]) == BATCH
        host_pool.zero_()
        n = tier.batch_get(keys, list(range(BATCH, 2 * BATCH)))
        print("batch_get: %d of %d KV pages read back" % (n, BATCH))
        assert n == BATCH
        assert torch.equal(host_pool[BATCH:], written), \
            "the tensor's bytes differ after the round trip"
        print("the tensor's bytes are the same after a round trip through "
              "the remote node")
        tier.close()
    with open(os.path.join(directory, ".backend.done"), "w") as f:
        f.write("1")
    os.rename(os.path.join(directory, ".backend.done"),
              os.path.join(directory, "backend.done"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
