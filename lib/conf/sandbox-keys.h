/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "conf-parser.h"

/* Keys that role files and sidecar files share (cloister.role(5); cloister.sidecar(5)): one parser each, so that both files
 * accept and refuse exactly the same values. */

typedef struct ReadOnlyMount {
        char *source;
        char *target;
} ReadOnlyMount;

/* Exec=: split with cmdline_split(); the program must be an absolute path. */
int conf_parse_exec(const ConfAssignment *a, char **exec, char ***argv);

/* User=: a named, non-root system user (char *). */
int conf_parse_user(const ConfAssignment *a, void *data);

/* Environment=NAME=VALUE (char **, repeatable); CLOISTER_* and the endpoint variables that
 * cloister sets are refused. */
int conf_parse_environment(const ConfAssignment *a, void *data);

/* ReadOnlyMount=HOST:SANDBOX[:ro] (char **, repeatable); a second entry with the same target
 * is refused. */
int conf_parse_read_only_mount(const ConfAssignment *a, void *data);

/* GPUs=: empty, "all" or a comma-separated list of distinct GPU indices (char *). */
int conf_parse_gpus(const ConfAssignment *a, void *data);

/* The checked ReadOnlyMount= specs split into source and target. */
int read_only_mounts_resolve(char * const *specs, ReadOnlyMount **ret, size_t *ret_n);
void read_only_mounts_free(ReadOnlyMount *m, size_t n);

/* Names a transient unit of cloisterctl run could not take: the environment variables that
 * cloister sets itself. */
bool environment_name_is_reserved(const char *name);

/* Highest GPU index GPUs= accepts. */
#define GPU_INDEX_MAX 63
