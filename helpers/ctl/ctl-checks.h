/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ctl-model.h"

/* What only a running system can check (cloister.role(5); cloister.sidecar(5); cloister.project(5)), beyond the generator's own checks.
 * Each problem is appended to *problems as "file:line: Key=: reason" (the line of the
 * assignment in the role or project file). */

/* Host paths of Input=, Output= and ReadOnlyMount= exist. */
int ctl_check_mounts(const Role *role, char ***problems);
/* The device nodes GPUs= needs exist (`path`: the role or sidecar file). */
int ctl_check_gpus(const char *path, const char *gpus, char ***problems);
/* A sidecar's ReadOnlyMount= sources and GPUs= nodes exist, and its socket directory keeps
 * the contract (docs/overview.md, Files and search paths: root's, 0555) where it exists. */
int ctl_check_sidecar(const CtlSidecar *c, char ***problems);
/* The sockets of granted sidecars (Service=) exist. */
int ctl_check_service_sockets(const Role *role, char ***problems);
/* A daemon-only role has a broker socket configured and present. */
int ctl_check_broker_socket(const Role *role, const CloisterConf *conf, char ***problems);
/* The workspace exists and every declared dependency set is materialised. */
int ctl_check_project(const CtlProject *project, char ***problems);
/* All of the above for one role, including its project's, and that each Service= names a
 * sidecar file that is generated. */
int ctl_check_role(const CtlModel *m, const CtlRole *role, char ***problems);

/* The cache directory of dependency set `e` of `p` (below --root); -errno if the lockfile
 * cannot be read. */
int ctl_deps_set_dir(const Project *p, DepsEcosystem e, char **ret);

bool ctl_is_socket(const char *path);

/* The socket path of sidecar `name`, and the broker's (below --root). */
char *ctl_service_socket(const char *name);
char *ctl_broker_socket(const CloisterConf *conf);
