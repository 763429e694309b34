/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "closed-surface.h"
#include "cloister-conf.h"
#include "project.h"
#include "role.h"
#include "sidecar.h"
#include "strv.h"

/* Everything the read verbs look at, loaded with the generator's own functions
 * (cloister_conf_load, role_load, project_load, closed_surface_index_build). The reasons a
 * file is refused are the messages those functions log, collected instead of printed. */

typedef struct CtlRole {
        char *name;
        char *path;
        Role *role;                 /* NULL: refused by the generator's checks */
        char **errors;              /* why it was refused */
        const char *closed_surface; /* an admin drop-in re-opens a closed surface (in the index) */
} CtlRole;

typedef struct CtlProject {
        char *name;
        char *path;
        Project *project;           /* NULL: refused */
        char **errors;
} CtlProject;

typedef struct CtlSidecar {
        char *name;
        char *path;
        Sidecar *sidecar;           /* NULL: refused by the generator's checks (sidecar_load) */
        char **errors;              /* why it was refused */
        const char *dir_problem;    /* sidecar_dir_check() of its socket directory (below --root) */
        bool dir_fatal;             /* ... so bad that the generator does not generate it */
        char **reached_by;          /* generated roles whose Service= names it, as the generator notes them */
} CtlSidecar;

typedef struct CtlModel {
        char **config_dirs;
        char **unit_dirs;
        CloisterConf *conf;         /* NULL: cloister.conf refused, no role is generated */
        char **conf_errors;
        CtlRole *roles;
        size_t n_roles;
        CtlProject *projects;
        size_t n_projects;
        CtlSidecar *sidecars;       /* loaded with sidecar_load(), as the generator does */
        size_t n_sidecars;
        ClosedSurfaceIndex closed;
} CtlModel;

/* Between begin and end, errors that lib/ logs are appended to *errors instead of printed:
 * the reasons the generator's own functions give for refusing a file. */
void ctl_collect_errors_begin(char ***errors);
void ctl_collect_errors_end(void);

int ctl_model_load(CtlModel *m);
void ctl_model_done(CtlModel *m);

/* Loads one role or project file (path) into a model that has conf and dirs loaded. */
int ctl_model_add_role(CtlModel *m, const char *path);
int ctl_model_add_project(CtlModel *m, const char *path);
int ctl_model_add_sidecar(CtlModel *m, const char *path);

const CtlRole *ctl_model_find_role(const CtlModel *m, const char *name);
const CtlProject *ctl_model_find_project(const CtlModel *m, const char *name);
const CtlSidecar *ctl_model_find_sidecar(const CtlModel *m, const char *name);

/* The generator writes a sidecar's units when its file loads and its socket directory does
 * not break the contract (docs/overview.md, Files and search paths); a role's when it loads and no drop-in re-opens a surface. */
static inline bool ctl_sidecar_generated(const CtlSidecar *c) {
        return c->sidecar && !c->dir_fatal;
}
static inline bool ctl_role_generated(const CtlRole *c) {
        return c->role && !c->closed_surface;
}

/* The generator's output directory of a booted system within the unit path (its drop-ins
 * are cloister's own, not admin drop-ins), or NULL. */
const char *ctl_generator_dir(char * const *unit_dirs);
