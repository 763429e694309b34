/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* RFC 8259's grammar, walked once without recursion. Strings, where nearly all of a prompt's
 * bytes are, go through a table lookup per byte until a quote, a backslash, a control
 * character or a non-ASCII byte needs a closer look. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-scan.h"
#include "macro.h"
#include "utf8.h"

/* Containers open at once, at most: the stack is a bitmap of this many bits. */
#define JSON_SCAN_DEPTH_LIMIT 1024

/* Bytes a string holds as they are: printable ASCII but the quote and the backslash. */
static const bool string_plain[256] = {
        [0x20 ... 0x21] = true,         /* '"' is 0x22 */
        [0x23 ... 0x5b] = true,         /* '\\' is 0x5c */
        [0x5d ... 0x7f] = true,
};

static bool is_ws(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *skip_ws(const char *p, const char *e) {
        while (p < e && is_ws(*p))
                p++;
        return p;
}

static bool is_hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* p just past the opening quote; returns just past the closing one, or NULL. */
static const char *scan_string(const char *p, const char *e) {
        for (;;) {
                unsigned char c;

                while (p < e && string_plain[(unsigned char) *p])
                        p++;
                if (p >= e)
                        return NULL;
                c = (unsigned char) *p;
                if (c == '"')
                        return p + 1;
                if (c < 0x20)
                        return NULL;
                if (c == '\\') {
                        if (++p >= e)
                                return NULL;
                        if (strchr("\"\\/bfnrt", *p) && *p) {
                                p++;
                                continue;
                        }
                        if (*p != 'u' || e - p < 5 || !is_hex(p[1]) || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]))
                                return NULL;
                        p += 5;
                        continue;
                }
                /* c >= 0x80 */
                uint32_t cp;
                size_t len;
                if (utf8_decode((const unsigned char *) p, (size_t) (e - p), &cp, &len) < 0)
                        return NULL;
                p += len;
        }
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static const char *scan_number(const char *p, const char *e) {
        if (p < e && *p == '-')
                p++;
        if (p >= e || !is_digit(*p))
                return NULL;
        if (*p == '0')
                p++;
        else
                while (p < e && is_digit(*p))
                        p++;
        if (p < e && *p == '.') {
                if (++p >= e || !is_digit(*p))
                        return NULL;
                while (p < e && is_digit(*p))
                        p++;
        }
        if (p < e && (*p == 'e' || *p == 'E')) {
                if (++p < e && (*p == '+' || *p == '-'))
                        p++;
                if (p >= e || !is_digit(*p))
                        return NULL;
                while (p < e && is_digit(*p))
                        p++;
        }
        return p;
}

static const char *scan_literal(const char *p, const char *e, const char *word) {
        size_t l = strlen(word);
        return (size_t) (e - p) >= l && memcmp(p, word, l) == 0 ? p + l : NULL;
}

static JsonKind kind_of(char c) {
        switch (c) {
        case '{': return JSON_KIND_OBJECT;
        case '[': return JSON_KIND_ARRAY;
        case '"': return JSON_KIND_STRING;
        case 't': case 'f': return JSON_KIND_BOOLEAN;
        case 'n': return JSON_KIND_NULL;
        default:  return JSON_KIND_NUMBER;
        }
}

void json_scan_done(JsonScan *s) {
        if (s)
                s->members = mfree(s->members);
}

static int member_add(JsonScan *s, size_t *allocated, const char *key, size_t key_n) {
        if (s->n_members == *allocated) {
                JsonMember *m = reallocarray(s->members, *allocated = *allocated * 2 + 8, sizeof(JsonMember));
                if (!m)
                        return -ENOMEM;
                s->members = m;
        }
        s->members[s->n_members++] = (JsonMember) { .key = key, .key_n = key_n };
        return 0;
}

int json_scan(const char *s, size_t n, unsigned depth, JsonScan *ret) {
        uint64_t is_object[JSON_SCAN_DEPTH_LIMIT / 64] = {};
        const char *p = s, *e = s + n, *q;
        JsonScan scan = {};
        size_t level = 0, allocated = 0;
        JsonMember *open_member = NULL; /* a top-level member whose value is being read */
        int r;

        if (depth > JSON_SCAN_DEPTH_LIMIT)
                depth = JSON_SCAN_DEPTH_LIMIT;
#define TOP_IS_OBJECT() (is_object[(level - 1) / 64] >> ((level - 1) % 64) & 1)

        p = skip_ws(p, e);
        if (p >= e)
                goto bad;
        scan.kind = kind_of(*p);
        if (*p == '{')
                scan.open = p;

value:  /* p at a value's first byte */
        if (p >= e)
                goto bad;
        if (level == 1 && open_member) {
                open_member->value = p;
                open_member->kind = kind_of(*p);
        }
        switch (*p) {
        case '{':
        case '[':
                if (level >= depth)
                        goto bad;
                level++;
                if (*p == '{')
                        is_object[(level - 1) / 64] |= UINT64_C(1) << ((level - 1) % 64);
                else
                        is_object[(level - 1) / 64] &= ~(UINT64_C(1) << ((level - 1) % 64));
                p = skip_ws(p + 1, e);
                if (p < e && *p == (TOP_IS_OBJECT() ? '}' : ']')) {
                        p++;
                        level--;
                        goto after;
                }
                if (TOP_IS_OBJECT())
                        goto key;
                goto value;
        case '"':
                q = scan_string(p + 1, e);
                break;
        case 't':
                q = scan_literal(p, e, "true");
                break;
        case 'f':
                q = scan_literal(p, e, "false");
                break;
        case 'n':
                q = scan_literal(p, e, "null");
                break;
        default:
                q = scan_number(p, e);
                break;
        }
        if (!q)
                goto bad;
        p = q;

after:  /* p just past a value */
        if (level == 1 && open_member) {
                /* the value just read is a member of the top-level object */
                open_member->value_n = (size_t) (p - open_member->value);
                open_member = NULL;
        }
        p = skip_ws(p, e);
        if (level == 0) {
                if (p != e)
                        goto bad;
                *ret = scan;
                return 0;
        }
        if (p >= e)
                goto bad;
        if (*p == ',') {
                p = skip_ws(p + 1, e);
                if (TOP_IS_OBJECT())
                        goto key;
                goto value;
        }
        if (*p != (TOP_IS_OBJECT() ? '}' : ']'))
                goto bad;
        p++;
        level--;
        goto after;

key:    /* p at a key's opening quote, in an object */
        if (p >= e || *p != '"')
                goto bad;
        q = scan_string(p + 1, e);
        if (!q)
                goto bad;
        if (level == 1 && scan.open) {
                r = member_add(&scan, &allocated, p + 1, (size_t) (q - 1 - (p + 1)));
                if (r < 0) {
                        json_scan_done(&scan);
                        return r;
                }
                open_member = &scan.members[scan.n_members - 1];
        }
        p = skip_ws(q, e);
        if (p >= e || *p != ':')
                goto bad;
        p = skip_ws(p + 1, e);
        goto value;
#undef TOP_IS_OBJECT

bad:
        json_scan_done(&scan);
        return -EBADMSG;
}

const JsonMember *json_scan_member(const JsonScan *s, const char *key) {
        size_t l = strlen(key);

        for (size_t i = 0; i < s->n_members; i++)
                if (s->members[i].key_n == l && memcmp(s->members[i].key, key, l) == 0)
                        return &s->members[i];
        return NULL;
}
