/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>

#include "conf-parser.h"
#include "ctl-output.h"
#include "strv.h"
#include "log.h"

static int table_push(Table *t, const char *s) {
        char **c = realloc(t->cells, sizeof(char *) * (t->n_cells + 1));

        if (!c)
                return -ENOMEM;
        t->cells = c;
        c[t->n_cells] = strdup(isempty(s) ? "-" : s);
        if (!c[t->n_cells])
                return -ENOMEM;
        t->n_cells++;
        return 0;
}

int table_new(Table *t, size_t n_columns, ...) {
        va_list ap;
        int r = 0;

        *t = (Table) { .n_columns = n_columns };
        va_start(ap, n_columns);
        for (size_t i = 0; i < n_columns && r >= 0; i++)
                r = table_push(t, va_arg(ap, const char *));
        va_end(ap);
        return r;
}

int table_add_row(Table *t, ...) {
        va_list ap;
        int r = 0;

        va_start(ap, t);
        for (size_t i = 0; i < t->n_columns && r >= 0; i++)
                r = table_push(t, va_arg(ap, const char *));
        va_end(ap);
        return r;
}

void table_print(const Table *t, const CtlOptions *o, FILE *f) {
        size_t width[t->n_columns];
        size_t first = o->tty ? 0 : 1;      /* piped: no header row */
        bool bold = o->tty && o->color;     /* --legend into a pipe, NO_COLOR: no escapes */

        memset(width, 0, sizeof width);
        for (size_t i = first * t->n_columns; i < t->n_cells; i++) {
                size_t l = strlen(t->cells[i]);
                if (l > width[i % t->n_columns])
                        width[i % t->n_columns] = l;
        }
        for (size_t i = first * t->n_columns; i < t->n_cells; i++) {
                size_t col = i % t->n_columns;
                bool last = col == t->n_columns - 1;
                bool header = i < t->n_columns;

                if (header && bold)
                        fputs("\033[1m", f);
                if (last)
                        fputs(t->cells[i], f);
                else
                        fprintf(f, "%-*s ", (int) width[col], t->cells[i]);
                if (header && bold)
                        fputs("\033[0m", f);
                if (last)
                        fputc('\n', f);
        }
}

void table_done(Table *t) {
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i]);
        t->cells = mfree(t->cells);
        t->n_cells = 0;
}

int json_print(struct json_object *obj, const CtlOptions *o) {
        const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_NOSLASHESCAPE |
                                                       (o->tty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN));

        if (!s)
                return log_oom();
        puts(s);
        return 0;
}

struct json_object *json_new_root(void) {
        struct json_object *root = json_object_new_object();

        if (root && json_add_u64(root, "version", CTL_JSON_VERSION) < 0)
                return json_object_put(root), NULL;
        return root;
}

static int add_value(struct json_object *obj, const char *key, struct json_object *v) {
        if (json_object_object_add(obj, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_add_strv(struct json_object *obj, const char *key, char * const *l) {
        struct json_object *a = json_object_new_array();

        if (!a)
                return -ENOMEM;
        STRV_FOREACH(s, l)
                if (json_object_array_add(a, json_object_new_string(*s)) < 0) {
                        json_object_put(a);
                        return -ENOMEM;
                }
        return add_value(obj, key, a);
}

int json_add_u64(struct json_object *obj, const char *key, uint64_t value) {
        struct json_object *v = NULL;

        if (value != UNSET_U64 && !(v = json_object_new_uint64(value)))
                return -ENOMEM;
        return add_value(obj, key, v);
}

int json_add_cpus(struct json_object *obj, const char *key, unsigned percent) {
        _cleanup_free_ char *s = percent > 0 ? format_cpus(percent) : NULL;
        struct json_object *v = NULL;

        /* _s: serialised as "1.5", not as 1.5's nearest binary fraction to 17 digits */
        if (percent > 0 && !(s && (v = json_object_new_double_s(percent / 100.0, s))))
                return -ENOMEM;
        return add_value(obj, key, v);
}

int json_add_exposure(struct json_object *obj, const char *key, const char *level_key, const char *exposure) {
        struct json_object *n = NULL, *l = NULL;
        char *end = NULL;
        double d = exposure ? strtod(exposure, &end) : NAN;

        if (exposure && end != exposure && isfinite(d) && *end == ' ' && !isempty(end + 1)) {
                _cleanup_free_ char *number = strndup(exposure, end - exposure);
                n = number ? json_object_new_double_s(d, number) : NULL;
                l = json_object_new_string(end + 1);
                if (!n || !l) {
                        json_object_put(n);
                        json_object_put(l);
                        return -ENOMEM;
                }
        }
        if (add_value(obj, key, n) < 0) {
                json_object_put(l);
                return -ENOMEM;
        }
        return add_value(obj, level_key, l);
}

int json_add_string(struct json_object *obj, const char *key, const char *value) {
        struct json_object *v = NULL;

        if (value && !(v = json_object_new_string(value)))
                return -ENOMEM;
        return json_object_object_add(obj, key, v) < 0 ? -ENOMEM : 0;
}

int json_add_bool(struct json_object *obj, const char *key, bool value) {
        struct json_object *v = json_object_new_boolean(value);

        if (!v)
                return -ENOMEM;
        return json_object_object_add(obj, key, v) < 0 ? -ENOMEM : 0;
}

char *format_bytes(uint64_t bytes) {
        static const char suffixes[] = "KMGTPE";
        unsigned k = 0;
        uint64_t unit = 1;

        while (k < sizeof suffixes - 1 && bytes >= unit * 1024)
                unit *= 1024, k++;
        if (k == 0)
                return strprintf("%" PRIu64 "B", bytes);
        if (bytes % unit == 0)
                return strprintf("%" PRIu64 "%c", bytes / unit, suffixes[k - 1]);
        return strprintf("%.1f%c", (double) bytes / (double) unit, suffixes[k - 1]);
}

char *format_cpus(unsigned percent) {
        if (percent % 100 == 0)
                return strprintf("%u", percent / 100);
        if (percent % 10 == 0)
                return strprintf("%u.%u", percent / 100, percent % 100 / 10);
        return strprintf("%u.%02u", percent / 100, percent % 100);
}

char *ctl_join(char * const *l) {
        size_t len = 1;
        char *s;

        STRV_FOREACH(i, l)
                len += strlen(*i) + 1;
        s = calloc(len, 1);
        if (!s)
                return NULL;
        STRV_FOREACH(i, l) {
                if (*s)
                        strcat(s, ",");
                strcat(s, *i);
        }
        return s;
}
