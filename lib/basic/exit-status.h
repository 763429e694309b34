/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cloister-shim's own exit statuses (cloister-shim(8)). A durable role's restart policy
 * treats all four as terminal (RestartPreventExitStatus=). */
enum {
        CLOISTER_EXIT_TIMEOUT = 124,   /* Timeout= reached: SIGTERM, StopGrace=, SIGKILL */
        CLOISTER_EXIT_REFUSED = 125,   /* the sandbox is open where the mode closes it, or the role is refused */
        CLOISTER_EXIT_CANNOT_EXEC = 126,
        CLOISTER_EXIT_NOT_FOUND = 127,
};
#define CLOISTER_EXIT_TERMINAL_LIST "124 125 126 127"
