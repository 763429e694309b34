/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "profile.h"
#include "sidecar.h"

/* The three units of a sidecar (cloister.sidecar(5)), as full unit files:
 *  - sidecar@<name>.socket: ListenStream= on /run/cloister/services/<name>/service.sock
 *    (socket 0666, directory 0555), pulled in by sockets.target;
 *  - sidecar@<name>.service: cloister-sidecar, socket-activated, in the runtime's network
 *    namespace, wanting the runtime;
 *  - sidecar-runtime@<name>.service: Exec= under the locked profile (cloister.role(5), THE LOCKED PROFILE) with its own
 *    loopback-only network namespace. */
int profile_sidecar_socket(const Sidecar *sc, UnitSettings *ret);
int profile_sidecar_proxy(const Sidecar *sc, UnitSettings *ret);
int profile_sidecar_runtime(const Sidecar *sc, UnitSettings *ret);

/* The three, in the order the generator writes them (the socket first: it carries the
 * "reached by" comment); the generator and cloisterctl's security check both walk this. */
typedef enum SidecarUnitKind {
        SIDECAR_UNIT_SOCKET,
        SIDECAR_UNIT_PROXY,
        SIDECAR_UNIT_RUNTIME,
        _SIDECAR_UNIT_MAX,
} SidecarUnitKind;

typedef struct SidecarUnit {
        const char *prefix, *suffix;    /* the unit is prefix + sidecar name + suffix */
        int (*render)(const Sidecar *sc, UnitSettings *ret);
} SidecarUnit;

extern const SidecarUnit profile_sidecar_units[_SIDECAR_UNIT_MAX];

/* "sidecar-runtime@NAME.service" and the like, NULL on OOM. */
char *profile_sidecar_unit_name(SidecarUnitKind k, const char *name);
