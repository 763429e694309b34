/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "run-transient.h"

/* Starts the run's transient unit (run-transient.h) and waits for its start job. With u->wait,
 * waits for the unit to finish and returns the command's exit status (a signal: 128 + signal);
 * SIGINT/SIGTERM meanwhile stop the unit. Returns a CTL_EXIT_* code on cloisterctl's own
 * failures. */
int run_unit_start(RunUnit *u);
