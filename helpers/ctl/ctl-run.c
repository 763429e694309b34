/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placeholder so that cloisterctl builds before "run" lands (owner: ctl-run, who replaces this file). */
#include "ctl-run.h"
#include "log.h"
int verb_run(int argc, char *argv[], const CtlOptions *o) {
        log_error("cloisterctl run is not built yet.");
        return CTL_EXIT_FAILURE;
}
