/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the broker's request path: everything the broker decides from bytes
 * a caller (or an upstream) sends — the route, header names both ways, the OpenAI body
 * rewrite, the MCP JSON-RPC check and tools/list filter, and the SSE pass-through filter fed
 * in two arbitrary pieces. The first input byte picks the split point and the options. */
#include <stdint.h>

#include "broker-route.h"
#include "header-filter.h"
#include "mcp-policy.h"
#include "openai-body.h"
#include "sse-filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char *allowed[] = { (char *) "search", NULL };
        _cleanup_free_ char *s = NULL, *body = NULL, *out = NULL, *err = NULL;
        OpenAIRequest req = {};
        BrokerRoute route = {};
        TokenUsage usage = {};
        McpRequestVerdict v;
        SseFilter *sse;
        size_t n = 0, split;
        uint8_t opt;

        if (size < 1)
                return 0;
        opt = data[0];
        data++, size--;
        s = strndup((const char *) data, size); /* NUL-terminated views for the string APIs */
        if (!s)
                return 0;

        if (broker_route_parse(s, &route) >= 0)
                broker_route_done(&route);
        (void) header_request_allowed(s);
        (void) header_response_allowed(s);

        if (openai_request_rewrite((const char *) data, size, opt & 1 ? "model-x" : NULL, &req, &body, &n) >= 0)
                openai_request_done(&req);
        (void) openai_response_usage((const char *) data, size, &usage);
        body = mfree(body);
        if (openai_models_filter((const char *) data, size, opt & 2 ? "model-x" : NULL, &body, &n) >= 0)
                body = mfree(body);

        if (mcp_request_check((const char *) data, size, allowed, &v, &err) >= 0)
                err = mfree(err);
        if (mcp_tools_list_filter((const char *) data, size, opt & 4, allowed, &out, &n) >= 0)
                out = mfree(out);

        sse = sse_filter_new(opt & 8);
        if (sse) {
                split = size ? opt % (size + 1) : 0;
                n = 0;
                if (sse_filter_feed(sse, (const char *) data, split, &out, &n) >= 0 &&
                    sse_filter_feed(sse, (const char *) data + split, size - split, &out, &n) >= 0)
                        (void) sse_filter_finish(sse, &out, &n);
                (void) sse_filter_usage(sse);
                sse_filter_free(sse);
        }
        return 0;
}
