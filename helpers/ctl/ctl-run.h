/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ctl.h"

/* cloisterctl run [--role R] [--input D] [--output D] [--timeout T] [--network=none|daemon-only]
 *                 [--wait] [--pipe] [--quiet] -- CMD…
 * A sealed transient agent-run@ROLE.ID.service with the role's locked profile, narrowed by
 * o->run, never widened (cloisterctl(1), docs/guide-runs.md). args: CMD and its arguments,
 * verbatim. */
int verb_run(char **args, const CtlOptions *o);
void help_run(void);
