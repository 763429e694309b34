/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "network-mode.h"
#include "strv.h"

/* The agent's environment (§7), built from scratch: only what systemd sets for the service
 * itself is kept (PATH, locale, HOME, USER, JOURNAL_STREAM, …; nothing from the manager's
 * environment such as "systemctl set-environment"), then the role's Environment= entries,
 * then CLOISTER_ROLE and CLOISTER_NETWORK, which nothing overrides. */
int shim_environment(const char *role, NetworkMode mode, char * const *setenv, char ***ret);
