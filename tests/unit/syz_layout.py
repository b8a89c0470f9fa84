#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""tests/fuzz/kvreg.txt, the syzkaller description, against the UAPI header.

Each struct of the description is laid out as syzkaller lays it out
(natural alignment unless [packed]) and compared with the C compiler's
sizeof and offsetof for the struct of the same name (or the one an alias
below names); every constant the description uses must exist in the
header; every KVREG_IOC_* command must have an ioctl$ line.
  syz_layout.py BUILD
"""
import re
import sys

from c_facts import c_facts

TXT = "tests/fuzz/kvreg.txt"
UAPI = "include/uapi/kvreg.h"
# Description structs that stand for a C struct of another name.
ALIAS = {"kvreg_listen_add": "kvreg_listen",
         "kvreg_import_exported": "kvreg_import"}
# syzkaller's own names, not the header's.
BUILTIN = {"AT_FDCWD", "AF_INET", "AF_INET6"}

def fail(msg):
    print(msg)
    sys.exit(1)

def parse(text):
    structs, unions, flagsets, ioctls = {}, {}, {}, []
    lines = [l.split("#")[0].rstrip() for l in text.splitlines()]
    i = 0
    while i < len(lines):
        l = lines[i]
        m = re.match(r"^(\w+) ([{\[])$", l)
        if m:
            name, kind = m.groups()
            fields = []
            i += 1
            while not re.match(r"^[}\]]", lines[i]):
                if lines[i].strip():
                    parts = lines[i].split(None, 1)
                    ftype = re.sub(r"\s*\((out|in|inout)\)$", "",
                                   parts[1].strip())
                    fields.append((parts[0], ftype))
                i += 1
            packed = "[packed]" in lines[i]
            (structs if kind == "{" else unions)[name] = (fields, packed)
        elif re.match(r"^\w+ = ", l):
            n, vals = l.split(" = ", 1)
            flagsets[n] = [v.strip() for v in vals.split(",")]
        elif l.startswith("ioctl$"):
            ioctls.append(l)
        i += 1
    return structs, unions, flagsets, ioctls

def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    text = open(TXT).read()
    structs, unions, flagsets, ioctls = parse(text)
    uapi = open(UAPI).read()

    # Every command described.
    cmds = re.findall(r"#define (KVREG_IOC_\w+)\s+_IO\(", uapi)
    used = set(re.findall(r"cmd const\[(KVREG_IOC_\w+)\]", text))
    missing = [c for c in cmds if c not in used]
    if missing:
        fail("%s: no ioctl$ line for %s" % (TXT, ", ".join(missing)))

    # The header's values of every constant the description names.
    # Not in comments, nor in a call's $variant name.
    body = re.sub(r"\$\w+", "", "\n".join(l.split("#")[0]
                                        for l in text.splitlines()))
    names = sorted(set(re.findall(r"\b[A-Z][A-Z0-9_]{2,}\b", body)) -
                   BUILTIN)
    names = [n for n in names if n.startswith("KVREG_")]
    cstructs = re.findall(r"^struct (\w+) \{", uapi, re.M)
    facts, errors = c_facts(
        build, "syz_layout", "uapi/kvreg.h", [(n, n) for n in names],
        [(name, ALIAS.get(name, name), [f for f, _ in fields])
         for name, (fields, _) in structs.items()
         if ALIAS.get(name, name) in cstructs])
    if facts is None:
        fail("the description names what the header lacks:\n" + errors)
    consts = {k: v for (kind, k), v in facts.items() if kind == "const"}
    csize = {k: v for (kind, k), v in facts.items() if kind == "size"}
    coff = {k: v for (kind, k), v in facts.items() if kind == "off"}

    # syzkaller's layout.
    memo = {}
    def layout(t):
        """(size, align) of description type t."""
        m = re.match(r"^int(8|16|32|64)(\[.*\])?$", t)
        if m:
            n = int(m.group(1)) // 8
            return n, n
        m = re.match(r"^(const|flags|len|bytesize)\[.*,\s*int(8|16|32|64)\]$", t)
        if m:
            n = int(m.group(2)) // 8
            return n, n
        if t.startswith("ptr64["):
            return 8, 8
        if t in ("kvreg_handle", "kvreg_endpoint", "kvreg_region"):
            return 8, 8
        m = re.match(r"^array\[(\w+),\s*(\w+)\]$", t)
        if m:
            es, ea = layout(m.group(1))
            n = m.group(2)
            n = int(n) if n.isdigit() else consts[n]
            return es * n, ea
        if t in unions:
            ls = [layout(ft) for _, ft in unions[t][0]]
            return max(s for s, _ in ls), max(a for _, a in ls)
        if t in structs:
            return struct_layout(t)[0:2]
        raise ValueError("a type this checker does not know: " + t)
    def struct_layout(name):
        if name in memo:
            return memo[name]
        fields, packed = structs[name]
        off, align, offs = 0, 1, {}
        for f, t in fields:
            s, a = layout(t)
            if packed:
                a = 1
            off = (off + a - 1) // a * a
            offs[f] = off
            off += s
            align = max(align, a)
        size = (off + align - 1) // align * align
        memo[name] = (size, align, offs)
        return memo[name]

    bad, checked = [], 0
    for name in structs:
        if name not in csize:
            continue
        try:
            size, _, offs = struct_layout(name)
        except (ValueError, KeyError) as e:
            bad.append("%s: %s" % (name, e))
            continue
        if size != csize[name]:
            bad.append("%s: %d bytes in the description, %d in C"
                       % (name, size, csize[name]))
        for f, o in offs.items():
            if coff[name + "." + f] != o:
                bad.append("%s.%s: at %d in the description, %d in C"
                           % (name, f, o, coff[name + "." + f]))
        checked += 1
    if bad:
        fail("\n".join(bad))
    print("%s: %d structs laid out as the header's, %d commands, "
          "%d constants" % (TXT, checked, len(cmds), len(consts)))

main()
