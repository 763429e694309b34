#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Self-test of the broker's fake upstreams (fake-openai.py, fake-mcp.py, raw-upstream.py): starts them on
# loopback port 0 (and a Unix socket), drives every mode with curl, prints TAP.
# Needs python3 and curl only; kills only the PIDs it started.
set -u
cd "$(dirname "$0")"
HERE=$PWD

if ! command -v curl >/dev/null 2>&1; then
        echo "1..0 # SKIP curl not found"
        exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
        echo "1..0 # SKIP python3 not found"
        exit 0
fi

. "$HERE/../integration/tap.sh"

T=$(mktemp -d "${TMPDIR:-/tmp}/cloister-fake-selftest.XXXXXX")
PIDS=()
cleanup() {
        local p
        for p in "${PIDS[@]}"; do
                kill "$p" 2>/dev/null
        done
        for p in "${PIDS[@]}"; do
                wait "$p" 2>/dev/null
        done
        rm -rf "$T"
}
trap cleanup EXIT

# start NAME SCRIPT ARGS… → starts the fake, waits for its banner; sets PID_<NAME> and
# PORT_<NAME> (or the socket path); returns 1 if no banner came within 5 s
start() {
        local name=$1 script=$2 i line=
        shift 2
        : > "$T/$name.out"
        python3 "$HERE/$script" --lifetime 60 "$@" > "$T/$name.out" 2> "$T/$name.err" &
        PIDS+=($!)
        printf -v "PID_$name" %s "$!"
        for ((i = 0; i < 100; i++)); do
                read -r line 2>/dev/null < "$T/$name.out"
                [ -n "$line" ] && break
                sleep 0.05
        done
        printf -v "PORT_$name" %s "${line#* }"
        [ -n "$line" ]
}

# py EXPR FILE: evaluates EXPR with d = the JSON in FILE
py() { python3 -c 'import json, sys; d = json.load(open(sys.argv[2])); sys.exit(0 if eval(sys.argv[1]) else 1)' "$@" 2>/dev/null; }

# rec FILE TESTID EXPR [WAIT]: EXPR over r, the record whose X-Test-Id header is TESTID,
# retried for up to WAIT seconds (default 0) while the record is missing or EXPR false
rec() {
        local file=$1 id=$2 expr=$3 wait=${4:-0} i
        for ((i = 0; i <= wait * 20; i++)); do
                python3 - "$file" "$id" "$expr" 2>/dev/null <<'EOF' && return 0
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
r = [r for r in rs if r["headers"].get("x-test-id") == sys.argv[2]]
sys.exit(0 if r and eval(sys.argv[3], {"r": r[-1], "rs": rs}) else 1)
EOF
                [ "$wait" = 0 ] && break
                sleep 0.05
        done
        return 1
}

# c ID URL CURLARGS…: curl into $T/ID.{body,hdr}; status (or curl's exit) in $T/ID.code
c() {
        local id=$1 url=$2
        shift 2
        curl -sS --max-time 5 -H "X-Test-Id: $id" -D "$T/$id.hdr" -o "$T/$id.body" -w '%{http_code}' \
                "$@" "$url" > "$T/$id.code" 2> "$T/$id.err"
        echo $? > "$T/$id.rc"
}
code() { [ "$(cat "$T/$1.code")" = "$2" ]; }
rc() { [ "$(cat "$T/$1.rc")" = "$2" ]; }
hdr() { grep -qi "^$2: $3" "$T/$1.hdr"; }

JSON=(-H "Content-Type: application/json")

# ============================================================================================
# fake-openai.py
# ============================================================================================
R=$T/openai.jsonl
if start O fake-openai.py --port 0 --record "$R"; then
        ok "fake-openai: prints PORT $PORT_O"
else
        notok "fake-openai: prints its port"
        diag "$(cat "$T/O.err")"
        tap_done
        exit 1
fi
U=http://127.0.0.1:$PORT_O

