#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A fake OpenAI-compatible upstream for the broker's tests (standard library only).

Listens on a loopback TCP address (--bind, --port; --port 0 picks a free port) or on a
Unix socket (--unix PATH), speaks HTTP/1.1 with keep-alive, never contacts anything, and
exits by itself after --lifetime seconds.  On start it prints one line on stdout, then
flushes: "PORT <n>" (TCP) or "UNIX <path>" (Unix socket).

Routes: POST /v1/chat/completions (plain or "stream": true → SSE, chunked),
POST /v1/embeddings, GET /v1/models, GET /v1/models/<id>; anything else 404.

Modes (--mode, or per request the header "X-Fake-Mode", which wins; "normal" resets):
  normal  answer at once
  slow    wait --delay seconds (or header "X-Fake-Delay") before each SSE event, or
          before the whole answer when not streamed
  stall   streamed: send the headers and the first --stall-after events (header
          "X-Fake-Stall-After"), then nothing until the client goes away or the lifetime
          ends; not streamed: send the headers (with the Content-Length of the real
          answer), then nothing
  hang    send nothing at all (not even a status line) until the client goes away
  fail    500 with an OpenAI error body
  close   read the request, then close the connection without answering

Checks, in this order, before the mode applies: --require-host HOST (403 with an empty
body, as Ollama answers a foreign Host), --require-auth TOKEN (401 unless
"Authorization: Bearer TOKEN"), --require-header "Name: value" (401 unless present with
exactly that value; repeatable).

