/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "profile-gpu.h"
#include "role.h"
#include "start-check.h"
#include "unit-settings.h"

/* The locked profile (cloister.role(5), THE LOCKED PROFILE) as one model with two parts:
 *  - the static part, identical for every agent: rendered once at build time into the
 *    shipped units/agent@.service template;
 *  - the per-role part, what a role's keys change: rendered by the generator into
 *    agent@<role>.service.d/50-cloister.conf.
 * Renderers turn UnitSettings into unit-file text (unit_settings_write()) or into the sd-bus
 * properties of a transient run (profile_bus_append(), profile-bus.h). */

typedef struct ProfileRow {
        const char *section;
        const char *key;
        const char *value;
} ProfileRow;

int profile_static(UnitSettings *ret);
/* Adds the static part but for the rows of the named keys (the sidecar units bring their own). */
int profile_add_static(UnitSettings *s, const char *const *skip_keys);
/* Adds rows until the first one with key == NULL, or n. */
int profile_add_rows(UnitSettings *s, const ProfileRow *rows, size_t n);
/* The per-role part: what each of the role's keys becomes (profile-role.c, role_key_emitters[]). */
int profile_role(const Role *role, const CloisterConf *conf, UnitSettings *ret);
/* The units a start of the role involves: agent@ROLE.service, then those its keys pull in
 * (ProfileOut.units). The closed-surface check reads their drop-ins. */
int profile_role_units(const Role *role, const CloisterConf *conf, char ***ret);

/* Parts shared by agents and sidecar runtimes: MemoryMax=/CPUQuota=/TasksMax= (and
 * RuntimeMaxSec= when l->timeout > 0), the private /dev/shm, and GPUs= (gpu.c). */
int profile_add_limits(UnitSettings *s, const SandboxLimits *l);
/* Each of them alone (Memory=, CPUs=, Tasks=, Timeout=, StopGrace=). */
int profile_add_limit_memory(UnitSettings *s, const SandboxLimits *l);
int profile_add_limit_cpus(UnitSettings *s, const SandboxLimits *l);
int profile_add_limit_tasks(UnitSettings *s, const SandboxLimits *l);
int profile_add_limit_timeout(UnitSettings *s, const SandboxLimits *l);
int profile_add_limit_stop_grace(UnitSettings *s, const SandboxLimits *l);
int profile_add_shm(UnitSettings *s, uint64_t size);
/* User= (a named user instead of the dynamic one) and JIT= (lifts MemoryDenyWriteExecute=). */
int profile_add_identity(UnitSettings *s, const char *user, int jit);

/* The drop-in of a role that an admin drop-in re-opens (cloister.role(5), THE LOCKED PROFILE): its only job is to make the
 * shim refuse with `reason`, so that "systemctl start" fails with it in the journal. */
int profile_refusal(const char *role_name, const char *source, const char *reason, UnitSettings *ret);

/* The host-side, size-capped tmpfs that a role's /tmp (and /var/tmp) is bound from:
 * DynamicUser= forces PrivateTmp= on systemd 252, which overrides TemporaryFileSystem=, so
 * the cap has to be a real mount outside the sandbox. `which` is "tmp" or "var-tmp". */
char *profile_tmp_path(const Role *role, const char *which);
/* Its mount unit: the name systemd gives the path (a role "a-b" gets "...-a\\x2db.mount"), and
 * the unit's settings (ret_name may be NULL). */
char *profile_tmp_mount_name(const Role *role, const char *which);
int profile_tmp_mount(const Role *role, const char *which, char **ret_name, UnitSettings *ret);
/* Whether they stay mounted between starts, emptied by cloister-stage (a role's, a run
 * slot's), or are a run's own, unmounted when it ends. */
bool profile_tmp_persists(const Role *role);
/* cloisterctl run claims a slot by creating <this>/ROLE.slot-N (cloister-stage checks it). */
#define CLOISTER_TMP_CLAIM_DIR CLOISTER_TMP_PREFIX "tmp-slots"
/* The two, in the order their mount units are written: "tmp", "var-tmp". */
extern const char *const profile_tmp_dirs[2];

/* The directory at /output of a role without Output= (cloister.role(5)): systemd's
 * StateDirectory=cloister-output/<instance>, under /var/lib/private for a dynamic user. */
char *profile_managed_output(const Role *role);

/* The host path where the broker socket appears inside the sandbox. */
#define SANDBOX_BROKER_SOCKET "/run/cloister/broker.sock"

/* cloister-stage binds each role mount source here (<dir>/<instance>/<name>), opened without
 * following symlinks, before the sandbox is set up; the unit binds from there. */
#define CLOISTER_STAGE_DIR "/run/cloister/stage"
#define CLOISTER_STAGE_PATH PKGLIBEXECDIR "/cloister-stage"
/* A role's /tmp and /var/tmp mounts are <this>tmp/ROLE and <this>var-tmp/ROLE. */
#define CLOISTER_TMP_PREFIX "/run/cloister/"
