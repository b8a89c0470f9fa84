#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""Run a command with the guest links already connected, as Unix streams.

    unix-link.py listen|connect PATH [PATH...] -- COMMAND [ARG...]

Each PATH is one link: the listening side binds and waits for the other
to connect, the connecting side connects, and COMMAND then runs with the
links' sockets at fds 10, 11, ... (boot.sh hands them to QEMU's socket
netdev with fd=). QEMU's own TCP listener leaves Nagle on for the side
that accepts, so its small frames wait for the other side's delayed ACK,
up to 40 ms a round trip; a Unix stream has no such thing, and keeps
TCP's order and flow control."""
import os
import socket
import sys
import time

FIRST_FD = 10
# A peer whose link is down does not read its end. With the default
# buffer (208 KiB) the writer's QEMU then stops taking frames within
# milliseconds, rxe's packets stay in the guest's queue, and its QPs never
# reach their retry limit, where a wire would have dropped them. TCP's
# buffers grow to megabytes; these are given as much.
BUFFER = 16 << 20
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)


def connect(path):
    """The listening side may not be there yet: up to 10 s."""
    for _ in range(50):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
            time.sleep(0.2)
    sys.exit("unix-link.py: no one listens at " + path)


def main():
    side, rest = sys.argv[1], sys.argv[2:]
    paths, cmd = rest[:rest.index("--")], rest[rest.index("--") + 1:]
    if side not in ("listen", "connect") or not paths or not cmd:
        sys.exit(__doc__)
    links = []
    if side == "listen":
        listeners = []
        for path in paths:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path)
            s.listen(1)
            listeners.append(s)
        for s in listeners:
            links.append(s.accept()[0])
            s.close()
    else:
        for path in paths:
            links.append(connect(path))
    for i, s in enumerate(links):
        try:
            s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, BUFFER)
        except PermissionError:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER)
        os.dup2(s.fileno(), FIRST_FD + i)
        s.close()
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main()
