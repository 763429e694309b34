#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# netprobe.py OUT TARGETS: for each line "NAME,tcp,HOST,PORT" or "NAME,udp,GROUP,PORT" of the
# file TARGETS, one line "NAME=RESULT" in OUT.
# tcp: "connected <greeting>" or "blocked <why>" (4 s timeout: a filtered SYN just vanishes);
# udp: "sent" or "send-failed <errno>" (whether it arrived, only the receiver can tell).
import errno
import socket
import sys

lines = []
for arg in open(sys.argv[2]).read().split():
    name, kind, host, port = arg.split(",")
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        if kind == "tcp":
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.settimeout(4)
            s.connect((host, int(port)))
            lines.append("%s=connected %s" % (name, s.recv(64).decode(errors="replace").strip()))
        else:
            s = socket.socket(fam, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
            s.sendto(("cloister-" + name).encode(), (host, int(port)))
            lines.append("%s=sent" % name)
    except socket.timeout:
        lines.append("%s=blocked timeout" % name)
    except OSError as e:
        lines.append("%s=%s %s" % (name, "blocked" if kind == "tcp" else "send-failed",
                                   errno.errorcode.get(e.errno, str(e))))
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
