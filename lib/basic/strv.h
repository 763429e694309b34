/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* NULL-terminated string vectors, as in systemd. */
char **strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
#define _cleanup_strv_free_ _cleanup_(strv_freep)

size_t strv_length(char * const *l);
int strv_push(char ***l, char *value);          /* takes ownership, also on failure */
int strv_extend(char ***l, const char *value);  /* copies */
int strv_extend_strv(char ***a, char * const *b);
bool strv_contains(char * const *l, const char *s);
char **strv_copy(char * const *l);
void strv_sort(char **l);

#define STRV_FOREACH(s, l) for (char * const *s = (l); s && *s; s++)
