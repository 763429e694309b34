/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "mcp-policy.h"
#include "tap.h"

static char *allowed_search[] = { (char *) "search", NULL };
static char *allowed_all[] = { (char *) "*", NULL };
static char *allowed_none[] = { NULL };

static void check(const char *body, char **allowed, McpRequestVerdict expected, const char *error_has,
                  const char *what) {
        McpRequestVerdict v = MCP_REQUEST_PASS;
        char *error = NULL;
        int r = mcp_request_check(body, strlen(body), allowed, &v, &error);

        is_int(r, 0, "%s: accepted as JSON-RPC", what);
        is_int(v, expected, "%s: verdict", what);
        if (error_has)
                like(error ?: "", error_has, "%s: the error", what);
        else
                ok(!error, "%s: no error body", what);
        free(error);
}

static void test_requests(void) {
        check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}", allowed_none,
              MCP_REQUEST_PASS, NULL, "initialize passes");
        check("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", allowed_none,
              MCP_REQUEST_TOOLS_LIST, NULL, "tools/list is filtered");
        check("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}", allowed_search,
              MCP_REQUEST_PASS, NULL, "an allowed tools/call passes");
        check("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}", allowed_search,
              MCP_REQUEST_REFUSED, "\"id\":4", "a tools/call not allowed is refused with its id");
        check("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}", allowed_search,
              MCP_REQUEST_REFUSED, "-32601", "the refusal is a JSON-RPC error");
        check("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}", allowed_all,
              MCP_REQUEST_PASS, NULL, "\"*\" allows every tool");
        check("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{}}", allowed_all,
              MCP_REQUEST_REFUSED, "-32601", "a tools/call without a name is refused even with \"*\"");
        check("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}", allowed_none,
              MCP_REQUEST_REFUSED, "-32601", "no AllowTool=: nothing may be called");
        check("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}]",
              allowed_search, MCP_REQUEST_REFUSED, "\"id\":2", "a batch with tools/call is refused, one error per request");
        check("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", allowed_none, MCP_REQUEST_PASS, NULL,
              "a batch without tools passes");

        McpRequestVerdict v;
        char *e = NULL;
        is_int(mcp_request_check("{not json", 9, allowed_all, &v, &e), -EBADMSG, "malformed JSON is refused");
        is_int(mcp_request_check("{\"method\":\"tools/list\"} x", 25, allowed_all, &v, &e), -EBADMSG,
               "trailing garbage is refused");
        is_int(mcp_request_check("\"a string\"", 10, allowed_all, &v, &e), -EBADMSG, "a JSON string is not JSON-RPC");
}

/* What the policy read must be what the server reads: servers that match keys ignoring case
 * (Go's encoding/json, with Unicode folding) or keep the first of two keys must not see
 * another method or tool. */
static void test_ambiguous_keys(void) {
        static const char *const bad[] = {
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"Name\":\"rm\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\",\"name\":\"search\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"Method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"METHOD\":\"tools/list\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"Method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"Params\":{\"name\":\"rm\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"NAME\":\"rm\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"},\"param\xc5\xbf\":{\"name\":\"rm\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"\\u004eame\":\"rm\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"\\u006dethod\":\"tools/call\",\"params\":{\"name\":\"rm\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"xx\":1,\"XX\":2}",
                "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"Method\":\"tools/call\"}]",
                "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"name\":1,\"Name\":2}}]",
        };
        McpRequestVerdict v;
        char *e = NULL;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                is_int(mcp_request_check(bad[i], strlen(bad[i]), allowed_all, &v, &e), -ENOTUNIQ,
                       "ambiguous request #%zu is refused: %s", i, bad[i]);
                ok(!e, "ambiguous request #%zu: no error body of the policy's", i);
        }

        /* deeper than the policy reads, and keys that are merely similar, pass */
        check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"q\":1,\"Q\":2,\"q\":3}}}",
              allowed_search, MCP_REQUEST_PASS, NULL, "tool arguments are the tool's business");
        check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\",\"clientInfo\":{\"name\":\"a\",\"Name\":\"b\"}}}",
              allowed_none, MCP_REQUEST_PASS, NULL, "camelCase keys and nested objects pass");
        check("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"Method\\\":1\",\"method\":\"ping\"}",
              allowed_none, MCP_REQUEST_PASS, NULL, "a key spelled inside a string value is not a key");
}

#define TOOLS_RESULT(id) "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"result\":{\"tools\":[{\"name\":\"search\"},{\"name\":\"rm\"}]}}"

/* Runs mcp_answer_filter(); returns its verdict, the output (or NULL) in *out. */
static int filter(const char *in, char **allowed, char **out) {
        size_t n = 0;
        int r = mcp_answer_filter(in, strlen(in), allowed, out, &n);

        if (r > 0 && (!*out || strlen(*out) != n))
                return -EIO;
        return r;
}

