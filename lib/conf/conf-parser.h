/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "parse-util.h"
#include "strv.h"

#define UNSET_U64 UINT64_MAX

/* One assignment as read from a file: enough to name it in an error. */
typedef struct ConfAssignment {
        const char *path;
        unsigned line;
        const char *section;
        const char *key;
        const char *value;
} ConfAssignment;

/* Parsers: store the value at `data`, or log "path:line: Invalid Key= value "…": reason"
 * and return -EINVAL. An empty value resets to "unset" (lists: to empty). */
typedef int (*conf_parse_t)(const ConfAssignment *a, void *data);

int conf_parse_string(const ConfAssignment *a, void *data);      /* char * */
int conf_parse_path(const ConfAssignment *a, void *data);        /* char *, path_check() */
int conf_parse_name(const ConfAssignment *a, void *data);        /* char *, name_is_valid() */
int conf_parse_bool(const ConfAssignment *a, void *data);        /* int, -1 unset */
int conf_parse_size(const ConfAssignment *a, void *data);        /* uint64_t, UNSET_U64 */
int conf_parse_timespan(const ConfAssignment *a, void *data);    /* usec_t, UNSET_U64 */
int conf_parse_uint(const ConfAssignment *a, void *data);        /* uint64_t > 0, UNSET_U64 */
int conf_parse_cpus(const ConfAssignment *a, void *data);        /* unsigned percent, 0 unset */
int conf_parse_port(const ConfAssignment *a, void *data);        /* uint16_t, 0 unset */
int conf_parse_strv(const ConfAssignment *a, void *data);        /* char **: one entry per line */
int conf_parse_name_list(const ConfAssignment *a, void *data);   /* char **: blank-separated names */
/* Blank-separated words into *l, each checked by check() (NULL or a reason); duplicates are
 * kept once, an empty value resets the list. */
int conf_parse_words(const ConfAssignment *a, char ***l, const char *(*check)(const char *word));
int conf_parse_credential(const ConfAssignment *a, void *data);  /* char *: a credential name */
int conf_parse_url(const ConfAssignment *a, void *data);        /* char *: http(s):// URL */

/* Logs "path:line: Invalid Key= value "v": reason" and returns -EINVAL. */
int conf_invalid(const ConfAssignment *a, const char *reason);

#define CONF_REPEATABLE (1U << 0)

typedef struct ConfKey {
        const char *section;
        const char *key;
        conf_parse_t parse;
        size_t offset;
        unsigned flags;
} ConfKey;

/* Tracks which non-repeatable keys a single file has set, to refuse duplicates. */
typedef struct ConfSeen {
        const ConfKey *key;
        const void *base;      /* which object: [Upstream a] and [Upstream b] differ */
        unsigned line;
} ConfSeen;

typedef struct ConfFileState {
        ConfSeen *seen;
        size_t n_seen;
} ConfFileState;

void conf_file_state_done(ConfFileState *s);

/* The line at which a non-repeatable `key` was set in this file (0: not set), for errors
 * found after parsing. */
unsigned conf_file_state_line(const ConfFileState *s, const char *key);

/* "<dir>/NAME<suffix>" → NAME, checked with name_is_valid(); else logs "path: not a <suffix>
 * file" or "Invalid <what> name" and returns -EINVAL. */
int conf_file_name(const char *path, const char *suffix, const char *what, char **ret);

/* Finds `key` of `section` in `table`, applies it to `base` + offset, refusing duplicates
 * of non-repeatable keys within the file. Unknown keys are errors. */
int conf_apply(const ConfKey *table, size_t n, ConfFileState *st, void *base,
               const ConfAssignment *a);

/* A file read against one table: the userdata of conf_table_handler(). */
typedef struct ConfTableParse {
        const ConfKey *table;
        size_t n;
        void *base;
        ConfFileState state;
} ConfTableParse;

/* An ini_strict_handler for a ConfTableParse: a section not in the table and any key
 * conf_apply() refuses are errors. */
int conf_table_handler(void *userdata, const char *path, unsigned line,
                       const char *section, const char *key, const char *value);

/* True if `section` appears in `table`. */
bool conf_table_has_section(const ConfKey *table, size_t n, const char *section);
