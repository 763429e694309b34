/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "role.h"

/* One transient run, ready to be started: the role as narrowed for it (lib/profile renders
 * it), and how its caller follows it. */
typedef struct RunUnit {
        Role *role;                     /* role->run_instance is "ROLE.ID"; run_tmp_slot is set here */
        const CloisterConf *conf;
        char *name;                     /* agent-run@ROLE.ID.service */
        bool wait;                      /* the unit stays until its result has been read */
        bool pipe;                      /* the caller's stdin, stdout and stderr are the command's */
        bool quiet;
        int control_fd;                 /* >= 0: the unit's stdin (a warm executor's socket, cloister-pool(8)) */
} RunUnit;

/* Renders the run for the manager on `bus`: a property it does not know would fail the whole
 * StartTransientUnit() (lib/profile/systemd-version.c). */
void run_use_manager_version(sd_bus *bus);

/* Claims a /tmp slot for the run (run-slot.h; with none free, the run mounts its own) and
 * calls StartTransientUnit. Returns the start job's object path; on failure the claim is
 * released and the error logged. */
int run_transient_start(sd_bus *bus, RunUnit *u, char **ret_job);

/* Whether systemd no longer knows `unit`. */
bool run_unit_unknown(sd_bus *bus, const char *unit);

/* A string property of a systemd object. */
int run_get_string(sd_bus *bus, const char *path, const char *iface, const char *prop, char **ret);