# --- plain chat ---
c plain "$U/v1/chat/completions" "${JSON[@]}" -H "Authorization: Bearer sk-agent" \
        -d '{"model":"gpt-test","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello there"}]}'
check "plain chat: 200" code plain 200
check "plain chat: application/json with Content-Length" bash -c "grep -qi '^content-type: application/json' '$T/plain.hdr' && grep -qi '^content-length: ' '$T/plain.hdr'"
check "plain chat: echo of the last user message" py 'd["choices"][0]["message"]["content"] == "echo: hello there" and d["object"] == "chat.completion"' "$T/plain.body"
check "plain chat: the request's model, finish_reason stop" py 'd["model"] == "gpt-test" and d["choices"][0]["finish_reason"] == "stop"' "$T/plain.body"
check "plain chat: usage counts words (4 + 3 = 7)" py 'd["usage"] == {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}' "$T/plain.body"
check "record: method, path, model, Authorization, Host" rec "$R" plain \
        'r["method"] == "POST" and r["path"] == "/v1/chat/completions" and r["model"] == "gpt-test" and r["headers"]["authorization"] == "Bearer sk-agent" and r["headers"]["host"] == "127.0.0.1:'"$PORT_O"'" and r["status"] == 200 and r["client_went_away"] is False'
check "record: raw_headers keep name case and order" rec "$R" plain '["Authorization", "Bearer sk-agent"] in r["raw_headers"]'

# --- streamed chat, without and with include_usage ---
# sse FILE → checks an SSE body; prints the concatenated delta contents, "usage:N" per
# usage-only chunk, and "done-last" when [DONE] is the last event
sse() {
        python3 - "$1" <<'EOF'
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
assert raw.endswith("\n\n"), "events end with a blank line"
events = raw[:-2].split("\n\n")
assert events[0] == ": cloister-test-comment", events[0]
assert events[1] == "event: meta\ndata: {}", events[1]
text, usage = "", 0
for e in events[2:-1]:
    assert e.startswith("data: ") and "\n" not in e, e
    ch = json.loads(e[6:])
    if ch["choices"]:
        text += ch["choices"][0]["delta"].get("content", "")
    else:
        usage += 1
        assert ch["usage"]["total_tokens"] == ch["usage"]["prompt_tokens"] + ch["usage"]["completion_tokens"]
        assert e is events[-2], "the usage chunk is the last before [DONE]"
print(text)
print("usage:%d" % usage)
if events[-1] == "data: [DONE]":
    print("done-last")
EOF
}
STREAM='{"model":"qwen3.6:35b","stream":true,"messages":[{"role":"user","content":"stream me please"}]}'
c stream "$U/v1/chat/completions" -N "${JSON[@]}" -d "$STREAM"
check "stream: 200 text/event-stream" bash -c "[ \"\$(cat '$T/stream.code')\" = 200 ] && grep -qi '^content-type: text/event-stream' '$T/stream.hdr'"
check "stream: chunked transfer encoding" hdr stream Transfer-Encoding chunked
sse "$T/stream.body" > "$T/stream.sse" 2> "$T/stream.sseerr"
check "stream: comment, meta event, chunks, [DONE], blank-line separated" bash -c "grep -qx done-last '$T/stream.sse'"
check "stream: deltas concatenate to the answer" bash -c "[ \"\$(head -n1 '$T/stream.sse')\" = 'echo: stream me please' ]"
check "stream: no usage chunk when include_usage was not asked" grep -qx usage:0 "$T/stream.sse"
check "stream: no usage field at all without include_usage" lacks "$T/stream.body" usage
check "record: stream true, stream_options null, streamed, not gone" rec "$R" stream \
        'r["stream"] is True and r["stream_options"] is None and r["streamed"] and r["events_sent"] == 9 and not r["client_went_away"]'

c streamu "$U/v1/chat/completions" -N "${JSON[@]}" \
        -d '{"model":"qwen3.6:35b","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"stream me please"}]}'
