/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

/* Project dependency sets (cloister.project(5)), shared by the generator, cloister-deps and cloisterctl.
 *
 * Each declared set is materialised once into
 *   DEPS_CACHE_DIR/<ecosystem>-<sha256 of the lockfile>/
 * (content-addressed; the final name appears only through rename() of a complete install,
 * and a complete set holds DEPS_COMPLETE_MARKER). cloister-deps also keeps a stable link
 *   DEPS_CACHE_DIR/by-project/<project>/<ecosystem> -> ../../<ecosystem>-<sha256>
 * which the roles of the project bind read-only at DEPS_SANDBOX_DIR/<ecosystem>: the generator
 * runs before the workspace may be mounted, so it cannot hash the lockfile itself. */

#define DEPS_CACHE_DIR "/var/cache/cloister/deps"
#define DEPS_SANDBOX_DIR "/opt/cloister/deps"
#define DEPS_COMPLETE_MARKER ".cloister-complete"
#define DEPS_BY_PROJECT "by-project"

typedef enum DepsEcosystem {
        DEPS_PIP,
        DEPS_NPM,
        _DEPS_ECOSYSTEM_MAX,
        _DEPS_ECOSYSTEM_INVALID = -1,
} DepsEcosystem;

const char *deps_ecosystem_to_string(DepsEcosystem e);          /* "pip", "npm" */
DepsEcosystem deps_ecosystem_from_string(const char *s);
const char *deps_ecosystem_key(DepsEcosystem e);                /* "Pip", "Npm" ([Dependencies]) */
/* The variable and value a role of the project gets for the set. */
const char *deps_ecosystem_env_name(DepsEcosystem e);           /* "PYTHONPATH", "NODE_PATH" */
const char *deps_ecosystem_env_value(DepsEcosystem e);          /* "/opt/cloister/deps/pip", ".../npm/node_modules" */

/* NULL if `rel` is a usable lockfile path (relative to the workspace, no "..", no "."
 * component, no empty component), else the reason. */
const char *deps_lockfile_path_check(const char *rel);

/* Lower-case hex sha256 of the file's content (65 bytes with NUL). */
int deps_file_sha256(const char *path, char ret[static 65]);

/* DEPS_CACHE_DIR/<ecosystem>-<sha256 of lockfile_path>; `ecosystem` is "pip" or "npm".
 * -EINVAL for an unknown ecosystem, -errno if the lockfile cannot be read. */
int deps_cache_dir(const char *ecosystem, const char *lockfile_path, char **ret);
/* The same under another cache root (tests, cloister-deps --cache-dir=). */
int deps_cache_dir_in(const char *cache_root, const char *ecosystem, const char *lockfile_path, char **ret);

/* True if `dir` is a complete materialised set (a directory holding DEPS_COMPLETE_MARKER). */
bool deps_materialised(const char *dir);

/* <cache_root>/by-project/<project>/<ecosystem> (cache_root NULL: DEPS_CACHE_DIR). */
char *deps_project_link(const char *cache_root, const char *project, DepsEcosystem e);

/* Lockfile checks, done before any installer runs. They log "file:line: reason" and return
 * -EINVAL (or -errno if the file cannot be read).
 * pip: every requirement line carries at least one --hash=sha256:<64 hex>; options other
 *      than --hash on a requirement, and -r/-c/-e/--index-url/... lines, are refused.
 * npm: lockfileVersion 2 or 3; every package entry but the root and bundled ones has an
 *      "integrity" of sha512 and, if it has a "resolved", an https:// one; links are refused. */
int deps_check_pip_lockfile(const char *path);
int deps_check_npm_lockfile(const char *path);
int deps_check_lockfile(DepsEcosystem e, const char *path);
/* The same on a lockfile already read into memory; `name` is used in messages. */
int deps_check_lockfile_data(DepsEcosystem e, const char *name, const char *data, size_t size);
/* sha256 of a buffer, as deps_file_sha256(). */
int deps_data_sha256(const void *data, size_t size, char ret[static 65]);
