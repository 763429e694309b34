/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "deps.h"
#include "macro.h"

typedef struct Project {
        char *name;
        char *path;
        char *workspace;
        /* [Dependencies] Pip=, Npm=: lockfile paths relative to the workspace, or NULL */
        char *lockfiles[_DEPS_ECOSYSTEM_MAX];
} Project;

Project *project_free(Project *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Project *, project_free);

/* Reads projects/<name>.project (cloister.project(5)): [Project] Workspace= (required), [Dependencies] Pip=,
 * Npm= (optional lockfiles relative to the workspace). */
int project_load(const char *path, Project **ret);

/* Finds and loads projects/<name>.project in `dirs`; -ENOENT (logged) if there is none. */
int project_find_and_load(char * const *dirs, const char *name, Project **ret);

/* True if the project declares at least one dependency set. */
bool project_has_deps(const Project *p);

/* <workspace>/<lockfile> of set `e`, or NULL (set not declared, or out of memory). */
char *project_lockfile_path(const Project *p, DepsEcosystem e);

/* The unit that materialises the project's sets: "cloister-deps@<name>.service". */
char *project_deps_unit(const char *name);