sse "$T/streamu.body" > "$T/streamu.sse" 2> "$T/streamu.sseerr"
check "stream+usage: well-formed, [DONE] last" grep -qx done-last "$T/streamu.sse"
check "stream+usage: exactly one usage-only chunk, just before [DONE]" grep -qx usage:1 "$T/streamu.sse"
check "stream+usage: usage tokens 3 + 4" grep -q '"choices":\[\],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}' "$T/streamu.body"
check "stream+usage: content chunks carry \"usage\":null as OpenAI's do" grep -q '"finish_reason":"stop"}\],"usage":null' "$T/streamu.body"
check "record: stream_options.include_usage (grep '\"include_usage\": true')" grep -q '"include_usage": true' "$R"
for f in "$T/stream.sseerr" "$T/streamu.sseerr"; do
        [ -s "$f" ] && diag "$(tail -n 3 "$f")"
done

# --- embeddings, models, keep-alive, 404, bad JSON ---
c emb "$U/v1/embeddings" "${JSON[@]}" -d '{"model":"text-embedding-test","input":"three little words"}'
check "embeddings: list with one embedding [0.1, 0.2, 0.3]" py 'd["object"] == "list" and d["data"] == [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2, 0.3]}]' "$T/emb.body"
c embdim "$U/v1/embeddings" "${JSON[@]}" -d '{"model":"text-embedding-test","input":"a b","dimensions":100000}'
check "embeddings: \"dimensions\": 100000 values, usage still the words" \
        py 'len(d["data"][0]["embedding"]) == 100000 and d["usage"]["prompt_tokens"] == 2' "$T/embdim.body"
check "embeddings: model and usage (3 tokens)" py 'd["model"] == "text-embedding-test" and d["usage"] == {"prompt_tokens": 3, "total_tokens": 3}' "$T/emb.body"
c models "$U/v1/models"
check "models: three, including qwen3.6:35b and gpt-test" py 'len(d["data"]) == 3 and {"qwen3.6:35b", "gpt-test"} <= {m["id"] for m in d["data"]}' "$T/models.body"
conns=$(curl -s --max-time 5 -o /dev/null -o /dev/null -w '%{num_connects} ' "$U/v1/models" "$U/v1/models")
check "keep-alive: the second request reuses the connection (connects: $conns)" [ "$conns" = "1 0 " ]
c nf "$U/v2/nothing"
check "unknown path: 404 with an OpenAI error body" bash -c "[ \"\$(cat '$T/nf.code')\" = 404 ] && python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[\"error\"]; assert {\"message\",\"type\",\"code\"} <= set(e)' '$T/nf.body'"
c badjson "$U/v1/chat/completions" "${JSON[@]}" -d '{"model":'
check "bad JSON: 400" code badjson 400

# --- modes by header ---
c fail "$U/v1/chat/completions" "${JSON[@]}" -H "X-Fake-Mode: fail" -d "$STREAM"
check "fail: 500 with an OpenAI error body" bash -c "[ \"\$(cat '$T/fail.code')\" = 500 ] && grep -q '\"type\":\"server_error\"' '$T/fail.body'"
check "record: mode fail, status 500" rec "$R" fail 'r["mode"] == "fail" and r["status"] == 500'

c close "$U/v1/chat/completions" "${JSON[@]}" -H "X-Fake-Mode: close" -d "$STREAM"
check "close: no answer (curl: empty reply, exit 52)" rc close 52
check "record: mode close, no status" rec "$R" close 'r["mode"] == "close" and r["status"] is None'

start0=$(date +%s%N)
c slow "$U/v1/chat/completions" -N "${JSON[@]}" -H "X-Fake-Mode: slow" -H "X-Fake-Delay: 0.1" -d "$STREAM"
ms=$((($(date +%s%N) - start0) / 1000000))
sse "$T/slow.body" > "$T/slow.sse" 2>/dev/null
check "slow: the whole stream arrived" grep -qx done-last "$T/slow.sse"
check "slow: 9 events × 0.1 s took ≥ 0.85 s (${ms} ms)" [ "$ms" -ge 850 ]

