/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <signal.h>

/* sigprocmask() for the signals listed, the list ended by -1 (after systemd's): a daemon
 * blocks the signals it then takes through sd_event_add_signal(). Returns 0 or -errno. */
int sigprocmask_many(int how, sigset_t *ret_old, ...);
