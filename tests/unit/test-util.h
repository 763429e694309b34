/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What every unit test needs around the library: a private scratch directory for input files
 * (never /etc or the real system) and a capture of what the library logs to stderr. */

#include "macro.h"
#include "strv.h"

struct CloisterConf;
struct Role;

/* mkdtemp() under $TMPDIR (or /tmp); bails out of the test on failure. */
char *test_tmpdir_new(void);

/* Removes the tree (never following symlinks) and frees the name. */
void test_tmpdir_remove(char *dir);

/* "<dir>/<rel>" (caller frees). */
char *test_path(const char *dir, const char *rel);

/* Writes `content` to <dir>/<rel>, creating the parent directories; returns the full path
 * (caller frees). Bails out on failure. */
char *test_write_file(const char *dir, const char *rel, const char *content);

/* mkdir -p <dir>/<rel>. */
void test_mkdir(const char *dir, const char *rel);

/* Makes <dir>/<rel> a symlink to `target`, creating the parent directories. */
void test_symlink(const char *target, const char *dir, const char *rel);

/* A strv of the given directories, NULL-terminated (caller frees with strv_free). */
char **test_dirs(const char *first, ...) __attribute__((sentinel));

/* Redirects fd 2 into a temporary file until test_stderr_end(), which restores it and
 * returns what was written (caller frees; never NULL). Not nestable. */
void test_stderr_begin(void);
char *test_stderr_end(void);

/* One role loaded the way the generator loads it: a fresh configuration directory under
 * `tmpdir` with `conf_text` as cloister.conf (NULL: none), `role_text` as roles/<file_name>
 * and further files given as NULL-terminated (relative path, content) pairs; then
 * cloister_conf_load() and role_load() with that directory as the only one. */
typedef struct RoleLoad {
        int r;                  /* the first failure, of cloister_conf_load() or role_load() */
        struct CloisterConf *conf;
        struct Role *role;
        char *err;              /* everything both logged */
        char *dir;
        char *path;             /* of the role file */
} RoleLoad;

RoleLoad test_role_load(const char *tmpdir, const char *conf_text, const char *file_name,
                        const char *role_text, ...) __attribute__((sentinel));
void test_role_load_done(RoleLoad *l);

/* "<role path>:<line>:" (caller frees). */
char *test_role_where(const RoleLoad *l, unsigned line);
