/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>

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
        bool bold = o->tty && isatty(fileno(f));  /* --legend into a pipe: no escapes */

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
