# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""What the C compiler says of kvreg's headers, for the host tests that
hold a hand-written mirror of them (syz_layout, py_layout) to the real
thing: a program is generated, built and run, and its answers returned."""
import os
import subprocess


def c_facts(build, name, header, consts, structs):
    """Values, sizes and offsets as the compiler has them.

    consts: (key, C expression) pairs; structs: (key, C struct name,
    field names) triples. Returns {("const", key): value,
    ("size", key): sizeof, ("off", key + "." + field): offsetof}, or None
    and the compiler's errors when the header lacks a name asked for.
    """
    c = ["#include <stddef.h>", "#include <stdio.h>",
         '#include "%s"' % header, "int main(void) {"]
    for key, expr in consts:
        c.append('printf("const %s %%llu\\n", (unsigned long long)(%s));'
                 % (key, expr))
    for key, cname, fields in structs:
        c.append('printf("size %s %%zu\\n", sizeof(struct %s));'
                 % (key, cname))
        for f in fields:
            c.append('printf("off %s.%s %%zu\\n", offsetof(struct %s, %s));'
                     % (key, f, cname, f))
    c.append("return 0; }")
    os.makedirs(build + "/tests/gen", exist_ok=True)
    src = "%s/tests/gen/%s.c" % (build, name)
    exe = "%s/tests/gen/%s" % (build, name)
    with open(src, "w") as f:
        f.write("\n".join(c) + "\n")
    r = subprocess.run(["cc", "-std=c11", "-Iinclude", src, "-o", exe],
                       capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr
    facts = {}
    for line in subprocess.run([exe], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        kind, key, value = line.split()
        facts[(kind, key)] = int(value)
    return facts, ""
