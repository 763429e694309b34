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

static void test_filter(void) {
        static const char json[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"search\"},{\"name\":\"rm\"}]}}";
        static const char sse[] = ": comment\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"search\"},{\"name\":\"rm\"}]}}\n\n";
        char *out = NULL;
        size_t n = 0;

        is_int(mcp_tools_list_filter(json, strlen(json), false, allowed_search, &out, &n), 0, "JSON answer filtered");
        like(out, "\"search\"", "the allowed tool stays");
        unlike(out, "\"rm\"", "the other tool is gone");
        is_int((int) n, (int) strlen(out), "length");
        free(out);

        is_int(mcp_tools_list_filter(sse, strlen(sse), true, allowed_search, &out, &n), 0, "SSE answer filtered");
        like(out, ": comment\n", "comments pass");
        like(out, "event: message\n", "event lines pass");
        like(out, "\"search\"", "the allowed tool stays");
        unlike(out, "\"rm\"", "the other tool is gone");
        free(out);

        is_int(mcp_tools_list_filter(json, strlen(json), false, allowed_none, &out, &n), 0, "nothing allowed");
        like(out, "\"tools\":[]", "an empty list");
        free(out);
        is_int(mcp_tools_list_filter("nope", 4, false, allowed_all, &out, &n), -EBADMSG, "an unreadable answer is not passed on");
}

int main(void) {
        test_requests();
        test_ambiguous_keys();
        test_filter();
        return tap_done();
}
