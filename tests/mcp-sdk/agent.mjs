// SPDX-License-Identifier: LGPL-2.1-or-later
// The official MCP TypeScript SDK as an agent would use it, from inside a sealed daemon-only
// cloister agent, through cloister-broker to @modelcontextprotocol/server-everything. Writes
// what it saw to $OUTPUT (default /output/result.json); suite-mcp-sdk.sh judges it.
//   MCP_URL       the MCP endpoint (default: the broker's /mcp/everything/mcp)
//   MCP_PROTOCOL  the revision to speak: 2025-11-25 (the SDK's default) or an older one, which
//                 the initialize request then proposes instead (as a client built for it would)
//   MCP_ALLOWED   comma-separated tools the role may call; MCP_REFUSED one it may not
import { writeFileSync } from "node:fs";
import net from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { createParser } from "eventsource-parser";

const broker = process.env.CLOISTER_BROKER_URL || "http://127.0.0.1:7800";
const url = new URL(process.env.MCP_URL || `${broker}/mcp/everything/mcp`);
const protocol = process.env.MCP_PROTOCOL || LATEST_PROTOCOL_VERSION;
const allowed = (process.env.MCP_ALLOWED || "echo").split(",");
const refused = process.env.MCP_REFUSED || "get-env";
const out = {};
const save = () => writeFileSync(process.env.OUTPUT || "/output/result.json", JSON.stringify(out, null, 1));

// Reads an SSE body with an SSE parser that is not the broker's: every event, as a client sees it.
async function readEvents(body, events, ms) {
        const parser = createParser({ onEvent: (e) => events.push(e) });
        const reader = body.getReader();
        const decoder = new TextDecoder();
        const stop = ms ? setTimeout(() => reader.cancel().catch(() => {}), ms) : null;
        try {
                for (;;) {
                        const { done, value } = await reader.read();
                        if (done)
                                break;
                        parser.feed(decoder.decode(value, { stream: true }));
                }
        } catch (e) {
                /* cancelled */
        }
        if (stop)
                clearTimeout(stop);
}

// Every SSE answer the SDK receives is also read here (a clone): its event ids, priming events.
const seen = [];
async function tee(input, init) {
        let body = init?.body;
        if (typeof body === "string" && protocol !== LATEST_PROTOCOL_VERSION && body.includes('"initialize"')) {
                const m = JSON.parse(body);
                m.params.protocolVersion = protocol;
                body = JSON.stringify(m);
        }
        const r = await fetch(input, { ...init, body });
        if ((init?.method || "GET") === "POST" && (r.headers.get("content-type") || "").includes("text/event-stream"))
                readEvents(r.clone().body, seen, 0);
        return r;
}

const transport = new StreamableHTTPClientTransport(url, { fetch: tee });
const client = new Client({ name: "cloister-mcp-sdk-test", version: "1.0.0" });
const errors = [];
client.onerror = (e) => errors.push(String(e?.message || e));

try {
        await client.connect(transport);
        out.protocol = transport.protocolVersion;
        out.session = Boolean(transport.sessionId);
        save();

        const list = await client.listTools();
        out.tools = list.tools.map((t) => t.name).sort();
        save();

        const echo = await client.callTool({ name: allowed[0], arguments: { message: "hello from the sandbox" } });
        out.call_allowed = echo.content?.[0]?.text ?? JSON.stringify(echo);
        try {
                const r = await client.callTool({ name: refused, arguments: {} });
                out.call_refused = "answered: " + JSON.stringify(r).slice(0, 200);
        } catch (e) {
                out.call_refused = `error ${e.code}`;
                out.call_refused_message = String(e.message);
        }
        save();

        // What the SDK's POST answers carried: event ids and priming events (id, empty data).
        await new Promise((r) => setTimeout(r, 300));
        const ids = seen.filter((e) => e.id).map((e) => e.id);
        out.event_ids = ids.length;
        out.priming_events = seen.filter((e) => e.id && e.data === "").length;

        // Resumption: a GET with Last-Event-ID set to the first id seen (the initialize answer's
        // priming event, or its answer) asks the server to replay all that came after it.
        out.replay_tools = [];
        out.replay_lists = 0;
        if (ids.length) {
                const r = await fetch(url, { headers: {
                        "Accept": "text/event-stream", "Mcp-Session-Id": transport.sessionId,
                        "MCP-Protocol-Version": transport.protocolVersion, "Last-Event-ID": ids[0] } });
                out.replay_status = r.status;
                const events = [];
                if (r.ok)
                        await readEvents(r.body, events, 2000);
                out.replay_events = events.length;
                for (const e of events) {
                        if (!e.data.trim())
                                continue;
                        const msg = JSON.parse(e.data);
                        for (const m of Array.isArray(msg) ? msg : [msg])
                                if (Array.isArray(m?.result?.tools)) {
                                        out.replay_lists++;
                                        out.replay_tools.push(...m.result.tools.map((t) => t.name));
                                }
                }
                out.replay_tools = [...new Set(out.replay_tools)].sort();
        }
        save();

        // The broker's own MCP header checks: an unknown revision, a duplicate session header.
        const bad = await fetch(url, { method: "POST", headers: {
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "Mcp-Session-Id": transport.sessionId, "MCP-Protocol-Version": "2099-01-01" },
                body: JSON.stringify({ jsonrpc: "2.0", id: 90, method: "ping" }) });
        out.unknown_version_status = bad.status;
        out.unknown_version_answer = (await bad.text()).slice(0, 300);
        out.duplicate_session_status = await new Promise((resolve) => {
                const s = net.connect(Number(url.port), url.hostname, () => s.end(
                        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n` +
                        `Mcp-Session-Id: ${transport.sessionId}\r\nMcp-Session-Id: other\r\nConnection: close\r\n\r\n`));
                let got = "";
                s.on("data", (d) => { got += d; });
                s.on("close", () => {
                        out.duplicate_session_answer = got.slice(got.indexOf("\r\n\r\n") + 4, 300);
                        resolve(Number(got.split(" ")[1]) || 0);
                });
                s.on("error", () => resolve(0));
        });
        save();

        await transport.terminateSession();
        out.terminated = true;
        await client.close();
} catch (e) {
        out.error = String(e?.stack || e);
}
out.errors = errors;
save();
process.exit(0);
