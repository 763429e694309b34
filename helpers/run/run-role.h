/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "network-mode.h"
#include "role.h"

/* Whether a run may take a warm executor of its role's pool (cloisterctl(1), WARM POOLS). */
typedef enum RunWarm {
        RUN_WARM_AUTO,          /* an idle executor if there is one, else a transient unit */
        RUN_WARM_WAIT,          /* wait for an executor of the role's pool */
        RUN_WARM_NO,            /* always a transient unit */
        _RUN_WARM_MAX,
        _RUN_WARM_INVALID = -1,
} RunWarm;

RunWarm run_warm_from_string(const char *s);

/* cloisterctl run's own options: what a run may change, only ever less than its role grants. */
typedef struct RunOptions {
        const char *role;
        const char *input;
        const char *output;
        uint64_t timeout;       /* usec; UNSET_U64: the role's */
        NetworkMode network;    /* _NETWORK_MODE_UNSET: the role's */
        RunWarm warm;
        bool wait, pipe, quiet;
        const char *first;      /* the first run option given, for "applies only to run" */
} RunOptions;

/* roles/NAME.role (NAME NULL: roles/default.role, else the built-in default: Network=none,
 * cloister.conf's [Sandbox] limits), refused as agent@NAME would be: the generator's checks,
 * and an admin drop-in or unit file that re-opens a closed surface of agent@NAME or of any
 * agent-run@ unit. Errors are logged. */
int run_role_load(const char *name, const CloisterConf *conf, char * const *dirs, Role **ret);

/* Narrows `role` by the run's options, never widens it; refuses (logged, -EPERM/-EINVAL) what
 * would widen it. Makes the role one-off (Durability=transient). */
int run_role_narrow(Role *role, const RunOptions *a, const CloisterConf *conf);

/* A new run ID: 16 hexadecimal digits (the broker attributes agent-run@ROLE.ID.service to
 * ROLE, helpers/broker/peer.c). NULL on failure. */
char *run_id_new(void);

/* Makes `role` the run ROLE.ID: run_instance and the unit's Description=. */
int run_role_set_instance(Role *role, const char *id);
