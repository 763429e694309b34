#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# An upstream that records what is on the wire: every byte each connection carried, before
# any HTTP parser saw it: one JSON line ({"connection": n, "raw": "<bytes as latin-1>"}) with
# all the connection carried so far, written before each answer and again at its end.
# It answers each request it can frame (headers, then Content-Length) with 200 and a small
# JSON body; a path ending in /bad-header answers with a header holding a bare CR, a path
# ending in /folded-header with an obsolete folded header line; /mcp-trailer and /mcp-param
# answer a tools/list (TOOLS below). Loopback only; exits after
# --lifetime seconds. Prints "PORT <n>" once listening.
import argparse, json, socket, threading, time

ANSWERS = {
    "bad-header": b"X-Request-Id: a\rSet-Cookie: injected=1\r\n",
    "folded-header": b"X-Request-Id: a\r\n Set-Cookie: injected=1\r\n",
}


# A tools/list result naming a tool no role is allowed, sent as JSON in ways that must not
# pass for a stream: a Content-Type trailer after a chunked body, and a media type whose
# parameter mentions text/event-stream.
TOOLS = (b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"search","inputSchema":{"type":"object"}},'
         b'{"name":"secret-tool","inputSchema":{"type":"object"}}]}}')


def answer_tools(conn, path):
    if path.endswith("/mcp-trailer"):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                     b"Trailer: Content-Type\r\n\r\n" + b"%x\r\n" % len(TOOLS) + TOOLS +
                     b"\r\n0\r\nContent-Type: text/event-stream\r\n\r\n")
        return True
    if path.endswith("/mcp-param"):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json; x=text/event-stream\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(TOOLS) + TOOLS)
        return True
    return False


def answer(conn, path):
    if answer_tools(conn, path):
        return
    extra = b""
    for suffix, header in ANSWERS.items():
        if path.endswith("/" + suffix):
            extra = header
    body = b'{"ok":true}\n'
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra +
                 b"Content-Length: %d\r\n\r\n" % len(body) + body)


def write(record, lock, n, raw):
    with lock, open(record, "a") as f:
        f.write(json.dumps({"time": time.time(), "connection": n, "raw": raw.decode("latin-1")}) + "\n")


def serve(conn, n, record, lock):
    raw = b""
    pending = b""
    conn.settimeout(2)
    try:
        while True:
            try:
                data = conn.recv(65536)
            except socket.timeout:
                break
            if not data:
                break
            raw += data
            pending += data
            while b"\r\n\r\n" in pending:
                head, rest = pending.split(b"\r\n\r\n", 1)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip() or 0)
                if len(rest) < length:
                    break
                pending = rest[length:]
                write(record, lock, n, raw)
                answer(conn, head.split(b"\r\n")[0].split(b" ")[1].decode("latin-1"))
    except OSError:
        pass
    finally:
        conn.close()
        write(record, lock, n, raw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--record", required=True)
    ap.add_argument("--lifetime", type=float, default=300)
    a = ap.parse_args()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", a.port))
    s.listen(64)
    print("PORT", s.getsockname()[1], flush=True)
    lock = threading.Lock()
    end = time.monotonic() + a.lifetime
    s.settimeout(1)
    n = 0
    while time.monotonic() < end:
        try:
            c, _ = s.accept()
        except socket.timeout:
            continue
        n += 1
        threading.Thread(target=serve, args=(c, n, a.record, lock), daemon=True).start()


main()
