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
