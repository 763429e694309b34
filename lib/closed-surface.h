/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "strv.h"

/* Finds admin unit files and drop-ins that would re-open what the locked profile closes
 * (§6): any setting listed in policy/closed-surfaces.list, in service.d/, agent@.service.d/,
 * a dash-prefix drop-in directory or agent@<role>.service.d/; a replacement of the
 * agent@.service template; any agent@<role>.service unit file. */

typedef struct ClosedSurfaceFinding {
        char *unit;      /* which unit name the file applies to: "agent@.service", "agent@x.service", "service" */
        char *reason;    /* "path:line: PrivateNetwork= re-opens a closed surface (network)" */
} ClosedSurfaceFinding;

typedef struct ClosedSurfaceIndex {
        ClosedSurfaceFinding *findings;
        size_t n;
} ClosedSurfaceIndex;

void closed_surface_index_done(ClosedSurfaceIndex *idx);

/* The unit search path, highest priority first: $SYSTEMD_UNIT_PATH if set, else systemd's
 * system list, with the generator directories given (or the /run/systemd/generator* ones). */
int unit_search_path(const char *generator_dirs[3], char ***ret);

/* Scans `dirs` once. `own_dir` is the generator's output directory: its
 * agent@*.service.d/50-cloister.conf files are cloister's own and skipped. */
int closed_surface_index_build(char * const *dirs, const char *own_dir, ClosedSurfaceIndex *ret);

/* The first finding that applies to agent@<role>.service, or NULL. */
const char *closed_surface_find(const ClosedSurfaceIndex *idx, const char *role);