c slowgone "$U/v1/chat/completions" -N "${JSON[@]}" -H "X-Fake-Mode: slow" -H "X-Fake-Delay: 0.3" -d "$STREAM" --max-time 0.5
check "slow + client gone: curl timed out (28)" rc slowgone 28
check "record: slow stream, client_went_away true" rec "$R" slowgone 'r["client_went_away"] is True and r["streamed"] and r["events_sent"] < 9' 3

c stall "$U/v1/chat/completions" -N "${JSON[@]}" -H "X-Fake-Mode: stall" -d "$STREAM" --max-time 1
check "stall: curl timed out (28)" rc stall 28
check "stall: headers and the first event arrived at once (flushed), nothing more" bash -c \
        "grep -qi '^content-type: text/event-stream' '$T/stall.hdr' && [ \"\$(cat '$T/stall.body')\" = \"\$(printf ': cloister-test-comment\n\n')\" ]"
check "record: stall, client_went_away true, events_sent 1" rec "$R" stall 'r["client_went_away"] is True and r["events_sent"] == 1 and r["mode"] == "stall"' 3

c stall3 "$U/v1/chat/completions" -N "${JSON[@]}" -H "X-Fake-Mode: stall" -H "X-Fake-Stall-After: 3" -d "$STREAM" --max-time 1
check "stall after 3 events (X-Fake-Stall-After): got the role chunk" \
        all "grep -q '\"role\":\"assistant\"' '$T/stall3.body'" "lacks '$T/stall3.body' DONE"
check "record: stall3 events_sent 3, client_went_away" rec "$R" stall3 'r["client_went_away"] is True and r["events_sent"] == 3' 3

c stallplain "$U/v1/models" -H "X-Fake-Mode: stall" --max-time 1
check "stall, not streamed: status line and headers, no body" bash -c "rc() { [ \"\$(cat '$T/'\$1.rc)\" = \$2 ]; }; rc stallplain 28 && grep -q '^HTTP/1.1 200' '$T/stallplain.hdr' && [ ! -s '$T/stallplain.body' ]"
check "record: not-streamed stall, client_went_away" rec "$R" stallplain 'r["client_went_away"] is True' 3

c hang "$U/v1/chat/completions" "${JSON[@]}" -H "X-Fake-Mode: hang" -d "$STREAM" --max-time 0.5
check "hang: nothing at all (no status line)" bash -c "[ \"\$(cat '$T/hang.rc')\" = 28 ] && [ ! -s '$T/hang.hdr' ]"
check "record: hang, no status, client_went_away" rec "$R" hang 'r["client_went_away"] is True and r["status"] is None' 3

c badmode "$U/v1/models" -H "X-Fake-Mode: sideways"
check "unknown X-Fake-Mode: 400" code badmode 400

# --- a second instance: --mode from the command line, required Host, token, header ---
R2=$T/strict.jsonl
if start S fake-openai.py --port 0 --record "$R2" --mode fail --require-host upstream.test:11434 \
        --require-auth sk-upstream --require-header "X-Api-Key: k1"; then
        US=http://127.0.0.1:$PORT_S
        GOOD=(-H "Host: upstream.test:11434" -H "Authorization: Bearer sk-upstream" -H "X-Api-Key: k1")
        c hostbad "$US/v1/models" -H "Authorization: Bearer sk-upstream" -H "X-Api-Key: k1"
        check "require-host: wrong Host → 403, empty body (as Ollama)" bash -c "[ \"\$(cat '$T/hostbad.code')\" = 403 ] && [ ! -s '$T/hostbad.body' ]"
        c authnone "$US/v1/models" -H "Host: upstream.test:11434" -H "X-Api-Key: k1"
        check "require-auth: no Authorization → 401" code authnone 401
        c authbad "$US/v1/models" -H "Host: upstream.test:11434" -H "Authorization: Bearer sk-agent" -H "X-Api-Key: k1"
        check "require-auth: wrong token → 401 invalid_api_key" bash -c "[ \"\$(cat '$T/authbad.code')\" = 401 ] && grep -q invalid_api_key '$T/authbad.body'"
        c hdrbad "$US/v1/models" -H "Host: upstream.test:11434" -H "Authorization: Bearer sk-upstream" -H "X-Api-Key: k2"
        check "require-header: wrong X-Api-Key → 401" code hdrbad 401
        c flagmode "$US/v1/models" "${GOOD[@]}"
        check "--mode fail from the command line: 500" code flagmode 500
        c override "$US/v1/models" "${GOOD[@]}" -H "X-Fake-Mode: normal"
        check "X-Fake-Mode: normal wins over --mode: 200" code override 200
        check "record (strict): the 403 and 401 were recorded with their Host/Authorization" bash -c \
                "rec() { python3 - \"\$@\" <<'EOF'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
