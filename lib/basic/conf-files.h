/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "strv.h"

typedef struct ConfFile {
        char *name;   /* file name, e.g. "reviewer.role" */
        char *path;   /* the highest-priority instance */
} ConfFile;

typedef struct ConfFileList {
        ConfFile *files;
        size_t n;
} ConfFileList;

void conf_file_list_done(ConfFileList *l);

/* A search path: the colon-separated $env (highest priority first) if set, else `defaults`;
 * duplicates dropped. */
int search_path_from_env(const char *env, const char *const *defaults, size_t n, char ***ret);

/* A symlink to /dev/null: masked, as in systemd. */
bool path_is_masked(const char *path);

/* The configuration directories, highest priority first (docs/overview.md, Files and search paths): $CLOISTER_CONFIG_PATH
 * (colon-separated) if set, else /etc/cloister, /run/cloister, /usr/local/lib/cloister,
 * $prefix/lib/cloister. */
int conf_dirs(char ***ret);

/* Every each "<dir>/<subdir>/NAME<suffix>" across `dirs`, one per file name (a higher directory
 * masks the same name below it; a symlink to /dev/null masks it away), sorted by name.
 * subdir may be NULL for the directories themselves. */
int conf_files_list(char * const *dirs, const char *subdir, const char *suffix, ConfFileList *ret);

/* The highest-priority instance of <dir>/<name>; *ret = NULL if none or masked. */
int conf_file_find(char * const *dirs, const char *name, char **ret);
