/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "role.h"

/* One transient run, ready to be started: the role as narrowed for it (lib/profile renders
 * it) and how cloisterctl waits for it. */
typedef struct RunUnit {
        const Role *role;               /* role->run_instance is "ROLE.ID" */
        const CloisterConf *conf;
        char *name;                     /* agent-run@ROLE.ID.service */
        bool wait;
        bool pipe;
        bool quiet;
} RunUnit;

/* Starts the unit over the system bus with StartTransientUnit (the role's private /tmp and
 * /var/tmp as auxiliary mount units) and waits for its start job. With u->wait, waits for
 * the unit to finish and returns the command's exit status (a signal: 128 + signal);
 * SIGINT/SIGTERM meanwhile stop the unit. Returns a CTL_EXIT_* code on cloisterctl's own
 * failures. */
int run_unit_start(const RunUnit *u);
