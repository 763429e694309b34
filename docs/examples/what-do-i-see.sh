#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# An example agent: reports what the sandbox lets it see and do, asks the LLM through the
# broker as any OpenAI client would (OPENAI_BASE_URL), and writes its result.
status() { sed -n "s/^$1:[[:space:]]*//p" /proc/self/status; }
echo "I run as uid $(id -u), role $CLOISTER_ROLE, network mode $CLOISTER_NETWORK"
echo "network devices: $(sed -n '3,$s/^ *\([^:]*\):.*/\1/p' /proc/self/net/dev | tr '\n' ' ')"
touch /i-was-here 2>/dev/null && echo "/ is WRITABLE" || echo "/ is read-only"
echo "effective capabilities: $(status CapEff), bounding set: $(status CapBnd)"
echo "no_new_privs: $(status NoNewPrivs), seccomp mode: $(status Seccomp)"
if (exec 3<>/dev/tcp/192.0.2.1/443) 2>/dev/null; then echo "reached the outside"; else echo "no way out: no route to anywhere"; fi
echo "under /run: $(find /run -mindepth 1 2>/dev/null | tr '\n' ' ')"
echo "OPENAI_BASE_URL=$OPENAI_BASE_URL OPENAI_API_KEY=$OPENAI_API_KEY (a placeholder)"
if [ -z "${OPENAI_BASE_URL:-}" ]; then
        answer="(no broker in network mode $CLOISTER_NETWORK: nothing to ask)"
else
answer=$(python3 - <<'PY'
import json, os, urllib.request
req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
      data=json.dumps({"model": "any", "messages": [{"role": "user", "content": "review my patch"}]}).encode(),
      headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
r = json.load(urllib.request.urlopen(req, timeout=20))
print(r["model"] + ": " + r["choices"][0]["message"]["content"])
PY
)
fi
echo "the LLM (through the broker) says: $answer"
echo "${GREETING:-hello}; $answer" > /output/result.txt && echo "wrote /output/result.txt"
