/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-c/json.h>
#include <limits.h>
#include <strings.h>
#include <stdio.h>

#include "json-keys.h"
#include "json-strict.h"
#include "log.h"
#include "mcp-policy.h"

static struct json_object *json_object_put_null(struct json_object *o) {
        json_object_put(o);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put_null);

/* One JSON value in s[0..n), nothing but whitespace after it; NULL if not. */
static struct json_object *parse_json(const char *s, size_t n) {
        struct json_object *o = NULL;

        return json_parse_strict(s, n, JSON_TOKENER_DEFAULT_DEPTH, &o) < 0 ? NULL : o;
}

bool mcp_tool_allowed(char * const *allowed, const char *tool) {
        return tool && (strv_contains(allowed, "*") || strv_contains(allowed, tool));
}

static const char *method_of(struct json_object *req) {
        struct json_object *m;
        return json_object_object_get_ex(req, "method", &m) && json_object_is_type(m, json_type_string) ?
                json_object_get_string(m) : NULL;
}

static struct json_object *rpc_error(struct json_object *req, int code, const char *message) {
        struct json_object *e = json_object_new_object(), *err = json_object_new_object(), *id = NULL;

        json_object_object_add(e, "jsonrpc", json_object_new_string("2.0"));
        if (json_object_object_get_ex(req, "id", &id))
                json_object_object_add(e, "id", json_object_get(id));
        else
                json_object_object_add(e, "id", NULL);
        json_object_object_add(err, "code", json_object_new_int(code));
        json_object_object_add(err, "message", json_object_new_string(message));
        json_object_object_add(e, "error", err);
        return e;
}

