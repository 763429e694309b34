/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/basic/json-scan.c: RFC 8259 checked whole without a tree, and where a top-level
 * object's members sit (the broker edits a request's bytes there). */

#include <errno.h>
#include <string.h>

#include "json-scan.h"
#include "tap.h"

static void test_accepted(void) {
        static const struct { const char *text, *what; } good[] = {
                { "{}", "an empty object" },
                { " [ ] ", "an empty array, whitespace around it" },
                { "\"x\"", "a string alone" },
                { "0", "a number alone" },
                { "-0.5e+10", "a number with all its parts" },
                { "null", "null alone" },
                { "{\"a\":[1,true,false,null,{\"b\":\"\\u00e9\\n\\/\"}]}", "nesting, literals, escapes" },
                { "{\"a\":\"caf\xc3\xa9 \xf0\x9f\x8e\x89\"}", "UTF-8 text" },
                { "{\"a\":\"\x7f\"}", "DEL is no control character in JSON" },
                { "{\"a\":\"\\ud800\"}", "a lone surrogate as an escape (the grammar allows it)" },
        };
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
                JsonScan s = {};
                int r = json_scan(good[i].text, strlen(good[i].text), 8, &s);
                if (!ok(r == 0, "accepted: %s", good[i].what))
                        diag("r=%d", r);
                json_scan_done(&s);
        }
}

static void test_refused(void) {
        static const struct { const char *text; size_t n; const char *what; } bad[] = {
                { "", 0, "nothing" },
                { "   ", 3, "only whitespace" },
                { "{\"a\":1,}", 0, "a trailing comma" },
                { "{\"a\" 1}", 0, "no colon" },
                { "{a:1}", 0, "a key without quotes" },
                { "{\"a\":01}", 0, "a leading zero (json-c takes it)" },
                { "[1.]", 0, "no digit after the point (json-c takes it)" },
                { "[.5]", 0, "no digit before the point" },
                { "[1e]", 0, "no digit in the exponent" },
                { "[NaN]", 0, "NaN (json-c takes it)" },
                { "[-Infinity]", 0, "Infinity" },
                { "[tru]", 0, "a literal cut short" },
                { "[True]", 0, "a literal in another case" },
                { "{\"a\":\"x\ty\"}", 0, "a raw tab in a string" },
                { "{\"a\":\"\\x\"}", 0, "an unknown escape" },
                { "{\"a\":\"\\u12g4\"}", 0, "a \\u escape with a non-hex digit" },
                { "{\"a\":\"\\u12\"}", 0, "a \\u escape cut short" },
                { "{\"a\":\"\xc3\"}", 0, "UTF-8 cut short" },
                { "{\"a\":\"\xed\xa0\x80\"}", 0, "a surrogate in UTF-8" },
                { "{\"a\":\"\xc0\xaf\"}", 0, "an overlong form" },
                { "{\"a\":\"x\\\0\"}", 10, "a NUL after a backslash" },
                { "{\"a\":\"x\0\"}", 9, "a NUL in a string" },
                { "{\"a\":1}\0", 8, "a NUL after the value" },
                { "{\"a\":1} {}", 0, "two values" },
                { "{\"a\":1]", 0, "brackets that do not match" },
                { "[[[[[[[[[1]]]]]]]]]", 0, "nested deeper than allowed (9 > 8)" },
                { "\xef\xbb\xbf{}", 0, "a byte order mark" },
                { "{\"a\":\"x\"", 0, "cut short" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                JsonScan s = {};
                size_t n = bad[i].n ?: strlen(bad[i].text);
                int r = json_scan(bad[i].text, n, 8, &s);
                if (!ok(r == -EBADMSG, "refused: %s", bad[i].what))
                        diag("r=%d", r);
                json_scan_done(&s);
        }
}

static bool member_is(const JsonScan *s, size_t i, const char *key, const char *value, JsonKind kind) {
        const JsonMember *m;

        if (i >= s->n_members)
                return false;
        m = &s->members[i];
        return m->key_n == strlen(key) && memcmp(m->key, key, m->key_n) == 0 &&
               m->value_n == strlen(value) && memcmp(m->value, value, m->value_n) == 0 && m->kind == kind;
}

static void test_members(void) {
        const char *text = "{ \"model\" : \"gpt-4o\" ,\"stream\":true,\"n\":-1.5e3 ,\"o\":{\"x\":[1,{\"y\":2}]},"
                           "\"a\":[],\"k\\u0065y\":null,\"s\":\"\\\"}\"}";
        JsonScan s = {};

        is_int(json_scan(text, strlen(text), 8, &s), 0, "an object with members of every kind");
        ok(s.kind == JSON_KIND_OBJECT && s.open == text, "its kind and its opening brace");
        is_int((int) s.n_members, 7, "the members of the top-level object only, not of the nested ones");
        ok(member_is(&s, 0, "model", "\"gpt-4o\"", JSON_KIND_STRING), "a string value, quotes included, no whitespace");
        ok(member_is(&s, 1, "stream", "true", JSON_KIND_BOOLEAN), "a boolean");
        ok(member_is(&s, 2, "n", "-1.5e3", JSON_KIND_NUMBER), "a number ends where it ends, not at the comma");
        ok(member_is(&s, 3, "o", "{\"x\":[1,{\"y\":2}]}", JSON_KIND_OBJECT), "an object, nested ones inside it");
        ok(member_is(&s, 4, "a", "[]", JSON_KIND_ARRAY), "an empty array");
        ok(member_is(&s, 5, "k\\u0065y", "null", JSON_KIND_NULL), "a key as written, escape and all");
        ok(member_is(&s, 6, "s", "\"\\\"}\"", JSON_KIND_STRING), "a string holding an escaped quote and a brace");
        ok(json_scan_member(&s, "stream") == &s.members[1], "found by its key");
        ok(!json_scan_member(&s, "key"), "a key written with an escape is not found by its meaning");
        json_scan_done(&s);

        is_int(json_scan("[{\"a\":1}]", 9, 8, &s), 0, "an array");
        ok(s.kind == JSON_KIND_ARRAY && !s.open && s.n_members == 0, "an array has no members");
        json_scan_done(&s);
}

int main(void) {
        test_accepted();
        test_refused();
        test_members();
        return tap_done();
}
