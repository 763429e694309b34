/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* A validating scan of one JSON text that builds no tree: it checks the text against RFC 8259
 * exactly (UTF-8 throughout, no raw control character in a string, the number grammar, one
 * value with only whitespace around it) and records where each member of a top-level object
 * sits. The broker uses it where it must know a request is JSON and read a few members of
 * it, and then edit those members' bytes in place: parsing a 100 KiB prompt into json-c's
 * tree and printing it again cost over a millisecond. */

typedef enum JsonKind {
        JSON_KIND_NULL,
        JSON_KIND_BOOLEAN,
        JSON_KIND_NUMBER,
        JSON_KIND_STRING,
        JSON_KIND_ARRAY,
        JSON_KIND_OBJECT,
} JsonKind;

typedef struct JsonMember {
        const char *key;        /* the key's raw bytes between its quotes, escapes as written */
        size_t key_n;
        const char *value;      /* the value's text, from its first byte to its last */
        size_t value_n;
        JsonKind kind;
} JsonMember;

typedef struct JsonScan {
        JsonKind kind;          /* of the top-level value */
        const char *open;       /* a top-level object: its '{' */
        JsonMember *members;    /* a top-level object's members, in the order written */
        size_t n_members;
} JsonScan;

/* s[0..n) must be exactly one JSON text nested at most `depth` deep (1: no container inside
 * the top-level one); NUL bytes are refused wherever they are. 0 and *ret filled, -EBADMSG
 * if the text is not that, -ENOMEM. */
int json_scan(const char *s, size_t n, unsigned depth, JsonScan *ret);
void json_scan_done(JsonScan *s);

/* The member whose key is written exactly `key` (no escapes), or NULL. */
const JsonMember *json_scan_member(const JsonScan *s, const char *key);
