/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "unit-settings.h"

/* A part of the profile below lib/profile/profile.c: the agent's and the sidecar runtime's
 * renderers and profile-gpu.c use it; it uses nothing of the profile. */

/* An ExecStartPre= that runs the shell condition `test` in the sandbox, with $1 = arg1 and
 * $2 = arg2 (may be NULL), and fails the start with "cloister: MESSAGE; not starting." in the
 * journal if it is false. (systemd 252 logs a failed AssertPathExists= only at debug level,
 * and a failed bind stops namespace setup naming only the target, even for "+" commands.) */
int profile_add_start_check(UnitSettings *s, const char *test, const char *message, const char *arg1, const char *arg2);
