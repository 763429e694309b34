/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* Generates units for every role, project and sidecar, and the broker's drop-ins (cloister-generator(8)). `dirs` are systemd's normal, early and late
 * generator directories (dirs[0] may be NULL for a dry run to stdout). Returns 0, or 1 if
 * some file was rejected; the other files are generated regardless. */
int generator_run(const char *dirs[3]);
