#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs the client recipes of docs/guide-sidecars.md ("Calling a sidecar from an agent")
against a stand-in OpenAI-style server on a Unix socket, as an agent would reach a sidecar:
the curl block with bash, the http.client block in-process, the httpx and OpenAI SDK blocks
with a Python that has those modules (SKIP where none has). Nothing leaves the machine.

Output is TAP. Usage: test-guide-sidecars.py GUIDE.md
"""

import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading

CONTENT = "Hello from the stand-in"
DELTAS = ["Hel", "lo ", "stream"]
SECTION = "## 4. Calling a sidecar from an agent"


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def point(self, ok, desc, diag=None):
        self.n += 1
        self.failed += not ok
        print(f"{'ok' if ok else 'not ok'} {self.n} - {desc}")
        if diag and not ok:
            for line in str(diag).rstrip("\n").split("\n"):
                print(f"# {line}")
        sys.stdout.flush()

    def skip(self, desc, reason):
        self.n += 1
        print(f"ok {self.n} - {desc} # SKIP {reason}")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen = []

    def log_message(self, fmt, *args):  # AF_UNIX peers have no address to log
        pass

    def reply(self, code, body, ctype="application/json"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        Handler.seen.append(("GET", self.path))
        if self.path == "/health":
            self.reply(200, '{"status": "ok"}')
        else:
            self.reply(404, '{"error": "not found"}')

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        Handler.seen.append(("POST", self.path, bool(body.get("stream"))))
        if self.path != "/v1/chat/completions" or not body.get("messages"):
            self.reply(400, '{"error": "bad request"}')
            return
        if not body.get("stream"):
            self.reply(200, json.dumps({"id": "c1", "object": "chat.completion", "model": body.get("model"),
                                        "choices": [{"index": 0, "finish_reason": "stop",
                                                     "message": {"role": "assistant", "content": CONTENT}}]}))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for d in DELTAS:
            chunk = {"id": "c2", "object": "chat.completion.chunk", "created": 0, "model": body.get("model"),
                     "choices": [{"index": 0, "delta": {"content": d}, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def blocks(guide):
    with open(guide, encoding="utf-8") as f:
        text = f.read()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end > 0 else None]
    return re.findall(r"^```(\w+)\n(.*?)^```", section, re.S | re.M)


def python_with(*modules):
    for exe in (sys.executable, "/usr/bin/python3"):
        if exe and os.path.exists(exe) and subprocess.run(
                [exe, "-c", "; ".join(f"import {m}" for m in modules)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30).returncode == 0:
            return exe
    return None


def run(cmd, env, code=None):
    p = subprocess.run(cmd, input=code, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    tap = Tap()
    found = blocks(sys.argv[1])
    sh = [c for lang, c in found if lang == "sh"]
    py = [c for lang, c in found if lang == "python"]
    tap.point(len(sh) == 1 and len(py) == 3, f"the guide's section 4 has one sh and three python blocks ({len(sh)}, {len(py)})")
    if len(sh) != 1 or len(py) != 3:
        print(f"1..{tap.n}")
        return 1

    tmp = tempfile.mkdtemp(prefix="cloister-guide-")
    sock = os.path.join(tmp, "service.sock")
    server = Server(sock, Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ, CLOISTER_SERVICE_INFERENCE_SOCKET=sock)
    try:
        # curl
        if shutil.which("curl"):
            Handler.seen.clear()
            rc, out, err = run(["bash", "-e"], env, sh[0])
            tap.point(rc == 0 and CONTENT in out and all(d in out for d in DELTAS) and '"status": "ok"' in out,
                      "curl --unix-socket: health, a completion and a streamed completion",
                      f"exit {rc}\nstdout: {out}\nstderr: {err}")
            tap.point(("POST", "/v1/chat/completions", True) in Handler.seen and ("GET", "/health") in Handler.seen,
                      "curl: the stand-in saw the three requests", str(Handler.seen))
        else:
            tap.skip("curl --unix-socket recipe", "curl not installed")

        # http.client, in-process, as the guide's chat() helper
        ns = {}
        os.environ["CLOISTER_SERVICE_INFERENCE_SOCKET"] = sock
        try:
            exec(compile(py[0], "guide:http.client", "exec"), ns)
            got = ns["chat"]("Hello")
            tap.point(got == CONTENT, f"http.client over the Unix socket: chat() returns the completion ({got!r})")
        except Exception as e:  # noqa: BLE001 - any failure of the recipe is the test's failure
            tap.point(False, "http.client over the Unix socket", repr(e))

        # httpx
        exe = python_with("httpx")
        if exe:
            rc, out, err = run([exe, "-"], env, py[1])
            tap.point(rc == 0 and out.startswith("200\n") and out.count('"chat.completion.chunk"') == len(DELTAS),
                      f"httpx HTTPTransport(uds=): health and a streamed completion ({exe})",
                      f"exit {rc}\nstdout: {out}\nstderr: {err}")
        else:
            tap.skip("httpx HTTPTransport(uds=) recipe", "no Python with httpx (Debian: python3-httpx)")

        # the OpenAI SDK over httpx
        exe = python_with("httpx", "openai")
        if exe:
            rc, out, err = run([exe, "-"], env, py[2])
            tap.point(rc == 0 and out == "".join(DELTAS), f"OpenAI SDK over the uds transport streams ({out!r})",
                      f"exit {rc}\nstderr: {err}")
        else:
            tap.skip("OpenAI SDK over the uds transport", "no Python with openai and httpx (openai is not packaged in Debian 12)")
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
