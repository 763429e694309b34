#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (nspawn-run.sh, via tests/mcp-sdk/nspawn-mcp-sdk.sh) as
# root: the official MCP TypeScript SDK (tests/mcp-sdk/agent.mjs) in sealed daemon-only agents,
# through cloister-broker, to the official reference server
# @modelcontextprotocol/server-everything over Streamable HTTP on the container's loopback
# (outside the sandbox), once per supported revision a client speaks today: 2025-11-25 (the
# SDK's default; its answers start with priming events) and 2025-06-18.
set -u
. "$PAYLOAD/tap.sh"
CFG=$CLOISTER_CFG
X=$PAYLOAD/extra
mkdir -p "$CFG/roles" "$CFG/cloister.conf.d"

# --- the reference server ---------------------------------------------------------------------
PORT=3871
PORT=$PORT setsid node "$X/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp \
        > /srv/everything.log 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do
        grep -q "listening on port $PORT" /srv/everything.log && break
        sleep 0.1
done
check "the reference server listens on the container's loopback" grep -q "listening on port $PORT" /srv/everything.log

cat > "$CFG/cloister.conf.d/50-test.conf" <<CONF
[Broker]
IdleTimeout=5s

[Upstream everything]
Kind=mcp
URL=http://127.0.0.1:$PORT
CONF

role() { # NAME PROTOCOL
        mkdir -p "/srv/out/$1" && chmod 0777 "/srv/out/$1" && rm -f "/srv/out/$1"/*
        cat > "$CFG/roles/$1.role" <<ROLE
[Role]
Exec=/usr/bin/node $X/agent.mjs
Environment=MCP_PROTOCOL=$2
Environment=MCP_ALLOWED=echo,get-sum
Environment=MCP_REFUSED=get-env
[Sandbox]
Network=daemon-only
Memory=512M
Timeout=2min
Output=/srv/out/$1
JIT=yes
[Broker]
Allow=everything
AllowTool=everything:echo
AllowTool=everything:get-sum
ROLE
}
role current 2025-11-25
role previous 2025-06-18
systemctl daemon-reload
systemctl start cloister-broker.socket
systemctl start --wait agent@current.service agent@previous.service

for r in current previous; do
        f=/srv/out/$r/result.json
        v() { python3 -c "import json,sys; d=json.load(open('$f')); v=d.get('$1'); print(','.join(v) if isinstance(v, list) else v)" 2>/dev/null; }
        [ -s "$f" ] && [ "$(v error)" = None ] || diag "$r: $(cat "$f" 2>/dev/null | head -c 2000; journalctl -b -u agent@$r.service --no-pager | tail -15)"
        want=$([ $r = current ] && echo 2025-11-25 || echo 2025-06-18)
        check "$r: the SDK negotiated MCP $want through the broker ($(v protocol))" [ "$(v protocol)" = "$want" ]
        check "$r: the broker kept the Mcp-Session-Id ($(v session))" [ "$(v session)" = True ]
        check "$r: tools/list lists the allowed tools only ($(v tools))" [ "$(v tools)" = "echo,get-sum" ]
        check "$r: an allowed tool is called ($(v call_allowed))" [ "$(v call_allowed)" = "Echo: hello from the sandbox" ]
        check "$r: a tool not allowed cannot be called ($(v call_refused))" [ "$(v call_refused)" = "error -32601" ]
        check "$r: …the broker answered, the server was not asked ($(v call_refused_message))" \
                bash -c "[[ '$(v call_refused_message)' == *'cloister: this role may not call this tool'* ]]"
        check "$r: the answers carried event ids, so resumption can be tried ($(v event_ids))" [ "$(v event_ids)" -gt 0 ]
        check "$r: GET with Last-Event-ID is relayed ($(v replay_status))" [ "$(v replay_status)" = 200 ]
        check "$r: the replay carried the tools/list answer again ($(v replay_lists))" [ "$(v replay_lists)" -ge 1 ]
        check "$r: …and shows no tool refused ($(v replay_tools))" [ "$(v replay_tools)" = "echo,get-sum" ]
        check "$r: no error in the SDK ($(v errors))" [ -z "$(v errors)" ]
        check "$r: an unknown MCP-Protocol-Version is refused by the broker ($(v unknown_version_status))" \
                bash -c "[ '$(v unknown_version_status)' = 400 ] && grep -q '\"code\":\"unsupported_protocol_version\"' <<<'$(v unknown_version_answer)'"
        check "$r: a second Mcp-Session-Id is refused by the broker ($(v duplicate_session_status))" \
                bash -c "[ '$(v duplicate_session_status)' = 400 ] && grep -q '\"code\":\"bad_mcp_header\"' <<<'$(v duplicate_session_answer)'"
        check "$r: the session ends with DELETE ($(v terminated))" [ "$(v terminated)" = True ]
done
check "current: the 2025-11-25 answers started with priming events (id, empty data)" \
        [ "$(python3 -c "import json; print(json.load(open('/srv/out/current/result.json')).get('priming_events', 0))")" -gt 0 ]

# --- what the server and the audit log saw ------------------------------------------------------
J() { journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b "$@" --no-pager; }
check "audit: the refused calls are recorded as tool_not_allowed" \
        [ "$(J CLOISTER_ERROR=tool_not_allowed -o cat | wc -l)" = 2 ]
check "audit: no answer was refused as unreadable (upstream_bad_answer)" \
        [ "$(J CLOISTER_ERROR=upstream_bad_answer -o cat | wc -l)" = 0 ]
msg=$(J CLOISTER_ROLE=current CLOISTER_METHOD=DELETE -o cat | head -1)
check "audit: the message names the upstream as the man page says ($msg)" \
        bash -c "[[ '$msg' == 'current DELETE /mcp/everything/mcp from agent@current.service → 200 (proxied to everything)' ]]"

tap_done
kill "$SERVER_PID" 2>/dev/null
