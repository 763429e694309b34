#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Broker probes from inside a sealed agent: each writes "name=value" to /output/probe.txt.
# Which probes run is chosen by the role's Environment=PROBES=a,b,c.
import http.client, json, os, socket, threading, time

base_host, base_port = "127.0.0.1", int(os.environ.get("CLOISTER_BROKER_URL", "http://127.0.0.1:7800").rsplit(":", 1)[1])
out = open("/output/probe.txt", "w", buffering=1)

def report(name, value):
    out.write(f"{name}={value}\n")

def request(method, path, body=None, headers=None, timeout=30):
    c = http.client.HTTPConnection(base_host, base_port, timeout=timeout)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, dict(r.getheaders()), data

def announce_body(n):
    """Announces an n-byte body but sends none of it: a 413 must come without reading it."""
    c = socket.create_connection((base_host, base_port), timeout=10)
    c.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              f"Content-Length: {n}\r\n\r\n".encode())
    line = c.makefile("rb").readline().decode()
    c.close()
    return line.split()[1] if line else "none"

def chunked_body(n):
    """Sends an n-byte body in chunks, without a Content-Length: the limit must hold too."""
    c = socket.create_connection((base_host, base_port), timeout=10)
    c.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n")
    try:
        for _ in range(n // 8192):
            c.sendall(b"2000\r\n" + b"x" * 8192 + b"\r\n")
        c.sendall(b"0\r\n\r\n")
    except OSError:
        pass
    line = c.makefile("rb").readline().decode()
    c.close()
    return line.split()[1] if line else "none"

def probe_errors():
    s, _, _ = request("GET", "/upstream/issues/v1/models")
    report("upstream_issues", s)
    s, _, _ = request("GET", "/upstream/down/v1/models")
    report("upstream_down", s)
    t = time.monotonic()
    s, _, _ = request("GET", "/upstream/hang/v1/models")
    report("upstream_hang", s)
    report("upstream_hang_seconds", round(time.monotonic() - t))
    s, _, body = request("POST", "/v1/chat/completions", body=b"{not json")
    report("malformed_json", s)
    report("error_body_is_openai_style", "error" in json.loads(body) and "type" in json.loads(body)["error"])
    report("body_100k", announce_body(100 * 1024))
    report("body_10m", announce_body(10 * 1024 * 1024))
    s, _, _ = request("GET", "/nope")
    report("no_route", s)
    s, _, _ = request("TRACE", "/upstream/issues/v1/models")
    report("trace", s)
    s, _, _ = request("GET", "/upstream/issues/v1/models?q=a+b&x=%2B")
    report("query_kept", s)
    report("chunked_too_large", chunked_body(100 * 1024))
    s, _, _ = request("GET", "/v1/../etc/passwd")
    report("traversal", s)
    s, _, body = request("GET", "/v1/models")
    report("models", ",".join(m["id"] for m in json.loads(body)["data"]))
    s, _, _ = request("POST", "/v1/chat/completions",
                      body=json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(),
                      headers={"Authorization": "Bearer agent-made-up-token", "X-Forwarded-For": "1.2.3.4",
                               "Cookie": "a=b", "X-Request-Id": "probe-1"})
    report("headers_request", s)

def probe_allowed():
    s, _, _ = request("GET", "/upstream/issues/v1/models")
    report("upstream_issues", s)

def probe_ratelimit():
    codes, retry = [], ""
    for _ in range(4):
        s, h, _ = request("GET", "/v1/models")
        codes.append(str(s))
        retry = h.get("Retry-After", retry)
    report("codes", ",".join(codes))
    report("retry_after", retry)

def probe_tokens():
    body = json.dumps({"messages": [{"role": "user", "content": "count these five words"}]}).encode()
    codes = []
    for _ in range(2):
        s, h, _ = request("POST", "/v1/chat/completions", body=body)
        codes.append(str(s))
    report("codes", ",".join(codes))

def probe_tokens_large():
    """Answers far over 4 MiB: their usage counts against TokensPerMinute= too."""
    body = json.dumps({"model": "text-embedding-test", "input": "one two three four five six",
                       "dimensions": 1300000}).encode()
    codes, sizes = [], []
    for _ in range(2):
        s, h, data = request("POST", "/v1/embeddings", body=body, timeout=60)
        codes.append(str(s))
        sizes.append(str(len(data)))
    report("codes", ",".join(codes))
    report("sizes", ",".join(sizes))

def probe_body_bytes():
    """Five 15 MB bodies at once from one unit (the fake upstream takes up to 16 MB): four are
    held in the broker while their upstream hangs; the fifth would pass 64 MiB held for the
    caller and is refused."""
    body = b"x" * (15 * 1024 * 1024)
    def send(path):
        c = socket.create_connection((base_host, base_port), timeout=30)
        c.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                  f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        return c
    def status(c):
        try:
            c.settimeout(30)
            line = c.makefile("rb").readline().decode()
        except OSError:
            line = ""
        c.close()
        return line.split()[1] if line else "none"
    conns = []
    for i in range(5):
        try:
            conns.append(send(f"/upstream/hang/{i}"))
        except OSError:
            conns.append(None)
    report("codes", ",".join(status(c) if c else "none" for c in conns))
    s, _, _ = request("POST", "/upstream/hang/after", body=b"{}", timeout=30)
    report("after", s)

def probe_concurrent():
    results = []
    def one():
        s, _, _ = request("GET", "/upstream/slow/v1/models")
        results.append(s)
    t = threading.Thread(target=one)
    t.start()
    time.sleep(0.3)
    s, h, _ = request("GET", "/upstream/slow/v1/models")
    t.join()
    report("second_while_first_runs", s)
    report("first", results[0] if results else None)

def raw_post(path, req, timeout=10):
    """POSTs req as JSON on a connection of its own (Connection: close); returns every byte
    of the answer as sent, headers and framing included."""
    c = socket.create_connection((base_host, base_port), timeout=timeout)
    body = json.dumps(req)
    c.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n{body}".encode())
    raw = b""
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        raw += chunk
    return raw

def probe_sse_raw():
    raw = raw_post("/v1/chat/completions", {"model": "m", "stream": True, "messages": [{"role": "user", "content": "raw"}]})
    text = raw.decode(errors="replace")
    report("sse_comment_passed", ": cloister-test-comment" in text)
    report("sse_event_line_passed", "event: meta" in text)
    report("sse_chunked", "transfer-encoding: chunked" in text.lower())
    # a plain answer: held whole while small, sent with its length; a large one streams
    def plain(path, req):
        head, _, payload = raw_post(path, req, timeout=30).partition(b"\r\n\r\n")
        fields = dict(l.split(b":", 1) for l in head.split(b"\r\n")[1:] if b":" in l)
        fields = {k.strip().lower(): v.strip() for k, v in fields.items()}
        return fields, payload
    h, payload = plain("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "whole"}]})
    report("plain_whole", b"transfer-encoding" not in h and h.get(b"content-length") == str(len(payload)).encode()
           and json.loads(payload).get("object") == "chat.completion")
    h, payload = plain("/v1/embeddings", {"model": "e", "input": "x", "dimensions": 20000})
    report("large_streamed", h.get(b"transfer-encoding") == b"chunked" and b"content-length" not in h
           and len(payload) > 65536)

def probe_cancel():
    c = socket.create_connection((base_host, base_port), timeout=10)
    body = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "a b c"}]})
    c.sendall(f"POST /upstream/stall/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
    got = b""
    while b"\n\n" not in got and b"\r\n\r\n" not in got.split(b"\r\n\r\n", 1)[-1]:
        chunk = c.recv(4096)
        if not chunk:
            break
        got += chunk
    report("cancel_first_event", b"data:" in got or b":" in got)
    c.close()  # go away mid-stream
    time.sleep(1)

def probe_streams():
    n = int(os.environ.get("STREAMS", "250"))
    ok, lock, statuses = [0], threading.Lock(), {}
    body = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "one two three"}]}).encode()
    def one():
        try:
            s, _, data = request("POST", "/v1/chat/completions", body=body, timeout=120)
            key = str(s) if s != 200 or b"[DONE]" in data else "200-incomplete"
        except Exception as e:
            key = type(e).__name__
        with lock:
            statuses[key] = statuses.get(key, 0) + 1
            if key == "200":
                ok[0] += 1
    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads: t.start()
    for t in threads: t.join()
    report("streams_ok", ok[0])
    report("streams_statuses", json.dumps(statuses, sort_keys=True))

