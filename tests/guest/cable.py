#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""Pull a guest's cable and plug it back, from the host, on request.

    cable.py XCHG QMP

A guest asks through the directory it shares with the host (XCHG): a
file `cable-req` holding "NETDEV COUNT DOWN_S UP_S" asks for NETDEV
(QEMU's id of the netdev, n0 or n1) to lose its link COUNT times, for
DOWN_S seconds each (a list such as 1,6 is taken in turn), with UP_S
seconds in between. The answer is the file
`cable-req-done`: "ok" or what went wrong. QEMU's set_link is what a
cable does: the guest sees its carrier go and come back, its routes
stay, and frames sent or arriving meanwhile are lost, not queued. `ip
link set down` is not that: it takes the routes away, and rxe's GSI QP
does not survive a CM message answered without one (docs/remote.md).
QMP is QEMU's control socket of the guest (boot.sh, KVREG_QMP). Runs
until killed."""
import json
import os
import socket
import sys
import time

REQ = "cable-req"


def qmp(path):
    """A QMP session, past its greeting and capabilities negotiation."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    f = s.makefile("rw")
    json.loads(f.readline())
    call(f, "qmp_capabilities")
    return s, f


def call(f, cmd, **args):
    f.write(json.dumps({"execute": cmd, "arguments": args}) + "\n")
    f.flush()
    while True:
        msg = json.loads(f.readline())
        if "return" in msg:
            return msg["return"]
        if "error" in msg:
            raise RuntimeError("%s: %s" % (cmd, msg["error"]["desc"]))
        # Anything else is an event, which says nothing of this call.


def flap(path, netdev, count, down_s, up_s):
    s, f = qmp(path)
    try:
        for i in range(count):
            call(f, "set_link", name=netdev, up=False)
            time.sleep(down_s[i % len(down_s)])
            call(f, "set_link", name=netdev, up=True)
            if i + 1 < count:
                time.sleep(up_s)
    finally:
        s.close()


def serve(xchg, path):
    req = os.path.join(xchg, REQ)
    while True:
        try:
            with open(req) as f:
                words = f.read().split()
        except FileNotFoundError:
            time.sleep(0.1)
            continue
        os.unlink(req)
        try:
            netdev, count, down_s, up_s = words
            flap(path, netdev, int(count),
                 [float(d) for d in down_s.split(",")], float(up_s))
            answer = "ok"
        except (ValueError, OSError, RuntimeError) as e:
            answer = "cable.py: %s: %s" % (" ".join(words), e)
            print(answer, file=sys.stderr)
        tmp = os.path.join(xchg, "." + REQ + "-done")
        with open(tmp, "w") as f:
            f.write(answer)
        # Whole or not at all, as the guest sees it.
        os.rename(tmp, req + "-done")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    serve(sys.argv[1], sys.argv[2])
