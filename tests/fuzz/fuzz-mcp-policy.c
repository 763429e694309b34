/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the MCP tool allow-list (cloister-broker(8)). The first byte picks the options. A
 * tools/call of a tool not allowed is never passed on; a batch holding tools/call or
 * tools/list is refused. What comes back, as JSON or as an SSE stream cut where the first
 * byte says, lists only allowed tools however "result", "tools" and "name" are spelt; what
 * the filter passes passes again unchanged; where the stream is cut changes nothing. And
 * what passes means the same to a server that reads keys ignoring case (Go's encoding/json,
 * the last of "Method" and "method" winning): it names no other method or tool. */
#include <json-c/json.h>
#include <strings.h>

#include "fuzz-json.h"
#include "fuzz-util.h"
#include "mcp-policy.h"
#include "openai-body.h"
#include "sse-filter.h"

static char *allowed[] = { (char *) "search", (char *) "read-file", NULL };

static const char *str_member(struct json_object *o, const char *key) {
        struct json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
                json_object_get_string(v) : NULL;
}

/* No message in the JSON text `json` lists a tool not allowed, under any spelling of
 * "result" and "tools" a client might read. */
static void check_listed(const char *json, size_t n) {
        _cleanup_free_ char *copy = strndup(json, n);       /* json is not NUL-terminated */
        struct json_object *o = copy ? json_tokener_parse(copy) : NULL;

        if (!copy)
                abort();
        fuzz_assert(o, "what passed is not JSON: %s", copy);
        for (size_t m = 0; m < (json_object_is_type(o, json_type_array) ? json_object_array_length(o) : 1); m++) {
                struct json_object *msg = json_object_is_type(o, json_type_array) ? json_object_array_get_idx(o, m) : o;
                if (!json_object_is_type(msg, json_type_object))
                        continue;
                json_object_object_foreach(msg, key, result) {
                        if (strcasecmp(key, "result") != 0 || !json_object_is_type(result, json_type_object))
                                continue;
                        json_object_object_foreach(result, k, tools) {
                                if (strcasecmp(k, "tools") != 0)
                                        continue;
                                fuzz_assert(json_object_is_type(tools, json_type_array), "tools is not a list");
                                for (size_t i = 0; i < json_object_array_length(tools); i++) {
                                        struct json_object *t = json_object_array_get_idx(tools, i);
                                        json_object_object_foreach(t, nk, name)
                                                fuzz_assert(strcasecmp(nk, "name") != 0 ||
                                                            (streq(nk, "name") && json_object_is_type(name, json_type_string) &&
                                                             mcp_tool_allowed(allowed, json_object_get_string(name))),
                                                            "tool %s listed", json_object_to_json_string(t));
                                }
                        }
                }
        }
        json_object_put(o);
}

/* As an SseRewrite over what the filter let through: every event whose data is JSON lists only
 * allowed tools; a second pass changes nothing. */
static int check_event(const char *data, size_t n, void *userdata, char **ret, size_t *ret_n) {
        _cleanup_free_ char *again = NULL;
        size_t again_n;
        int r = mcp_sse_rewrite(data, n, allowed, &again, &again_n);

        fuzz_assert(r >= 0, "an event that passed cannot be read again: %.*s", (int) n, data);
        if (r > 0) {
                fuzz_assert(again_n == n && memcmp(again, data, n) == 0, "filtering twice changes the event: %.*s", (int) n, data);
                check_listed(data, n);
        }
        return 0;
}

static int run_sse(const char *data, size_t size, size_t split, char **out, size_t *n) {
        _cleanup_(sse_filter_freep) SseFilter *f = sse_filter_new_rewrite(mcp_sse_rewrite, allowed);
        int r;

        if (!f)
                abort();
        *out = NULL;
        *n = 0;
        r = sse_filter_feed(f, data, split, out, n);
        if (r >= 0)
                r = sse_filter_feed(f, data + split, size - split, out, n);
        if (r >= 0)
                r = sse_filter_finish(f, out, n);
        return r;
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
        size_t n = 0, split;
        bool sse;

        if (size < 1)
                return 0;
        sse = data[0] & 1;
        split = (size_t) (data[0] >> 1);
        data++, size--;
        split = size ? split % (size + 1) : 0;

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

        if (!sse) {
                int r = mcp_answer_filter((const char *) data, size, allowed, &out, &n);
                if (r > 0) {
                        fuzz_assert(out && strlen(out) == n && !strpbrk(out, "\r\n"), "filter output length, on one line");
                        check_listed(out, n);
                } else if (r == 0)
                        check_listed((const char *) data, size);
                return 0;
        }

        _cleanup_free_ char *cut = NULL, *checked = NULL;
        size_t n_cut, n_checked;
        int r = run_sse((const char *) data, size, size, &out, &n), r_cut = run_sse((const char *) data, size, split, &cut, &n_cut);

        fuzz_assert(r == r_cut && n == n_cut && (n == 0 || memcmp(out, cut, n) == 0),
                    "the output depends on where the stream was cut (at %zu)", split);
        _cleanup_(sse_filter_freep) SseFilter *check = sse_filter_new_rewrite(check_event, NULL);
        if (!check)
                abort();
        checked = NULL;
        n_checked = 0;
        fuzz_assert(sse_filter_feed(check, out ?: "", n, &checked, &n_checked) >= 0 &&
                    sse_filter_finish(check, &checked, &n_checked) >= 0, "checking the output");
        fuzz_assert(n_checked == n && (n == 0 || memcmp(checked, out, n) == 0), "the checker changed the stream");
        return 0;
}
