# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""kvreg for Python: register host memory for RDMA through /dev/kvreg.

A thin ctypes binding of libkvreg: no compiler needed. Every refusal is
raised as an exception whose class names the reason (ProcMrBudgetExceeded,
MemlockExceeded, ModuleNotLoaded, ...), whose attributes carry the numbers
(limit, usage, request, address, device_index, ...), and whose message is
libkvreg's sentence: what failed, the numbers, what to do.

    import kvreg
    with kvreg.open() as kv:
        kv.preflight(len(pool), hugetlb=True)
        with kv.register(pool) as mr:          # any writable buffer,
            ...                                # an (addr, length) pair,
                                               # or a tensor (data_ptr())
        kv.transfer(kvreg.OP_WRITE, dev, staging_mr, 0, mr, off, n)

libkvreg.so.1 is found through $KVREG_LIBRARY, else the loader's path.
"""

import ctypes
import ctypes.util
import errno as _errno
import os
import socket
import weakref

# The release this binding belongs to: dkms.conf's PACKAGE_VERSION
# (tests/unit/version.sh holds them together). It says nothing of the
# module loaded, which may be older or newer.
__version__ = "0.1.0"

__all__ = ["open", "Kvreg", "Registration", "Key", "Device", "KvregError",
           "Endpoint", "RemoteRegion", "Completion",
           "ACCESS_LOCAL_WRITE", "ACCESS_REMOTE_WRITE", "ACCESS_REMOTE_READ",
           "ACCESS_ALL", "OP_WRITE", "OP_READ", "REG_F_ALLOW_OVERLAP"]

ACCESS_LOCAL_WRITE = 1 << 0
ACCESS_REMOTE_WRITE = 1 << 1
ACCESS_REMOTE_READ = 1 << 2
ACCESS_ALL = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ
OP_WRITE = 1
OP_READ = 2
REG_F_ALLOW_OVERLAP = 1 << 0
REG_OUT_SPLIT = 1 << 0
REG_OUT_DUPLICATE = 1 << 1
REG_OUT_HUGE_HINT = 1 << 2
PREFLIGHT_F_HUGETLB = 1 << 0
BUDGET_F_MRS = 1 << 0
BUDGET_F_BYTES = 1 << 1
BUDGET_F_DEFAULTS = 1 << 2
MAX_DEVICES = 64
NO_DEVICE_INDEX = 0xFFFFFFFF
UNLIMITED = (1 << 64) - 1


class _Error(ctypes.Structure):
    _fields_ = [("reason", ctypes.c_uint32), ("argument", ctypes.c_uint32),
                ("device_index", ctypes.c_uint32),
                ("page_shift", ctypes.c_uint32),
                ("driver_errno", ctypes.c_int32),
                ("wc_status", ctypes.c_uint32), ("limit", ctypes.c_uint64),
                ("usage", ctypes.c_uint64), ("request", ctypes.c_uint64),
                ("address", ctypes.c_uint64),
                # The record's second size: the peer a failure is about.
                ("addr_family", ctypes.c_uint16), ("port", ctypes.c_uint16),
                ("reserved", ctypes.c_uint32),
                ("addr", ctypes.c_uint8 * 16)]


class _Op(ctypes.Structure):
    _fields_ = [("opcode", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("local_handle", ctypes.c_uint64),
                ("local_offset", ctypes.c_uint64),
                ("remote", ctypes.c_uint64),
                ("remote_offset", ctypes.c_uint64),
                ("length", ctypes.c_uint64), ("user_data", ctypes.c_uint64)]


class _Completion(ctypes.Structure):
    _fields_ = [("user_data", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("status", ctypes.c_int32), ("reserved", ctypes.c_uint32),
                ("error", _Error)]


class _Key(ctypes.Structure):
    _fields_ = [("device_index", ctypes.c_uint32),
                ("page_shift", ctypes.c_uint32), ("mrs", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32), ("iova", ctypes.c_uint64),
                ("length", ctypes.c_uint64)]


class _DeviceInfo(ctypes.Structure):
    _fields_ = [("index", ctypes.c_uint32), ("port_state", ctypes.c_uint32),
                ("name", ctypes.c_char * 64),
                ("max_mr_size", ctypes.c_uint64),
                ("page_size_cap", ctypes.c_uint64),
                ("max_mr", ctypes.c_uint32),
                ("max_fast_reg_page_list_len", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("reserved", ctypes.c_uint32),
                ("mrs_in_use", ctypes.c_uint64),
                ("mr_limit", ctypes.c_uint64),
                ("mr_pages_base", ctypes.c_uint32),
                ("mr_pages_huge", ctypes.c_uint32)]


class _Stats(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("error", ctypes.c_uint64), ("error_size", ctypes.c_uint32),
                ("devices", ctypes.c_uint32)] + [
        (name, ctypes.c_uint64) for name in (
            "pinned_pages", "registrations", "mrs", "host_max_pinned_bytes",
            "file_pinned_pages", "file_registrations", "file_mrs",
            "proc_pinned_bytes", "proc_max_pinned_bytes", "proc_mrs",
            "proc_max_mrs", "memlock_limit", "memlock_used")] + [
        ("device_mr_reserve_percent", ctypes.c_uint32),
        ("page_size", ctypes.c_uint32),
        ("host_pinned_bytes", ctypes.c_uint64)] + [
        (name, ctypes.c_uint64) for name in (
            "proc_endpoints", "proc_max_endpoints", "proc_imports",
            "proc_max_imports", "proc_import_chunks",
            "proc_max_import_chunks", "max_desc_chunks", "file_conns")] + [
        (name, ctypes.c_uint32) for name in (
            "max_conns_per_endpoint", "max_conns_per_peer", "file_unreaped",
            "max_unreaped", "op_timeout_ms", "reserved")]


class _NetAddr(ctypes.Structure):
    _fields_ = [("family", ctypes.c_uint16), ("port", ctypes.c_uint16),
                ("scope_id", ctypes.c_uint32), ("addr", ctypes.c_uint8 * 16)]

    def pair(self):
        """(address, port), or None for no address."""
        if self.family not in (socket.AF_INET, socket.AF_INET6):
            return None
        raw = bytes(self.addr)
        raw = raw[:4] if self.family == socket.AF_INET else raw
        return (socket.inet_ntop(self.family, raw), self.port)


class _ConnInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint32), ("uid", ctypes.c_uint32),
                ("comm", ctypes.c_char * 16), ("kind", ctypes.c_uint32),
                ("state", ctypes.c_uint32), ("device_index", ctypes.c_uint32),
                ("inflight", ctypes.c_uint32), ("local", _NetAddr),
                ("peer", _NetAddr), ("endpoint", ctypes.c_uint64),
                ("ops", ctypes.c_uint64), ("ops_failed", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64),
                ("last_wc_status", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32),
                ("rail_group", ctypes.c_uint64), ("rail", ctypes.c_uint32),
                ("rails", ctypes.c_uint32), ("failovers", ctypes.c_uint64),
                ("mend_reason", ctypes.c_uint32),
                ("mend_errno", ctypes.c_int32)]


CONN_KINDS = {1: "endpoint", 2: "active", 3: "passive"}
CONN_STATES = {1: "LISTENING", 2: "CONNECTING", 3: "ESTABLISHED", 4: "LOST"}


class KvregError(OSError):
    """A refusal by kvreg or libkvreg. Subclasses name the reason."""

    reason = None

    def __init__(self, errnum, message, err):
        super().__init__(errnum, message)
        self.message = message
        for name, _ in _Error._fields_:
            setattr(self, name, getattr(err, name))
        if self.device_index == NO_DEVICE_INDEX:
            self.device_index = None
        self.addr = bytes(err.addr)
        # "192.0.2.1" or "2001:db8::1", when the failure names a peer.
        self.peer = None
        if err.addr_family in (socket.AF_INET, socket.AF_INET6):
            raw = self.addr[:4] if err.addr_family == socket.AF_INET \
                else self.addr
            self.peer = socket.inet_ntop(err.addr_family, raw)

    def __str__(self):
        return self.message


# Reason code -> exception class name; the classes are made below.
_REASONS = {
    1: "InvalidArgument", 2: "NoDevice", 3: "DeviceNotActive",
    4: "DeviceRemoved", 5: "UnmappedAddress", 6: "NoKernelMemory",
    7: "DeviceRefused", 8: "UnknownHandle", 9: "OutOfRange",
    10: "AccessDenied", 11: "TransferFailed",
    13: "NotPermitted", 14: "TooLarge", 15: "ProcMrBudgetExceeded",
    16: "ProcBytesBudgetExceeded", 17: "HostCeilingReached",
    18: "DeviceMrReserveReached", 19: "MemlockExceeded", 20: "MemlockZero",
    21: "RdmaCgroupLimit", 22: "DeviceExhausted", 23: "NotHostMemory",
    24: "FileBacked", 25: "ReadOnly", 26: "Overlap", 27: "ForeignProcess",
    28: "DescriptorTruncated", 29: "NotADescriptor",
    30: "DescriptorVersion", 31: "DescriptorCorrupt",
    32: "AddressNotLocal", 33: "NoRdmaForAddress",
    34: "AddressUnresolved", 35: "RouteUnresolved",
    36: "NoListener", 37: "BadSecret", 38: "ConnectionVersion",
    39: "ConnectionRejected", 40: "ConnectionTimeout",
    41: "ConnectionLost", 42: "RemoteAccess", 43: "AddressInUse",
    44: "UnknownEndpoint", 45: "QueueFull", 46: "TooManyPieces",
    47: "NotExported", 48: "EndpointLimit", 49: "EndpointConnectionLimit",
    50: "PeerConnectionLimit", 51: "ImportLimit",
    52: "DescriptorChunkLimit", 53: "ImportChunkLimit",
    54: "CompletionLimit", 55: "OperationTimeout", 56: "Interrupted",
    57: "PeerProtocol",
    1000: "ModuleNotLoaded", 1001: "AbiMismatch", 1002: "NotOpen",
    1003: "DeviceAccess", 1004: "NoMemory", 1005: "BadFileDescriptor",
}
_CLASSES = {}
for _code, _name in _REASONS.items():
    _cls = type(_name, (KvregError,), {"reason": _code,
                                      "__doc__": "kvreg reason %d" % _code})
    globals()[_name] = _cls
    _CLASSES[_code] = _cls
    __all__.append(_name)


def _load():
    path = os.environ.get("KVREG_LIBRARY") or \
        ctypes.util.find_library("kvreg") or "libkvreg.so.1"
    lib = ctypes.CDLL(path, use_errno=True)
    p, u32, u64 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64
    perr = ctypes.POINTER(_Error)
    sigs = {
        "kvreg_open_path": (ctypes.c_int, [ctypes.POINTER(p), ctypes.c_char_p,
                                           perr]),
        "kvreg_open": (ctypes.c_int, [ctypes.POINTER(p), perr]),
        "kvreg_close": (None, [p]),
        "kvreg_module_abi_version": (u32, [p]),
        "kvreg_devices": (ctypes.c_int, [p, ctypes.POINTER(_DeviceInfo),
                                         ctypes.c_uint,
                                         ctypes.POINTER(ctypes.c_uint),
                                         perr]),
        "kvreg_stats": (ctypes.c_int, [p, ctypes.POINTER(_Stats), perr]),
        "kvreg_conns": (ctypes.c_int, [p, ctypes.POINTER(_ConnInfo),
                                       ctypes.c_uint,
                                       ctypes.POINTER(ctypes.c_uint), perr]),
        "kvreg_set_budget": (ctypes.c_int, [p, u32, u64, u64, p, perr]),
        "kvreg_preflight": (ctypes.c_int, [p, u64, u64, u32, perr]),
        "kvreg_register_flags": (ctypes.c_int, [p, p, u64, u32, u64, u32,
                                                ctypes.POINTER(p), perr]),
        "kvreg_deregister": (ctypes.c_int, [p, p, perr]),
        "kvreg_mr_handle": (u64, [p]),
        "kvreg_mr_flags": (u32, [p]),
        "kvreg_mr_refs": (u32, [p]),
        "kvreg_mr_keys": (ctypes.POINTER(_Key),
                          [p, ctypes.POINTER(ctypes.c_uint)]),
        "kvreg_transfer": (ctypes.c_int, [p, ctypes.c_int, u32, p, u64, p,
                                          u64, u64, perr]),
        "kvreg_listen": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_uint16,
                                        ctypes.POINTER(u64),
                                        ctypes.POINTER(ctypes.c_uint16),
                                        perr]),
        "kvreg_listen_add": (ctypes.c_int, [p, u64, ctypes.c_char_p,
                                            ctypes.c_uint16,
                                            ctypes.POINTER(ctypes.c_uint16),
                                            perr]),
        "kvreg_export": (ctypes.c_int, [p, u64, p, p, ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.c_size_t),
                                        perr]),
        "kvreg_import": (ctypes.c_int, [p, p, ctypes.c_size_t, u32,
                                        ctypes.POINTER(p), perr]),
        "kvreg_import_devices": (ctypes.c_int, [p, p, ctypes.c_size_t, u32,
                                                u64, ctypes.POINTER(p),
                                                perr]),
        "kvreg_remote_rails": (u32, [p]),
        "kvreg_remote_paths": (u32, [p]),
        "kvreg_unimport": (ctypes.c_int, [p, p, perr]),
        "kvreg_unexport": (ctypes.c_int, [p, u64, p, perr]),
        "kvreg_unlisten": (ctypes.c_int, [p, u64, perr]),
        "kvreg_rekey": (ctypes.c_int, [p, u64, perr]),
        "kvreg_remote_length": (u64, [p]),
        "kvreg_remote_handle": (u64, [p]),
        "kvreg_remote_access": (u32, [p]),
        "kvreg_remote_device": (u32, [p]),
        "kvreg_transfer_remote": (ctypes.c_int, [p, ctypes.c_int, p, u64, p,
                                                 u64, u64, perr]),
        "kvreg_submit": (ctypes.c_int, [p, ctypes.POINTER(_Op),
                                        ctypes.c_uint,
                                        ctypes.POINTER(ctypes.c_uint), perr]),
        "kvreg_reap": (ctypes.c_int, [p, ctypes.POINTER(_Completion),
                                      ctypes.c_uint, ctypes.c_uint, u32,
                                      ctypes.POINTER(ctypes.c_uint), perr]),
        "kvreg_fd": (ctypes.c_int, [p]),
        "kvreg_format_error": (ctypes.c_int, [perr, ctypes.c_int,
                                              ctypes.c_char_p,
                                              ctypes.c_size_t]),
        "kvreg_strerror": (ctypes.c_char_p, [u32]),
        "kvreg_hint": (ctypes.c_char_p, [u32]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


_lib = None


def _libkvreg():
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def _raise(ret, err):
    """ret is a negative errno; err the record libkvreg filled."""
    buf = ctypes.create_string_buffer(1024)
    _libkvreg().kvreg_format_error(ctypes.byref(err), ret, buf, len(buf))
    cls = _CLASSES.get(err.reason, KvregError)
    raise cls(-ret, buf.value.decode(), err)


class Key:
    """A registration on one device: its range, and the page size and
    number of the MRs an export of it makes there (REGISTER makes none)."""

    __slots__ = ("device_index", "page_shift", "mrs", "iova", "length")

    def __init__(self, k):
        for name in self.__slots__:
            setattr(self, name, getattr(k, name))

    def __repr__(self):
        return ("Key(device=%d, iova=%#x, length=%d, page_shift=%d, "
                "mrs=%d)" % (self.device_index, self.iova, self.length,
                             self.page_shift, self.mrs))


class Device:
    """An RDMA device kvreg uses."""

    def __init__(self, d):
        self.index = d.index
        self.name = d.name.decode()
        self.active = d.port_state == 4
        self.ready = bool(d.flags & 1)
        self.max_mr = d.max_mr
        self.max_mr_size = d.max_mr_size
        self.max_fast_reg_page_list_len = d.max_fast_reg_page_list_len
        self.mrs_in_use = d.mrs_in_use

    def __repr__(self):
        return "Device(%d, %r, active=%s)" % (self.index, self.name,
                                             self.active)


def _address_of(buf, length):
    """(address, length, object to keep alive) of what register() got."""
    if isinstance(buf, int):
        if length is None:
            raise TypeError("an address needs a length")
        return buf, length, None
    if hasattr(buf, "data_ptr"):
        # torch tensors and the like: the memory is theirs, keep them alive.
        # A strided view's data_ptr() starts a range that holds other
        # elements too, and a device tensor's is not host memory: both
        # would register the wrong bytes or fail far from here.
        device = getattr(buf, "device", None)
        if device is not None and getattr(device, "type", "cpu") != "cpu":
            raise ValueError("register needs host memory; this tensor is on "
                             "%s: register its host copy (for example "
                             "a pinned host pool)" % (device,))
        is_contiguous = getattr(buf, "is_contiguous", None)
        if callable(is_contiguous) and not is_contiguous():
            raise ValueError("register needs contiguous memory; this tensor "
                             "is a strided view: register the tensor it "
                             "views, or a .contiguous() copy")
        if hasattr(buf, "nbytes"):
            nbytes = buf.nbytes
        else:
            nbytes = buf.numel() * buf.element_size()
        if length is None:
            length = nbytes
        elif length > nbytes:
            raise ValueError("length %d is past the end of a %d-byte tensor"
                             % (length, nbytes))
        return buf.data_ptr(), length, buf
    view = memoryview(buf)
    if not view.contiguous:
        raise ValueError("register needs contiguous memory")
    if view.readonly:
        raise TypeError("register needs a writable buffer; for read-only "
                        "memory pass its address and length")
    if length is not None and length > view.nbytes:
        raise ValueError("length %d is past the end of a %d-byte buffer" %
                         (length, view.nbytes))
    if view.nbytes == 0:
        return 0, 0, view
    c = ctypes.c_char.from_buffer(view.cast("B"))
    return ctypes.addressof(c), view.nbytes if length is None else length, \
        (view, c)


class Registration:
    """Pinned memory registered on devices; deregister() or `with`."""

    def __init__(self, kv, mr, keep):
        self._kv = kv
        self._mr = mr
        self._keep = keep
        kv._handles.add(self)
        lib = _libkvreg()
        n = ctypes.c_uint()
        keys = lib.kvreg_mr_keys(mr, ctypes.byref(n))
        self.handle = lib.kvreg_mr_handle(mr)
        self.flags = lib.kvreg_mr_flags(mr)
        self.refs = lib.kvreg_mr_refs(mr)
        self.keys = [Key(keys[i]) for i in range(n.value)]
        self.hint = lib.kvreg_hint(self.flags).decode()

    def _forget(self):
        # Its Kvreg closed: the module released it, the library freed it.
        self._mr = None
        self._keep = None

    def keys_on(self, device_index):
        return [k for k in self.keys if k.device_index == device_index]

    def deregister(self):
        if self._mr is None:
            return
        err = _Error()
        ret = _libkvreg().kvreg_deregister(self._kv._handle(), self._mr,
                                           ctypes.byref(err))
        self._mr = None
        self._keep = None
        if ret:
            _raise(ret, err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deregister()

    def __del__(self):
        # Dropped without deregister(): the buffer may go back to Python's
        # allocator, so the device must lose access to it now.
        if self._mr is not None and self._kv._kv is not None:
            try:
                self.deregister()
            except KvregError:
                pass


class Endpoint:
    """Where peers connect: a local address and port. Each export through
    it has a secret that only its descriptors carry."""

    __slots__ = ("handle", "address", "port")

    def __init__(self, handle, address, port):
        self.handle = handle
        self.address = address
        self.port = port

    def __repr__(self):
        return "Endpoint(%s port %d)" % (self.address, self.port)


class Completion:
    """One finished operation of submit(): its user_data, the bytes moved,
    and error, None or the exception its failure would raise."""

    __slots__ = ("user_data", "bytes", "status", "error")

    def __init__(self, c):
        self.user_data = c.user_data
        self.bytes = c.bytes
        self.status = c.status
        self.error = None
        if c.status:
            try:
                _raise(c.status, c.error)
            except KvregError as e:
                self.error = e

    def __repr__(self):
        return "Completion(%d, %d bytes%s)" % (
            self.user_data, self.bytes,
            ", %s" % self.error if self.error else "")


class RemoteRegion:
    """A peer's registration, imported; unimport() or `with`."""

    def __init__(self, kv, remote):
        lib = _libkvreg()
        self._kv = kv
        self._remote = remote
        kv._handles.add(self)
        self.length = lib.kvreg_remote_length(remote)
        self.access = lib.kvreg_remote_access(remote)
        self.device_index = lib.kvreg_remote_device(remote)
        self.rails = lib.kvreg_remote_rails(remote)
        self.paths = lib.kvreg_remote_paths(remote)

    def _handle(self):
        return _libkvreg().kvreg_remote_handle(self._remote)

    def _forget(self):
        # Its Kvreg closed: the module released it, the library freed it.
        self._remote = None

    def unimport(self):
        if self._remote is None:
            return
        err = _Error()
        ret = _libkvreg().kvreg_unimport(self._kv._handle(), self._remote,
                                         ctypes.byref(err))
        self._remote = None
        if ret:
            _raise(ret, err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unimport()

    def __del__(self):
        if self._remote is not None and self._kv._kv is not None:
            try:
                self.unimport()
            except KvregError:
                pass


class Kvreg:
    """An open /dev/kvreg. Closing it releases every registration."""

    def __init__(self, path=None):
        self._kv = None
        # What close() must forget: kvreg_close() frees their C handles.
        self._handles = weakref.WeakSet()
        err = _Error()
        kv = ctypes.c_void_p()
        lib = _libkvreg()
        if path is None:
            ret = lib.kvreg_open(ctypes.byref(kv), ctypes.byref(err))
        else:
            ret = lib.kvreg_open_path(ctypes.byref(kv), os.fsencode(path),
                                      ctypes.byref(err))
        if ret:
            _raise(ret, err)
        self._kv = kv
        self.abi_version = lib.kvreg_module_abi_version(kv)

    def _handle(self):
        if self._kv is None:
            raise NotOpen(_errno.EBADF, "kvreg not open: this Kvreg was "
                          "closed", _Error(reason=1002,
                                           device_index=NO_DEVICE_INDEX))
        return self._kv

    def _call(self, fn, *args):
        err = _Error()
        ret = fn(self._handle(), *args, ctypes.byref(err))
        if ret:
            _raise(ret, err)

    def devices(self):
        arr = (_DeviceInfo * MAX_DEVICES)()
        n = ctypes.c_uint()
        self._call(_libkvreg().kvreg_devices, arr, MAX_DEVICES,
                   ctypes.byref(n))
        return [Device(arr[i]) for i in range(min(n.value, MAX_DEVICES))]

    def stats(self):
        st = _Stats()
        self._call(_libkvreg().kvreg_stats, ctypes.byref(st))
        return {name: getattr(st, name) for name, _ in _Stats._fields_
                if name not in ("size", "flags", "error", "error_size")}

    def conns(self, capacity=256):
        """Every endpoint and connection (the host's as root, else the
        caller's uid's), as dicts: kind and state as words, local and peer
        as (address, port)."""
        arr = (_ConnInfo * capacity)()
        n = ctypes.c_uint()
        self._call(_libkvreg().kvreg_conns, arr, capacity, ctypes.byref(n))
        out = []
        for c in arr[:min(n.value, capacity)]:
            d = {name: getattr(c, name) for name, _ in _ConnInfo._fields_
                 if name != "reserved"}
            d["comm"] = c.comm.decode(errors="replace")
            d["kind"] = CONN_KINDS.get(c.kind, c.kind)
            d["state"] = CONN_STATES.get(c.state, c.state)
            d["local"] = c.local.pair()
            d["peer"] = c.peer.pair()
            out.append(d)
        return out

    def set_budget(self, max_mrs=None, max_pinned_bytes=None,
                   defaults=False):
        flags = (BUDGET_F_MRS if max_mrs is not None else 0) | \
            (BUDGET_F_BYTES if max_pinned_bytes is not None else 0) | \
            (BUDGET_F_DEFAULTS if defaults else 0)
        self._call(_libkvreg().kvreg_set_budget, flags, max_mrs or 0,
                   max_pinned_bytes or 0, None)

    def preflight(self, length, device_mask=0, hugetlb=False):
        """Raise what registering length bytes would raise; else return."""
        self._call(_libkvreg().kvreg_preflight, length, device_mask,
                   PREFLIGHT_F_HUGETLB if hugetlb else 0)

    def register(self, buf, length=None, access=ACCESS_ALL, device_mask=0,
                 flags=0):
        """buf: a writable buffer, an object with data_ptr() (a contiguous
        CPU tensor), or an address (then length is needed)."""
        addr, length, keep = _address_of(buf, length)
        mr = ctypes.c_void_p()
        self._call(_libkvreg().kvreg_register_flags, addr, length, access,
                   device_mask, flags, ctypes.byref(mr))
        return Registration(self, mr, keep)

    def transfer(self, op, device_index, local, local_offset, remote,
                 remote_offset, length):
        """RDMA WRITE (local -> remote) or READ between registrations."""
        self._call(_libkvreg().kvreg_transfer, op, device_index, local._mr,
                   local_offset, remote._mr, remote_offset, length)

    def listen(self, address, port=0):
        """An endpoint on a local address of an RDMA device (port 0: any)."""
        ep = ctypes.c_uint64()
        bound = ctypes.c_uint16()
        self._call(_libkvreg().kvreg_listen, address.encode(), port,
                   ctypes.byref(ep), ctypes.byref(bound))
        return Endpoint(ep.value, address, bound.value)

    def listen_add(self, endpoint, address, port=0):
        """Another address (a rail, on the device that owns it) for an
        endpoint; returns the port bound."""
        bound = ctypes.c_uint16()
        self._call(_libkvreg().kvreg_listen_add, endpoint.handle,
                   address.encode(), port, ctypes.byref(bound))
        return bound.value

    def export(self, endpoint, registration):
        """The descriptor of a registration, as bytes, for a peer."""
        size = ctypes.c_size_t()
        err = _Error()
        lib = _libkvreg()
        ret = lib.kvreg_export(self._handle(), endpoint.handle,
                               registration._mr, None, 0,
                               ctypes.byref(size), ctypes.byref(err))
        if ret and ret != -_errno.ENOSPC:
            _raise(ret, err)
        buf = ctypes.create_string_buffer(size.value)
        self._call(lib.kvreg_export, endpoint.handle, registration._mr, buf,
                   size.value, ctypes.byref(size))
        return buf.raw[:size.value]

    def unexport(self, endpoint, registration):
        """Revoke what export() granted: on return no peer reaches the
        registration through the endpoint."""
        self._call(_libkvreg().kvreg_unexport, endpoint.handle,
                   registration._mr)

    def unlisten(self, endpoint):
        """Close the endpoint: its connections and exports go with it."""
        self._call(_libkvreg().kvreg_unlisten, endpoint.handle)

    def rekey(self, endpoint):
        """New secrets for the endpoint's exports: descriptors exported
        before stop working and the endpoint's connections are cut; export
        again to ship new ones."""
        self._call(_libkvreg().kvreg_rekey, endpoint.handle)

    def import_region(self, descriptor, timeout_ms=0, device_mask=0):
        """Connect to the endpoint a peer's descriptor names, a rail per
        path; device_mask (bit i: device i, 0: any) limits local devices."""
        remote = ctypes.c_void_p()
        desc = bytes(descriptor)
        self._call(_libkvreg().kvreg_import_devices, desc, len(desc),
                   timeout_ms, device_mask, ctypes.byref(remote))
        return RemoteRegion(self, remote)

    def transfer_remote(self, op, local, local_offset, remote,
                        remote_offset, length):
        """RDMA WRITE (local -> peer) or READ between a registration and an
        imported region."""
        self._call(_libkvreg().kvreg_transfer_remote, op, local._mr,
                   local_offset, remote._remote, remote_offset, length)

    def submit(self, ops):
        """Post [(op, local, local_offset, region, remote_offset, length,
        user_data), ...] without waiting; returns how many were taken. A
        full queue takes fewer, or none (0): wait for completions (the
        file is readable then) and submit the rest."""
        arr = (_Op * len(ops))()
        for i, (op, local, loff, region, roff, n, ud) in enumerate(ops):
            arr[i] = _Op(opcode=op, local_handle=local.handle,
                         local_offset=loff, remote=region._handle(),
                         remote_offset=roff, length=n, user_data=ud)
        acc = ctypes.c_uint()
        err = _Error()
        ret = _libkvreg().kvreg_submit(self._handle(), arr, len(ops),
                                       ctypes.byref(acc), ctypes.byref(err))
        # The C call says EAGAIN when the queue took none: here that is 0.
        if ret and not (ret == -_errno.EAGAIN and
                        _CLASSES.get(err.reason) is QueueFull):
            _raise(ret, err)
        return acc.value

    def completions(self, min_complete=0, timeout_ms=0, capacity=64):
        """Completions waiting (at least min_complete, within timeout_ms),
        oldest first. fileno() is readable while there are some."""
        arr = (_Completion * capacity)()
        n = ctypes.c_uint()
        self._call(_libkvreg().kvreg_reap, arr, capacity, min_complete,
                   timeout_ms, ctypes.byref(n))
        return [Completion(arr[i]) for i in range(n.value)]

    def fileno(self):
        """The /dev/kvreg descriptor: poll, select or asyncio's add_reader."""
        return _libkvreg().kvreg_fd(self._handle())

    def close(self):
        if self._kv is not None:
            for h in list(self._handles):
                h._forget()
            _libkvreg().kvreg_close(self._kv)
            self._kv = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def open(path=None):  # noqa: A001 (the module's verb, as os.open)
    """Open /dev/kvreg ($KVREG_DEVICE, or path) and check the ABI."""
    return Kvreg(path)


def strerror(reason):
    return _libkvreg().kvreg_strerror(reason).decode()
