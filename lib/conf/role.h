/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "cloister-conf.h"
#include "sandbox-keys.h"
#include "deps.h"

typedef enum Durability {
        DURABILITY_TRANSIENT,
        DURABILITY_DURABLE,
        _DURABILITY_UNSET = -1,
} Durability;

typedef struct Role {
        char *name;
        char *path;
        /* cloisterctl run: "ROLE.ID", the instance of agent-run@ROLE.ID.service; NULL for agent@ */
        char *run_instance;
        /* cloisterctl run: "ROLE.slot-N", the pre-mounted /tmp and /var/tmp the run claimed
         * (cloisterctl(1), RUNS AND /tmp); NULL: the run mounts its own */
        char *run_tmp_slot;

        /* [Role] */
        char *description;
        char *exec;             /* as written */
        char **argv;            /* split */
        char *project;
        char *durability_str;
        Durability durability;
        char *user;
        char **environment;

        /* [Sandbox] */
        char *network_str;
        NetworkMode network;    /* resolved against DefaultNetwork= */
        SandboxLimits limits;
        char *input;
        char *output;
        char **read_only_mount_specs;
        ReadOnlyMount *read_only_mounts;
        size_t n_read_only_mounts;
        char *gpus;
        char **services;
        int jit;

        /* [LLM] */
        char *llm_model;
        char *llm_endpoint;
        uint64_t llm_context_size;

        /* [Install] */
        char **wanted_by;

        /* [Broker] */
        char **broker_allow;
        char **broker_allow_tools;      /* "UPSTREAM:TOOL", TOOL may be "*" */
        BrokerPolicy broker;

        /* from the project file, if any */
        char *workspace;
        bool deps[_DEPS_ECOSYSTEM_MAX];  /* the project declares this dependency set */
} Role;

Role *role_free(Role *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Role *, role_free);

/* Reads roles/<name>.role at `path` and checks it against cloister.conf (defaults, host
 * network opt-in) and its project. Any error refuses the whole file and is logged with
 * path:line and key. `dirs` are the configuration directories (for the project file). */
int role_load(const char *path, const CloisterConf *conf, char * const *dirs, Role **ret);

/* Every key a role file may set (the parser's table), for the profile's key table and its test. */
const ConfKey *role_keys(size_t *ret_n);

/* The tools of MCP upstream `upstream` that AllowTool= grants (a new strv, may be empty). */
char **role_allowed_tools(const Role *role, const char *upstream);
