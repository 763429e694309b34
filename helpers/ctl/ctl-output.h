/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>
#include <stdint.h>

#include "ctl.h"
#include "macro.h"

/* A table printed as systemctl does: on a tty a header line and aligned columns; piped,
 * the same aligned rows without the header (like systemctl --no-legend), so that awk and
 * cut see one record per line. An empty cell prints as "-". */
typedef struct Table {
        size_t n_columns;
        char **cells;           /* row-major, header row first */
        size_t n_cells;
} Table;

int table_new(Table *t, size_t n_columns, ...);   /* header names, NULL-terminated */
int table_add_row(Table *t, ...);                 /* n_columns strings (NULL allowed) */
void table_print(const Table *t, const CtlOptions *o, FILE *f);
void table_done(Table *t);

/* Prints `obj` (pretty on a tty, one line when piped) and a newline; returns 0 or -ENOMEM. */
int json_print(struct json_object *obj, const CtlOptions *o);

/* The version of the JSON output (cloisterctl(1), JSON OUTPUT): raised only when a field
 * changes type or meaning or goes away; new fields do not raise it. */
#define CTL_JSON_VERSION 1

/* A new top-level object holding "version": CTL_JSON_VERSION; NULL on out of memory. */
struct json_object *json_new_root(void);

/* Shorthands that tolerate NULL values (json null). */
int json_add_string(struct json_object *obj, const char *key, const char *value);
int json_add_bool(struct json_object *obj, const char *key, bool value);
/* An array of the strings, [] for an empty or NULL list. */
int json_add_strv(struct json_object *obj, const char *key, char * const *l);
/* An integer; UNSET_U64 (unset) is null. */
int json_add_u64(struct json_object *obj, const char *key, uint64_t value);
/* CPUs= as a number of CPUs (150 → 1.5); 0 (unset) is null. */
int json_add_cpus(struct json_object *obj, const char *key, unsigned percent);
/* A systemd-analyze exposure "4.2 MEDIUM" as key: 4.2 and level_key: "MEDIUM"; both null if
 * `exposure` is NULL (unknown) or unreadable. */
int json_add_exposure(struct json_object *obj, const char *key, const char *level_key, const char *exposure);

static inline void json_object_putp(struct json_object **o) {
        if (*o)
                json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_object_putp)

/* "1G", "512M", "1.5G" (powers of 1024, as Memory= reads them); NULL on out of memory. */
char *format_bytes(uint64_t bytes);
/* 150 → "1.5", 200 → "2". */
char *format_cpus(unsigned percent);
/* The names of `l` separated by commas ("" for an empty list); NULL on out of memory. */
char *ctl_join(char * const *l);
