/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/broker/policy/broker-route.c: which upstream a request target goes to, and the targets refused before
 * any upstream URL is built from them (cloister-broker(8)). */

#include "broker-route.h"
#include "tap.h"

static void check_route(const char *url, BrokerRouteKind kind, const char *name, const char *rest) {
        BrokerRoute r = {};

        if (is_int(broker_route_parse(url, &r), 0, "\"%s\" has a route", url)) {
                is_str(broker_route_kind_to_string(r.kind), broker_route_kind_to_string(kind),
                       "\"%s\" routes to %s", url, broker_route_kind_to_string(kind));
                is_str(r.name, name, "\"%s\" names upstream \"%s\"", url, strempty(name));
                is_str(r.rest, rest, "\"%s\" appends \"%s\" to the upstream URL", url, strempty(rest));
        }
        broker_route_done(&r);
}

static void test_routes(void) {
        check_route("/health", BROKER_ROUTE_HEALTH, NULL, NULL);
        check_route("/health?verbose=1", BROKER_ROUTE_HEALTH, NULL, NULL);

        check_route("/v1", BROKER_ROUTE_LLM, NULL, "/");
        check_route("/v1/", BROKER_ROUTE_LLM, NULL, "/");
        check_route("/v1?x=1", BROKER_ROUTE_LLM, NULL, "/?x=1");
        check_route("/v1/chat/completions", BROKER_ROUTE_LLM, NULL, "/chat/completions");
        check_route("/v1/chat/completions?x=1", BROKER_ROUTE_LLM, NULL, "/chat/completions?x=1");
        check_route("/v1/models", BROKER_ROUTE_LLM, NULL, "/models");

        check_route("/mcp/github", BROKER_ROUTE_MCP, "github", "/");
        check_route("/mcp/github/", BROKER_ROUTE_MCP, "github", "/");
        check_route("/mcp/github?session=a", BROKER_ROUTE_MCP, "github", "/?session=a");
        check_route("/mcp/github/sse", BROKER_ROUTE_MCP, "github", "/sse");
        check_route("/mcp/my_tools-2/messages?sessionId=abc", BROKER_ROUTE_MCP, "my_tools-2", "/messages?sessionId=abc");

        check_route("/upstream/issues", BROKER_ROUTE_UPSTREAM, "issues", "/");
        check_route("/upstream/issues/api/v3/issues?state=open&q=a..b",
                    BROKER_ROUTE_UPSTREAM, "issues", "/api/v3/issues?state=open&q=a..b");
        check_route("/upstream/issues?redirect=%2Fhome", BROKER_ROUTE_UPSTREAM, "issues", "/?redirect=%2Fhome");
}

static void test_no_route(void) {
        static const char *const urls[] = {
                "/", "/health/", "/healthz", "/health/x", "/HEALTH", "/v2/chat", "/v1x", "/v10/models",
                "/V1/models", "/mcp", "/mcpx/github", "/upstream", "/upstreams/x", "/api/v1",
                "/?/v1", "/x?/mcp/github",
        };
        BrokerRoute r = {};

        for (size_t i = 0; i < ELEMENTSOF(urls); i++)
                is_int(broker_route_parse(urls[i], &r), -ENOENT, "\"%s\" has no route (404)", urls[i]);
}

static void test_bad_names(void) {
        static const char *const urls[] = {
                "/mcp/", "/mcp/?x", "/mcp/GitHub", "/mcp/-x", "/mcp/_x/y", "/mcp/a.b", "/mcp/a%20b",
                "/upstream/", "/upstream/Issues/x", "/upstream/a:b", "/upstream/a@b/x",
                "/mcp/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",   /* 64 characters */
        };
        BrokerRoute r = {};

        for (size_t i = 0; i < ELEMENTSOF(urls); i++)
                is_int(broker_route_parse(urls[i], &r), -EINVAL, "\"%s\" names no valid upstream (400)", urls[i]);
}

static void test_traversal_refused(void) {
        static const char *const urls[] = {
                "", "v1/models", "*", "http://evil/v1", "?/v1",
                "/v1/../admin", "/v1/..", "/v1/files/a..b", "/mcp/github/../../etc/passwd", "/../v1",
                "/upstream/issues/..%2fsecret", "/v1//models", "//v1/models", "/mcp/github//x",
                "/v1\\..\\admin", "/v1/a\\b", "/upstream/x/%2e%2e/y", "/upstream/x/%2E%2E/y",
                "/upstream/x/.%2E/y", "/upstream/x/a%2fb", "/upstream/x/a%2Fb", "/upstream/x/a%5cb",
                "/upstream/x/a%5Cb", "/upstream/x/a%00b", "/v1/models#frag", "/v1/mo dels",
                "/v1/models\r\nHost: evil", "/v1/models?x=1\r\nX: y", "/v1/models\t", "/v1/\x7f",
                "/mcp/%2e%2e/x", "/health/..", "/v1/%2e",
        };
        BrokerRoute r = {};

        for (size_t i = 0; i < ELEMENTSOF(urls); i++)
                is_int(broker_route_parse(urls[i], &r), -EINVAL, "\"%s\" is refused (400)", urls[i]);
        is_int(broker_route_parse(NULL, &r), -EINVAL, "a NULL target is refused");
}

static void test_kind_names(void) {
        is_str(broker_route_kind_to_string(BROKER_ROUTE_HEALTH), "health", "kind health");
        is_str(broker_route_kind_to_string(BROKER_ROUTE_LLM), "llm", "kind llm");
        is_str(broker_route_kind_to_string(BROKER_ROUTE_MCP), "mcp", "kind mcp");
        is_str(broker_route_kind_to_string(BROKER_ROUTE_UPSTREAM), "upstream", "kind upstream");
        ok(!broker_route_kind_to_string(_BROKER_ROUTE_INVALID), "the invalid kind has no name");
        ok(!broker_route_kind_to_string(_BROKER_ROUTE_MAX), "a kind past the table has no name");
}

static void test_done_is_idempotent(void) {
        BrokerRoute r = {};

        if (is_int(broker_route_parse("/mcp/github/x", &r), 0, "parse for done()")) {
                broker_route_done(&r);
                ok(!r.name && !r.rest, "broker_route_done() clears the route");
                broker_route_done(&r);
                ok(true, "broker_route_done() twice is harmless");
        }
        broker_route_done(NULL);
        ok(true, "broker_route_done(NULL) is harmless");
}

int main(void) {
        test_routes();
        test_no_route();
        test_bad_names();
        test_traversal_refused();
        test_kind_names();
        test_done_is_idempotent();
        return tap_done();
}