st = {r['headers']['x-test-id']: r for r in rs}
assert st['hostbad']['status'] == 403 and st['hostbad']['headers']['host'] == '127.0.0.1:$PORT_S'
assert st['authbad']['status'] == 401 and st['authbad']['headers']['authorization'] == 'Bearer sk-agent'
assert st['override']['headers']['host'] == 'upstream.test:11434'
EOF
}; rec '$R2'"
else
        notok "strict instance did not start"
        diag "$(cat "$T/S.err")"
fi

# --- Unix socket, lifetime ---
SOCK=$T/openai.sock
if start X fake-openai.py --unix "$SOCK" --lifetime 2 --record "$T/unix.jsonl"; then
        ok "unix: prints UNIX <path>"
        c unixmodels http://fake/v1/models --unix-socket "$SOCK"
        check "unix: GET /v1/models over the socket" code unixmodels 200
        # a stalled stream is ended by the lifetime: recorded as not gone
        curl -s -N --max-time 8 --unix-socket "$SOCK" -H "X-Test-Id: unixstall" -H "X-Fake-Mode: stall" \
                "${JSON[@]}" -d "$STREAM" http://fake/v1/chat/completions > "$T/unixstall.body" 2>/dev/null &
        CURL_PID=$!
        PIDS+=($CURL_PID)
else
        notok "unix: did not start"
        diag "$(cat "$T/X.err")"
fi
python3 "$HERE/fake-openai.py" --bind 0.0.0.0 --lifetime 1 >"$T/bind.out" 2>"$T/bind.err"; rc=$?
check "--bind refuses a non-loopback address (status $rc, no PORT line)" \
        all "[ $rc -ne 0 ] && [ $rc -ne 127 ]" "lacks '$T/bind.out' PORT"

# ============================================================================================
# fake-mcp.py
# ============================================================================================
M=$T/mcp.jsonl
if start M fake-mcp.py --port 0 --sse --record "$M"; then
        ok "fake-mcp: prints PORT $PORT_M"
else
        notok "fake-mcp: prints its port"
        diag "$(cat "$T/M.err")"
fi
UM=http://127.0.0.1:$PORT_M/mcp
ACC=(-H "Accept: application/json, text/event-stream")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"selftest","version":"1"}}}'
c init "$UM" "${JSON[@]}" "${ACC[@]}" -d "$INIT"
SID=$(sed -n 's/^mcp-session-id: *\([^[:space:]]*\).*/\1/Ip' "$T/init.hdr")
check "initialize: 200 with an Mcp-Session-Id header ($SID)" bash -c "[ \"\$(cat '$T/init.code')\" = 200 ] && [ -n '$SID' ]"
check "initialize: protocolVersion, capabilities.tools, serverInfo" py \
        'd["jsonrpc"] == "2.0" and d["id"] == 1 and d["result"]["protocolVersion"] == "2025-03-26" and d["result"]["capabilities"] == {"tools": {}} and d["result"]["serverInfo"]["name"]' "$T/init.body"
