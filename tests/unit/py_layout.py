#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""The Python package's mirror of the C headers, checked against them.

Each ctypes struct of libuser/python/kvreg.py has the size and field
offsets of the C struct it stands for; each of its constants has the
value of the KVREG_ macro of the same name; it has an exception class for
every reason the headers define, and none for a reason they do not.
  py_layout.py BUILD
"""
import ctypes
import re
import sys

from c_facts import c_facts

sys.path.insert(0, "libuser/python")
import kvreg  # noqa: E402  (it loads libkvreg only when a context opens)

STRUCTS = {"_Error": "kvreg_error", "_Op": "kvreg_op",
           "_Completion": "kvreg_completion", "_Key": "kvreg_key",
           "_DeviceInfo": "kvreg_device_info", "_Stats": "kvreg_stats",
           "_NetAddr": "kvreg_net_addr", "_ConnInfo": "kvreg_conn_info"}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    consts = [n for n in dir(kvreg)
              if re.match(r"^[A-Z][A-Z0-9_]+$", n) and
              isinstance(getattr(kvreg, n), int)]
    headers = open("include/uapi/kvreg.h").read() + \
        open("include/kvreg.h").read()
    reasons = re.findall(r"\b(KVREG_REASON_\w+)\s*=\s*(\d+)", headers)
    want, errors = c_facts(
        build, "py_layout", "kvreg.h", [(n, "KVREG_" + n) for n in consts],
        [(py, cs, [f for f, _ in getattr(kvreg, py)._fields_])
         for py, cs in STRUCTS.items()])
    if want is None:
        print("kvreg.py names what the headers lack:\n" + errors)
        return 1
    bad = []
    for n in consts:
        if getattr(kvreg, n) != want[("const", n)]:
            bad.append("%s = %d, KVREG_%s = %d" % (n, getattr(kvreg, n), n,
                                                   want[("const", n)]))
    for py in STRUCTS:
        cls = getattr(kvreg, py)
        if ctypes.sizeof(cls) != want[("size", py)]:
            bad.append("%s: %d bytes, struct %s %d" % (
                py, ctypes.sizeof(cls), STRUCTS[py], want[("size", py)]))
        for f, _ in cls._fields_:
            if getattr(cls, f).offset != want[("off", py + "." + f)]:
                bad.append("%s.%s at %d, C at %d" % (
                    py, f, getattr(cls, f).offset,
                    want[("off", py + "." + f)]))
    cvals = {int(v) for n, v in reasons if n != "KVREG_REASON_NONE"}
    pyvals = set(kvreg._REASONS)
    for v in sorted(cvals - pyvals):
        bad.append("no exception class for reason %d" % v)
    for v in sorted(pyvals - cvals):
        bad.append("an exception class for reason %d, which C lacks" % v)
    if bad:
        print("\n".join(bad))
        return 1
    print("kvreg.py: %d structs, %d constants and %d reasons as the "
          "headers have them" % (len(STRUCTS), len(consts), len(pyvals)))
    return 0


sys.exit(main())