static void test_answer_filter(void) {
        char *out = NULL;

        is_int(filter(TOOLS_RESULT("2"), allowed_search, &out), 1, "a tools/list result is filtered");
        like(out, "\"search\"", "the allowed tool stays");
        unlike(out, "\"rm\"", "the other tool is gone");
        ok(!strchr(out, '\n') && !strchr(out, '\r'), "the rewritten message is one line");
        free(out);

        is_int(filter(TOOLS_RESULT("\"any-id\""), allowed_none, &out), 1, "whatever the id: filtered by its shape");
        like(out, "\"tools\":[]", "no AllowTool=: an empty list");
        free(out);
        is_int(filter(TOOLS_RESULT("2"), allowed_all, &out), 1, "\"*\": rewritten all the same");
        like(out, "\"rm\"", "\"*\": every tool stays");
        free(out);

        /* what has no tools result passes byte for byte: the caller forwards its own bytes */
        static const char *const untouched[] = {
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{\"listChanged\":true}}}}",
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"tools\\\":[1]}\"}]}}",
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32601,\"message\":\"no\",\"data\":{\"tools\":[{\"name\":\"rm\"}]}}}",
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"sampling/createMessage\",\"params\":{\"tools\":[{\"name\":\"x\"}]}}",
                "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}, 7, \"s\", null]",
                "\"just a string\"",
                "  {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(untouched); i++) {
                is_int(filter(untouched[i], allowed_none, &out), 0, "passes unchanged: %s", untouched[i]);
                ok(!out, "…and nothing is rewritten");
        }

        /* an attacker's (or a replay's) shapes */
        is_int(filter("[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}," TOOLS_RESULT("2") "]", allowed_search, &out), 1,
               "a batch holding a tools/list result is filtered");
        like(out, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},", "…its other messages kept");
        unlike(out, "\"rm\"", "…the tool not allowed is gone from the batch");
        free(out);
        is_int(filter("{\"jsonrpc\":\"2.0\",\"id\":2,\"Result\":{\"TOOLS\":[{\"name\":\"rm\"}],\"tools\":[{\"name\":\"search\"}]}}",
                      allowed_search, &out), 1, "case-variant \"Result\" and \"TOOLS\" are filtered too");
        unlike(out, "\"rm\"", "…a client matching names without case sees no tool not allowed");
        like(out, "\"tools\":[{\"name\":\"search\"}]", "…the allowed one stays");
        free(out);
        is_int(filter("{\"id\":2,\"result\":{\"tools\":[{\"name\":\"search\",\"NAME\":\"rm\"},{\"Name\":\"search\"},"
                      "{\"name\":7},{},\"search\",{\"name\":\"search\",\"title\":\"ok\"}]}}", allowed_search, &out), 1,
               "tools with a second name in another case, a wrongly cased name, no name or not an object");
        is_str(out, "{\"id\":2,\"result\":{\"tools\":[{\"name\":\"search\",\"title\":\"ok\"}]}}",
                  "…are dropped; only the plainly allowed tool stays");
        free(out);
        is_int(filter("{\"id\":2,\"result\":{\"tools\":{\"name\":\"rm\"}}}", allowed_all, &out), 1,
               "\"tools\" that is not an array");
        is_str(out, "{\"id\":2,\"result\":{\"tools\":[]}}", "…becomes an empty list");
        free(out);
        is_int(filter("{\"id\":2,\"result\":{\"tool\\u0073\":[{\"name\":\"rm\"}]}}", allowed_search, &out), 1,
               "an escaped \"tools\" key is the same key");
        unlike(out, "\"rm\"", "…and filtered");
        free(out);
        is_int(filter("{\"id\":2,\"result\":{\"tools\":[{\"name\":\"rm\"}]},\"result\":{\"tools\":[{\"name\":\"rm\"}]}}",
                      allowed_search, &out), 1, "a duplicate \"result\"");
        is_str(out, "{\"id\":2,\"result\":{\"tools\":[]}}", "…is rewritten once, filtered");
        free(out);

        is_int(filter("nope", allowed_all, &out), -EBADMSG, "an unreadable answer is not passed on");
        is_int(filter("{\"id\":2,\"result\":{\"tools\":[{\"name\":\"rm\"}]},\"x\":NaN}", allowed_search, &out), 1,
               "NaN (which json-c and some clients read) does not hide a tools/list result");
        unlike(out, "\"rm\"", "…it is filtered");
        free(out);
        is_int(filter("{\"id\":2,\"result\":{\"tools\":[{\"name\":\"rm\"}]},}", allowed_all, &out), -EBADMSG,
               "a trailing comma (which lenient clients read) is not JSON: not passed on");
        is_int(filter("{\"result\":{}} {\"result\":{}}", allowed_all, &out), -EBADMSG, "two JSON texts are not one");
        is_int(filter("", allowed_all, &out), -EBADMSG, "an empty text is not JSON");

        size_t n;
        is_int(mcp_sse_rewrite(" \n\t", 3, allowed_none, &out, &n), 0, "SSE data of whitespace only passes");
        is_int(mcp_sse_rewrite("[DONE]", 6, allowed_none, &out, &n), -EBADMSG, "SSE data that is not JSON ends the stream");
}

static void test_protocol_versions(void) {
        ok(mcp_protocol_version_supported("2025-11-25"), "2025-11-25 (current) is relayed");
        ok(mcp_protocol_version_supported("2025-06-18"), "2025-06-18 (previous) is relayed");
        ok(mcp_protocol_version_supported("2025-03-26"), "2025-03-26 (first Streamable HTTP) is relayed");
        ok(!mcp_protocol_version_supported("2024-11-05"), "2024-11-05 (HTTP+SSE) is not");
        ok(!mcp_protocol_version_supported("2026-01-01"), "an unknown future revision is not");
        ok(!mcp_protocol_version_supported("2025-11-25 "), "nor a near miss");
        ok(!mcp_protocol_version_supported(NULL), "nor none");
}

int main(void) {
        test_requests();
        test_ambiguous_keys();
        test_answer_filter();
        test_protocol_versions();
        return tap_done();
}
