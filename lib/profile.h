/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "role.h"
#include "unit-settings.h"

/* The locked profile (§6) as one model with two parts:
 *  - the static part, identical for every agent: rendered once at build time into the
 *    shipped units/agent@.service template;
 *  - the per-role part, what a role's keys change: rendered by the generator into
 *    agent@<role>.service.d/50-cloister.conf.
 * Renderers turn UnitSettings into unit-file text (unit_settings_write()) or, later, sd-bus
 * properties for transient runs. */

int profile_static(UnitSettings *ret);
int profile_role(const Role *role, const CloisterConf *conf, UnitSettings *ret);

/* The drop-in of a role that an admin drop-in re-opens (§6): its only job is to make the
 * shim refuse with `reason`, so that "systemctl start" fails with it in the journal. */
int profile_refusal(const char *role_name, const char *source, const char *reason, UnitSettings *ret);

/* The host-side, size-capped tmpfs that a role's /tmp (and /var/tmp) is bound from:
 * DynamicUser= forces PrivateTmp= on systemd 252, which overrides TemporaryFileSystem=, so
 * the cap has to be a real mount outside the sandbox. `which` is "tmp" or "var-tmp". */
char *profile_tmp_path(const Role *role, const char *which);
int profile_tmp_mount(const Role *role, const char *which, UnitSettings *ret);

/* The host path where the broker socket appears inside the sandbox. */
#define SANDBOX_BROKER_SOCKET "/run/cloister/broker.sock"