def raw_status(head, body=b""):
    """Sends head (bytes, request line and header lines, no final blank line) and body as they
    are; returns the answer's status code, or "none"."""
    c = socket.create_connection((base_host, base_port), timeout=10)
    c.sendall(head + b"Host: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    line = c.makefile("rb").readline().decode("latin-1")
    c.close()
    return line.split()[1] if line else "none"

def probe_headers():
    """Header values with controls (RFC 9110 field-value): refused before anything goes upstream."""
    bad = [b"User-Agent: a\rX-Inj-Cr: 1", b"User-Agent: a\rTransfer-Encoding: chunked",
           b"Accept: a\x0bX-Inj-Vt: 1", b"User-Agent: a\x7fX-Inj-Del: 1",
           b"Content-Type: application/json\x1bX-Inj-Esc: 1"]
    smuggled = b"0\r\n\r\nGET /v1/forbidden-smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    report("bad_header_codes", ",".join(raw_status(b"POST /upstream/raw/in HTTP/1.1\r\n" + h + b"\r\n", smuggled)
                                        for h in bad))
    # libmicrohttpd ends a value at a NUL and drops the rest of the line: the broker never
    # sees it, so it cannot refuse it, but what follows the NUL must not reach the wire
    report("nul_header_code", raw_status(b"GET /upstream/raw/in HTTP/1.1\r\nX-Request-Id: nul-marker\x00X-Inj-Nul: 1\r\n"))
    good = [b"User-Agent: tab\tok-marker-1", b"User-Agent: caf\xe9 ok-marker-2"]
    report("good_header_codes", ",".join(raw_status(b"GET /upstream/raw/in HTTP/1.1\r\n" + h + b"\r\n") for h in good))
    report("bad_answer_codes", ",".join(raw_status(b"GET /upstream/raw/" + p + b" HTTP/1.1\r\n")
                                        for p in (b"bad-header", b"folded-header")))

