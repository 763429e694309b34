/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>

#include "conf-parser.h"
#include "log.h"

int conf_invalid(const ConfAssignment *a, const char *reason) {
        return log_error_errno(EINVAL, "%s:%u: Invalid %s= value \"%s\" in [%s]: %s",
                               a->path, a->line, a->key, a->value, a->section, reason);
}

static int set_string(char **s, const char *v) {
        char *c = NULL;

        if (!isempty(v)) {
                c = strdup(v);
                if (!c)
                        return log_oom();
        }
        free(*s);
        *s = c;
        return 0;
}

int conf_parse_string(const ConfAssignment *a, void *data) {
        return set_string(data, a->value);
}

int conf_parse_path(const ConfAssignment *a, void *data) {
        const char *reason;

        if (!isempty(a->value) && (reason = path_check(a->value)))
                return conf_invalid(a, reason);
        return set_string(data, a->value);
}

int conf_parse_name(const ConfAssignment *a, void *data) {
        if (!isempty(a->value) && !name_is_valid(a->value))
                return conf_invalid(a, "not a valid name (^[a-z0-9][a-z0-9_-]{0,62}$)");
        return set_string(data, a->value);
}

int conf_parse_credential(const ConfAssignment *a, void *data) {
        for (const char *p = a->value; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("_.-@", *p))
                        return conf_invalid(a, "not a credential name (letters, digits, \"_.-@\")");
        if (streq(a->value, ".") || streq(a->value, "..") || strlen(a->value) > 255)
                return conf_invalid(a, "not a credential name");
        return set_string(data, a->value);
}

int conf_parse_bool(const ConfAssignment *a, void *data) {
        int *b = data, r;

        if (isempty(a->value)) {
                *b = -1;
                return 0;
        }
        r = parse_boolean(a->value);
        if (r < 0)
                return conf_invalid(a, "not a boolean (yes/no, true/false, on/off, 1/0)");
        *b = r;
        return 0;
}

int conf_parse_size(const ConfAssignment *a, void *data) {
        uint64_t *u = data;

        if (isempty(a->value)) {
                *u = UNSET_U64;
                return 0;
        }
        if (streq(a->value, "infinity"))
                return conf_invalid(a, "\"infinity\" is refused: a sandbox always has a limit");
        if (parse_size(a->value, u) < 0 || *u == UNSET_U64)
                return conf_invalid(a, "not a size (bytes, or with a K, M, G, T suffix, powers of 1024)");
        if (*u == 0)
                return conf_invalid(a, "must be greater than 0");
        return 0;
}

int conf_parse_timespan(const ConfAssignment *a, void *data) {
        usec_t *u = data;

        if (isempty(a->value)) {
                *u = UNSET_U64;
                return 0;
        }
        if (streq(a->value, "infinity"))
                return conf_invalid(a, "\"infinity\" is not accepted (0 disables where allowed)");
        if (parse_timespan(a->value, u) < 0 || *u == UNSET_U64)
                return conf_invalid(a, "not a time span (e.g. \"90s\", \"15min\", \"1h 30min\")");
        return 0;
}

int conf_parse_uint(const ConfAssignment *a, void *data) {
        uint64_t *u = data;

        if (isempty(a->value)) {
                *u = UNSET_U64;
                return 0;
        }
        if (parse_uint64(a->value, u) < 0 || *u == UNSET_U64)
                return conf_invalid(a, "not an unsigned integer");
        if (*u == 0)
                return conf_invalid(a, "must be greater than 0");
        return 0;
}

int conf_parse_cpus(const ConfAssignment *a, void *data) {
        unsigned *u = data;

        if (isempty(a->value)) {
                *u = 0;
                return 0;
        }
        if (parse_cpus(a->value, u) < 0)
                return conf_invalid(a, "not a CPU count greater than 0 (e.g. \"2\" or \"1.5\", at most two decimals)");
        return 0;
}

int conf_parse_port(const ConfAssignment *a, void *data) {
        uint16_t *u = data;

        if (isempty(a->value)) {
                *u = 0;
                return 0;
        }
        if (parse_port(a->value, u) < 0)
                return conf_invalid(a, "not a TCP port (1…65535)");
        return 0;
}

int conf_parse_strv(const ConfAssignment *a, void *data) {
        char ***l = data;

        if (isempty(a->value)) {
                *l = strv_free(*l);
                return 0;
        }
        return strv_extend(l, a->value) < 0 ? log_oom() : 0;
}

