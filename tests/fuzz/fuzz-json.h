/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* How a server that matches JSON keys ignoring ASCII case (Go's encoding/json, mcp-go)
 * reads a member: of the keys equal to `key` but for case, the last one in the object wins.
 * json-c keeps the last of two equal keys at the first one's place, so this is the reading
 * of such a server up to that; the broker must refuse what reads otherwise. Values keep
 * their case. Sets *ret (possibly NULL, a JSON null) and returns whether there was one. */
#include <json-c/json.h>
#include <stdbool.h>
#include <strings.h>

static inline bool json_get_case_blind(struct json_object *o, const char *key, struct json_object **ret) {
        bool found = false;

        if (!json_object_is_type(o, json_type_object))
                return false;
        json_object_object_foreach(o, k, v)
                if (strcasecmp(k, key) == 0) {
                        *ret = v;
                        found = true;
                }
        return found;
}
