#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""The Python binding, in the guest: registers the buffers Python backends
have (bytearray, mmap, objects with data_ptr(), address and length), moves
bytes between them over RDMA, and raises every refusal as the exception
class of its reason, with the numbers and libkvreg's sentence.
Exit 0 pass, 1 fail, 77 skip."""

import ctypes
import errno
import mmap
import os
import select
import sys

import kvreg

MiB = 1 << 20


def check(cond, what):
    if not cond:
        print("FAIL: " + what, file=sys.stderr)
        sys.exit(1)


def expect(exc_class, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc_class as e:
        print("raised as expected: %s: %s" % (type(e).__name__, e))
        return e
    except Exception as e:  # noqa: BLE001 (report what came instead)
        check(False, "%s raised %s: %s" % (fn.__name__, type(e).__name__, e))
    check(False, "%s did not raise %s" % (fn.__name__, exc_class))


class FakeTensor:
    """What torch.Tensor offers: data_ptr(), numel(), element_size(),
    device, is_contiguous()."""

    class Device:
        def __init__(self, kind):
            self.type = kind

        def __str__(self):
            return self.type + ":0" if self.type != "cpu" else "cpu"

    def __init__(self, nbytes, device="cpu", contiguous=True):
        self.buf = mmap.mmap(-1, nbytes)
        self.nbytes = nbytes
        self.device = FakeTensor.Device(device)
        self.contiguous = contiguous

    def is_contiguous(self):
        return self.contiguous

    def data_ptr(self):
        return ctypes.addressof(ctypes.c_char.from_buffer(self.buf))

    def numel(self):
        return self.nbytes // 2

    def element_size(self):
        return 2


def roundtrip(kv, dev, a, b, length):
    """Write a over b and read b back into a's second half; compare."""
    data = os.urandom(length)
    a.view[:length] = data
    kv.transfer(kvreg.OP_WRITE, dev, a.mr, 0, b.mr, 0, length)
    check(bytes(b.view[:length]) == data, "RDMA WRITE landed wrong bytes")
    a.view[length:2 * length] = bytes(length)
    kv.transfer(kvreg.OP_READ, dev, a.mr, length, b.mr, 0, length)
    check(bytes(a.view[length:2 * length]) == data,
          "RDMA READ brought back wrong bytes")


class Buf:
    def __init__(self, mr, view):
        self.mr = mr
        self.view = view


