/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "cloister-conf.h"
#include "role.h"
#include "strv.h"

/* Finds admin unit files and drop-ins that would re-open what the locked profile closes
 * (cloister-generator(8), CLOSED SURFACES), for every unit an agent depends on: agent@<role>.service, the role's /tmp and
 * /var/tmp mount units, the sockets of its Service= grants, cloister-broker.socket
 * (daemon-only) and its project's cloister-deps@.service; each with every alias that
 * resolves to it (a symlink web@x.service → agent@x.service, or web@.service →
 * agent@.service), and each of those with every drop-in directory systemd merges: its own,
 * its template's, each dash prefix's and the top-level <type>.d/.
 *
 * A drop-in may set only the keys of policy/dropin-allowed.list; a key of
 * policy/closed-surfaces.list names the surface it re-opens; any other key is refused as not
 * classified. A unit file that replaces one cloister generates or ships is refused too. */

typedef struct ClosedSurfaceFinding {
        char *unit;      /* the unit name the file applies to: "agent@.service", "agent@x-.service", "service", "run-cloister-tmp-x.mount" */
        char *key;       /* the key a drop-in sets, or NULL (a unit file, an unreadable drop-in) */
        char *reason;    /* "path:line: PrivateNetwork= re-opens a closed surface (network)" */
} ClosedSurfaceFinding;

typedef struct ClosedSurfaceIndex {
        ClosedSurfaceFinding *findings;
        size_t n;
        char **alias_from, **alias_to;  /* symlinks between unit names, in every unit directory */
} ClosedSurfaceIndex;

void closed_surface_index_done(ClosedSurfaceIndex *idx);

/* The unit search path, highest priority first: $SYSTEMD_UNIT_PATH if set, else systemd's
 * system list, with the generator directories given (or the /run/systemd/generator* ones). */
int unit_search_path(const char *generator_dirs[3], char ***ret);

/* Scans `dirs` once. `own_dir` is the generator's output directory: its 50-cloister.conf
 * and 50-credentials.conf drop-ins and the units it generates are cloister's own. */
int closed_surface_index_build(char * const *dirs, const char *own_dir, ClosedSurfaceIndex *ret);

/* The first finding that applies to any of `units` (or their aliases), or NULL. */
const char *closed_surface_find_units(const ClosedSurfaceIndex *idx, char * const *units);

/* The first finding that applies to agent@<role>.service or a unit it depends on, or NULL. */
const char *closed_surface_find(const ClosedSurfaceIndex *idx, const Role *role, const CloisterConf *conf);
