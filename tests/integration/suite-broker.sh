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
URL=http://127.0.0.1:$UP_PORT
EOF2

role() { # NAME MODE EXEC [EXTRA…]
        local name=$1 mode=$2 exec=$3; shift 3
        mkdir -p "/srv/out/$name" && chmod 0777 "/srv/out/$name" && rm -f "/srv/out/$name"/*
        {
                printf '[Role]\nExec=%s\n[Sandbox]\nNetwork=%s\nMemory=512M\nTimeout=2min\nOutput=/srv/out/%s\n' "$exec" "$mode" "$name"
                for l in "$@"; do echo "$l"; done
        } > "$CFG/roles/$name.role"
}
role chat daemon-only "$A/openai-client.py"
role curler daemon-only "$A/broker-curl.sh"
role sealed none "$A/broker-curl.sh"
role granted daemon-only "$A/broker-curl.sh" "[Broker]" "Allow=issues"
systemctl daemon-reload
systemctl start cloister-broker.socket

# --- an unmodified OpenAI client in a sealed agent ------------------------------------------
systemctl start --wait agent@chat.service
r=/srv/out/chat/result.json
[ -s "$r" ] || diag "$(journalctl -b -u agent@chat.service | grep -v "^.*cloister-shim\[[0-9]*\]:  " | head -20; journalctl -b -u cloister-broker.service -u cloister-broker.socket --no-pager | tail -30; systemctl status cloister-broker.socket cloister-broker.service --no-pager | head -30; ls -la /run/cloister)"
jq() { python3 -c "import json,sys; d=json.load(open('$r')); print(d.get('$1'))"; }
check "client: plain answer through the broker ($(jq plain))" [ "$(jq plain)" = "echo: hello broker" ]
check "client: the role's Model= override reached the upstream ($(jq plain_model))" [ "$(jq plain_model)" = "qwen3.6:35b" ]
check "client: streamed answer ($(jq stream))" [ -n "$(jq stream)" ] && [ "$(jq stream)" != None ]
check "client: the stream is SSE ($(jq stream_content_type))" bash -c "[[ '$(jq stream_content_type)' == text/event-stream* ]]"
check "client: [DONE] passed through" [ "$(jq saw_done)" = True ]
check "client: the usage chunk the broker asked for is not shown to a caller that did not ask" [ "$(jq saw_usage_chunk)" = None ]
check "client: CLOISTER_LLM_MODEL ($(jq env_model))" [ "$(jq env_model)" = "qwen3.6:35b" ]
check "upstream: saw the injected key, never the agent's placeholder" bash -c \
        '! grep -q cloister-broker-holds-the-key /srv/upstream.jsonl && grep -q "Bearer sk-test-secret" /srv/upstream.jsonl'
check "upstream: asked for stream usage (stream_options.include_usage)" grep -q '"include_usage": true' /srv/upstream.jsonl
check "audit: one record per request, with the role" bash -c \
        '[ "$(journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b CLOISTER_ROLE=chat -o cat | wc -l)" = 2 ]'
check "audit: tokens counted, also from the stream" bash -c \
        'journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b CLOISTER_ROLE=chat -o verbose | grep -q "CLOISTER_COMPLETION_TOKENS=[1-9]"'
diag "$(journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b -o cat | head -5)"

tap_done