static char *to_string(struct json_object *o) {
        return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* The members the policy reads: a server that reads "Method" or "paramſ" as "method" and
 * "params", or keeps the first of two "name"s, must not see another call than was checked. */
static const JsonKeyRule mcp_params_rule = {
        .keys = (const char * const[]) { "name", NULL },
};
static const JsonKeyRule mcp_request_rule = {
        .keys = (const char * const[]) { "jsonrpc", "id", "method", "params", NULL },
        .nested = "params",
        .nested_rule = &mcp_params_rule,
};

int mcp_request_check(const char *body, size_t n, char * const *allowed, McpRequestVerdict *ret,
                      char **ret_error) {
        _cleanup_(json_object_put_nullp) struct json_object *o = parse_json(body, n);
        const char *method;
        int r;

        *ret_error = NULL;
        if (!o)
                return -EBADMSG;
        r = json_keys_check(body, n, &mcp_request_rule);
        if (r < 0)
                return r;

        if (json_object_is_type(o, json_type_array)) {
                bool refuse = false;
                size_t k = json_object_array_length(o);
                for (size_t i = 0; i < k; i++) {
                        const char *m = method_of(json_object_array_get_idx(o, i));
                        if (m && (streq(m, "tools/call") || streq(m, "tools/list")))
                                refuse = true;
                }
                if (!refuse) {
                        *ret = MCP_REQUEST_PASS;
                        return 0;
                }
                _cleanup_(json_object_put_nullp) struct json_object *errors = json_object_new_array();
                for (size_t i = 0; i < k; i++)
                        json_object_array_add(errors, rpc_error(json_object_array_get_idx(o, i), -32600,
                                              "cloister: batches with tools/list or tools/call are not allowed"));
                *ret_error = to_string(errors);
                *ret = MCP_REQUEST_REFUSED;
                return *ret_error ? 0 : -ENOMEM;
        }
        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;

        method = method_of(o);
        if (method && streq(method, "tools/list")) {
                *ret = MCP_REQUEST_TOOLS_LIST;
                return 0;
        }
        if (method && streq(method, "tools/call")) {
                struct json_object *params, *name;
                const char *tool = json_object_object_get_ex(o, "params", &params) &&
                                   json_object_object_get_ex(params, "name", &name) &&
                                   json_object_is_type(name, json_type_string) ? json_object_get_string(name) : NULL;
                if (!mcp_tool_allowed(allowed, tool)) {
                        _cleanup_(json_object_put_nullp) struct json_object *e =
                                rpc_error(o, -32601, "cloister: this role may not call this tool");
                        *ret_error = to_string(e);
                        *ret = MCP_REQUEST_REFUSED;
                        return *ret_error ? 0 : -ENOMEM;
                }
        }
        *ret = MCP_REQUEST_PASS;
        return 0;
}

/* Revisions of MCP whose Streamable HTTP transport the broker relays and filters: the current
 * one, the one before it, and the first with Streamable HTTP (whose clients send no
 * MCP-Protocol-Version header). 2024-11-05's HTTP+SSE transport is not relayed. */
static const char *const protocol_versions[] = {
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
};

bool mcp_protocol_version_supported(const char *v) {
        for (size_t i = 0; i < ELEMENTSOF(protocol_versions); i++)
                if (streq_ptr(v, protocol_versions[i]))
                        return true;
        return false;
}

/* A tool listed to the agent: an object with one member named "name" in any case (a client may
 * match member names without regard to case, as Go's encoding/json does), spelt exactly so, a
 * string, and allowed. */
static bool tool_listable(struct json_object *t, char * const *allowed) {
        struct json_object *name = NULL;

        if (!json_object_is_type(t, json_type_object))
                return false;
        json_object_object_foreach(t, key, v) {
                if (strcasecmp(key, "name") != 0)
                        continue;
                if (name || !streq(key, "name"))
                        return false;
                name = v;
        }
        return json_object_is_type(name, json_type_string) && mcp_tool_allowed(allowed, json_object_get_string(name));
}

/* Filters every member of a response's result named "tools" in any case down to the tools
 * allowed (what is not an array becomes an empty one); 1 if the message has such a member. */
static int filter_message(struct json_object *o, char * const *allowed) {
        int found = 0;

        if (!json_object_is_type(o, json_type_object))
                return 0;
        json_object_object_foreach(o, key, result) {
                if (strcasecmp(key, "result") != 0 || !json_object_is_type(result, json_type_object))
                        continue;
                json_object_object_foreach(result, k, tools) {
                        struct json_object *kept;

                        if (strcasecmp(k, "tools") != 0)
                                continue;
                        found = 1;
                        kept = json_object_new_array();
                        if (!kept)
                                return -ENOMEM;
                        for (size_t i = 0; json_object_is_type(tools, json_type_array) &&
                                           i < json_object_array_length(tools); i++) {
                                struct json_object *t = json_object_array_get_idx(tools, i);
                                if (tool_listable(t, allowed))
                                        json_object_array_add(kept, json_object_get(t));
                        }
                        if (json_object_object_add(result, k, kept) < 0) {     /* replaces `tools` in place */
                                json_object_put(kept);
                                return -ENOMEM;
                        }
                }
        }
        return found;
}

int mcp_answer_filter(const char *json, size_t n, char * const *allowed, char **ret, size_t *ret_n) {
        _cleanup_(json_object_put_nullp) struct json_object *o = parse_json(json, n);
        int found = 0;

        *ret = NULL;
        *ret_n = 0;
        if (!o)
                return -EBADMSG;
        if (json_object_is_type(o, json_type_array))
                for (size_t i = 0; i < json_object_array_length(o) && found >= 0; i++) {
                        int r = filter_message(json_object_array_get_idx(o, i), allowed);
                        found = r < 0 ? r : found | r;
                }
        else
                found = filter_message(o, allowed);
        if (found <= 0)
                return found;
        *ret = to_string(o);
        if (!*ret)
                return -ENOMEM;
        *ret_n = strlen(*ret);
        return 1;
}

int mcp_sse_rewrite(const char *data, size_t n, void *userdata, char **ret, size_t *ret_n) {
        if (strspn(data, " \t\r\n") == n)
                return 0;       /* whitespace: no message in it (a client cannot parse it either) */
        return mcp_answer_filter(data, n, userdata, ret, ret_n);
}