def remote_regions(kv):
    """Another open file exports a pool; this one imports it and moves
    bytes both ways. Refusals come as their classes, naming the peer."""
    with kvreg.open() as exporter:
        pool = bytearray(2 * MiB)
        mine = bytearray(2 * MiB)
        with exporter.register(pool) as pmr, kv.register(mine) as mmr:
            ep = exporter.listen("192.0.2.1")
            check(ep.port > 0, "a port was chosen: %r" % ep)
            desc = exporter.export(ep, pmr)
            e = expect(kvreg.DescriptorTruncated, kv.import_region,
                       desc[:-1])
            check(e.errno == errno.EINVAL and e.request == len(desc) - 1,
                  "truncated: request %d" % e.request)
            with kv.import_region(desc) as r:
                check(r.length == len(pool) and
                      r.access == kvreg.ACCESS_REMOTE_READ |
                      kvreg.ACCESS_REMOTE_WRITE, "region %d" % r.length)
                data = os.urandom(MiB)
                mine[:MiB] = data
                kv.transfer_remote(kvreg.OP_WRITE, mmr, 0, r, MiB, MiB)
                check(bytes(pool[MiB:]) == data, "remote WRITE")
                mine[:MiB] = bytes(MiB)
                kv.transfer_remote(kvreg.OP_READ, mmr, 0, r, MiB, MiB)
                check(bytes(mine[:MiB]) == data, "remote READ")
                # A batch, without waiting: poll says when it is done.
                mine[:MiB] = data
                pool[:MiB] = bytes(MiB)
                ops = [(kvreg.OP_WRITE, mmr, i * 4096, r, i * 4096, 4096, i)
                       for i in range(MiB // 4096)]
                done = {}
                while ops or len(done) < MiB // 4096:
                    if ops:
                        ops = ops[kv.submit(ops):]
                    select.select([kv], [], [], 10)
                    for c in kv.completions():
                        check(c.error is None and c.bytes == 4096 and
                              c.user_data not in done, "completion %r" % c)
                        done[c.user_data] = c
                check(bytes(pool[:MiB]) == data, "batched WRITE")
                # The connection, as kvregctl conns shows it: both ends.
                mine_c = [c for c in kv.conns() if c["kind"] == "active" and
                          c["pid"] == os.getpid() and
                          c["peer"] == ("192.0.2.1", ep.port)]
                check(len(mine_c) == 1 and
                      mine_c[0]["state"] == "ESTABLISHED" and
                      mine_c[0]["ops"] == 2 + MiB // 4096 and
                      mine_c[0]["bytes"] == 2 * MiB + MiB and
                      mine_c[0]["inflight"] == 0, "conns: %r" % mine_c)
                check(any(c["kind"] == "endpoint" and
                          c["local"] == ("192.0.2.1", ep.port)
                          for c in kv.conns()), "the endpoint is listed")
                e = expect(kvreg.OutOfRange, kv.transfer_remote,
                           kvreg.OP_WRITE, mmr, 0, r, len(pool) - 1, 2)
                check(e.errno == errno.ERANGE, "out of range")
                # Revoked: the peer's WRITE is refused, the pool unchanged.
                exporter.unexport(ep, pmr)
                e = expect(kvreg.NotExported, exporter.unexport, ep, pmr)
                check(e.errno == errno.ENOENT, "unexport twice")
                pool[:4096] = bytes(4096)
                mine[:4096] = data[:4096]
                # Refused in the device: REMOTE_ACCESS, or on 5.10, whose
                # rxe sends no NAK for a dead rkey, a retry limit reached.
                e = expect((kvreg.RemoteAccess, kvreg.ConnectionLost),
                           kv.transfer_remote, kvreg.OP_WRITE, mmr, 0, r, 0,
                           4096)
                check(e.errno in (errno.EIO, errno.ENOTCONN) and
                      bytes(pool[:4096]) == bytes(4096),
                      "a WRITE after unexport landed")
            # A new secret: the descriptor shipped before is refused.
            desc = exporter.export(ep, pmr)
            exporter.rekey(ep)
            e = expect(kvreg.BadSecret, kv.import_region, desc)
            check(e.errno == errno.ECONNREFUSED, "rekeyed: %r" % e)
            desc = exporter.export(ep, pmr)
            with kv.import_region(desc) as r:
                kv.transfer_remote(kvreg.OP_READ, mmr, 0, r, 0, 4096)
            exporter.unlisten(ep)
            e = expect(kvreg.UnknownEndpoint, exporter.unlisten, ep)
            e = expect(kvreg.NoListener, kv.import_region, desc)
            ep = exporter.listen("192.0.2.1")
            desc = exporter.export(ep, pmr)
        # A cap, as its class, with its numbers: one endpoint allowed.
        param = "/sys/module/kvreg/parameters/max_endpoints_per_process"
        saved = open(param).read()
        try:
            with open(param, "w") as f:
                f.write("1")
            e = expect(kvreg.EndpointLimit, exporter.listen, "192.0.2.1")
            check(e.errno == errno.EDQUOT and e.limit == 1 and
                  e.usage == 1 and e.request == 1, "endpoint cap: %r" % e)
        finally:
            with open(param, "w") as f:
                f.write(saved)
    # The exporter closed: nobody listens there any more.
    e = expect(kvreg.NoListener, kv.import_region, desc)
    check(e.errno == errno.ECONNREFUSED and e.peer == "192.0.2.1" and
          e.port == ep.port, "no listener: %s port %d" % (e.peer, e.port))
    print("remote region: WRITE and READ through another file's endpoint; "
          "unexport, rekey and unlisten refuse the peer; a cap refuses "
          "with its numbers")


def main():
    # Refusals before any device: the class names the reason.
    e = expect(kvreg.ModuleNotLoaded, kvreg.open, "/nonexistent/kvreg")
    check(e.errno == errno.ENOENT and e.reason == 1000, "ENOENT, 1000")
    check(isinstance(e, kvreg.KvregError) and isinstance(e, OSError),
          "a KvregError and an OSError")
    check(str(e).startswith(kvreg.strerror(1000)), "the library's sentence")
    for code, name in kvreg._REASONS.items():
        cls = getattr(kvreg, name)
        check(cls.reason == code and issubclass(cls, kvreg.KvregError),
              "class %s for reason %d" % (name, code))

    with kvreg.open() as kv:
        devs = kv.devices()
        if not devs:
            print("SKIP: no RDMA device")
            return 77
        dev = devs[0].index
        before = kv.stats()
        # The caps come with the usage (STATS VER1), read as the module
        # has them set.
        caps = open("/sys/module/kvreg/parameters/max_unreaped").read()
        check(before["max_unreaped"] == int(caps) and
              before["proc_max_endpoints"] > 0 and
              before["proc_endpoints"] == 0 and
              before["op_timeout_ms"] > 0,
              "caps in STATS: %r" % before)

        # bytearray and mmap, by the buffer protocol.
        n = 3 * MiB + 123
        ba = bytearray(2 * n)
        mm = mmap.mmap(-1, 4 * MiB)
        with kv.register(ba) as mra, kv.register(mm, n) as mrb:
            keys = mra.keys_on(dev)
            addr = ctypes.addressof(ctypes.c_char.from_buffer(ba))
            check(keys[0].iova == addr and
                  sum(k.length for k in keys) == 2 * n,
                  "bytearray keys tile the buffer: %r" % keys)
            check(len(mra.keys) == sum(len(mra.keys_on(d.index))
                                       for d in devs), "keys per device")
            roundtrip(kv, dev, Buf(mra, ba), Buf(mrb, mm), n)
            check(kv.stats()["file_registrations"] ==
                  before["file_registrations"] + 2, "two registrations")

            # The same range again: the same handle, one more reference.
            with kv.register(ba) as again:
                check(again.handle == mra.handle and again.refs == 2 and
                      again.flags & kvreg.REG_OUT_DUPLICATE, "duplicate")

            # Overlap: refused, with the existing range in the numbers.
            e = expect(kvreg.Overlap, kv.register, addr + 4096, 4096)
            check(e.errno == errno.EEXIST and e.address == addr and
                  e.limit == 2 * n and e.usage == mra.handle,
                  "overlap numbers: %#x %d %d" % (e.address, e.limit,
                                                  e.usage))

        # An object with data_ptr() (a tensor), and a bare address.
        t = FakeTensor(2 * MiB)
        raw = mmap.mmap(-1, 2 * MiB)
        raw_addr = ctypes.addressof(ctypes.c_char.from_buffer(raw))
        with kv.register(t) as mrt, kv.register(raw_addr, MiB) as mrr:
            check(mrt.keys_on(dev)[0].iova == t.data_ptr() and
                  sum(k.length for k in mrt.keys_on(dev)) == 2 * MiB,
                  "tensor registered whole (numel * element_size)")
            roundtrip(kv, dev, Buf(mrt, t.buf), Buf(mrr, raw), MiB)

        # Read-only memory, or a length past the buffer, is refused
        # before the library is called.
        expect(TypeError, kv.register, b"read-only bytes")
        expect(ValueError, kv.register, bytearray(16), 4096)
        # So are a strided view of a tensor (its data_ptr() range holds
        # elements that are not its own), a device tensor, and a length
        # past a tensor's end. The fake answers as torch does
        # (device.type, is_contiguous()); the real one, contiguous and
        # on the CPU, goes through in examples/hicache_remote.py.
        pinned = kv.stats()["proc_pinned_bytes"]
        expect(ValueError, kv.register, FakeTensor(MiB, contiguous=False))
        expect(ValueError, kv.register, FakeTensor(MiB, device="cuda"))
        expect(ValueError, kv.register, FakeTensor(MiB), 2 * MiB)
        check(kv.stats()["proc_pinned_bytes"] == pinned,
              "a refused tensor left %d bytes pinned" %
              (kv.stats()["proc_pinned_bytes"] - pinned))

        # Unmapped memory: the first bad address.
        hole = mmap.mmap(-1, 2 * MiB)
        hole_addr = ctypes.addressof(ctypes.c_char.from_buffer(hole))
        hole.close()
        e = expect(kvreg.UnmappedAddress, kv.register, hole_addr, 2 * MiB)
        check(e.errno == errno.EFAULT and e.address == hole_addr,
              "first bad page %#x, want %#x" % (e.address, hole_addr))

        # A budget: the numbers are attributes, the sentence the message.
        kv.set_budget(max_mrs=1)
        big = mmap.mmap(-1, 8 * MiB)
        e = expect(kvreg.ProcMrBudgetExceeded, kv.register, big)
        check(e.errno == errno.EDQUOT and e.limit == 1 and e.usage == 0 and
              e.request > 1, "limit %d usage %d request %d" %
              (e.limit, e.usage, e.request))
        check("0 of 1 MRs in use" in str(e), "sentence: %s" % e)
        e = expect(kvreg.ProcMrBudgetExceeded, kv.preflight, 8 * MiB)
        check(e.limit == 1, "pre-flight says the same")
        kv.set_budget(defaults=True)
        kv.preflight(8 * MiB)

        remote_regions(kv)

        # Nothing left behind.
        after = kv.stats()
        check(after["file_registrations"] == before["file_registrations"] and
              after["file_pinned_pages"] == before["file_pinned_pages"],
              "registrations left: %r" % after)

    # A closed Kvreg refuses politely.
    kv.close()
    expect(kvreg.NotOpen, kv.devices)

    # Closed with a registration held: the handle is forgotten, not left
    # pointing at what kvreg_close() freed. Deregistering it is a no-op,
    # and another Kvreg given it refuses it instead of reading freed
    # memory (ASan would see that).
    kv = kvreg.open()
    held = mmap.mmap(-1, MiB)
    reg = kv.register(held)
    dev = reg.keys[0].device_index
    kv.close()
    check(reg._mr is None, "a closed Kvreg's registration still holds "
          "the C handle kvreg_close() freed")
    reg.deregister()
    with kvreg.open() as other:
        e = expect(kvreg.KvregError, other.transfer, kvreg.OP_WRITE, dev,
                   reg, 0, reg, 0, 1)
        check(other.stats()["file_registrations"] == 0,
              "a closed Kvreg's registration reached another")
    print("a Kvreg closed with a registration held: the handle forgotten, "
          "refused elsewhere (%s)" % type(e).__name__)
    print("python binding: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