S=(-H "Mcp-Session-Id: $SID")
c inited "$UM" "${JSON[@]}" "${ACC[@]}" "${S[@]}" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
check "notifications/initialized: 202, no body" bash -c "[ \"\$(cat '$T/inited.code')\" = 202 ] && [ ! -s '$T/inited.body' ]"

LIST='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
c nosid "$UM" "${JSON[@]}" "${ACC[@]}" -d "$LIST"
check "no Mcp-Session-Id after initialize: 400" code nosid 400
c badsid "$UM" "${JSON[@]}" "${ACC[@]}" -H "Mcp-Session-Id: not-a-session" -d "$LIST"
check "unknown Mcp-Session-Id: 404" code badsid 404
c list "$UM" "${JSON[@]}" -H "Accept: application/json" "${S[@]}" -d "$LIST"
check "tools/list: search, read_file, delete_everything with description and inputSchema" py \
        '[t["name"] for t in d["result"]["tools"]] == ["search", "read_file", "delete_everything"] and all(t["description"] and t["inputSchema"]["type"] == "object" for t in d["result"]["tools"])' "$T/list.body"

CALL='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":2}}}'
c calljson "$UM" "${JSON[@]}" -H "Accept: application/json" "${S[@]}" -d "$CALL"
check "tools/call (Accept: JSON only): JSON answer" bash -c "grep -qi '^content-type: application/json' '$T/calljson.hdr'"
check "tools/call: \"called search with {\\\"limit\\\":2,\\\"query\\\":\\\"x\\\"}\"" py \
        'd["id"] == 3 and d["result"]["content"] == [{"type": "text", "text": "called search with {\"limit\":2,\"query\":\"x\"}"}]' "$T/calljson.body"
c callsse "$UM" -N "${JSON[@]}" "${ACC[@]}" "${S[@]}" -d "$CALL"
check "tools/call with --sse and Accept text/event-stream: an SSE stream" bash -c \
        "grep -qi '^content-type: text/event-stream' '$T/callsse.hdr' && grep -qi '^transfer-encoding: chunked' '$T/callsse.hdr'"
check "tools/call SSE: a priming event (id, empty data), then one event: message with an id carrying the JSON-RPC response" python3 -c '
import json, sys
raw = open(sys.argv[1]).read()
assert raw.endswith("\n\n") and raw.count("\n\n") == 2, raw
prime, ev = raw[:-2].split("\n\n")
pid, pdata = prime.split("\n")
assert pid.startswith("id: ") and pdata == "data: ", prime
name, eid, data = ev.split("\n")
assert name == "event: message" and eid.startswith("id: ") and eid != pid
r = json.loads(data[6:])
assert r["id"] == 3 and r["result"]["content"][0]["text"].startswith("called search with")
' "$T/callsse.body"
c listsse "$UM" -N "${JSON[@]}" "${ACC[@]}" "${S[@]}" -d "$LIST"
PRIME=$(sed -n '1s/^id: //p' "$T/listsse.body")
check "tools/list SSE: primed ($PRIME), the answer in an event: message" bash -c \
        "[ -n '$PRIME' ] && grep -q '^data: {.*\"tools\"' '$T/listsse.body'"
c replay "$UM" -N -H "Accept: text/event-stream" "${S[@]}" -H "Last-Event-ID: $PRIME" --max-time 1
check "GET with Last-Event-ID: the tools/list answer is replayed, then the stream is held" bash -c \
        "[ \"\$(cat '$T/replay.rc')\" = 28 ] && grep -q '^data: {.*delete_everything' '$T/replay.body' && grep -q notifications/message '$T/replay.body'"
c calldel "$UM" "${JSON[@]}" "${ACC[@]}" "${S[@]}" \
        -d '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"delete_everything","arguments":{"confirm":true}}}'
