#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stub inference runtime for the sidecar tests (standard library only).

Listens on 127.0.0.1:--port (0 picks a free port), prints "PORT <n>" on stdout and
flushes, and answers HTTP/1.1:

  GET  /health        503 {"status":"loading"} for the first --healthy-after seconds,
                      then 200 {"status":"ok"}; with --never-healthy always 503
  GET  /id            this process's random instance id (a restarted runtime has a new one)
  GET|POST /echo      the request body (POST) or the request line (GET), as text/plain
  GET  /v1/stream?n=N SSE, N events "data: {"index": i, "instance": ...}" then
                      "data: [DONE]", close-delimited; with &lockstep=1 it sends event i+1
                      only after GET /ack (on any connection) acknowledged event i — a
                      client that sees event i before asking for the next proves nothing
                      on the way buffers the stream; with &delay=S it sleeps S between events
  GET  /ack           releases the next lockstep event
  GET  /crash         answers 200, then exits with status 3
  GET  /connect?host=H&port=P
                      tries a TCP connection from the runtime and answers
                      {"connected": bool, "error": "..."} (egress probes)
"""

import argparse
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

START = time.monotonic()
INSTANCE = os.urandom(8).hex()
ACKS = threading.Semaphore(0)
ARGS = None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "stub-runtime"

    def log_message(self, fmt, *args):
        if ARGS.verbose:
            sys.stderr.write("stub-runtime: " + (fmt % args) + "\n")

    def answer(self, status, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def healthy(self):
        return not ARGS.never_healthy and time.monotonic() - START >= ARGS.healthy_after

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        route = {
            "/health": self.health, "/id": self.ident, "/echo": self.echo,
            "/v1/stream": self.stream, "/ack": self.ack, "/crash": self.crash,
            "/connect": self.connect,
        }.get(url.path)
        if route:
            route(q)
        else:
            self.answer(404, json.dumps({"error": "no route " + url.path}))

    def do_POST(self):
        if urllib.parse.urlsplit(self.path).path != "/echo":
            self.answer(404, json.dumps({"error": "no route"}))
            return
        n = int(self.headers.get("Content-Length", "0"))
        self.answer(200, self.rfile.read(n), "application/octet-stream")

    def health(self, q):
        if self.healthy():
            self.answer(200, json.dumps({"status": "ok"}))
        else:
            self.answer(503, json.dumps({"status": "loading"}))

    def ident(self, q):
        self.answer(200, INSTANCE + "\n", "text/plain")

    def echo(self, q):
        self.answer(200, self.requestline + "\n", "text/plain")

    def ack(self, q):
        ACKS.release()
        self.answer(200, "ack\n", "text/plain")

    def crash(self, q):
        self.answer(200, "crashing\n", "text/plain")
        self.wfile.flush()
        sys.stderr.write("stub-runtime: crashing on request\n")
        sys.stderr.flush()
        os._exit(3)

    def connect(self, q):
        try:
            s = socket.create_connection((q.get("host", "127.0.0.1"), int(q.get("port", "80"))), timeout=3)
            s.close()
            res = {"connected": True, "error": ""}
        except OSError as e:
            res = {"connected": False, "error": e.strerror or str(e)}
        self.answer(200, json.dumps(res))

    def stream(self, q):
        n = int(q.get("n", "3"))
        lockstep = q.get("lockstep") == "1"
        delay = float(q.get("delay", "0"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for i in range(n):
            if i > 0 and lockstep and not ACKS.acquire(timeout=ARGS.ack_timeout):
                self.wfile.write(b"data: {\"error\": \"no ack\"}\n\n")
                return
            if delay:
                time.sleep(delay)
            self.wfile.write(("data: " + json.dumps({"index": i, "instance": INSTANCE}) + "\n\n").encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--healthy-after", type=float, default=0)
    p.add_argument("--never-healthy", action="store_true")
    p.add_argument("--ack-timeout", type=float, default=20)
    p.add_argument("--verbose", action="store_true")
    ARGS = p.parse_args()
    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.daemon_threads = True
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    print("PORT", srv.server_address[1], flush=True)
    sys.stderr.write("stub-runtime: listening on 127.0.0.1:%d, healthy %s\n" % (
        srv.server_address[1], "never" if ARGS.never_healthy else "after %gs" % ARGS.healthy_after))
    sys.stderr.flush()
    srv.serve_forever()


if __name__ == "__main__":
    main()
