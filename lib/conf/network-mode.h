/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* The network modes (cloister.role(5), NETWORK MODES). */
typedef enum NetworkMode {
        NETWORK_NONE,
        NETWORK_DAEMON_ONLY,
        NETWORK_EGRESS,
        NETWORK_HOST,
        _NETWORK_MODE_MAX,
        _NETWORK_MODE_UNSET = -1,
} NetworkMode;

const char *network_mode_to_string(NetworkMode m);
NetworkMode network_mode_from_string(const char *s);   /* _NETWORK_MODE_UNSET if invalid */

/* none and daemon-only: no network device but the sandbox's own loopback. */
static inline bool network_mode_is_sealed(NetworkMode m) {
        return m == NETWORK_NONE || m == NETWORK_DAEMON_ONLY;
}