--record FILE appends one JSON object per request, on one line (see README.md).
"""

import argparse
import ipaddress
import json
import os
import select
import signal
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

SERVER_NAME = "fake-openai"
CREATED = 1700000000
MODELS = ["qwen3.6:35b", "gpt-test", "text-embedding-test"]
MODES = ("normal", "slow", "stall", "hang", "fail", "close")
MAX_BODY = 16 << 20
RECORD_BODY_MAX = 64 << 10

STOP = threading.Event()
STATE_LOCK = threading.Lock()
STATE = {"connections": 0, "requests": 0, "active_waits": 0}
ARGS = None


# --- shared plumbing (kept in each fake so that each is a single file) ----------------------

def record(rec):
    if not ARGS.record:
        return
    line = json.dumps(rec) + "\n"
    with STATE_LOCK:
        with open(ARGS.record, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()


def openai_error(message, type_, code=None, param=None):
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


class ClientGone(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_label = SERVER_NAME
    server_version = "cloister-" + SERVER_NAME
    sys_version = ""

    def setup(self):
        super().setup()
        with STATE_LOCK:
            STATE["connections"] += 1
            self.conn_id = STATE["connections"]
        self.conn_requests = 0

    def address_string(self):
        return str(self.client_address[0]) if self.client_address else "unix"

    def log_message(self, fmt, *args):
        if ARGS.verbose:
            sys.stderr.write("%s: %s\n" % (self.server_label, fmt % args))

    # -- per request state --
    def begin(self):
        self.conn_requests += 1
        with STATE_LOCK:
            STATE["requests"] += 1
            self.req_serial = STATE["requests"]
        self.rec = {
            "time": round(time.time(), 6),
            "server": self.server_label,
            "connection": self.conn_id,
            "request_on_connection": self.conn_requests,
            "method": self.command,
            "path": self.path,
            "http_version": self.request_version,
            "headers": {},
            "raw_headers": [[k, v] for k, v in self.headers.items()],
            "body_bytes": 0,
            "body": None,
            "model": None,
            "stream": None,
            "stream_options": None,
            "mode": "normal",
            "status": None,
            "streamed": False,
            "events_sent": 0,
            "client_went_away": False,
        }
        for k, v in self.headers.items():
            k = k.lower()
            h = self.rec["headers"]
            h[k] = h[k] + ", " + v if k in h else v
        self.recorded = False
        self.headers_sent = False

    def write_record(self):
        if not self.recorded:
            self.recorded = True
            record(self.rec)

    def read_body(self):
        """The request body as bytes, or None after answering 400/413."""
        te = self.headers.get("Transfer-Encoding", "").lower()
        if "chunked" in te:
            data = bytearray()
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    raise ClientGone()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                if len(data) + size > MAX_BODY:
                    self.send_json(413, self.error_body(413, "request body too large"))
                    self.close_connection = True
                    return None
                data += self.rfile.read(size)
                self.rfile.readline(1024)
            body = bytes(data)
        else:
            try:
                n = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                self.send_json(400, self.error_body(400, "bad Content-Length"))
                self.close_connection = True
                return None
            if n > MAX_BODY:
                self.send_json(413, self.error_body(413, "request body too large"))
                self.close_connection = True
                return None
            body = self.rfile.read(n) if n > 0 else b""
            if len(body) < n:
                raise ClientGone()
        self.rec["body_bytes"] = len(body)
        return body

    def peer_gone(self):
        """True if the peer has closed its end (EOF or reset), without blocking."""
        try:
            data = self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        return data == b""

    def stall(self):
        """Sends nothing more until the client goes away (recorded) or the lifetime ends."""
        if self.wait_or_gone(None):
            self.gone()
        else:
            self.close_connection = True
            self.write_record()

    def wait_or_gone(self, seconds):
        """Waits up to `seconds` (None: until the lifetime ends); True if the client went away."""
        deadline = None if seconds is None else time.monotonic() + seconds
        p = select.poll()
        p.register(self.connection, select.POLLIN | select.POLLPRI | getattr(select, "POLLRDHUP", 0))
        with STATE_LOCK:
            STATE["active_waits"] += 1
        try:
            while not STOP.is_set():
                slice_ = 0.05
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    slice_ = min(slice_, left)
                if p.poll(slice_ * 1000):
                    if self.peer_gone():
                        return True
                    time.sleep(slice_)  # data, not EOF: do not spin
            return False
        finally:
            with STATE_LOCK:
                STATE["active_waits"] -= 1

    def gone(self):
        self.rec["client_went_away"] = True
        self.close_connection = True
        self.write_record()

    # -- writing --
    def send_head(self, status, headers):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.headers_sent = True

    def send_bytes(self, status, body, ctype, extra=()):
        """Answers with a body, honouring the slow/stall/hang modes; the record is written
        before the last byte goes out, so a test that has the answer can read the record."""
        mode = self.rec["mode"]
        if mode == "hang":
            self.stall()
            return
        if mode == "slow" and status < 400 and self.wait_or_gone(self.delay):
            self.gone()
            return
        self.rec["status"] = status
        headers = [("Content-Type", ctype), ("Content-Length", str(len(body)))] + list(extra)
        if self.close_connection:
            headers.append(("Connection", "close"))
        try:
            if mode == "stall" and status < 400:
                self.send_head(status, headers)
                self.stall()
                return
            self.write_record()
            self.send_head(status, headers)
            if body and self.command != "HEAD":
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.rec["client_went_away"] = True
            self.close_connection = True

    def send_json(self, status, obj, extra=()):
        self.send_bytes(status, json.dumps(obj, separators=(",", ":")).encode(), "application/json", extra)

    def send_empty(self, status):
        self.rec["status"] = status
        self.write_record()
        try:
            self.send_head(status, [("Content-Length", "0")])
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def stream_events(self, events):
        """Sends SSE events with chunked encoding, one flushed chunk per event."""
        mode = self.rec["mode"]
        self.rec["streamed"] = True
        self.rec["status"] = 200
        if mode == "hang":
            self.rec["status"] = None
            self.stall()
            return
        try:
            self.send_head(200, [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                                 ("Transfer-Encoding", "chunked")])
            for i, ev in enumerate(events):
                if mode == "stall" and i >= self.stall_after:
                    self.stall()
                    return
                if mode == "slow" and self.wait_or_gone(self.delay):
                    self.gone()
                    return
                if self.peer_gone():
                    self.gone()
                    return
                data = ev.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.rec["events_sent"] += 1
            if mode == "stall":  # fewer events than stall_after: stall before the end
                self.stall()
                return
            self.write_record()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.gone()

    # -- dispatch --
    def handle_any(self):
        self.begin()
        try:
            self.dispatch()
        except ClientGone:
            self.gone()
        except (BrokenPipeError, ConnectionResetError):
            self.gone()
        finally:
            self.write_record()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = handle_any

    def dispatch(self):
        body = self.read_body()
        if body is None:
            return
        parsed = None
        if body:
            try:
                parsed = self.parse_json(body)
            except ValueError:
                parsed = None
            if len(body) <= RECORD_BODY_MAX:
                self.rec["body"] = parsed
        self.note_body(parsed)
        mode = self.preflight()
        if mode is None:
            return
        self.rec["mode"] = mode
        if mode == "close":
            self.close_connection = True
            self.write_record()
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if mode == "fail":
            self.send_json(500, self.error_body(500, "The server had an error while processing your request."))
            return
        self.route(parsed)

    def preflight(self):
        """The mode to apply, or None after answering a failed check."""
        mode = (self.headers.get("X-Fake-Mode") or ARGS.mode).strip().lower()
        if mode not in MODES:
            self.send_json(400, self.error_body(400, "unknown X-Fake-Mode %r" % mode))
            return None
        try:
            self.delay = float(self.headers.get("X-Fake-Delay", ARGS.delay))
            self.stall_after = int(self.headers.get("X-Fake-Stall-After", ARGS.stall_after))
        except ValueError:
            self.send_json(400, self.error_body(400, "bad X-Fake-Delay or X-Fake-Stall-After"))
            return None
        if ARGS.require_host is not None and self.headers.get("Host") != ARGS.require_host:
            self.send_empty(403)
            return None
        if ARGS.require_auth is not None and self.headers.get("Authorization") != "Bearer " + ARGS.require_auth:
            self.send_json(401, self.error_body(401, "Incorrect API key provided."))
            return None
        for name, value in ARGS.require_header:
            if self.headers.get(name) != value:
                self.send_json(401, self.error_body(401, "missing or wrong %s header" % name))
                return None
        return mode

    # -- the OpenAI-compatible part --
    def error_body(self, status, message):
        type_ = "server_error" if status >= 500 else "invalid_request_error"
        code = "invalid_api_key" if status == 401 else None
        return openai_error(message, type_, code)

    def parse_json(self, body):
        return json.loads(body)

    def note_body(self, parsed):
        if isinstance(parsed, dict):
            self.rec["model"] = parsed.get("model")
            self.rec["stream"] = parsed.get("stream")
            self.rec["stream_options"] = parsed.get("stream_options")

    def route(self, parsed):
        path = self.path.split("?", 1)[0].rstrip("/")
        if self.command == "POST" and path == "/v1/chat/completions":
            self.chat(parsed)
        elif self.command == "POST" and path == "/v1/embeddings":
            self.embeddings(parsed)
        elif self.command in ("GET", "HEAD") and path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [model_obj(m) for m in MODELS]})
        elif self.command in ("GET", "HEAD") and path.startswith("/v1/models/") and path[11:] in MODELS:
            self.send_json(200, model_obj(path[11:]))
        else:
            self.send_json(404, openai_error("Unknown request URL: %s %s" % (self.command, self.path),
                                             "invalid_request_error", "unknown_url"))

    def need_object(self, parsed):
        if not isinstance(parsed, dict):
            self.send_json(400, openai_error("We could not parse the JSON body of your request.",
                                             "invalid_request_error"))
            return False
        return True

    def chat(self, req):
        if not self.need_object(req):
            return
        messages = req.get("messages")
        if not isinstance(messages, list):
            self.send_json(400, openai_error("'messages' is a required property", "invalid_request_error",
                                             param="messages"))
            return
        model = req.get("model")
        last_user = ""
        prompt_tokens = 0
        for m in messages:
            if isinstance(m, dict):
                text = content_text(m.get("content"))
                prompt_tokens += words(text)
                if m.get("role") == "user":
                    last_user = text
        reply = "echo: " + last_user
        parts = reply.split(" ")
        completion_tokens = words(reply)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        cid = "chatcmpl-fake-%d" % self.req_serial

        if req.get("stream") is not True:
            self.send_json(200, {
                "id": cid, "object": "chat.completion", "created": CREATED, "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                             "finish_reason": "stop"}],
                "usage": usage})
            return

        so = req.get("stream_options")
        include_usage = isinstance(so, dict) and so.get("include_usage") is True

        def chunk(delta, finish=None):
            c = {"id": cid, "object": "chat.completion.chunk", "created": CREATED, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if include_usage:
                c["usage"] = None
            return "data: " + json.dumps(c, separators=(",", ":")) + "\n\n"

        events = [": cloister-test-comment\n\n", "event: meta\ndata: {}\n\n",
                  chunk({"role": "assistant", "content": ""})]
        for i, p in enumerate(parts):
            events.append(chunk({"content": p if i == 0 else " " + p}))
        events.append(chunk({}, "stop"))
        if include_usage:
            u = {"id": cid, "object": "chat.completion.chunk", "created": CREATED, "model": model,
                 "choices": [], "usage": usage}
            events.append("data: " + json.dumps(u, separators=(",", ":")) + "\n\n")
        events.append("data: [DONE]\n\n")
        self.stream_events(events)

    def embeddings(self, req):
        if not self.need_object(req):
            return
        inp = req.get("input")
        if isinstance(inp, str) or (isinstance(inp, list) and inp and all(isinstance(x, int) for x in inp)):
            items = [inp]
        elif isinstance(inp, list) and inp:
            items = inp
        else:
            self.send_json(400, openai_error("'input' is a required property", "invalid_request_error",
                                             param="input"))
            return
        n = 0
        for x in items:
            n += words(x) if isinstance(x, str) else len(x) if isinstance(x, list) else 0
        dims = req.get("dimensions")
        vector = [0.123456789] * min(dims, 4000000) if isinstance(dims, int) and dims > 0 else [0.1, 0.2, 0.3]
        self.send_json(200, {
            "object": "list",
            "data": [{"object": "embedding", "index": i, "embedding": vector}
                     for i in range(len(items))],
            "model": req.get("model"),
            "usage": {"prompt_tokens": n, "total_tokens": n}})


def model_obj(m):
    return {"id": m, "object": "model", "created": CREATED, "owned_by": "cloister-test"}


def content_text(c):
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return " ".join(p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text")
    return ""


def words(s):
    return len(s.split())


# --- servers ---------------------------------------------------------------------------------

class TCPServer(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True
    request_queue_size = 4096  # the broker may open 1,000 connections at once
    allow_reuse_address = True

    def server_bind(self):
        # HTTPServer.server_bind would call getfqdn() (a resolver lookup): skip it.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class TCP6Server(TCPServer):
    address_family = socket.AF_INET6


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = 4096


def common_args(p):
    p.add_argument("--bind", default="127.0.0.1", help="loopback address to listen on (127.0.0.1, ::1, …)")
    p.add_argument("--port", type=int, default=0, help="TCP port; 0 picks a free one (default)")
    p.add_argument("--unix", metavar="PATH", help="listen on this Unix socket instead of TCP")
    p.add_argument("--record", metavar="FILE", help="append one JSON line per request to FILE")
    p.add_argument("--lifetime", type=float, default=600, help="exit after this many seconds (default 600)")
    p.add_argument("--mode", default="normal", choices=MODES, help="default mode (header X-Fake-Mode wins)")
    p.add_argument("--delay", type=float, default=0.5, help="seconds per event in slow mode (default 0.5)")
    p.add_argument("--stall-after", type=int, default=1, help="events sent before a stall (default 1)")
    p.add_argument("--require-auth", metavar="TOKEN", help='401 unless "Authorization: Bearer TOKEN"')
    p.add_argument("--require-host", metavar="HOST", help="403 unless the Host header is exactly HOST")
    p.add_argument("--require-header", metavar="'NAME: VALUE'", action="append", default=[],
                   help="401 unless header NAME has exactly VALUE (repeatable)")
    p.add_argument("--verbose", action="store_true", help="log each request on stderr")


def serve(handler):
    if ARGS.lifetime <= 0:
        sys.exit("--lifetime must be positive")
    hdrs = []
    for h in ARGS.require_header:
        name, sep, value = h.partition(":")
        if not sep or not name.strip():
            sys.exit("--require-header wants 'Name: value'")
        hdrs.append((name.strip(), value.strip()))
    ARGS.require_header = hdrs

    if ARGS.unix:
        try:
            if os.path.exists(ARGS.unix) and not os.path.isdir(ARGS.unix):
                import stat
                if stat.S_ISSOCK(os.lstat(ARGS.unix).st_mode):
                    os.unlink(ARGS.unix)
        except OSError:
            pass
        server = UnixServer(ARGS.unix, handler)
        banner = "UNIX %s" % ARGS.unix
    else:
        try:
            addr = ipaddress.ip_address(ARGS.bind)
        except ValueError:
            sys.exit("--bind wants a literal loopback address, not %r" % ARGS.bind)
        if not addr.is_loopback:
            sys.exit("--bind: %s is not a loopback address" % ARGS.bind)
        cls = TCP6Server if addr.version == 6 else TCPServer
        server = cls((ARGS.bind, ARGS.port), handler)
        banner = "PORT %d" % server.server_address[1]

    signal.signal(signal.SIGTERM, lambda *_: STOP.set())
    signal.signal(signal.SIGINT, lambda *_: STOP.set())
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    t.start()
    sys.stdout.write(banner + "\n")
    sys.stdout.flush()

    STOP.wait(ARGS.lifetime)
    STOP.set()
    server.shutdown()
    # let stalled handlers notice STOP and write their records
    end = time.monotonic() + 2
    while time.monotonic() < end:
        with STATE_LOCK:
            if STATE["active_waits"] == 0:
                break
        time.sleep(0.02)
    time.sleep(0.05)
    try:
        server.server_close()
    except OSError:
        pass
    if ARGS.unix:
        try:
            os.unlink(ARGS.unix)
        except OSError:
            pass
    sys.stdout.flush()
    os._exit(0)


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    common_args(p)
    ARGS = p.parse_args()
    serve(Handler)


if __name__ == "__main__":
    main()
