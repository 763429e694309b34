/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-strict.h"
#include "macro.h"
#include "utf8.h"

/* json-c 0.18 (Debian 13) refuses, in strict mode, every byte above 0x7f in a string: its
 * new check for control characters compares a signed char with 0x1f. So the tokener is
 * never shown such a byte: each UTF-8 character, validated here, is handed to it as the
 * \u escape that names it (a surrogate pair above U+FFFF). That means the same: inside a
 * string an escape is the character it names, and outside one neither form is valid JSON.
 * The one place where it would not, a character right after a backslash that starts an
 * escape ("\é" is no valid escape, "\\u00e9" would be), is refused. And since only 0.18
 * refuses a raw control character in a string, this scan refuses one for every json-c, as
 * any strict parser the text goes on to would. */

/* Whether s[0..n) is free of what no strict parser takes however json-c is built: a raw
 * control character inside a string. 1 if there is a non-ASCII byte to escape, 0 if not,
 * -EBADMSG. A quote ends a string unless an odd run of backslashes comes before it. */
static int scan(const char *s, size_t n) {
        size_t backslashes = 0;
        bool in_string = false, non_ascii = false;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];

                if (c >= 0x80)
                        non_ascii = true;
                else if (c < 0x20 && in_string)
                        return -EBADMSG;
                else if (c == '"' && backslashes % 2 == 0)
                        in_string = !in_string;
                backslashes = c == '\\' ? backslashes + 1 : 0;
        }
        return non_ascii;
}

/* s[0..n) with every non-ASCII character as its \u escape, in *ret (NUL-terminated). */
static int escape_non_ascii(const char *s, size_t n, char **ret, size_t *ret_n) {
        const unsigned char *u = (const unsigned char *) s;
        size_t backslashes = 0, k = 0;
        char *out;

        if (n > (SIZE_MAX - 1) / 3)
                return -ENOMEM;
        out = malloc(n * 3 + 1);   /* 2 bytes become 6, 3 become 6, 4 become 12 */
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n;) {
                uint32_t cp;
                size_t len;

                if (u[i] < 0x80) {
                        backslashes = u[i] == '\\' ? backslashes + 1 : 0;
                        out[k++] = s[i++];
                        continue;
                }
                if (backslashes % 2 == 1 || utf8_decode(u + i, n - i, &cp, &len) < 0) {
                        free(out);
                        return -EBADMSG;
                }
                if (cp >= 0x10000) {
                        cp -= 0x10000;
                        k += (size_t) sprintf(out + k, "\\u%04x\\u%04x", 0xd800 | (cp >> 10), 0xdc00 | (cp & 0x3ff));
                } else
                        k += (size_t) sprintf(out + k, "\\u%04x", cp);
                backslashes = 0;
                i += len;
        }
        out[k] = 0;
        *ret = out;
        *ret_n = k;
        return 0;
}

int json_parse_strict(const char *s, size_t n, int depth, json_object **ret) {
        _cleanup_free_ char *escaped = NULL;
        json_tokener *tok;
        json_object *o;
        size_t end;
        int r;

        if (memchr(s, 0, n))
                return -EBADMSG;
        r = scan(s, n);
        if (r < 0)
                return r;
        if (r > 0) {
                r = escape_non_ascii(s, n, &escaped, &n);
                if (r < 0)
                        return r;
                s = escaped;
        }
        if (n > INT_MAX) /* json-c takes an int length */
                return -EBADMSG;
        tok = json_tokener_new_ex(depth);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, s, (int) n);
        end = json_tokener_get_parse_end(tok);
        if (o && json_tokener_get_error(tok) != json_tokener_success)
                o = (json_object_put(o), NULL);
        json_tokener_free(tok);
        if (!o)
                return -EBADMSG;
        for (; end < n; end++)
                if (!strchr(" \t\r\n", s[end])) {
                        json_object_put(o);
                        return -EBADMSG;
                }
        *ret = o;
        return 0;
}
