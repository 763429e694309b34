#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (nspawn-run.sh) as root: cloister-broker, socket-activated,
# between real daemon-only agent@ units and a fake OpenAI-compatible upstream on the
# container's loopback (tests/broker/fake-openai.py).
set -u
. "$PAYLOAD/tap.sh"
CFG=$CLOISTER_CFG
A=$PAYLOAD/agents
FAKE=$PAYLOAD/extra/fake-openai.py
mkdir -p "$CFG/roles" "$CFG/cloister.conf.d" /etc/credstore

# --- the upstream ---------------------------------------------------------------------------
start_fake() { # RECORDFILE [ARGS…] → sets FAKE_PORT, FAKE_PID
        local rec=$1; shift
        coproc FAKEP { exec python3 "$FAKE" --port 0 --record "$rec" --lifetime 300 "$@"; }
        FAKE_PID=$FAKEP_PID
        read -r _ FAKE_PORT <&"${FAKEP[0]}"
}
start_fake /srv/upstream.jsonl --require-auth sk-test-secret
UP_PORT=$FAKE_PORT
start_fake /srv/issues.jsonl --require-header "X-Api-Token: tok-issues"
ISSUES_PORT=$FAKE_PORT
start_fake /srv/stall.jsonl --mode stall
STALL_PORT=$FAKE_PORT
start_fake /srv/hang.jsonl --mode hang
HANG_PORT=$FAKE_PORT
start_fake /srv/slow.jsonl --mode slow --delay 1
SLOW_PORT=$FAKE_PORT
echo -n "tok-issues" > /etc/credstore/issues-token
FAKE=$PAYLOAD/extra/raw-upstream.py start_fake /srv/raw.jsonl
RAW_PORT=$FAKE_PORT
FAKE=$PAYLOAD/extra/fake-mcp.py start_fake /srv/mcp.jsonl --sse --go-keys
MCP_PORT=$FAKE_PORT

echo -n "sk-test-secret" > /etc/credstore/llm-key
chmod 0600 /etc/credstore/llm-key
cat > "$CFG/cloister.conf.d/50-test.conf" <<EOF2
[LLM]
Endpoint=http://127.0.0.1:$UP_PORT/v1
Model=qwen3.6:35b
APIKeyCredential=llm-key

[Broker]
IdleTimeout=2s
MaxRequestBytes=64K

[Upstream issues]
Kind=http
URL=http://127.0.0.1:$ISSUES_PORT
AuthCredential=issues-token
AuthHeader=X-Api-Token

[Upstream stall]
Kind=http
URL=http://127.0.0.1:$STALL_PORT

[Upstream hang]
Kind=http
URL=http://127.0.0.1:$HANG_PORT

[Upstream slow]
Kind=http
URL=http://127.0.0.1:$SLOW_PORT

[Upstream raw]
Kind=http
URL=http://127.0.0.1:$RAW_PORT

[Upstream down]
Kind=http
URL=http://127.0.0.1:9

[Upstream tools]
Kind=mcp
URL=http://127.0.0.1:$MCP_PORT

[Upstream rawmcp]
Kind=mcp
URL=http://127.0.0.1:$RAW_PORT
EOF2

