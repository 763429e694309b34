/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reviewed security lists, compiled in from the lists in policy/. */

/* Subtracted from @system-service for every agent; NULL-terminated. */
extern const char *const policy_denied_syscalls[];

typedef struct ClosedSurface {
        const char *key;       /* a unit setting, e.g. "PrivateNetwork" */
        const char *surface;   /* network, privileges, namespaces, writable-paths, devices, … */
} ClosedSurface;

/* Settings an admin drop-in may not set (cloister.role(5), THE LOCKED PROFILE); terminated by { NULL, NULL }. */
extern const ClosedSurface policy_closed_surfaces[];

/* Settings an admin drop-in may set: the allow-list. A key in neither list is refused as
 * not classified. NULL-terminated. */
extern const char *const policy_dropin_allowed[];
