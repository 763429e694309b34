/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the request target and header names of a caller's request (cloister-broker(8)). An
 * accepted target maps to a route whose upstream path cannot escape it; a header name
 * passes either way only if it is one of the allowed tokens, never a credential or a framing
 * header. */
#include <ctype.h>
#include <strings.h>

#include "broker-route.h"
#include "fuzz-util.h"
#include "header-filter.h"
#include "parse-util.h"

static const char *const never[] = {
        "authorization", "proxy-authorization", "cookie", "set-cookie", "host", "connection",
        "content-length", "transfer-encoding", "upgrade", "te", "trailer", "x-forwarded-for",
        "forwarded", "accept-encoding", "content-encoding", "openai-organization", NULL,
};

static void check_header(const char *name, bool allowed) {
        if (!allowed)
                return;
        fuzz_assert(*name, "an empty header name is allowed");
        for (const char *p = name; *p; p++)
                fuzz_assert(isalnum((unsigned char) *p) || strchr("!#$%&'*+-.^_`|~", *p),
                            "allowed header name \"%s\" is not an RFC 9110 token", name);
        for (const char *const *n = never; *n; n++)
                fuzz_assert(strcasecmp(name, *n) != 0, "header %s passes", name);
}

static void check_path(const char *rest) {
        static const char *const encoded[] = { "%2e", "%2f", "%5c", "%00" };
        _cleanup_free_ char *path = strndup(rest, strcspn(rest, "?"));

        fuzz_assert(path && path[0] == '/', "route rest \"%s\" starts with /", rest);
        fuzz_assert(!strstr(path, "..") && !strstr(path, "//") && !strpbrk(path, "\\#"), "path \"%s\" may escape", path);
        for (const char *p = rest; *p; p++)
                fuzz_assert((unsigned char) *p > 0x20 && *p != 0x7f, "control character or space in \"%s\"", rest);
        for (size_t i = 0; i < ELEMENTSOF(encoded); i++)
                fuzz_assert(!strcasestr(path, encoded[i]), "path \"%s\" holds %s", path, encoded[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = strndup((const char *) data, size);
        BrokerRoute route = {};

        if (!s)
                return 0;
        if (broker_route_parse(s, &route) >= 0) {
                fuzz_assert(route.kind >= 0 && route.kind < _BROKER_ROUTE_MAX, "kind %d", route.kind);
                fuzz_assert(broker_route_kind_to_string(route.kind), "kind %d has a name", route.kind);
                fuzz_assert((route.kind == BROKER_ROUTE_MCP || route.kind == BROKER_ROUTE_UPSTREAM) == !!route.name,
                            "a named route has a name");
                fuzz_assert(!route.name || name_is_valid(route.name), "route name \"%s\"", route.name);
                fuzz_assert((route.kind == BROKER_ROUTE_HEALTH) == !route.rest, "only /health has no upstream path");
                if (route.rest)
                        check_path(route.rest);
                broker_route_done(&route);
        }
        check_header(s, header_request_allowed(s));
        check_header(s, header_response_allowed(s));
        return 0;
}
