/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "generator-output.h"
#include "sidecar.h"

/* The sidecar files (cloister.sidecar(5)) that loaded, and which generated roles reach each of them. */
typedef struct SidecarSet {
        Sidecar **items;
        char ***reached_by;     /* per item: role names, in generation order */
        size_t n;
} SidecarSet;

void sidecar_set_done(SidecarSet *set);

/* Loads every sidecars/<name>.sidecar; a refused file is skipped (logged with file:line) and
 * sets *rejected. */
int sidecar_set_load(char * const *config_dirs, const CloisterConf *conf, SidecarSet *ret, bool *rejected);

const Sidecar *sidecar_set_find(const SidecarSet *set, const char *name);

/* Records that `role` is granted `sidecar` (no-op for a sidecar that is not in the set). */
int sidecar_set_note_grant(SidecarSet *set, const char *sidecar, const char *role);

/* Writes each sidecar's socket, proxy and runtime units (and the sockets.target.wants/ link).
 * Returns 0, or 1 if some sidecar was refused here (its socket directory breaks the contract). */
int sidecar_set_write(const GeneratorOutput *o, const SidecarSet *set);
