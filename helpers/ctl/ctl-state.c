/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <systemd/sd-daemon.h>

#include "ctl-state.h"
#include "log.h"

sd_bus *ctl_bus_open(const CtlOptions *o) {
        sd_bus *bus = NULL;
        int r;

        if (o->root || sd_booted() <= 0)
                return NULL;
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                log_debug("Cannot connect to the system bus (%s); states are unknown.", strerror(-r));
                return NULL;
        }
        return bus;
}

/* The unit's object path loads it on demand, so a unit that never ran reads "inactive". */
int ctl_unit_state(sd_bus *bus, const char *unit, char **ret) {
        _cleanup_free_ char *path = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        char *state = NULL;
        int r;

        if (bus) {
                r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
                if (r < 0)
                        return log_oom();
                r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path,
                                               "org.freedesktop.systemd1.Unit", "ActiveState",
                                               &error, &state);
                if (r < 0)
                        log_debug("Cannot read the state of %s: %s", unit, error.message ?: strerror(-r));
                sd_bus_error_free(&error);
        }
        if (!state && !(state = strdup("unknown")))
                return log_oom();
        *ret = state;
        return 0;
}
