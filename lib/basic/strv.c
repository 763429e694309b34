/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "strv.h"

char **strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **i = l; *i; i++)
                free(*i);
        return mfree(l);
}

size_t strv_length(char * const *l) {
        size_t n = 0;
        while (l && l[n])
                n++;
        return n;
}

int strv_push(char ***l, char *value) {
        size_t n = strv_length(*l);
        char **c;

        if (!value)
                return -ENOMEM;
        c = realloc(*l, sizeof(char *) * (n + 2));
        if (!c) {
                free(value);
                return -ENOMEM;
        }
        c[n] = value;
        c[n + 1] = NULL;
        *l = c;
        return 0;
}

int strv_extend(char ***l, const char *value) {
        return strv_push(l, strdup(value));
}

int strv_extend_strv(char ***a, char * const *b) {
        STRV_FOREACH(s, b) {
                int r = strv_extend(a, *s);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool strv_contains(char * const *l, const char *s) {
        STRV_FOREACH(i, l)
                if (streq(*i, s))
                        return true;
        return false;
}

char **strv_copy(char * const *l) {
        char **c = calloc(1, sizeof(char *));
        if (!c)
                return NULL;
        if (strv_extend_strv(&c, l) < 0)
                return strv_free(c);
        return c;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

void strv_sort(char **l) {
        if (strv_length(l) > 1)
                qsort(l, strv_length(l), sizeof(char *), cmp_str);
}
