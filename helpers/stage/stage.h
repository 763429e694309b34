/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"
#include "profile.h"

/* Where cloister-stage binds each mount source of an agent, one directory per unit
 * instance, root-owned 0700: the unit binds from here, so systemd never resolves a source
 * path that an agent could have written. */
#define STAGE_DIR CLOISTER_STAGE_DIR

typedef struct StageMount {
        const char *key;       /* the role key, for messages: "Input", "Workspace", … */
        const char *name;      /* the entry under STAGE_DIR/<instance>: "input", "ro-0", … */
        const char *source;    /* absolute; "@/path" is a dependency-set link (see below) */
} StageMount;

/* Parses "KEY:NAME:SOURCE". */
int stage_mount_parse(char *arg, StageMount *ret);

/* Opens `source` with openat2(RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS), so that no path
 * component is followed, as an O_PATH descriptor of a directory or regular file. "@LINK" is
 * a dependency-set link: the one symlink read is LINK itself (in a directory opened the same
 * way), whose target must name an entry of `deps_dir` ("../../NAME" or "<deps_dir>/NAME"),
 * which is then opened the same way. -ENOENT if it does not exist;
 * -ELOOP (a symlink on the way) and others with *ret_reason set. */
int stage_open_source(const char *source, const char *deps_dir, int *ret_fd, const char **ret_reason);

/* Unmounts and removes <root>/<instance> and everything staged in it. */
int stage_clear(const char *root, const char *instance);

/* Binds each source at <root>/<instance>/<name>; refuses (and clears) at the first source that
 * cannot be opened safely, naming it. A missing source is skipped: the unit binds it with
 * "-" and cloister-shim names the role key. */
int stage_mounts(const char *root, const char *instance, const StageMount *m, size_t n, const char *deps_dir);

/* [A-Za-z0-9_.@-], not "." or "..", at most 255 bytes. */
bool stage_instance_is_valid(const char *s);