int conf_parse_words(const ConfAssignment *a, char ***l, const char *(*check)(const char *word)) {
        _cleanup_free_ char *copy = strdup(a->value);
        char *save = NULL;

        if (!copy)
                return log_oom();
        if (isempty(a->value)) {
                *l = strv_free(*l);
                return 0;
        }
        for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                const char *reason = check(w);
                if (reason)
                        return log_error_errno(EINVAL, "%s:%u: Invalid %s= entry \"%s\" in [%s]: %s",
                                               a->path, a->line, a->key, w, a->section, reason);
                if (!strv_contains(*l, w) && strv_extend(l, w) < 0)
                        return log_oom();
        }
        return 0;
}

static const char *check_name(const char *w) {
        return name_is_valid(w) ? NULL : "not a valid name (^[a-z0-9][a-z0-9_-]{0,62}$)";
}

int conf_parse_name_list(const ConfAssignment *a, void *data) {
        return conf_parse_words(a, data, check_name);
}

int conf_parse_url(const ConfAssignment *a, void *data) {
        const char *rest;

        if (isempty(a->value)) {
                char **s = data;
                *s = mfree(*s);
                return 0;
        }
        rest = startswith(a->value, "http://") ?: startswith(a->value, "https://");
        if (!rest || !*rest || strpbrk(a->value, " \t\"'\\"))
                return conf_invalid(a, "not an http:// or https:// URL");
        return conf_parse_string(a, data);
}

void conf_file_state_done(ConfFileState *s) {
        s->seen = mfree(s->seen);
        s->n_seen = 0;
}

unsigned conf_file_state_line(const ConfFileState *s, const char *key) {
        for (size_t i = 0; i < s->n_seen; i++)
                if (streq(s->seen[i].key->key, key))
                        return s->seen[i].line;
        return 0;
}

int conf_file_name(const char *path, const char *suffix, const char *what, char **ret) {
        const char *base = strrchr(path, '/');
        size_t n, l = strlen(suffix);
        char *name;

        base = base ? base + 1 : path;
        n = strlen(base);
        if (n <= l || !streq(base + n - l, suffix))
                return log_error_errno(EINVAL, "%s: not a %s file.", path, suffix);
        name = strndup(base, n - l);
        if (!name)
                return log_oom();
        if (!name_is_valid(name)) {
                log_error("%s: Invalid %s name \"%s\" (^[a-z0-9][a-z0-9_-]{0,62}$); refusing the file.", path, what, name);
                free(name);
                return -EINVAL;
        }
        *ret = name;
        return 0;
}

bool conf_table_has_section(const ConfKey *table, size_t n, const char *section) {
        for (size_t i = 0; i < n; i++)
                if (streq(table[i].section, section))
                        return true;
        return false;
}

static int check_duplicate(ConfFileState *st, const ConfKey *k, const void *base,
                           const ConfAssignment *a) {
        ConfSeen *s;

        for (size_t i = 0; i < st->n_seen; i++)
                if (st->seen[i].key == k && st->seen[i].base == base)
                        return log_error_errno(EINVAL, "%s:%u: %s= in [%s] is already set at line %u and is not a list; refusing the file.",
                                               a->path, a->line, a->key, a->section, st->seen[i].line);
        s = realloc(st->seen, sizeof(ConfSeen) * (st->n_seen + 1));
        if (!s)
                return log_oom();
        st->seen = s;
        st->seen[st->n_seen++] = (ConfSeen) { .key = k, .base = base, .line = a->line };
        return 0;
}

int conf_apply(const ConfKey *table, size_t n, ConfFileState *st, void *base,
               const ConfAssignment *a) {
        for (size_t i = 0; i < n; i++) {
                const ConfKey *k = &table[i];
                int r;

                if (!streq(k->section, a->section) || !streq(k->key, a->key))
                        continue;
                if (!(k->flags & CONF_REPEATABLE)) {
                        r = check_duplicate(st, k, base, a);
                        if (r < 0)
                                return r;
                }
                return k->parse(a, (char *) base + k->offset);
        }
        return log_error_errno(EINVAL, "%s:%u: Unknown key %s= in section [%s]; refusing the file.",
                               a->path, a->line, a->key, a->section);
}

int conf_table_handler(void *userdata, const char *path, unsigned line,
                       const char *section, const char *key, const char *value) {
        ConfTableParse *p = userdata;
        ConfAssignment a = { path, line, section, key, value };

        if (!key)
                return conf_table_has_section(p->table, p->n, section) ? 0 :
                        log_error_errno(EINVAL, "%s:%u: Unknown section [%s]; refusing the file.", path, line, section);
        return conf_apply(p->table, p->n, &p->state, p->base, &a);
}
