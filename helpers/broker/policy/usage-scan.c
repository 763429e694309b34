/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-c has no event interface, and its tokener builds the whole tree: for an answer of many
 * megabytes that is many times its size in memory. So this only follows the text's structure
 * (strings, escapes, nesting) to find the top-level "usage" member, and hands that one value
 * to json-c. */
#include <json-c/json.h>
#include <stdlib.h>

#include "usage-scan.h"

typedef enum ScanState {
        SCAN_START,             /* before the top-level value */
        SCAN_KEY_EXPECTED,      /* in the top-level object: a key, or its end */
        SCAN_KEY,               /* inside a top-level key */
        SCAN_COLON_EXPECTED,
        SCAN_VALUE_EXPECTED,
        SCAN_VALUE,             /* inside a top-level member's value */
        SCAN_DONE,              /* the top-level object ended, or it was none */
} ScanState;

struct UsageScan {
        ScanState state;
        size_t depth;           /* containers open, the top-level object included */
        bool in_string, escape;
        char key[sizeof "usage"];
        size_t key_n;
        bool key_other;         /* longer than "usage", or escaped: another key */
        bool capturing, overflow;
        char *value;            /* the "usage" value being read; allocated when one starts */
        size_t value_n;
        TokenUsage usage;
};

UsageScan *usage_scan_new(void) {
        return calloc(1, sizeof(UsageScan));
}

UsageScan *usage_scan_free(UsageScan *s) {
        if (s) {
                free(s->value);
                free(s);
        }
        return NULL;
}

static bool key_is_usage(const UsageScan *s) {
        return !s->key_other && s->key_n == 5 && memcmp(s->key, "usage", 5) == 0;
}

/* The "usage" value is complete: parse it the way a whole answer would be. */
static int value_done(UsageScan *s) {
        _cleanup_free_ char *member = NULL;
        json_object *o = NULL;
        TokenUsage u;

        s->capturing = false;
        if (s->overflow)
                return 0;
        member = malloc(s->value_n + sizeof "{\"usage\":}");
        if (!member)
                return -ENOMEM;
        memcpy(member, "{\"usage\":", 9);
        memcpy(member + 9, s->value, s->value_n);
        memcpy(member + 9 + s->value_n, "}", 2);
        if (openai_json_parse_object(member, s->value_n + 10, &o) < 0)
                return 0;
        /* json-c keeps the last of repeated keys: so does this */
        s->usage = openai_usage_from_json(o, &u) ? u : (TokenUsage) {};
        json_object_put(o);
        return 0;
}

/* One byte outside a string, at the top level of the answer's object. */
static int top_level(UsageScan *s, char c) {
        switch (s->state) {
        case SCAN_START:
                if (c == '{') {
                        s->depth = 1;
                        s->state = SCAN_KEY_EXPECTED;
                } else
                        s->state = SCAN_DONE; /* not an object: no usage */
                return 0;
        case SCAN_KEY_EXPECTED:
                if (c == '"') {
                        s->in_string = true;
                        s->key_n = 0;
                        s->key_other = false;
                        s->state = SCAN_KEY;
                } else
                        s->state = SCAN_DONE; /* "}" ends it; anything else is not JSON */
                return 0;
        case SCAN_COLON_EXPECTED:
                s->state = c == ':' ? SCAN_VALUE_EXPECTED : SCAN_DONE;
                return 0;
        case SCAN_VALUE_EXPECTED:
                s->state = SCAN_VALUE;
                if (key_is_usage(s)) {
                        if (!s->value && !(s->value = malloc(USAGE_SCAN_VALUE_MAX)))
                                return -ENOMEM; /* fail closed: the answer ends */
                        s->capturing = true;
                        s->value_n = 0;
                        s->overflow = false;
                }
                return 0;
        default:
                return 0;
        }
}

/* A structural byte outside any string: a string opens, a container opens or closes. */
static void outside_string(UsageScan *s, char c) {
        if (c == '"')
                s->in_string = true;
        else if (c == '{' || c == '[')
                s->depth++;
        else if ((c == '}' || c == ']') && s->depth > 1)
                s->depth--;
}

static int scan_byte(UsageScan *s, char c) {
        int r;

        if (!s->in_string && s->depth == 1 && s->state == SCAN_VALUE && (c == ',' || c == '}')) {
                if (s->capturing) {
                        r = value_done(s);
                        if (r < 0)
                                return r;
                }
                if (c == ',')
                        s->state = SCAN_KEY_EXPECTED;
                else {
                        s->depth = 0;
                        s->state = SCAN_DONE;
                }
                return 0;
        }
        if (s->in_string) {
                if (s->capturing)
                        goto keep;
                if (s->escape)
                        s->escape = false;
                else if (c == '\\')
                        s->escape = s->key_other = true;
                else if (c == '"') {
                        s->in_string = false;
                        if (s->state == SCAN_KEY)
                                s->state = SCAN_COLON_EXPECTED;
                } else if (s->state == SCAN_KEY) {
                        if (s->key_n < sizeof s->key)
                                s->key[s->key_n++] = c;
                        else
                                s->key_other = true;
                }
                return 0;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                if (s->capturing)
                        goto keep;
                return 0;
        }
        if (s->depth <= 1 && s->state != SCAN_VALUE) {
                ScanState before = s->state;

                r = top_level(s, c);
                if (r < 0)
                        return r;
                if (before != SCAN_VALUE_EXPECTED)
                        return 0; /* the top level's own structure */
                /* else c is the first byte of a member's value: read on */
        }
        if (s->capturing)
                goto keep;
        outside_string(s, c);
        return 0;

keep:
        /* inside the "usage" value: the same structure rules, and the byte is kept */
        if (s->value_n < USAGE_SCAN_VALUE_MAX)
                s->value[s->value_n++] = c;
        else
                s->overflow = true;
        if (s->in_string) {
                if (s->escape)
                        s->escape = false;
                else if (c == '\\')
                        s->escape = true;
                else if (c == '"')
                        s->in_string = false;
        } else
                outside_string(s, c);
        return 0;
}

int usage_scan_feed(UsageScan *s, const char *data, size_t n) {
        int r;

        for (size_t i = 0; i < n && s->state != SCAN_DONE; i++) {
                r = scan_byte(s, data[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int usage_scan_result(const UsageScan *s, TokenUsage *ret) {
        if (!s->usage.seen)
                return -ENODATA;
        *ret = s->usage;
        return 0;
}
