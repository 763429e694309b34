/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key names of the objects a policy reads, taken from the raw bytes: json-c's tree no longer
 * shows the duplicates it dropped. The text was validated by json-c first, so this walk only
 * needs to tell strings, containers and scalars apart. */
#include <stdlib.h>
#include <strings.h>

#include "json-keys.h"
#include "json-scan.h"
#include "macro.h"

static const char *skip_ws(const char *p, const char *e) {
        while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
                p++;
        return p;
}

/* p at the opening quote; returns past the closing one. */
static const char *skip_string(const char *p, const char *e) {
        for (p++; p < e && *p != '"'; p++)
                if (*p == '\\')
                        p++;
        return p < e ? p + 1 : e;
}

/* Any value, containers included, without recursion. */
static const char *skip_value(const char *p, const char *e) {
        size_t depth = 0;

        if (p < e && *p != '{' && *p != '[' && *p != '"') {
                while (p < e && !strchr(",}] \t\r\n", *p))
                        p++;
                return p;
        }
        while (p < e) {
                if (*p == '"')
                        p = skip_string(p, e);
                else {
                        if (*p == '{' || *p == '[')
                                depth++;
                        else if (*p == '}' || *p == ']')
                                depth--;
                        p++;
                }
                if (depth == 0)
                        break;
        }
        return p;
}

static int key_cmp(const void *a, const void *b) {
        const JsonMember *x = a, *y = b;
        int c = strncasecmp(x->key, y->key, x->key_n < y->key_n ? x->key_n : y->key_n);
        return c != 0 ? c : (x->key_n > y->key_n) - (x->key_n < y->key_n);
}

static bool key_plain(const JsonMember *k) {
        for (size_t i = 0; i < k->key_n; i++)
                if (k->key[i] < 0x20 || k->key[i] > 0x7e || k->key[i] == '\\')
                        return false;
        return true;
}

static bool key_misspells(const JsonMember *k, const char * const *keys) {
        for (; keys && *keys; keys++)
                if (strlen(*keys) == k->key_n && strncasecmp(*keys, k->key, k->key_n) == 0 &&
                    strncmp(*keys, k->key, k->key_n) != 0)
                        return true;
        return false;
}

static bool key_is(const JsonMember *k, const char *name) {
        return name && strlen(name) == k->key_n && strncmp(name, k->key, k->key_n) == 0;
}

/* Sorted ignoring case, equal neighbours are the collisions: n log n for many keys. Sorts
 * keys[] in place. */
static int keys_verify(JsonMember *keys, size_t n_keys, const char * const *policy_keys) {
        for (size_t i = 0; i < n_keys; i++)
                if (!key_plain(&keys[i]) || key_misspells(&keys[i], policy_keys))
                        return -ENOTUNIQ;
        if (n_keys > 1)
                qsort(keys, n_keys, sizeof(JsonMember), key_cmp);
        for (size_t i = 1; i < n_keys; i++)
                if (key_cmp(&keys[i - 1], &keys[i]) == 0)
                        return -ENOTUNIQ;
        return 0;
}

int json_keys_check_members(const JsonMember *members, size_t n, const char * const *keys) {
        _cleanup_free_ JsonMember *copy = NULL;

        if (n == 0)
                return 0;
        copy = reallocarray(NULL, n, sizeof(JsonMember));
        if (!copy)
                return -ENOMEM;
        memcpy(copy, members, n * sizeof(JsonMember));
        return keys_verify(copy, n, keys);
}

/* p at '{'. *end is set past the object. */
static int check_object(const char *p, const char *e, const JsonKeyRule *rule, const char **end) {
        _cleanup_free_ JsonMember *keys = NULL;
        size_t n_keys = 0, allocated = 0;
        int r;

        for (p = skip_ws(p + 1, e); p < e && *p != '}'; p = skip_ws(p, e)) {
                JsonMember k = {};

                if (*p == ',')
                        p = skip_ws(p + 1, e);
                if (p >= e || *p != '"')
                        return -ENOTUNIQ; /* not the validated text we expected: fail closed */
                k.key = p + 1;
                p = skip_string(p, e);
                k.key_n = (size_t) (p - 1 - k.key);
                if (n_keys == allocated) {
                        JsonMember *nk = reallocarray(keys, allocated = allocated * 2 + 8, sizeof(JsonMember));
                        if (!nk)
                                return -ENOMEM;
                        keys = nk;
                }
                keys[n_keys++] = k;

                p = skip_ws(p, e);
                if (p < e && *p == ':')
                        p = skip_ws(p + 1, e);
                if (p < e && *p == '{' && rule->nested_rule && key_is(&k, rule->nested)) {
                        r = check_object(p, e, rule->nested_rule, &p);
                        if (r < 0)
                                return r;
                } else
                        p = skip_value(p, e);
        }
        *end = p < e ? p + 1 : e;
        return keys_verify(keys, n_keys, rule->keys);
}

int json_keys_check(const char *s, size_t n, const JsonKeyRule *rule) {
        const char *p, *e = s + n;
        int r;

        p = skip_ws(s, e);
        if (p < e && *p == '{')
                return check_object(p, e, rule, &p);
        if (p >= e || *p != '[')
                return 0; /* a scalar: no keys */
        for (p = skip_ws(p + 1, e); p < e && *p != ']'; p = skip_ws(p, e)) {
                if (*p == ',')
                        p = skip_ws(p + 1, e);
                if (p < e && *p == '{') {
                        r = check_object(p, e, rule, &p);
                        if (r < 0)
                                return r;
                } else
                        p = skip_value(p, e);
        }
        return 0;
}
