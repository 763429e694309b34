/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "role.h"

/* One transient run, ready to be started: the role as narrowed for it (lib/profile renders
 * it) and how cloisterctl waits for it. */
typedef struct RunUnit {
        Role *role;                     /* role->run_instance is "ROLE.ID"; run_tmp_slot is set here */
        const CloisterConf *conf;
        char *name;                     /* agent-run@ROLE.ID.service */
        bool wait;
        bool pipe;
        bool quiet;
} RunUnit;

/* Starts the unit over the system bus with StartTransientUnit and waits for its start job.
 * Its /tmp and /var/tmp are a pre-mounted slot it claims (ctl-run-slot.h), or, with none free,
 * mounts of its own (auxiliary mount units, unmounted when it ends). With u->wait, waits for
 * the unit to finish and returns the command's exit status (a signal: 128 + signal);
 * SIGINT/SIGTERM meanwhile stop the unit. Returns a CTL_EXIT_* code on cloisterctl's own
 * failures. */
int run_unit_start(RunUnit *u);
