/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <strings.h>

#include "broker-route.h"
#include "parse-util.h"

static const char *const kind_table[_BROKER_ROUTE_MAX] = {
        [BROKER_ROUTE_HEALTH] = "health",
        [BROKER_ROUTE_LLM] = "llm",
        [BROKER_ROUTE_MCP] = "mcp",
        [BROKER_ROUTE_UPSTREAM] = "upstream",
};

const char *broker_route_kind_to_string(BrokerRouteKind k) {
        return k >= 0 && k < _BROKER_ROUTE_MAX ? kind_table[k] : NULL;
}

void broker_route_done(BrokerRoute *r) {
        if (!r)
                return;
        r->name = mfree(r->name);
        r->rest = mfree(r->rest);
        r->kind = _BROKER_ROUTE_INVALID;
}

static bool target_chars_ok(const char *url) {
        for (const char *p = url; *p; p++)
                if ((unsigned char) *p <= ' ' || *p == 0x7f)
                        return false;
        return true;
}

static bool path_is_safe(const char *path, size_t n) {
        static const char *const encoded[] = { "%2e", "%2f", "%5c", "%00" };

        if (n == 0 || path[0] != '/')
                return false;
        for (size_t i = 0; i < n; i++) {
                if (path[i] == '\\' || path[i] == '#')
                        return false;
                if (i + 1 < n && ((path[i] == '.' && path[i + 1] == '.') ||
                                  (path[i] == '/' && path[i + 1] == '/')))
                        return false;
                if (path[i] == '%' && i + 2 < n)
                        for (size_t j = 0; j < ELEMENTSOF(encoded); j++)
                                if (strncasecmp(path + i, encoded[j], 3) == 0)
                                        return false;
        }
        return true;
}

/* "/<name>" or "/<name>/…" after the route prefix: splits off the name, returns the rest. */
static int split_name(const char *after, size_t n, char **ret_name, const char **ret_rest) {
        const char *slash = memchr(after, '/', n);
        size_t l = slash ? (size_t) (slash - after) : n;
        char *name = strndup(after, l);

        if (!name)
                return -ENOMEM;
        if (!name_is_valid(name)) {
                free(name);
                return -EINVAL;
        }
        *ret_name = name;
        *ret_rest = after + l;
        return 0;
}

int broker_route_parse(const char *url, BrokerRoute *ret) {
        _cleanup_free_ char *name = NULL;
        BrokerRouteKind kind;
        const char *query, *rest, *after;
        char *joined;
        size_t n;
        int r;

        if (!url || !target_chars_ok(url))
                return -EINVAL;
        query = strchrnul(url, '?');
        n = (size_t) (query - url);
        if (!path_is_safe(url, n))
                return -EINVAL;

        if (n == strlen("/health") && startswith(url, "/health")) {
                *ret = (BrokerRoute) { .kind = BROKER_ROUTE_HEALTH };
                return 0;
        }

        if ((rest = startswith(url, "/v1")) && (rest == query || *rest == '/'))
                kind = BROKER_ROUTE_LLM;
        else {
                if ((after = startswith(url, "/mcp/")) && after <= query)
                        kind = BROKER_ROUTE_MCP;
                else if ((after = startswith(url, "/upstream/")) && after <= query)
                        kind = BROKER_ROUTE_UPSTREAM;
                else
                        return -ENOENT;
                r = split_name(after, (size_t) (query - after), &name, &rest);
                if (r < 0)
                        return r;
        }

        /* The upstream URL is joined with what follows the route prefix: never empty. */
        joined = rest == query ? strprintf("/%s", query) : strdup(rest);
        if (!joined)
                return -ENOMEM;
        *ret = (BrokerRoute) { .kind = kind, .name = TAKE_PTR(name), .rest = joined };
        return 0;
}
