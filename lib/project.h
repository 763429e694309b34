/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

typedef struct Project {
        char *name;
        char *path;
        char *workspace;
} Project;

Project *project_free(Project *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Project *, project_free);

/* Reads projects/<name>.project (§10): [Project] Workspace= (required). */
int project_load(const char *path, Project **ret);

/* Finds and loads projects/<name>.project in `dirs`; -ENOENT (logged) if there is none. */
int project_find_and_load(char * const *dirs, const char *name, Project **ret);