def probe_mcp_raw():
    """tools/list answers from raw-upstream.py that must be read as JSON, and filtered."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    for name in ("trailer", "param"):
        s, h, data = request("POST", f"/mcp/rawmcp/mcp-{name}", body=body,
                             headers={"Accept": "application/json, text/event-stream"})
        try:
            tools = ",".join(t["name"] for t in json.loads(data)["result"]["tools"])
        except Exception:
            tools = f"status {s}: {data[:200]!r}"
        report(f"{name}_tools", tools)

def probe_mcp():
    """MCP over streamable HTTP through /mcp/tools/: initialize, tools/list, tools/call."""
    def rpc(method, params=None, session=None, rid=1, accept="application/json, text/event-stream"):
        h = {"Accept": accept}
        if session:
            h["Mcp-Session-Id"] = session
        body = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            body["params"] = params
        s, headers, data = request("POST", "/mcp/tools/mcp", body=json.dumps(body).encode(), headers=h)
        text = data.decode()
        if text.startswith("event:") or "\ndata:" in text or text.startswith("data:"):
            text = "".join(l[5:].strip() for l in text.splitlines() if l.startswith("data:"))
        return s, headers, json.loads(text) if text.strip() else None
    s, h, r = rpc("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                 "clientInfo": {"name": "probe", "version": "1"}})
    session = h.get("Mcp-Session-Id") or h.get("mcp-session-id")
    report("mcp_initialize", s)
    report("mcp_session_kept", bool(session))
    s, h, r = rpc("tools/list", {}, session, 2)
    report("mcp_tools", ",".join(sorted(t["name"] for t in r["result"]["tools"])))
    # the same asked for as plain JSON: the server answers application/json, not a stream
    s, h, r = rpc("tools/list", {}, session, 6, accept="application/json")
    report("mcp_tools_json_type", (h.get("Content-Type") or "").split(";")[0])
    report("mcp_tools_json", ",".join(sorted(t["name"] for t in r["result"]["tools"])) if r and "result" in r else r)
    s, h, r = rpc("tools/call", {"name": "search", "arguments": {"query": "x"}}, session, 3)
    report("mcp_call_allowed", r["result"]["content"][0]["text"] if r and "result" in r else r)
    s, h, r = rpc("tools/call", {"name": "delete_everything", "arguments": {}}, session, 4)
    report("mcp_call_refused", r["error"]["code"] if r and "error" in r else r)
    report("mcp_call_refused_id", r.get("id") if r else None)
    # Resumption: the server replays what it sent after the first event id it gave this
    # session (the tools/list answer's priming event); the broker must filter the replay.
    s, h, data = request("POST", "/mcp/tools/mcp", headers={"Accept": "application/json, text/event-stream",
                         "Mcp-Session-Id": session},
                         body=json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).encode())
    ids = [l[3:].strip() for l in data.decode().splitlines() if l.startswith("id:")]
    report("mcp_list_event_ids", len(ids))
    report("mcp_list_primed", data.decode().startswith("id: ") and "\ndata: \n\n" in data.decode())
    events = sse_events("/mcp/tools/mcp", {"Accept": "text/event-stream", "Mcp-Session-Id": session,
                                           "Last-Event-ID": ids[0] if ids else "none"})
    listed, lists = set(), 0
    for e in events:
        try:
            m = json.loads(e)
        except ValueError:
            continue
        if isinstance(m, dict) and isinstance(m.get("result"), dict) and "tools" in m["result"]:
            listed.update(t.get("name") for t in m["result"]["tools"])
            lists += 1
    report("mcp_replay_lists", lists)
    report("mcp_replay_tools", ",".join(sorted(listed)) or "none")
    report("mcp_get_notification", any("cloister-test-notification" in e for e in events))

def sse_events(path, headers, seconds=1.5):
    """The data of each event of a GET stream, read for `seconds` (the stream stays open)."""
    c = http.client.HTTPConnection(base_host, base_port, timeout=seconds)
    c.request("GET", path, headers=headers)
    r = c.getresponse()
    buf = b""
    try:
        while True:
            chunk = r.read1(65536)
            if not chunk:
                break
            buf += chunk
    except (socket.timeout, TimeoutError, OSError):
        pass
    c.close()
    events = []
    for block in buf.decode(errors="replace").replace("\r\n", "\n").split("\n\n"):
        data = [l[5:].lstrip(" ") if l.startswith("data:") else "" for l in block.split("\n") if l.startswith("data")]
        if data and "\n".join(data):
            events.append("\n".join(data))
    return events

def probe_ambiguous():
    """Bodies a case-insensitive or first-key-wins server would read otherwise than the policy."""
    def post(path, body, session=None):
        h = {"Accept": "application/json, text/event-stream"}
        if session:
            h["Mcp-Session-Id"] = session
        s, headers, data = request("POST", path, body=body.encode(), headers=h)
        try:
            code = json.loads(data)["error"]["code"]
        except Exception:
            code = None
        return s, headers, code
    _, h, _ = post("/mcp/tools/mcp", '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                   '"2025-03-26","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}')
    session = h.get("Mcp-Session-Id") or h.get("mcp-session-id")
    mcp = ['{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","Name":"delete_everything","arguments":{}}}',
           '{"jsonrpc":"2.0","id":6,"method":"ping","Method":"tools/call","params":{"name":"delete_everything"}}',
           '{"jsonrpc":"2.0","id":7,"method":"ping","METHOD":"tools/list"}',
           '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"delete_everything","name":"search"}}',
           '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search"},"param\u017f":{"name":"delete_everything"}}',
           '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"search","\\u004eame":"delete_everything"}}',
           '[{"jsonrpc":"2.0","id":11,"method":"ping","Method":"tools/call","params":{"name":"delete_everything"}}]',
           '{"jsonrpc":"2.0","id":12,"Method":"tools/call","params":{"name":"delete_everything"}}']
    results = [post("/mcp/tools/mcp", b, session) for b in mcp]
    report("mcp_ambiguous_codes", ",".join(str(s) for s, _, _ in results))
    report("mcp_ambiguous_rpc_codes", ",".join(str(c) for _, _, c in results))
    v1 = ['{"model":"m","stream":1,"messages":[{"role":"user","content":"hi"}]}',
          '{"model":"m","stream":"true","messages":[{"role":"user","content":"hi"}]}',
          '{"model":"m","Stream":true,"messages":[{"role":"user","content":"hi"}]}',
          '{"model":"m","stream":false,"stream":true,"messages":[{"role":"user","content":"hi"}]}',
          '{"model":"m","stream":true,"stream_options":{"include_usage":true,"Include_Usage":false},"messages":[]}',
          '{"model":"m","model":"other","messages":[{"role":"user","content":"hi"}]}',
          '{"model":7,"messages":[{"role":"user","content":"hi"}]}']
    report("v1_ambiguous_codes", ",".join(str(post("/v1/chat/completions", b)[0]) for b in v1))
    s, _, _ = post("/v1/chat/completions", '{"model":"m","stream":false,"messages":[{"role":"user","content":"fine"}]}')
    report("v1_plain", s)

for p in os.environ.get("PROBES", "").split(","):
    if p:
        globals()["probe_" + p]()
report("done", "yes")
