#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# One caller that hoards broker connections: opens N connections to a Unix socket, sends
# each a request whose headers never end (PAD bytes of one header value, no blank line),
# and writes to OUT, as name=value lines:
#   opened=<connections connect() accepted>
#   open_after_4s=<how many the server has not closed 4 s later>
#   open_after_<S>s=<the same after --hold S seconds>
# Bounded: gives up connecting after 60 s; holds for --hold seconds; then exits.
import argparse, errno, os, select, socket, time


def still_open(conns):
    p = select.poll()
    for c in conns:
        p.register(c, select.POLLIN)
    closed = set()
    for fd, ev in p.poll(0):
        closed.add(fd)  # readable: the server's EOF (it never answers a request not ended)
    return sum(1 for c in conns if c.fileno() not in closed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--pad", type=int, default=16)
    ap.add_argument("--hold", type=float, default=12)
    a = ap.parse_args()
    head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * a.pad
    conns, end = [], time.monotonic() + 60
    while len(conns) < a.n and time.monotonic() < end:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.setblocking(False)
        try:
            c.connect(a.socket)
        except BlockingIOError:
            c.close()
            time.sleep(0.01)  # the backlog is full: let the server accept
            continue
        except OSError as e:
            c.close()
            if e.errno in (errno.EMFILE, errno.ENFILE):
                break
            time.sleep(0.01)
            continue
        try:
            c.send(head)
        except OSError:
            pass
        conns.append(c)
    out = open(a.out + ".tmp", "w")
    out.write(f"opened={len(conns)}\n")
    out.flush()
    os.rename(a.out + ".tmp", a.out)
    start = time.monotonic()
    time.sleep(4)
    with open(a.out, "a") as f:
        f.write(f"open_after_4s={still_open(conns)}\n")
    time.sleep(max(0, a.hold - (time.monotonic() - start)))
    with open(a.out, "a") as f:
        f.write(f"open_after_{int(a.hold)}s={still_open(conns)}\ndone=yes\n")


main()
