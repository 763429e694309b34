/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>

#include "cmdline.h"

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        c = (char) tolower((unsigned char) c);
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* Reads one escape after a backslash; returns the byte or -1. Advances *p. */
static int read_escape(const char **p) {
        char c = **p;
        int a, b;

        (*p)++;
        switch (c) {
        case '\\': case '"': case '\'': return c;
        case 'n': return '\n';
        case 't': return '\t';
        case 'r': return '\r';
        case 's': return ' ';
        case 'x':
                a = unhex((*p)[0]);
                b = a >= 0 ? unhex((*p)[1]) : -1;
                if (b < 0 || (a == 0 && b == 0))
                        return -1;
                *p += 2;
                return a * 16 + b;
        default:
                return -1;
        }
}

int cmdline_split(const char *line, char ***ret_argv, const char **ret_reason) {
        _cleanup_strv_free_ char **argv = calloc(1, sizeof(char *));
        _cleanup_free_ char *word = malloc(strlen(line) + 1);
        const char *p = line;

        if (!argv || !word)
                return -ENOMEM;

        for (;;) {
                size_t n = 0;
                char quote = 0;

                while (*p == ' ' || *p == '\t')
                        p++;
                if (!*p)
                        break;

                for (; *p; ) {
                        if (!quote && (*p == ' ' || *p == '\t'))
                                break;
                        if (!quote && (*p == '"' || *p == '\'')) {
                                quote = *p++;
                                continue;
                        }
                        if (quote && *p == quote) {
                                quote = 0;
                                p++;
                                continue;
                        }
                        if (*p == '\\') {
                                int c;
                                p++;
                                if (!*p) {
                                        *ret_reason = "trailing backslash";
                                        return -EINVAL;
                                }
                                c = read_escape(&p);
                                if (c < 0) {
                                        *ret_reason = "unknown or invalid backslash escape";
                                        return -EINVAL;
                                }
                                word[n++] = (char) c;
                                continue;
                        }
                        word[n++] = *p++;
                }
                if (quote) {
                        *ret_reason = "unterminated quote";
                        return -EINVAL;
                }
                word[n] = 0;
                if (strv_extend(&argv, word) < 0)
                        return -ENOMEM;
        }

        *ret_argv = TAKE_PTR(argv);
        return 0;
}

static char *quote(const char *word, bool exec) {
        char *r = malloc(strlen(word) * 4 + 3), *t;

        if (!r)
                return NULL;
        t = r;
        *t++ = '"';
        for (const unsigned char *p = (const unsigned char *) word; *p; p++) {
                switch (*p) {
                case '\\': t = stpcpy(t, "\\\\"); break;
                case '"':  t = stpcpy(t, "\\\""); break;
                case '%':  t = stpcpy(t, "%%"); break;
                case '$':  t = stpcpy(t, exec ? "$$" : "$"); break;
                case '\n': t = stpcpy(t, "\\n"); break;
                case '\t': t = stpcpy(t, "\\t"); break;
                default:
                        if (*p < 0x20 || *p == 0x7f)
                                t += sprintf(t, "\\x%02x", *p);
                        else
                                *t++ = (char) *p;
                }
        }
        *t++ = '"';
        *t = 0;
        return r;
}

char *unit_exec_quote(const char *word) {
        return quote(word, true);
}

char *unit_env_quote(const char *assignment) {
        return quote(assignment, false);
}

bool unit_value_continues(const char *v) {
        size_t n = 0;

        for (size_t l = strlen(v); l > n && v[l - n - 1] == '\\'; )
                n++;
        return n % 2 == 1;
}

char *unit_specifier_escape(const char *s) {
        char *r = malloc(strlen(s) * 2 + 2), *t;

        if (!r)
                return NULL;
        t = r;
        for (; *s; s++) {
                if (*s == '%')
                        *t++ = '%';
                *t++ = *s;
        }
        *t = 0;
        /* systemd joins a line that ends in an odd number of backslashes with the next one;
         * free text has no escape for it, so the last one is doubled (shown as "\\"). */
        if (unit_value_continues(r))
                strcpy(t, "\\");
        return r;
}
