/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "profile.h"

/* What each role key becomes (cloister.role(5)): one emitter per key, in one table. An
 * emitter writes its key's whole effect (directives, ordering, the shim's arguments, the
 * cloister-stage arguments) into the slots of a ProfileOut; profile_role() runs every
 * emitter, then renders the slots in order, the shim's ExecStart= and cloister-stage's
 * ExecStartPre= from the arguments collected. The slots fix where each directive lands, so
 * the unit reads the same whichever key put it there. */

typedef enum ProfileSlot {
        SLOT_HEAD,              /* Description= (SourcePath= follows) */
        SLOT_EXEC,              /* the shim's ExecStart= is rendered here */
        SLOT_MODE,
        SLOT_LIMITS,
        SLOT_TMP,
        SLOT_SHM,
        SLOT_STAGE,             /* cloister-stage's ExecStartPre=/ExecStopPost= are rendered here */
        SLOT_BINDS,
        SLOT_MANAGED_OUTPUT,    /* Output= unset: StateDirectory= and its bind */
        SLOT_MOUNT_ORDER,
        SLOT_BROKER,
        SLOT_SERVICES,
        SLOT_DEPS,
        SLOT_IDENTITY,
        SLOT_DURABILITY,
        SLOT_GPUS,
        _SLOT_MAX,
} ProfileSlot;

/* The shim's arguments (cloister-shim(8)), in this order after --role=; "--" precedes ARG_EXEC. */
typedef enum ProfileArg {
        ARG_NETWORK,
        ARG_TIMEOUT,
        ARG_STOP_GRACE,
        ARG_BROKER,
        ARG_MODEL,
        ARG_CONTEXT_SIZE,
        ARG_ALLOW,
        ARG_EXPECT_MOUNT,
        ARG_STATE,
        ARG_SERVICES,
        ARG_DEPS,
        ARG_ENVIRONMENT,
        ARG_EXEC,
        _ARG_MAX,
} ProfileArg;

/* cloister-stage's arguments: the --tmp= mounts it empties, then KEY:NAME:SOURCE, the role's
 * mounts and the dependency sets. */
typedef enum ProfileStage {
        STAGE_TMP,
        STAGE_MOUNTS,
        STAGE_DEPS,
        _STAGE_MAX,
} ProfileStage;

typedef struct ProfileOut {
        UnitSettings slot[_SLOT_MAX];
        char **arg[_ARG_MAX];           /* each already quoted for an Exec line */
        char **stage[_STAGE_MAX];
        /* The units the key makes the agent pull in (Wants=, Requires=, the mount units of
         * RequiresMountsFor=): an admin drop-in for one of them is checked as one for the
         * agent is (cloister.role(5), THE LOCKED PROFILE; lib/profile/closed-surface.c). */
        char **units;
} ProfileOut;

void profile_out_done(ProfileOut *o);

typedef int (*role_key_emit_t)(ProfileOut *o, const Role *role, const CloisterConf *conf);

typedef struct RoleKeyEmitter {
        const char *section;
        const char *key;
        role_key_emit_t emit;   /* NULL: nothing in the unit (`becomes` says who reads it) */
        /* What the key becomes, as docs/profile.md's table "Role keys" says it: the
         * directives ("Key=") and shim arguments ("--arg=") it may emit, blank-separated,
         * then " — " and prose, or prose alone for a key with no emitter. */
        const char *becomes;
} RoleKeyEmitter;

extern const RoleKeyEmitter role_key_emitters[];
extern const size_t role_key_emitters_n;
