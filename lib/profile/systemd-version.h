/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <limits.h>

#include "unit-settings.h"

/* For systemd_version_set(): render every versioned row (tests that compare renderers). */
#define SYSTEMD_VERSION_NEWEST UINT_MAX

/* The systemd version the profile is rendered for (docs/profile.md, "Per systemd version").
 * In order, the first that answers:
 *  1. a version set by the caller (cloisterctl run asks the manager's Version over the bus):
 *     it wins over the environment, which the caller of cloisterctl owns;
 *  2. $CLOISTER_SYSTEMD_VERSION (tests, and rendering for another machine);
 *  3. the running manager: PID 1's mapped libsystemd-core-NNN.so (/proc/1/maps). A generator
 *     runs before D-Bus and must not call systemctl; PID 1 is what loads the units, and a
 *     package upgrade without daemon-reexec leaves it older than the files on disk;
 *  4. the libsystemd this was built against (pkg-config), when /proc/1/maps says nothing
 *     (not root, PID 1 is not systemd: a chroot, a test). */
unsigned systemd_version(void);
void systemd_version_set(unsigned version);
/* "257.9-1~deb13u1" → 257 */
int systemd_version_parse(const char *s, unsigned *ret);
/* The first version number in the text of a maps file naming libsystemd-core-NNN.so, or 0. */
unsigned systemd_version_from_maps(const char *maps);

/* The directives only some versions know (and that close something there), for `version`. */
int profile_add_versioned(UnitSettings *s, unsigned version);

/* From 257 on, a DynamicUser= unit's StateDirectory= is owned by "nobody" on disk and id-mapped
 * to the unit's user at systemd's own mount point (257's NEWS), not chowned. */
#define MANAGED_OUTPUT_IDMAPPED_SINCE 257U

/* RestartSteps= and RestartMaxDelaySec=: a restart delay that grows (254's NEWS). */
#define RESTART_BACKOFF_SINCE 254U
