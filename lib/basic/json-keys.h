/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "json-scan.h"

/* What the broker's policy read must be what the upstream reads. json-c keeps the last of
 * two equal keys and matches keys exactly; other parsers keep the first, and Go's
 * encoding/json (mcp-go) matches keys ignoring case, Unicode folding included ("ſ" is "s").
 * So an object the policy reads is refused when any of its keys:
 *   - is not printable ASCII or holds an escape (a policy key never needs one),
 *   - equals another key of that object ignoring ASCII case (duplicates included),
 *   - equals one of the keys the policy reads ignoring ASCII case, but is spelt otherwise.
 * Objects deeper than the rule names (tool arguments, messages) are not looked at. */

typedef struct JsonKeyRule {
        const char * const *keys;                /* the keys the policy reads here; NULL-terminated */
        const char *nested;                       /* a member whose object value the policy reads too */
        const struct JsonKeyRule *nested_rule;
} JsonKeyRule;

/* s[0..n) must already be one valid JSON text (parsed strictly by json-c). The rule applies to
 * a top-level object, or to each object in a top-level array (a JSON-RPC batch). 0 if
 * unambiguous, -ENOTUNIQ if not, -ENOMEM. */
int json_keys_check(const char *s, size_t n, const JsonKeyRule *rule);

/* The same rule for one object's members as json_scan() found them (JsonKeyRule.keys). */
int json_keys_check_members(const JsonMember *members, size_t n, const char * const *keys);
