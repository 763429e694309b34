/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "network-mode.h"
#include "strv.h"

/* Checks, from inside, that the sandbox is as closed as `mode` requires (docs/profile.md): only the
 * loopback device in sealed modes (PrivateNetwork= silently continues without a namespace
 * on EPERM), no AF_INET in "none", the host's loopback unreachable in "egress", empty capability sets, no_new_privs, seccomp filter
 * mode, read-only root, a non-root user. Logs every open surface it finds and returns the
 * number found (0: closed), or a negative errno if a check itself could not run. */
int sandbox_check(NetworkMode mode);

/* Each "Key=SOURCE:TARGET" must be a mount point inside the sandbox: role mounts are bound
 * with systemd's "-" prefix, so a missing source leaves the target unmounted. Logs each
 * missing one naming the key and source; returns how many are missing, or -errno. */
int sandbox_check_mounts(const char *role, char * const *expected);
