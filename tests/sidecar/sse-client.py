#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reads the stub runtime's lockstep SSE stream through TARGET (a Unix socket path, or
HOST:PORT) and prints "ok" when every event arrived before the next one was released, byte
for byte as the runtime sent it; anything else is printed as the failure.

The runtime sends event i+1 only after GET /ack, which this client sends (on a second
connection, through the same TARGET) only once it has read event i: if anything between
buffered the stream, event i would never arrive and the read would time out.
"""
import json
import socket
import sys

N = 3


def connect(target):
    if target.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(target)
    else:
        host, port = target.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    s.settimeout(15)
    return s


def get(target, path):
    s = connect(target)
    s.sendall(("GET %s HTTP/1.1\r\nHost: sidecar\r\nConnection: close\r\n\r\n" % path).encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    return data


def main():
    target = sys.argv[1]
    s = connect(target)
    s.sendall(b"GET /v1/stream?n=%d&lockstep=1 HTTP/1.1\r\nHost: sidecar\r\n\r\n" % N)
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(65536)
    head, buf = buf.split(b"\r\n\r\n", 1)
    if b" 200 " not in head.split(b"\r\n")[0] or b"text/event-stream" not in head:
        print("bad head:", head)
        return 1
    instance = None
    for i in range(N):
        while b"\n\n" not in buf:
            try:
                b = s.recv(65536)
            except socket.timeout:
                print("event %d did not arrive before the next was released (buffered?)" % i)
                return 1
            if not b:
                print("EOF before event %d" % i)
                return 1
            buf += b
        event, buf = buf.split(b"\n\n", 1)
        d = json.loads(event[len(b"data: "):])
        instance = instance or d["instance"]
        want = b"data: " + json.dumps({"index": i, "instance": instance}).encode()
        if event != want:
            print("event %d altered: %r != %r" % (i, event, want))
            return 1
        if i + 1 < N and b"ack" not in get(target, "/ack"):
            print("ack %d failed" % i)
            return 1
    while True:
        b = s.recv(65536)
        if not b:
            break
        buf += b
    if buf != b"data: [DONE]\n\n":
        print("tail altered: %r" % buf)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
