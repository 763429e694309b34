/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "strv.h"

/* The per-role MCP tool allow-list (cloister-broker(8), [Broker] AllowTool=UPSTREAM:TOOL): the broker
 * refuses tools/call of a tool not allowed, with a JSON-RPC error and without contacting
 * the upstream, and filters every tools/list result that comes back down to the allowed tools. `allowed` holds
 * the tool names allowed for this upstream; "*" allows all. */

bool mcp_tool_allowed(char * const *allowed, const char *tool);

typedef enum McpRequestVerdict {
        MCP_REQUEST_PASS,          /* forward as is */
        MCP_REQUEST_TOOLS_LIST,    /* forward, and filter the answer */
        MCP_REQUEST_REFUSED,       /* answer *ret_error (a JSON-RPC error) instead */
} McpRequestVerdict;

/* Looks at a JSON-RPC request body (an object, or a batch array). A batch that holds a
 * tools/call or tools/list is refused whole: one JSON-RPC error per request in it.
 * -EBADMSG if the body is not JSON-RPC at all; -ENOTUNIQ if a request object or its params
 * has keys that collide ignoring case, or a case variant of a key the policy reads
 * (json-keys.h): a server could read another method or tool than was checked. */
int mcp_request_check(const char *body, size_t n, char * const *allowed, McpRequestVerdict *ret,
                      char **ret_error);

/* Filters one JSON text from an MCP upstream on its way to the agent: a JSON-RPC message or a
 * batch of them, whatever the request was and whatever the transport (a POST's JSON answer,
 * an SSE event of a POST answer, of a GET stream, or replayed after Last-Event-ID). Every
 * response whose result has a member named "tools" (in any case: a tools/list result, or a
 * replay of one) loses the tools not allowed. Returns 0 if there is none (the text passes
 * byte for byte), 1 with *ret (re-serialised, *ret_n bytes, on one line) if there is, and
 * -EBADMSG if the text is not JSON (it is not passed on: fail closed). */
int mcp_answer_filter(const char *json, size_t n, char * const *allowed, char **ret, size_t *ret_n);

/* mcp_answer_filter() as an SseRewrite (sse-filter.h); userdata is `allowed`. Data that is only
 * whitespace passes. */
int mcp_sse_rewrite(const char *data, size_t n, void *userdata, char **ret, size_t *ret_n);

/* A value of the MCP-Protocol-Version header the broker relays: 2025-11-25, 2025-06-18 or
 * 2025-03-26. */
bool mcp_protocol_version_supported(const char *v);
