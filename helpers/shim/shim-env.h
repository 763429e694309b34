/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "network-mode.h"
#include "strv.h"

/* The agent's environment (cloister-shim(8), ENVIRONMENT), built from scratch: of the shim's own environment only
 * INVOCATION_ID and JOURNAL_STREAM, in systemd's format (nothing an administrator could set:
 * not PATH, locale, TZ or HOME from the manager's environment or a drop-in); then cloister's
 * PATH=/usr/local/bin:/usr/bin:/bin, LANG=C.UTF-8, HOME=/tmp, SHELL=/bin/sh, USER/LOGNAME
 * when the uid resolves; then each --setenv (the broker variables, grants, the role's
 * Environment=); then CLOISTER_ROLE and CLOISTER_NETWORK, which nothing overrides. */
int shim_environment(const char *role, NetworkMode mode, char * const *setenv, char ***ret);
