#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# An agent written against OPENAI_BASE_URL only, as an unmodified OpenAI client would be:
# one plain and one streamed chat completion, results into /output.
import json, os, urllib.request

base = os.environ["OPENAI_BASE_URL"]
key = os.environ["OPENAI_API_KEY"]
out = {}

def post(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer " + key})
    return urllib.request.urlopen(req, timeout=30)

with post("/chat/completions", {"model": "whatever-the-agent-asks",
                                "messages": [{"role": "user", "content": "hello broker"}]}) as r:
    answer = json.load(r)
    out["plain"] = answer["choices"][0]["message"]["content"]
    out["plain_model"] = answer.get("model")

chunks = []
with post("/chat/completions", {"model": "x", "stream": True,
                                "messages": [{"role": "user", "content": "stream please"}]}) as r:
    out["stream_content_type"] = r.headers.get("Content-Type")
    for line in r:
        line = line.decode().rstrip("\r\n")
        if line.startswith("data: ") and line != "data: [DONE]":
            chunk = json.loads(line[6:])
            if chunk.get("choices"):
                chunks.append(chunk["choices"][0].get("delta", {}).get("content") or "")
            elif chunk.get("usage") is not None:
                out["saw_usage_chunk"] = True
        if line == "data: [DONE]":
            out["saw_done"] = True
out["stream"] = "".join(chunks)
out["env_model"] = os.environ.get("CLOISTER_LLM_MODEL")
with open("/output/result.json", "w") as f:
    json.dump(out, f)