role() { # NAME MODE EXEC [EXTRA…]
        local name=$1 mode=$2 exec=$3; shift 3
        mkdir -p "/srv/out/$name" && chmod 0777 "/srv/out/$name" && rm -f "/srv/out/$name"/*
        {
                printf '[Role]\nExec=%s\n[Sandbox]\nNetwork=%s\nMemory=512M\nTimeout=2min\nOutput=/srv/out/%s\n' "$exec" "$mode" "$name"
                for l in "$@"; do echo "$l"; done
        } > "$CFG/roles/$name.role"
}
P=$A/broker-probe.py
role chat daemon-only "$A/openai-client.py"
role sealed none "$A/broker-curl.sh"
role errors daemon-only "$P" "[Role]" "Environment=PROBES=errors,cancel" "[Broker]" "Allow=issues stall hang down"
role denied daemon-only "$P" "[Role]" "Environment=PROBES=allowed"
role granted daemon-only "$P" "[Role]" "Environment=PROBES=allowed" "[Broker]" "Allow=issues"
role mcpuser daemon-only "$P" "[Role]" "Environment=PROBES=mcp,ambiguous" "[Broker]" "Allow=tools" "AllowTool=tools:search"
role mcpnone daemon-only "$P" "[Role]" "Environment=PROBES=mcp" "[Broker]" "Allow=tools"
role headers daemon-only "$P" "[Role]" "Environment=PROBES=headers" "[Broker]" "Allow=raw"
role rawmcp daemon-only "$P" "[Role]" "Environment=PROBES=mcp_raw" "[Broker]" "Allow=rawmcp" "AllowTool=rawmcp:search"
role curler daemon-only "$A/broker-curl.sh"
role tokens daemon-only "$P" "[Role]" "Environment=PROBES=tokens" "[Broker]" "TokensPerMinute=5"
role bigtokens daemon-only "$P" "[Role]" "Environment=PROBES=tokens_large" "[Broker]" "TokensPerMinute=5"
role bodyhog daemon-only "$P" "[Role]" "Environment=PROBES=body_bytes" "[Broker]" "Allow=hang" "MaxRequestBytes=15M" "MaxConcurrent=10"
role single daemon-only "$P" "[Role]" "Environment=PROBES=concurrent" "[Broker]" "Allow=slow" "MaxConcurrent=1"
role raw daemon-only "$P" "[Role]" "Environment=PROBES=sse_raw"
role limited daemon-only "$P" "[Role]" "Environment=PROBES=ratelimit" "[Broker]" "RequestsPerMinute=3"
for i in 1 2 3 4; do
        role "streams$i" daemon-only "$P" "[Role]" "Environment=PROBES=streams" "Environment=STREAMS=250" \
                "[Broker]" "MaxConcurrent=1000" "RequestsPerMinute=100000"
done
systemctl daemon-reload
systemctl start cloister-broker.socket

# --- an unmodified OpenAI client in a sealed agent ------------------------------------------
systemctl start --wait agent@chat.service
r=/srv/out/chat/result.json
[ -s "$r" ] || diag "$(journalctl -b -u agent@chat.service | grep -v "^.*cloister-shim\[[0-9]*\]:  " | head -20; journalctl -b -u cloister-broker.service -u cloister-broker.socket --no-pager | tail -30; systemctl status cloister-broker.socket cloister-broker.service --no-pager | head -30; ls -la /run/cloister)"
# jq KEY [DEFAULT]: the agent's result for KEY; a missing key (or file) prints nothing and
# fails, unless a DEFAULT is given for a key the agent leaves out on purpose.
jq() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
print(d[sys.argv[2]] if sys.argv[2] in d or len(sys.argv) < 4 else sys.argv[3])" "$r" "$@" 2>/dev/null; }
check "client: plain answer through the broker ($(jq plain))" [ "$(jq plain)" = "echo: hello broker" ]
check "client: the role's Model= override reached the upstream ($(jq plain_model))" [ "$(jq plain_model)" = "qwen3.6:35b" ]
check "client: streamed answer ($(jq stream))" [ "$(jq stream)" = "echo: stream please" ]
check "client: the stream is SSE ($(jq stream_content_type))" bash -c "[[ '$(jq stream_content_type)' == text/event-stream* ]]"
check "client: [DONE] passed through" [ "$(jq saw_done)" = True ]
check "client: the usage chunk the broker asked for is not shown to a caller that did not ask" [ "$(jq saw_usage_chunk absent)" = absent ]
check "client: CLOISTER_LLM_MODEL ($(jq env_model))" [ "$(jq env_model)" = "qwen3.6:35b" ]
check "upstream: saw the injected key, never the agent's placeholder" \
        all 'lacks /srv/upstream.jsonl cloister-broker-holds-the-key' 'grep -q "Bearer sk-test-secret" /srv/upstream.jsonl'
check "upstream: asked for stream usage (stream_options.include_usage)" grep -q '"include_usage": true' /srv/upstream.jsonl
check "audit: one record per request, with the role" bash -c \
        '[ "$(journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b CLOISTER_ROLE=chat -o cat | wc -l)" = 2 ]'
check "audit: tokens counted, also from the stream" bash -c \
        'journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b CLOISTER_ROLE=chat -o verbose | grep -q "CLOISTER_COMPLETION_TOKENS=[1-9]"'
get() { sed -n "s/^$2=//p" "/srv/out/$1/probe.txt"; }
# start_agents ROLE…: starts the agents and waits for them; when one did not finish well or
# left no result, their status and journals and the broker's go into the TAP output as
# diagnostics (the checks that follow then fail on the missing results).
start_agents() {
        local units=() r missing=0
        for r in "$@"; do units+=("agent@$r.service"); done
        systemctl start --wait "${units[@]}" || missing=1
        for r in "$@"; do [ -s "/srv/out/$r/probe.txt" ] || [ -s "/srv/out/$r/llm.code" ] || missing=1; done
        [ "$missing" = 1 ] || return 0
        for r in "${units[@]}"; do
                diag "$(systemctl status --no-pager -n 0 "$r" 2>&1 | head -n 12)"
                diag "$(journalctl -b --no-pager -o short-monotonic -u "$r" 2>&1 | tail -n 25)"
        done
        diag "$(journalctl -b --no-pager -o short-monotonic -u cloister-broker.service 2>&1 | grep -v '"audit"' | tail -n 40)"
}
expect() { # ROLE KEY EXPECTED DESCRIPTION
        local v; v=$(get "$1" "$2")
        if [ "$v" = "$3" ]; then ok "$1: $4 ($2=$v)"; else notok "$1: $4 ($2=$v, expected $3)"; fi
}

# --- no broker for a role that is not daemon-only -----------------------------------------
systemctl start --wait agent@sealed.service
check "none: no broker variables in the environment" grep -qx "broker_url=unset" /srv/out/sealed/env
check "none: no broker socket, nothing answers on the loopback (curl: $(cat /srv/out/sealed/llm.code))" \
        [ "$(cat /srv/out/sealed/llm.code)" = 000 ]

# --- policy and errors ----------------------------------------------------------------------
systemctl start --wait agent@errors.service agent@denied.service agent@granted.service agent@limited.service
expect errors upstream_issues 200 "an allowed upstream answers, with its AuthHeader= credential injected"
expect errors upstream_down 502 "upstream unreachable"
expect errors upstream_hang 504 "upstream silent for IdleTimeout=2s"
expect errors malformed_json 400 "malformed JSON"
expect errors error_body_is_openai_style True "errors are OpenAI-style JSON"
expect errors body_100k 413 "a body over MaxRequestBytes=64K is refused"
expect errors body_10m 413 "a 10 MB body is refused before it is sent"
expect errors no_route 404 "unknown route"
expect errors trace 405 "TRACE (which would echo injected credentials) is not relayed"
expect errors query_kept 200 "a query string with + and %2B"
check "upstream: the query string arrives as the agent sent it" grep -q 'q=a+b&x=%2B' /srv/issues.jsonl
expect errors chunked_too_large 413 "a chunked body over MaxRequestBytes= gets 413, not a reset"
expect errors traversal 400 "path traversal"
expect errors models qwen3.6:35b "/v1/models lists only the role's model"
expect errors headers_request 200 "a request with the agent's own credentials and forwarding headers"
check "upstream: the agent's Authorization, Cookie and X-Forwarded-For never reach it" \
        lacks /srv/upstream.jsonl -e agent-made-up-token -e "1.2.3.4" -e "a=b"
check "upstream: allowed headers pass (X-Request-Id)" grep -q probe-1 /srv/upstream.jsonl
check "upstream: Host is the upstream's own" bash -c "grep -q '\"host\": \"127.0.0.1:$UP_PORT\"' /srv/upstream.jsonl"
expect errors cancel_first_event True "a streamed answer starts"
for _ in $(seq 30); do grep -q '"client_went_away": true' /srv/stall.jsonl 2>/dev/null && break; sleep 0.1; done
check "cancel: the caller going away mid-stream cancels the upstream request" grep -q '"client_went_away": true' /srv/stall.jsonl
expect denied upstream_issues 403 "an upstream not in Allow= is refused"
expect granted upstream_issues 200 "the same upstream with Allow="
expect limited codes 200,200,200,429 "RequestsPerMinute=3"
check "limited: 429 carries Retry-After ($(get limited retry_after))" [ -n "$(get limited retry_after)" ]
# --- header values: what is on the upstream's wire (raw-upstream.py records the bytes) ------
systemctl start --wait agent@headers.service
expect headers bad_header_codes 400,400,400,400,400 "a header value with CR, VT, DEL or ESC is refused with 400"
check "raw upstream: no injected header and no smuggled request reached the wire" \
        lacks /srv/raw.jsonl -e X-Inj -e forbidden-smuggled -e "Transfer-Encoding"
check "raw upstream: HTAB and obs-text values pass (the control requests arrived)" bash -c \
        'grep -q "tab\\\\tok-marker-1" /srv/raw.jsonl && grep -q "ok-marker-2" /srv/raw.jsonl'
# libmicrohttpd 0.9 (Debian 12) cuts a header value at a NUL; 1.0 (Debian 13) refuses the
# request with 400. Either way nothing after the NUL reaches the upstream (X-Inj-Nul: the
# "no injected header" point above).
nul_cut_or_refused() {
        grep -q "X-Request-Id: nul-marker\\\\r\\\\n" /srv/raw.jsonl && return 0
        [ "$(get headers nul_header_code)" = 400 ] && lacks /srv/raw.jsonl -e nul-marker
}
check "raw upstream: a value cut at a NUL arrives cut, the rest of its line never" nul_cut_or_refused
expect headers good_header_codes 200,200 "header values with HTAB and obs-text pass"
expect headers bad_answer_codes 502,502 "an upstream answer with a bare CR or a folded header line is a 502"

# --- curl over the loopback URL; TokensPerMinute=, MaxConcurrent=; the raw stream ------------
start_agents curler tokens single raw bigtokens
check "curl over CLOISTER_BROKER_URL in a daemon-only agent (/v1/models: $(cat /srv/out/curler/llm.code))" \
        [ "$(cat /srv/out/curler/llm.code)" = 200 ]
expect tokens codes 200,429 "TokensPerMinute=5: the usage of the first answer blocks the second"
expect bigtokens codes 200,429 "TokensPerMinute=5: the usage of a 16 MB embeddings answer blocks the next request"
check "bigtokens: the first answer was over 4 MiB ($(get bigtokens sizes))" [ "$(get bigtokens sizes | cut -d, -f1)" -gt 4194304 ]
expect single second_while_first_runs 429 "MaxConcurrent=1: a second request while the first runs"
expect single first 200 "MaxConcurrent=1: the first completes"
expect raw sse_comment_passed True "SSE comment lines pass through"
expect raw sse_event_line_passed True "SSE event: lines pass through"
expect raw sse_chunked True "the stream goes out chunked, not buffered into a Content-Length"
expect raw plain_whole True "a small plain answer goes out whole, with its Content-Length (one write)"
expect raw large_streamed True "a plain answer over 64 KiB is streamed chunked, not held"

# --- MCP with the per-role tool allow-list ---------------------------------------------------
start_agents mcpuser mcpnone rawmcp
expect mcpuser mcp_initialize 200 "MCP initialize through the broker"
expect mcpuser mcp_session_kept True "the Mcp-Session-Id header is kept"
expect mcpuser mcp_tools search "tools/list shows only the tools in AllowTool="
expect rawmcp trailer_tools search "a JSON tools/list with a Content-Type trailer is still filtered (a trailer is no header)"
expect rawmcp param_tools search "a JSON tools/list whose media type parameter names text/event-stream is still filtered"
expect mcpuser mcp_call_allowed 'called search with {"query":"x"}' "an allowed tools/call reaches the server"
expect mcpuser mcp_call_refused -32601 "a tools/call of a tool not allowed gets a JSON-RPC error"
expect mcpuser mcp_call_refused_id 4 "the error answers the request's id"
expect mcpuser mcp_ambiguous_codes 400,400,400,400,400,400,400,400 \
        "JSON-RPC with keys that collide ignoring case, repeat, or vary a policy key's case is refused (server reads keys as Go does)"
expect mcpuser mcp_ambiguous_rpc_codes -32600,-32600,-32600,-32600,-32600,-32600,-32600,-32600 "the refusal is a JSON-RPC error"
expect mcpuser v1_ambiguous_codes 400,400,400,400,400,400,400 \
        "/v1 bodies with a non-boolean stream, a non-string model, or repeated or case-variant model/stream keys are refused"
expect mcpuser v1_plain 200 "a plain /v1 body still passes"
check "MCP: the refused calls never reached the server" lacks /srv/mcp.jsonl delete_everything
expect mcpnone mcp_tools "" "no AllowTool=: tools/list is empty (fail closed)"
expect mcpuser mcp_tools_json_type application/json "a tools/list asked for as plain JSON is answered as JSON"
expect mcpuser mcp_tools_json search "…and that JSON answer is filtered too"
expect mcpnone mcp_tools_json "" "no AllowTool=: the JSON tools/list answer is empty"
expect mcpuser mcp_list_primed True "a tools/list answered as SSE starts with a priming event (id, empty data), passed as is"
expect mcpuser mcp_list_event_ids 2 "…with the event ids kept"
expect mcpuser mcp_replay_lists 1 "GET with Last-Event-ID: the server replays its tools/list answer"
expect mcpuser mcp_replay_tools search "…and the replay, through the broker, lists only the tools in AllowTool="
expect mcpnone mcp_replay_tools none "no AllowTool=: the replayed tools/list is empty too"
expect mcpuser mcp_get_notification True "the GET stream's notification passes"

status=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket /run/cloister/broker.sock http://broker/v1/models)
check "an unknown peer (the host's root, no agent unit) gets 403 ($status)" [ "$status" = 403 ]
check "audit: refusals are recorded too, with the reason" bash -c \
        'journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b CLOISTER_ROLE=denied -o verbose | grep -q CLOISTER_ERROR=upstream_not_allowed'

# --- 1,000 concurrent streams from four agents ------------------------------------------------
systemctl start agent@streams1.service agent@streams2.service agent@streams3.service agent@streams4.service
for i in 1 2 3 4; do
        for _ in $(seq 300); do [ "$(get "streams$i" done)" = yes ] && break; sleep 0.2; done
done
total=0
for i in 1 2 3 4; do total=$((total + $(get "streams$i" streams_ok || echo 0))); done
check "1,000 concurrent streams from four agents all complete ($total)" [ "$total" = 1000 ]
[ "$total" = 1000 ] || for i in 1 2 3 4; do diag "streams$i: $(get "streams$i" streams_statuses)"; done
bpid=$(systemctl show -P MainPID cloister-broker.service)
rss=$(sed -n 's/^VmHWM:\s*\([0-9]*\) kB/\1/p' "/proc/$bpid/status")
diag "broker peak RSS after 1,000 concurrent streams: ${rss} kB"
check "the broker's peak RSS stays bounded (${rss} kB < 128 MiB)" [ "${rss:-999999}" -lt 131072 ]

# --- one caller hoarding connections does not delay another's requests ------------------------
HOG=$PAYLOAD/extra/conn-hog.py
rm -f /srv/hog.txt /srv/hog2.txt
# memory: 2,000 connections with 57 KB of headers each added ~120 MB before the cap. A fresh
# broker (the socket keeps listening), so that heap kept from earlier tests hides nothing.
systemctl stop cloister-broker.service
curl -s -o /dev/null --unix-socket /run/cloister/broker.sock http://broker/health
bpid=$(systemctl show -P MainPID cloister-broker.service)
rss0=$(sed -n 's/^VmRSS:\s*\([0-9]*\) kB/\1/p' "/proc/$bpid/status")
systemd-run --quiet --unit=agent-run@hog.h2.service -p LimitNOFILE=20000 python3 "$HOG" /run/cloister/broker.sock 2000 /srv/hog2.txt --pad 57000 --hold 4
for _ in $(seq 240); do [ -s /srv/hog2.txt ] && break; sleep 0.25; done
sleep 2
rss1=$(sed -n 's/^VmRSS:\s*\([0-9]*\) kB/\1/p' "/proc/$bpid/status")
diag "hog2: $(tr '\n' ' ' < /srv/hog2.txt 2>/dev/null); broker RSS ${rss0} kB -> ${rss1} kB"
# (28 MiB here, 57 MiB under ASan; 98 MiB on the unfixed broker)
check "2,000 connections with 57 KB headers from one unit add less than 80 MiB to the broker ($(( (rss1 - rss0) / 1024 )) MiB)" \
        [ $((rss1 - rss0)) -lt 81920 ]
check "the broker unit has a memory ceiling (MemoryMax=$(systemctl show -P MemoryMax cloister-broker.service))" \
        [ "$(systemctl show -P MemoryMax cloister-broker.service)" = 1073741824 ]
for _ in $(seq 40); do grep -q '^done=yes' /srv/hog2.txt 2>/dev/null && break; sleep 0.25; done
# A run unit of role hog opens 9,000 connections whose headers never end (more than the 8,192
# the broker serves at once); one of role victim asks for /health meanwhile. (systemd-run,
# not agent@ROLE: the hog needs LimitNOFILE=20000; the broker counts connections per unit.)
systemd-run --quiet --unit=agent-run@hog.h1.service -p LimitNOFILE=20000 python3 "$HOG" /run/cloister/broker.sock 9000 /srv/hog.txt --hold 12
for _ in $(seq 240); do [ -s /srv/hog.txt ] && break; sleep 0.25; done
victim=$(systemd-run --quiet --wait --pipe --unit=agent-run@victim.v1.service \
        curl -s -o /dev/null -m 10 -w '%{http_code} %{time_total}' --unix-socket /run/cloister/broker.sock http://broker/health)
diag "hog: $(tr '\n' ' ' < /srv/hog.txt 2>/dev/null); victim: $victim"
check "hog: 9,000 connections from one unit were opened ($(sed -n 's/^opened=//p' /srv/hog.txt))" \
        [ "$(sed -n 's/^opened=//p' /srv/hog.txt)" = 9000 ]
# (it waits behind up to 4,096 of the hog's connections in the socket's queue, each refused
# at accept: 0.5 s on an idle machine, 1.2 s under ASan, 2.6 s with three other suites
# running; the unfixed broker did not answer within 10 s)
check "another unit's /health is answered within 5 s meanwhile ($victim)" \
        python3 -c 'import sys; c, t = (sys.argv[1].split() + ["", ""])[:2]; sys.exit(not (c == "200" and float(t or 99) < 5))' "$victim"
for _ in $(seq 80); do grep -q '^done=yes' /srv/hog.txt 2>/dev/null && break; sleep 0.25; done
open1=$(sed -n 's/^open_after_4s=//p' /srv/hog.txt)
check "per-unit cap: at most 512 of the hog's connections stay open ($open1)" [ "${open1:-99999}" -le 512 ]
check "header deadline: none of them is open 12 s later, headers never ended ($(sed -n 's/^open_after_12s=//p' /srv/hog.txt))" \
        [ "$(sed -n 's/^open_after_12s=//p' /srv/hog.txt)" = 0 ]

# one caller's request bodies held in the broker: at most 64 MiB together
systemctl start --wait agent@bodyhog.service
# The uploads interleave: every one still arriving once the unit's held bytes pass 64 MiB is
# refused, so how many are depends on timing; never all five go upstream (75 MB > 64 MiB).
codes=$(get bodyhog codes)
n429=$(grep -o 429 <<<"$codes" | wc -l)
check "bodyhog: five 15 MB bodies at once from one unit: those past 64 MiB held are refused (429), the rest go upstream (which hangs: 504) (codes=$codes)" \
        all "[[ '$codes' =~ ^(504|429)(,(504|429)){4}$ ]]" "[ $n429 -ge 1 ]"
expect bodyhog after 504 "once they are gone, the next request goes upstream again"

# --- systemctl reload: new roles and config apply, requests in flight finish, bad files refused --
# as_agent ROLE ID PATH [CURL ARGS…]: the HTTP status of PATH asked by a unit of role ROLE.
as_agent() {
        local role=$1 id=$2 path=$3; shift 3
        systemd-run --quiet --wait --pipe --unit="agent-run@$role.$id.service" \
                curl -s -o /dev/null -m 20 -w '%{http_code}' "$@" --unix-socket /run/cloister/broker.sock "http://broker$path"
}
reloaded() { # N: waits for the Nth "Configuration reloaded" or "refused" line of this boot
        for _ in $(seq 100); do
                [ "$(journalctl -b -u cloister-broker.service -o cat | grep -cE 'Configuration reloaded|new configuration was refused')" -ge "$1" ] && return 0
                sleep 0.1
        done
        return 1
}
role reloader daemon-only "$P" "[Broker]" "Allow=slow"
systemctl daemon-reload
bpid=$(systemctl show -P MainPID cloister-broker.service)
before=$(as_agent reloader r0 /upstream/issues/v1/models)
check "reload: before, an upstream not in Allow= is refused ($before)" [ "$before" = 403 ]
# a slow answer (1.5 s) spanning the reload, under the old config (Allow=slow)
as_agent reloader r1 /upstream/slow/v1/models -H "X-Fake-Delay: 1.5" > /srv/inflight.code &
inflight=$!
sleep 0.5
role reloader daemon-only "$P" "[Broker]" "Allow=issues later"
printf '[Upstream later]\nKind=http\nURL=http://127.0.0.1:%s\nAuthCredential=issues-token\nAuthHeader=X-Api-Token\n' "$ISSUES_PORT" \
        > "$CFG/cloister.conf.d/60-reload.conf"
n=$(journalctl -b -u cloister-broker.service -o cat | grep -cE 'Configuration reloaded|new configuration was refused')
check "reload: systemctl reload cloister-broker succeeds" systemctl reload cloister-broker.service
check "reload: the broker logged the new configuration" reloaded $((n + 1))
wait "$inflight"
check "reload: a request in flight during the reload completes under its config ($(cat /srv/inflight.code))" \
        [ "$(cat /srv/inflight.code)" = 200 ]
check "reload: the role's new Allow= applies (issues: $(as_agent reloader r2 /upstream/issues/v1/models))" \
        [ "$(as_agent reloader r3 /upstream/issues/v1/models)" = 200 ]
check "reload: a new [Upstream] applies ($(as_agent reloader r4 /upstream/later/v1/models))" \
        [ "$(as_agent reloader r5 /upstream/later/v1/models)" = 200 ]
check "reload: the upstream taken out of Allow= is refused now ($(as_agent reloader r6 /upstream/slow/v1/models))" \
        [ "$(as_agent reloader r7 /upstream/slow/v1/models)" = 403 ]
check "reload: the MainPID is unchanged" [ "$(systemctl show -P MainPID cloister-broker.service)" = "$bpid" ]
# a broken role file: refused by ExecReload='s check, and by the broker itself on a bare SIGHUP
cp "$CFG/roles/reloader.role" /srv/reloader.role.good
echo NoSuchKey=1 >> "$CFG/roles/reloader.role"
check "reload: --check-config refuses the broken file, naming file:line:key" bash -c \
        "$(readlink "/proc/$bpid/exe") --check-config 2>&1 | grep -q 'reloader.role:[0-9]*:.*NoSuchKey'"
check "reload: systemctl reload with a broken role file fails" status_is 1 systemctl reload cloister-broker.service 
n=$(journalctl -b -u cloister-broker.service -o cat | grep -cE 'Configuration reloaded|new configuration was refused')
kill -HUP "$bpid"
check "reload: SIGHUP with a broken file: the broker refuses the new configuration" reloaded $((n + 1))
check "reload: …and says so" bash -c \
        "journalctl -b -u cloister-broker.service -o cat | tail -20 | grep -q 'new configuration was refused'"
check "reload: the unit stays active ($(systemctl is-active cloister-broker.service))" systemctl is-active -q cloister-broker.service
check "reload: the old configuration still serves (issues: $(as_agent reloader r8 /upstream/issues/v1/models))" \
        [ "$(as_agent reloader r9 /upstream/issues/v1/models)" = 200 ]
check "reload: the MainPID is still unchanged" [ "$(systemctl show -P MainPID cloister-broker.service)" = "$bpid" ]
cp /srv/reloader.role.good "$CFG/roles/reloader.role"
rm -f "$CFG/cloister.conf.d/60-reload.conf"

# --- kill -9 under load: queued connections are served by the restarted broker -------------
bpid=$(systemctl show -P MainPID cloister-broker.service)
kill -STOP "$bpid"
curls=()
for i in $(seq 20); do
        curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 --unix-socket /run/cloister/broker.sock http://broker/health >> /srv/queued.codes &
        curls+=($!)
done
sleep 1
kill -KILL "$bpid"
wait "${curls[@]}"
check "kill -9: 20 requests queued on the socket are all answered by the restarted broker ($(sort /srv/queued.codes | uniq -c | tr '\n' ' '))" \
        [ "$(grep -c '^200$' /srv/queued.codes)" = 20 ]
check "kill -9: systemd restarted the broker" [ "$(systemctl show -P MainPID cloister-broker.service)" != "$bpid" ]

# --- sanitizer build (run-all.sh: ASan+UBSan, nspawn-run.sh's CLOISTER_NSPAWN_SANITIZER_ENV) --
# Stop the broker (so exit-time checks run too), then: no report from any process.
if systemctl show-environment | grep -q '^ASAN_OPTIONS='; then
        systemctl stop cloister-broker.service cloister-broker.socket
        reports=$(journalctl -b --no-pager -o cat | grep -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: (Address|Undefined)' | head -20)
        check "ASan/UBSan: no sanitizer report in the journal from the broker or any cloister process" [ -z "$reports" ]
        [ -z "$reports" ] || diag "$reports"
else
        skip "ASan/UBSan: no sanitizer report in the journal" "not a sanitizer build (run-all.sh runs this suite with one)"
fi

tap_done

kill "$FAKE_PID" 2>/dev/null
