#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Tries the broker over the shim's loopback relay; records what happened in /output.
url=${CLOISTER_BROKER_URL:-http://127.0.0.1:7800}
echo "broker_url=${CLOISTER_BROKER_URL:-unset}" > /output/env
curl -s -o /output/upstream.body -w '%{http_code}\n' "$url/upstream/issues/v1/models" > /output/upstream.code 2>/output/upstream.err
curl -s -o /output/llm.body -w '%{http_code}\n' "$url/v1/models" > /output/llm.code 2>/output/llm.err
exit 0
