/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "macro.h"

/* An agent's /tmp and /var/tmp are size-capped tmpfs mounts that stay mounted between
 * starts, so that a start makes no mount and no mount event on the host. cloister-stage
 * empties them, as root and outside the sandbox, before each start and after each stop. */

typedef struct StageTmp {
        const char *path;       /* the mount point: CLOISTER_TMP_PREFIX "tmp/" or "var-tmp/" NAME */
        uint64_t size;          /* the role's TmpSize=, in bytes */
} StageTmp;

/* Parses "PATH:SIZE" (the argument of --tmp=): PATH is <prefix>tmp/NAME or
 * <prefix>var-tmp/NAME, NAME a valid instance name; nothing else is ever emptied. */
int stage_tmp_parse(char *arg, const char *prefix, StageTmp *ret);

/* Removes everything below the directory `fd`, which stays: no symlink is followed, no
 * other file system entered (-EXDEV), no path built (a tree of any depth is taken apart
 * with at most a bounded number of descriptors open). */
int stage_tmp_empty_fd(int fd);

/* Opens t->path without following symlinks, checks that it is a whole tmpfs mounted there
 * and nowhere else (else -EPERM: it is never emptied), empties it, makes its root 1777
 * root:root again and, with `resize`, remounts it with size=t->size if its size differs
 * (TmpSize= changed since it was mounted). Logs its errors. */
int stage_tmp_prepare(const StageTmp *t, bool resize);

/* A run slot's claim: CLOISTER_TMP_CLAIM_DIR/ROLE.slot-N, written by cloisterctl run, root's,
 * its first word the unit that claimed it. A slot is used by the unit that claimed it only:
 * two runs never share a /tmp. Parses "PATH" of --claim= (under `claim_dir`). */
int stage_claim_parse(const char *arg, const char *claim_dir);
/* 0 if the claim names agent-run@INSTANCE.service, else -EPERM (logged). */
int stage_claim_check(const char *path, const char *instance);
/* Removes the claim if it names agent-run@INSTANCE.service (a claim taken over since is not
 * this run's to remove). */
int stage_claim_release(const char *path, const char *instance);
