/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the MCP tool allow-list (§8). The first byte picks the options. A
 * tools/call of a tool not allowed is never passed on; a batch holding tools/call or
 * tools/list is refused; a filtered tools/list answer lists only allowed tools. And what
 * passes means the same to a server that reads keys ignoring case (Go's encoding/json, the
 * last of "Method" and "method" winning): it names no other method or tool. */
#include <json-c/json.h>

#include "fuzz-json.h"
#include "fuzz-util.h"
#include "mcp-policy.h"
#include "openai-body.h"

static char *allowed[] = { (char *) "search", (char *) "read-file", NULL };

static const char *str_member(struct json_object *o, const char *key) {
        struct json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
                json_object_get_string(v) : NULL;
}

static void check_tools(const char *json, size_t n) {
        struct json_object *o = json_tokener_parse(json), *result, *tools;

        fuzz_assert(o || streq(json, "null"), "filtered answer is not JSON: %s", json);
        if (json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "result", &result) &&
            json_object_object_get_ex(result, "tools", &tools) && json_object_is_type(tools, json_type_array))
                for (size_t i = 0; i < json_object_array_length(tools); i++) {
                        struct json_object *name;
                        struct json_object *t = json_object_array_get_idx(tools, i);
                        fuzz_assert(json_object_object_get_ex(t, "name", &name) &&
                                    mcp_tool_allowed(allowed, json_object_get_string(name)),
                                    "tool %s listed", json_object_to_json_string(t));
                }
        json_object_put(o);
}

static void check_case_blind(const uint8_t *data, size_t size, McpRequestVerdict v) {
        struct json_object *o = NULL, *m = NULL, *params = NULL, *name = NULL;
        const char *method;

        if (v != MCP_REQUEST_PASS || openai_json_parse_object((const char *) data, size, &o) < 0)
                return;
        method = json_get_case_blind(o, "method", &m) && json_object_is_type(m, json_type_string) ?
                json_object_get_string(m) : NULL;
        fuzz_assert(!streq_ptr(method, "tools/list"), "a case-blind server sees tools/list unfiltered");
        if (streq_ptr(method, "tools/call"))
                fuzz_assert(json_get_case_blind(o, "params", &params) &&
                            json_get_case_blind(params, "name", &name) &&
                            json_object_is_type(name, json_type_string) &&
                            mcp_tool_allowed(allowed, json_object_get_string(name)),
                            "a case-blind server calls a tool not allowed");
        json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *err = NULL, *out = NULL;
        McpRequestVerdict v;
        struct json_object *o = NULL, *params, *name;
        size_t n = 0;
        bool sse;

        if (size < 1)
                return 0;
        sse = data[0] & 1;
        data++, size--;

        if (mcp_request_check((const char *) data, size, allowed, &v, &err) >= 0) {
                fuzz_assert(v == MCP_REQUEST_PASS || v == MCP_REQUEST_TOOLS_LIST || v == MCP_REQUEST_REFUSED, "verdict %d", v);
                fuzz_assert((v == MCP_REQUEST_REFUSED) == !!err, "a refusal comes with its error");
                if (v == MCP_REQUEST_PASS && openai_json_parse_object((const char *) data, size, &o) >= 0) {
                        if (streq_ptr(str_member(o, "method"), "tools/call"))
                                fuzz_assert(json_object_object_get_ex(o, "params", &params) &&
                                            json_object_object_get_ex(params, "name", &name) &&
                                            json_object_is_type(name, json_type_string) &&
                                            mcp_tool_allowed(allowed, json_object_get_string(name)),
                                            "tools/call passes for a tool not allowed");
                        fuzz_assert(!streq_ptr(str_member(o, "method"), "tools/list"), "tools/list passes unfiltered");
                        json_object_put(o);
                }
                check_case_blind(data, size, v);
        }

        if (mcp_tools_list_filter((const char *) data, size, sse, allowed, &out, &n) >= 0) {
                fuzz_assert(out && strlen(out) == n, "filter output length");
                if (!sse)
                        check_tools(out, n);
                else
                        for (char *line = out, *next; line && *line; line = next) {
                                size_t l = strcspn(line, "\n");
                                next = line[l] ? line + l + 1 : NULL;
                                line[l] = 0;
                                if (startswith(line, "data: "))
                                        check_tools(line + 6, l - 6);
                        }
        }
        return 0;
}