check "record: session id, rpc_methods, tool_calls" rec "$M" calldel \
        'r["session_id"] == "'"$SID"'" and r["rpc_methods"] == ["tools/call"] and r["tool_calls"] == ["delete_everything"] and r["status"] == 200 and r["streamed"]'
check "record: initialize shows the issued session id" rec "$M" init 'r["issued_session_id"] == "'"$SID"'" and r["session_id"] is None'
c unk "$UM" "${JSON[@]}" "${ACC[@]}" "${S[@]}" -d '{"jsonrpc":"2.0","id":5,"method":"resources/list"}'
check "unknown method: JSON-RPC error -32601" py 'd["error"]["code"] == -32601 and d["id"] == 5' "$T/unk.body"
c batch "$UM" "${JSON[@]}" -H "Accept: application/json" "${S[@]}" -d '[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},'"$LIST"']'
check "batch: two responses in an array" py '[r["id"] for r in d] == [6, 2]' "$T/batch.body"
c mfail "$UM" "${JSON[@]}" "${ACC[@]}" "${S[@]}" -H "X-Fake-Mode: fail" -d "$LIST"
check "MCP fail mode: 500" code mfail 500

c get "$UM" -N -H "Accept: text/event-stream" "${S[@]}" --max-time 1
check "GET stream (--sse): notification received, held open" bash -c \
        "[ \"\$(cat '$T/get.rc')\" = 28 ] && grep -q 'event: message' '$T/get.body' && grep -q notifications/message '$T/get.body'"
check "record: GET stream, client_went_away true" rec "$M" get 'r["client_went_away"] is True and r["streamed"]' 3

c del "$UM" -X DELETE "${S[@]}"
check "DELETE: 200" code del 200
c afterdel "$UM" "${JSON[@]}" "${ACC[@]}" "${S[@]}" -d "$LIST"
check "after DELETE the session is gone: 404" code afterdel 404

# without --sse: JSON even if SSE is accepted; GET → 405; over a Unix socket
MSOCK=$T/mcp.sock
if start MU fake-mcp.py --unix "$MSOCK" --record "$T/mcpu.jsonl"; then
        c uinit http://fake/mcp --unix-socket "$MSOCK" "${JSON[@]}" "${ACC[@]}" -d "$INIT"
        USID=$(sed -n 's/^mcp-session-id: *\([^[:space:]]*\).*/\1/Ip' "$T/uinit.hdr")
        check "MCP over a Unix socket: initialize" bash -c "[ \"\$(cat '$T/uinit.code')\" = 200 ] && [ -n '$USID' ]"
        c ucall http://fake/mcp --unix-socket "$MSOCK" "${JSON[@]}" "${ACC[@]}" -H "Mcp-Session-Id: $USID" -d "$CALL"
        check "without --sse: tools/call answered as JSON although SSE is accepted" bash -c \
                "grep -qi '^content-type: application/json' '$T/ucall.hdr' && grep -q 'called search' '$T/ucall.body'"
        c uget http://fake/mcp --unix-socket "$MSOCK" -H "Accept: text/event-stream" -H "Mcp-Session-Id: $USID"
        check "without --sse: GET → 405" code uget 405
else
        notok "fake-mcp on a Unix socket did not start"
        diag "$(cat "$T/MU.err")"
fi

