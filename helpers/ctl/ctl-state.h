/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "ctl.h"

/* The system bus when PID 1 is systemd (sd_booted()) and no --root is given; else NULL,
 * and every state reads "unknown". */
sd_bus *ctl_bus_open(const CtlOptions *o);

/* ActiveState of `unit` ("active", "inactive", "failed", ...), or "unknown" without a bus
 * or when systemd cannot say. Never fails except on out of memory. */
int ctl_unit_state(sd_bus *bus, const char *unit, char **ret);
