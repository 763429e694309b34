/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "network-mode.h"

static const char *const table[_NETWORK_MODE_MAX] = {
        [NETWORK_NONE] = "none",
        [NETWORK_DAEMON_ONLY] = "daemon-only",
        [NETWORK_EGRESS] = "egress",
        [NETWORK_HOST] = "host",
};

const char *network_mode_to_string(NetworkMode m) {
        return m >= 0 && m < _NETWORK_MODE_MAX ? table[m] : NULL;
}

NetworkMode network_mode_from_string(const char *s) {
        for (int i = 0; i < _NETWORK_MODE_MAX; i++)
                if (streq(table[i], s))
                        return (NetworkMode) i;
        return _NETWORK_MODE_UNSET;
}
