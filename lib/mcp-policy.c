/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>

#include "json-keys.h"
#include "log.h"
#include "mcp-policy.h"

static struct json_object *json_object_put_null(struct json_object *o) {
        json_object_put(o);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put_null);

/* One JSON value in s[0..n), nothing but whitespace after it. */
static struct json_object *parse_json(const char *s, size_t n) {
        struct json_tokener *tok = json_tokener_new();
        struct json_object *o;
        size_t end;

        if (!tok)
                return NULL;
        if (n > INT_MAX || memchr(s, 0, n)) {
                json_tokener_free(tok);
                return NULL;
        }
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, s, (int) n);
        end = json_tokener_get_parse_end(tok);
        if (o && json_tokener_get_error(tok) == json_tokener_success)
                for (; end < n; end++)
                        if (!strchr(" \t\r\n", s[end])) {
                                o = json_object_put_null(o);
                                break;
                        }
        if (json_tokener_get_error(tok) != json_tokener_success)
                o = json_object_put_null(o);
        json_tokener_free(tok);
        return o;
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

/* Drops the tools not allowed from o.result.tools; true if o was changed. */
static bool filter_result(struct json_object *o, char * const *allowed) {
        struct json_object *result, *tools, *kept;
        bool changed = false;

        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "result", &result) ||
            !json_object_object_get_ex(result, "tools", &tools) || !json_object_is_type(tools, json_type_array))
                return false;
        kept = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(tools); i++) {
                struct json_object *t = json_object_array_get_idx(tools, i), *name;
                const char *tool = json_object_object_get_ex(t, "name", &name) ? json_object_get_string(name) : NULL;
                if (mcp_tool_allowed(allowed, tool))
                        json_object_array_add(kept, json_object_get(t));
                else
                        changed = true;
        }
        json_object_object_add(result, "tools", kept);
        return changed;
}

static int filter_json(const char *body, size_t n, char * const *allowed, char **ret) {
        _cleanup_(json_object_put_nullp) struct json_object *o = parse_json(body, n);

        if (!o)
                return -EBADMSG;
        /* fail closed: whatever the shape, what leaves has been through the filter */
        filter_result(o, allowed);
        *ret = to_string(o);
        return *ret ? 0 : -ENOMEM;
}

int mcp_tools_list_filter(const char *body, size_t n, bool sse, char * const *allowed,
                          char **ret, size_t *ret_n) {
        _cleanup_free_ char *copy = NULL, *out = NULL;
        size_t out_n = 0;
        FILE *f;
        int r = 0;

        if (!sse) {
                r = filter_json(body, n, allowed, &out);
                if (r < 0)
                        return r;
                *ret_n = strlen(out);
                *ret = TAKE_PTR(out);
                return 0;
        }
        /* SSE: line by line; a "data:" line holding JSON is filtered and re-serialised */
        copy = strndup(body, n);
        f = open_memstream(&out, &out_n);
        if (!copy || !f) {
                if (f)
                        fclose(f);
                return -ENOMEM;
        }
        for (char *line = copy, *next; line && *line && r >= 0; line = next) {
                size_t l = strcspn(line, "\n");
                const char *data;
                next = line[l] ? line + l + 1 : NULL;
                line[l] = 0;
                if (l > 0 && line[l - 1] == '\r')
                        line[l - 1] = 0;
                data = startswith(line, "data:");
                if (data) {
                        _cleanup_free_ char *filtered = NULL;
                        data += *data == ' ';
                        if (filter_json(data, strlen(data), allowed, &filtered) >= 0)
                                fprintf(f, "data: %s\n", filtered);
                        else
                                r = -EBADMSG; /* an unparsable tools/list event is not passed on */
                } else
                        fprintf(f, "%s\n", line);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        if (r < 0)
                return r;
        *ret_n = out_n;
        *ret = TAKE_PTR(out);
        return 0;
}
