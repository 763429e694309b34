/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ctl.h"
#include "log.h"

int verb_list(int argc, char *argv[], const CtlOptions *o) {
        log_error("cloisterctl list: not implemented yet.");
        return CTL_EXIT_FAILURE;
}
