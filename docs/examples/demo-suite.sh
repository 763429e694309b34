#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the throwaway systemd of demo.sh: sets up an example upstream and the broker as
# an admin would, installs the example role, starts it with systemctl and shows what the
# agent printed and the broker's audit record.
set -u
. "$PAYLOAD/tap.sh"
mkdir -p "$CLOISTER_CFG/roles" "$CLOISTER_CFG/cloister.conf.d" /etc/credstore

# A local example upstream standing in for Ollama, vLLM or a hosted API (loopback only).
coproc UP { exec python3 "$PAYLOAD/extra/fake-openai.py" --port 0 --lifetime 120 --require-auth sk-demo-key; }
read -r _ port <&"${UP[0]}"
echo -n sk-demo-key > /etc/credstore/llm-key
cat > "$CLOISTER_CFG/cloister.conf.d/50-llm.conf" <<EOF2
[LLM]
Endpoint=http://127.0.0.1:$port/v1
Model=example-model
APIKeyCredential=llm-key
EOF2
# The example role as shipped: its agent is the installed /usr/share/cloister/examples/what-do-i-see.sh.
cp "$PAYLOAD/extra/reviewer.role" "$CLOISTER_CFG/roles/reviewer.role"
diag "\$ cat /etc/cloister/cloister.conf.d/50-llm.conf"
diag "$(cat "$CLOISTER_CFG/cloister.conf.d/50-llm.conf")"
diag "\$ cat /etc/cloister/roles/reviewer.role"
diag "$(grep -v '^#' "$CLOISTER_CFG/roles/reviewer.role")"
systemctl daemon-reload
systemctl start cloister-broker.socket
diag "\$ systemctl start agent@reviewer"
systemctl start --wait agent@reviewer.service
diag "\$ journalctl -u agent@reviewer -o cat"
diag "$(journalctl -b -u agent@reviewer.service -o cat)"
diag "\$ journalctl MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b -o verbose   (the broker's audit record)"
diag "$(journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b -o verbose | grep -E '^    (MESSAGE|CLOISTER_[A-Z_]*)=')"
diag "\$ cat /var/lib/cloister-output/reviewer/result.txt"
diag "$(cat /var/lib/cloister-output/reviewer/result.txt 2>&1)"
check "the sealed agent ran and wrote its result" grep -q "hello from the host" /var/lib/cloister-output/reviewer/result.txt
check "it saw only lo" bash -c 'journalctl -b -u agent@reviewer.service -o cat | grep -qE "^network devices: lo ?$"'
check "it got an answer through the broker" grep -q "example-model: echo: review my patch" /var/lib/cloister-output/reviewer/result.txt
check "the broker recorded the call for role reviewer" bash -c \
        'journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b CLOISTER_ROLE=reviewer -o cat | grep -q "→ 200"'
tap_done
