/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "unit-settings.h"

/* The second renderer of the profile model (lib/profile/profile.h): UnitSettings as the "(sv)"
 * properties of systemd's StartTransientUnit, marshalled as systemd's own bus-unit-util.c
 * does for systemd-run -p.
 *
 * profile_bus_append() appends every setting of `s`, in order, to `m`, which must be inside
 * an open "a(sv)" container. The same order gives the same result as the unit file: the
 * manager applies transient properties with the unit-file semantics (a list assignment
 * appends, an empty one resets it, a scalar's last assignment wins). Values are unit-file
 * text: specifiers expand where systemd expands them in a unit file ("%%" and "%i", the
 * instance `instance`; any other specifier is refused). A key with no row in the directive
 * table (directives.h, which unit_settings_write() walks too), a BUS_NONE row, or a
 * value form it does not marshal, is an error (-EOPNOTSUPP, logged with section and key):
 * a directive is never dropped. */
int profile_bus_append(sd_bus_message *m, const UnitSettings *s, const char *instance);

/* The bus property that section/key becomes ("RuntimeMaxSec" → "RuntimeMaxUSec"), NULL if
 * the table does not know it. */
const char *profile_bus_property(const char *section, const char *key);