# --- fake-mcp.py --go-keys: keys read as Go's encoding/json reads them ---
MG=$T/mcpgo.jsonl
if start MG fake-mcp.py --port 0 --go-keys --record "$MG"; then
        UG=http://127.0.0.1:$PORT_MG/mcp
        c ginit "$UG" "${JSON[@]}" "${ACC[@]}" -d "$INIT"
        GSID=$(sed -n 's/^mcp-session-id: *\([^[:space:]]*\).*/\1/Ip' "$T/ginit.hdr")
        c gname "$UG" "${JSON[@]}" "${ACC[@]}" -H "Mcp-Session-Id: $GSID" \
                -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","Name":"delete_everything"}}'
        check "--go-keys: of \"name\" and \"Name\" the last is called" \
                py 'd["result"]["content"][0]["text"].startswith("called delete_everything")' "$T/gname.body"
        c gmethod "$UG" "${JSON[@]}" "${ACC[@]}" -H "Mcp-Session-Id: $GSID" \
                -d '{"jsonrpc":"2.0","id":3,"method":"ping","Method":"tools/list"}'
        check "--go-keys: \"Method\" after \"method\" wins" py 'len(d["result"]["tools"]) == 3' "$T/gmethod.body"
        c gfold "$UG" "${JSON[@]}" "${ACC[@]}" -H "Mcp-Session-Id: $GSID" \
                -d '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search"},"param\u017f":{"name":"read_file"}}'
        check "--go-keys: \"paramſ\" is \"params\" (Unicode folding)" \
                py 'd["result"]["content"][0]["text"].startswith("called read_file")' "$T/gfold.body"
        c pinit "$UM" "${JSON[@]}" "${ACC[@]}" -d "$INIT"
        PSID=$(sed -n 's/^mcp-session-id: *\([^[:space:]]*\).*/\1/Ip' "$T/pinit.hdr")
        c gplain "$UM" "${JSON[@]}" -H "Accept: application/json" -H "Mcp-Session-Id: $PSID" \
                -d '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","Name":"delete_everything"}}'
        check "without --go-keys keys match exactly" \
                py 'd["result"]["content"][0]["text"].startswith("called search")' "$T/gplain.body"
else
        notok "fake-mcp --go-keys did not start"
fi

# --- raw-upstream.py: the bytes on the wire ---
RW=$T/raw.jsonl
if start RW raw-upstream.py --port 0 --record "$RW"; then
        c rawone "http://127.0.0.1:$PORT_RW/in" -H "User-Agent: tab	marker"
        check "raw-upstream: 200 {\"ok\":true}" bash -c "[ \"\$(cat '$T/rawone.code')\" = 200 ] && grep -q '\"ok\":true' '$T/rawone.body'"
        check "raw-upstream: the record holds the request's bytes as sent" \
                python3 -c 'import json, sys; rs = [json.loads(l) for l in open(sys.argv[1])]; sys.exit(not any("X-Test-Id: rawone\r\n" in r["raw"] and "User-Agent: tab\tmarker\r\n" in r["raw"] for r in rs))' "$RW"
        answer=$(python3 - "$PORT_RW" <<'PYEOF'
import socket, sys
for path in ("bad-header", "folded-header"):
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    c.sendall(b"GET /x/" + path.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = c.recv(4096)
        if not chunk:
            break
        data += chunk
    c.close()
    print(path, b"X-Request-Id: a\rSet-Cookie" in data, b"X-Request-Id: a\r\n Set-Cookie" in data)
PYEOF
)
        check "raw-upstream: /bad-header answers a bare CR, /folded-header a folded line ($(echo $answer))" \
                [ "$(echo $answer)" = "bad-header True False folded-header False True" ]
else
        notok "raw-upstream.py did not start"
fi

# --- the lifetime ends the Unix-socket fake-openai (started with --lifetime 2) ---
if [ -n "${PID_X:-}" ]; then
        for ((i = 0; i < 80; i++)); do
                kill -0 "$PID_X" 2>/dev/null || break
                sleep 0.05
        done
        check "lifetime: the server exited by itself" status_is 1 kill -0 "$PID_X" 2>/dev/null
        wait "$PID_X"
        check "lifetime: exit status 0" [ $? = 0 ]
        check "lifetime: the Unix socket was removed" [ ! -e "$SOCK" ]
        wait "$CURL_PID" 2>/dev/null
        check "lifetime: the stalled stream was ended, recorded as client_went_away false" \
                rec "$T/unix.jsonl" unixstall 'r["client_went_away"] is False and r["events_sent"] == 1 and r["mode"] == "stall"'
fi

tap_done
[ "$TAP_FAILED" = 0 ]
