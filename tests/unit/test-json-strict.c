/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/basic/json-strict.c: strict JSON that holds text in any language, on every json-c
 * (0.18, Debian 13's, refuses every non-ASCII byte in strict mode). */

#include <errno.h>

#include "json-strict.h"
#include "tap.h"

static const char *string_of(const char *text, const char *key) {
        static char buf[256];
        json_object *o = NULL, *v;

        buf[0] = 0;
        if (json_parse_strict(text, strlen(text), 32, &o) < 0)
                return NULL;
        if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
                snprintf(buf, sizeof buf, "%s", json_object_get_string(v));
        json_object_put(o);
        return buf;
}

static void test_text_in_any_language(void) {
        static const struct { const char *text, *value, *what; } good[] = {
                { "{\"a\":\"caf\xc3\xa9\"}", "caf\xc3\xa9", "two-byte UTF-8 (é)" },
                { "{\"a\":\"\xe2\x80\x93 \xe6\xbc\xa2\xe5\xad\x97\"}", "\xe2\x80\x93 \xe6\xbc\xa2\xe5\xad\x97", "three-byte UTF-8 (–, 漢字)" },
                { "{\"a\":\"\xf0\x9f\x8e\x89!\"}", "\xf0\x9f\x8e\x89!", "four-byte UTF-8 (🎉), above U+FFFF" },
                { "{\"a\":\"\\\\\xc3\xa9\"}", "\\\xc3\xa9", "an escaped backslash before é" },
                { "{\"a\":\"\\u00e9\xc3\xa9\"}", "\xc3\xa9\xc3\xa9", "an escape and the character it names, side by side" },
                { "{\"\xc3\xa9\":1,\"a\":\"x\"}", "x", "a non-ASCII key" },
                { "{\"a\":\"plain\"}  \n", "plain", "ASCII, whitespace after it" },
                { "{\n\t\"a\" :\r\n \"t\\tab\"}", "t\tab", "whitespace between tokens, an escaped tab" },
                { "{\"b\":\"\\\\\",\"a\":\"x\"}", "x", "an escaped backslash right before a closing quote" },
        };
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
                const char *v = string_of(good[i].text, "a");
                if (ok(v && strcmp(v, good[i].value) == 0, "parsed: %s", good[i].what))
                        continue;
                diag("got %s", v ?: "(refused)");
        }
}

static void test_refused(void) {
        static const struct { const char *text, *what; } bad[] = {
                { "{\"a\":\"\xc3\"}", "UTF-8 cut short" },
                { "{\"a\":\"\xc0\xaf\"}", "an overlong form" },
                { "{\"a\":\"\xe0\x80\xaf\"}", "an overlong three-byte form" },
                { "{\"a\":\"\xed\xa0\x80\"}", "a surrogate encoded in UTF-8" },
                { "{\"a\":\"\xf4\x90\x80\x80\"}", "above U+10FFFF" },
                { "{\"a\":\"\xff\"}", "a byte that starts no UTF-8 character" },
                { "{\"a\":\"\x80\"}", "a lone continuation byte" },
                { "{\"a\":\"\\\xc3\xa9\"}", "a backslash before é (no valid escape; \\\\u00e9 would be)" },
                { "{\"a\":\"\\u00\xc3\xa9\"}", "é inside a \\u escape" },
                { "{\"a\":\"x\"}\xc3\xa9", "a character after the value" },
                { "{\xc3\xa9:1}", "a character outside a string" },
                { "{\"a\":\"x\",}", "a trailing comma (strict)" },
                { "{\"a\":\"x\ty\"}", "a raw tab in a string value (every json-c, not only 0.18)" },
                { "{\"a\x01\":1}", "a raw control character in a key" },
                { "{\"a\":\"\\\"\x1f\"}", "a raw control character after an escaped quote" },
                { "{\"a\":\"\xc3\xa9\n\"}", "a raw newline in a string with text beyond ASCII" },
                { "{\"a\":\"x\"", "a value cut short" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                json_object *o = NULL;
                int r = json_parse_strict(bad[i].text, strlen(bad[i].text), 32, &o);
                if (!ok(r == -EBADMSG, "refused: %s", bad[i].what))
                        diag("r=%d: %s", r, o ? json_object_to_json_string(o) : "");
                json_object_put(o);
        }
}

int main(void) {
        test_text_in_any_language();
        test_refused();
        return tap_done();
}
