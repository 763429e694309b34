/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "deps.h"
#include "project.h"

typedef struct InstallOptions {
        const char *cache_dir;  /* DEPS_CACHE_DIR unless overridden */
        const char *python;     /* interpreter whose pip installs Pip= sets */
        const char *npm;        /* npm binary for Npm= sets */
        bool check_only;        /* check the lockfiles, install nothing */
} InstallOptions;

/* Materialises set `e` of `project` once into <cache>/<eco>-<sha256>/ (built in a
 * .tmp-<eco>-<sha256>-XXXXXX sibling, renamed into place when complete) and points
 * <cache>/by-project/<project>/<eco> at it. Logs and returns < 0 on failure. */
int deps_install_set(const InstallOptions *o, const Project *project, DepsEcosystem e);

/* Removes temporary directories of installs that were interrupted (those whose lock no
 * running cloister-deps holds). */
void deps_clean_stale(const char *cache_dir);
