/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* Which upstream a request to the broker goes to (cloister-broker(8), ROUTES). */
typedef enum BrokerRouteKind {
        BROKER_ROUTE_HEALTH,
        BROKER_ROUTE_LLM,
        BROKER_ROUTE_MCP,
        BROKER_ROUTE_UPSTREAM,
        _BROKER_ROUTE_MAX,
        _BROKER_ROUTE_INVALID = -EINVAL,
} BrokerRouteKind;

typedef struct BrokerRoute {
        BrokerRouteKind kind;
        char *name;     /* mcp/upstream name, else NULL */
        char *rest;     /* path to append to the upstream URL, starting with "/" (may be "/"),
                         * query string kept; NULL for /health, which has no upstream */
} BrokerRoute;

void broker_route_done(BrokerRoute *r);

/* Maps a request target ("/v1/chat/completions?x=1") to its route. -ENOENT: no route (404).
 * -EINVAL (400): a name that fails name_is_valid() ("/mcp/" included), or a path that could
 * escape the route once appended to an upstream URL: not starting with "/", or holding "..",
 * "//", a backslash, "#", a control character or space, or "%2e" "%2f" "%5c" "%00" in any case
 * (an upstream may decode them into the former). Only the path is checked: the query string
 * passes as is, except that control characters and spaces are refused there too. */
int broker_route_parse(const char *url, BrokerRoute *ret);

/* "health", "llm", "mcp", "upstream"; NULL if invalid. */
const char *broker_route_kind_to_string(BrokerRouteKind k);
