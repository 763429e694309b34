/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "cmdline.h"
#include "directives.h"
#include "log.h"
#include "parse-util.h"
#include "unit-settings.h"

void unit_settings_done(UnitSettings *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->items[i].value);
        s->items = mfree(s->items);
        s->n = 0;
}

int unit_settings_add(UnitSettings *s, const char *section, const char *key, const char *value) {
        UnitSetting *n = realloc(s->items, sizeof(UnitSetting) * (s->n + 1));
        char *v = strdup(value);

        if (!n || !v) {
                free(v);
                if (n)
                        s->items = n;
                return -ENOMEM;
        }
        s->items = n;
        s->items[s->n++] = (UnitSetting) { section, key, v };
        return 0;
}

int unit_settings_addf(UnitSettings *s, const char *section, const char *key, const char *fmt, ...) {
        _cleanup_free_ char *v = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&v, fmt, ap);
        va_end(ap);
        if (r < 0) {
                v = NULL;
                return -ENOMEM;
        }
        return unit_settings_add(s, section, key, v);
}

/* What a line-based reader of the unit would not read back as one assignment: a line break,
 * a continuation onto the next line, bytes systemd refuses. A renderer that lets one
 * through is a bug; refusing here keeps a half-understood unit off disk. */
static const char *value_check(const char *v) {
        if (strpbrk(v, "\n\r"))
                return "a line break";
        if (unit_value_continues(v))
                return "a trailing backslash (continuation)";
        if (!utf8_is_valid(v))
                return "bytes that are not UTF-8";
        return NULL;
}

int unit_settings_check(const UnitSettings *s) {
        for (size_t i = 0; i < s->n; i++) {
                const char *why = value_check(s->items[i].value);
                /* the D-Bus renderer walks the same table: no directive without its row */
                if (!directive_find(s->items[i].section, s->items[i].key))
                        return log_error_errno(EINVAL, "Refusing to write [%s] %s=: it has no row in lib/profile/directives.c.",
                                               s->items[i].section, s->items[i].key);
                if (why)
                        return log_error_errno(EINVAL, "Refusing to write [%s] %s=: the value holds %s.",
                                               s->items[i].section, s->items[i].key, why);
        }
        return 0;
}

int unit_settings_write(FILE *f, const UnitSettings *s) {
        int r = unit_settings_check(s);

        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n; i++) {
                const char *section = s->items[i].section;
                bool first = true;

                /* Print each section once, at its first appearance. */
                for (size_t j = 0; j < i; j++)
                        if (streq(s->items[j].section, section))
                                first = false;
                if (!first)
                        continue;
                fprintf(f, "%s[%s]\n", i > 0 ? "\n" : "", section);
                for (size_t j = i; j < s->n; j++)
                        if (streq(s->items[j].section, section))
                                fprintf(f, "%s=%s\n", s->items[j].key, s->items[j].value);
        }
        return ferror(f) ? -EIO : 0;
}

const char *unit_settings_get(const UnitSettings *s, const char *section, const char *key) {
        const char *v = NULL;

        for (size_t i = 0; i < s->n; i++)
                if (streq(s->items[i].section, section) && streq(s->items[i].key, key))
                        v = s->items[i].value;
        return v;
}
