/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "strv.h"

/* The per-role MCP tool allow-list (§8, [Broker] AllowTool=UPSTREAM:TOOL): the broker
 * refuses tools/call of a tool not allowed, with a JSON-RPC error and without contacting
 * the upstream, and filters tools/list answers down to the allowed tools. `allowed` holds
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

/* Filters a tools/list answer: a JSON object, or an SSE stream whose data: events are JSON
 * (each "result": {"tools": [...]} loses the tools not allowed). Comments and other
 * events pass unchanged. */
int mcp_tools_list_filter(const char *body, size_t n, bool sse, char * const *allowed,
                          char **ret, size_t *ret_n);
