#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A fake MCP server over streamable HTTP (MCP 2025-03-26) for the broker's tests.

Standard library only; shares its HTTP plumbing, options and modes with fake-openai.py,
which must sit in the same directory.  Listens on loopback TCP (--bind, --port; 0 picks a
free port) or a Unix socket (--unix PATH), prints "PORT <n>" or "UNIX <path>" on stdout,
never contacts anything, and exits by itself after --lifetime seconds.

Endpoint (--path, default /mcp):
  POST    JSON-RPC 2.0, one message or a batch: initialize (answers with an
          Mcp-Session-Id header), notifications/initialized (202, no body), ping,
          tools/list (search, read_file, delete_everything), tools/call ("called <name>
          with <arguments as compact sorted JSON>"). With --sse and an Accept header that
          includes text/event-stream, a tools/list or tools/call is answered as an SSE
          stream instead of JSON, as a 2025-11-25 server with an event store answers: a
          priming event (an id and an empty data:), then one "event: message" event with
          an id per response. The session keeps these events for resumption.
  GET     with --sse: a server-to-client SSE stream (one comment, one "event: message"
          notification), held open until the client goes away; with Last-Event-ID, the
          session's events after that id are replayed first (tools/list answers
          included, as a server's event store does); without --sse: 405.
  DELETE  ends the session (200).
Every request but initialize must carry a known Mcp-Session-Id: without one 400, with an
unknown or ended one 404.  Modes (--mode / X-Fake-Mode), --require-host, --require-auth,
--require-header and --record as in fake-openai.py (see README.md).
"""

import argparse
import importlib.util
import json
import os
import sys
import threading
import uuid

sys.dont_write_bytecode = True
_spec = importlib.util.spec_from_file_location(
    "fake_openai", os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake-openai.py"))
fo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fo)

SERVER_NAME = "fake-mcp"
PROTOCOL_VERSIONS = ("2025-03-26", "2024-11-05", "2025-06-18")
TOOLS = [
    {"name": "search",
     "description": "Searches the fake index and returns matching titles.",
     "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}},
                     "required": ["query"]}},
    {"name": "read_file",
     "description": "Returns the contents of a file from the fake store.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                     "required": ["path"]}},
    {"name": "delete_everything",
     "description": "Deletes everything (a tool a policy should refuse to pass).",
     "inputSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}},
]
TOOL_NAMES = {t["name"] for t in TOOLS}

SESSIONS_LOCK = threading.Lock()
SESSIONS = set()
EVENTS = {}             # session id -> [(event id, SSE event text)], for Last-Event-ID
NEXT_EVENT_ID = [0]


def stored_event(sid, data, prefix=""):
    """An SSE event with a fresh id, kept for the session's resumption."""
    with SESSIONS_LOCK:
        NEXT_EVENT_ID[0] += 1
        eid = "ev-%d" % NEXT_EVENT_ID[0]
        text = "%sid: %s\ndata: %s\n\n" % (prefix, eid, data)
        EVENTS.setdefault(sid, []).append((eid, text))
    return text


def rpc_error(id_, code, message):
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def rpc_result(id_, result):
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def go_fold(key):
    """Go's encoding/json key folding: each rune through ToUpper(ToLower(r))."""
    out = []
    for c in key:
        lo = c.lower() if len(c.lower()) == 1 else c
        up = lo.upper() if len(lo.upper()) == 1 else lo
        out.append(up)
    return "".join(out)


class GoObject(dict):
    """A JSON object as Go's encoding/json (mcp-go) reads it into a struct: a key matches a
    field ignoring case (Unicode folding), and of several matching keys the last one wins."""
    def __init__(self, pairs):
        super().__init__(pairs)
        self.folded = {}
        for k, v in pairs:
            self.folded[go_fold(k)] = v

    def get(self, key, default=None):
        return self.folded.get(go_fold(key), default)

    def __getitem__(self, key):
        return self.folded[go_fold(key)]

    def __contains__(self, key):
        return go_fold(key) in self.folded


class McpHandler(fo.Handler):
    server_label = SERVER_NAME
    server_version = "cloister-" + SERVER_NAME

    def parse_json(self, body):
        if ARGS.go_keys:
            return json.loads(body, object_pairs_hook=GoObject)
        return json.loads(body)

    def error_body(self, status, message):
        return rpc_error(None, -32603 if status >= 500 else -32600, message)

    def note_body(self, parsed):
        msgs = parsed if isinstance(parsed, list) else [parsed] if isinstance(parsed, dict) else []
        msgs = [m for m in msgs if isinstance(m, dict)]
        self.rec["session_id"] = self.headers.get("Mcp-Session-Id")
        self.rec["issued_session_id"] = None
        self.rec["rpc_methods"] = [m.get("method") for m in msgs]
        self.rec["rpc_ids"] = [m.get("id") for m in msgs]
        self.rec["tool_calls"] = [(m.get("params") or {}).get("name") for m in msgs
                                  if m.get("method") == "tools/call" and isinstance(m.get("params"), dict)]

    def check_session(self):
        """True if the request carries a live session id; else answers 400/404."""
        sid = self.headers.get("Mcp-Session-Id")
        if not sid:
            self.send_json(400, rpc_error(None, -32000, "Bad Request: Mcp-Session-Id header is required"))
            return False
        with SESSIONS_LOCK:
            known = sid in SESSIONS
        if not known:
            self.send_json(404, rpc_error(None, -32001, "Session not found"))
            return False
        return True

    def wants_sse(self):
        return ARGS.sse and "text/event-stream" in self.headers.get("Accept", "")

    def route(self, parsed):
        path = self.path.split("?", 1)[0]
        if path.rstrip("/") != ARGS.path.rstrip("/"):
            self.send_json(404, rpc_error(None, -32600, "no MCP endpoint at %s" % path))
            return
        if self.command == "GET":
            if not ARGS.sse:
                self.send_json(405, rpc_error(None, -32600, "Method Not Allowed"),
                               extra=[("Allow", "POST, DELETE")])
                return
            if not self.check_session():
                return
            note = {"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "cloister-test-notification"}}
            events = [": cloister-test-comment\n\n",
                      "event: message\ndata: " + json.dumps(note, separators=(",", ":")) + "\n\n"]
            last = self.headers.get("Last-Event-ID")
            if last:
                with SESSIONS_LOCK:
                    kept = EVENTS.get(self.headers.get("Mcp-Session-Id"), [])
                    ids = [eid for eid, _ in kept]
                    replay = [text for _, text in kept[ids.index(last) + 1:]] if last in ids else []
                self.rec["replayed"] = len(replay)
                events = replay + events
            # held open: a server-to-client stream ends when the client goes away
            self.rec["mode"] = "stall"
            self.stall_after = len(events)
            self.stream_events(events)
            return
        if self.command == "DELETE":
            if not self.check_session():
                return
            with SESSIONS_LOCK:
                sid = self.headers.get("Mcp-Session-Id")
                SESSIONS.discard(sid)
            self.send_empty(200)
            return
        if self.command != "POST":
            self.send_json(405, rpc_error(None, -32600, "Method Not Allowed"),
                           extra=[("Allow", "GET, POST, DELETE" if ARGS.sse else "POST, DELETE")])
            return

        if parsed is None:
            self.send_json(400, rpc_error(None, -32700, "Parse error"))
            return
        batch = isinstance(parsed, list)
        msgs = parsed if batch else [parsed]
        if not msgs or not all(isinstance(m, dict) for m in msgs):
            self.send_json(400, rpc_error(None, -32600, "Invalid Request"))
            return

        extra = []
        if any(m.get("method") == "initialize" for m in msgs):
            if len(msgs) != 1:
                self.send_json(400, rpc_error(None, -32600, "initialize must not be part of a batch"))
                return
            sid = uuid.uuid4().hex
            with SESSIONS_LOCK:
                SESSIONS.add(sid)
            self.rec["issued_session_id"] = sid
            extra.append(("Mcp-Session-Id", sid))
        elif not self.check_session():
            return

        responses = [self.answer(m) for m in msgs if "method" in m and "id" in m]
        if not responses:  # only notifications and responses
            self.send_empty(202)
            return
        if self.wants_sse() and any(m.get("method") in ("tools/call", "tools/list") for m in msgs):
            sid = self.headers.get("Mcp-Session-Id")
            self.stream_events([stored_event(sid, "")] +
                               [stored_event(sid, json.dumps(r, separators=(",", ":")), "event: message\n")
                                for r in responses])
            return
        self.send_json(200, responses if batch else responses[0], extra=extra)

    def answer(self, m):
        id_, method, params = m.get("id"), m.get("method"), m.get("params")
        if not isinstance(params, dict):
            params = {}
        if m.get("jsonrpc") != "2.0" or not isinstance(method, str):
            return rpc_error(id_, -32600, "Invalid Request")
        if method == "initialize":
            v = params.get("protocolVersion")
            return rpc_result(id_, {
                "protocolVersion": v if v in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "cloister-fake-mcp", "version": "1.0.0"}})
        if method == "ping":
            return rpc_result(id_, {})
        if method == "tools/list":
            return rpc_result(id_, {"tools": TOOLS})
        if method == "tools/call":
            name = params.get("name")
            if name not in TOOL_NAMES:
                return rpc_error(id_, -32602, "Unknown tool: %s" % name)
            args = params.get("arguments") or {}
            text = "called %s with %s" % (name, json.dumps(args, separators=(",", ":"), sort_keys=True))
            return rpc_result(id_, {"content": [{"type": "text", "text": text}], "isError": False})
        return rpc_error(id_, -32601, "Method not found: %s" % method)


ARGS = None


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    fo.common_args(p)
    p.add_argument("--path", default="/mcp", help="the MCP endpoint's path (default /mcp)")
    p.add_argument("--sse", action="store_true",
                   help="answer tools/call as SSE when the client accepts it; allow GET streams")
    p.add_argument("--go-keys", action="store_true",
                   help="read JSON keys as Go's encoding/json does: ignoring case, the last match wins")
    ARGS = fo.ARGS = p.parse_args()
    fo.serve(McpHandler)


if __name__ == "__main__":
    main()
