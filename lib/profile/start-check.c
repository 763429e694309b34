/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cmdline.h"
#include "start-check.h"

int profile_add_start_check(UnitSettings *s, const char *test, const char *message, const char *arg1, const char *arg2) {
        _cleanup_free_ char *script = strprintf("%s || { echo \"cloister: %s; not starting.\" >&2; exit 1; }", test, message),
                *q_script = NULL, *q1 = NULL, *q2 = NULL;

        if (!script || !(q_script = unit_exec_quote(script)) || !(q1 = unit_exec_quote(arg1)) ||
            (arg2 && !(q2 = unit_exec_quote(arg2))))
                return -ENOMEM;
        return unit_settings_addf(s, "Service", "ExecStartPre", "/bin/sh -c %s sh %s%s%s", q_script, q1,
                                  q2 ? " " : "", q2 ?: "");
}
