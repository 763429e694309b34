/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>

#include "cmdline.h"
#include "deps.h"
#include "exit-status.h"
#include "profile-role.h"
#include "project.h"
#include "sidecar.h"
#include "systemd-version.h"

void profile_out_done(ProfileOut *o) {
        for (size_t i = 0; i < _SLOT_MAX; i++)
                unit_settings_done(&o->slot[i]);
        for (size_t i = 0; i < _ARG_MAX; i++)
                o->arg[i] = strv_free(o->arg[i]);
        for (size_t i = 0; i < _STAGE_MAX; i++)
                o->stage[i] = strv_free(o->stage[i]);
        o->units = strv_free(o->units);
}

static int list_add(char ***l, char *take) {
        int r;

        if (!take)
                return -ENOMEM;
        r = strv_extend(l, take);
        free(take);
        return r;
}

static int arg_add(ProfileOut *o, ProfileArg a, char *take) {
        return list_add(&o->arg[a], take);
}

static int stage_add(ProfileOut *o, ProfileStage st, char *take) {
        return list_add(&o->stage[st], take);
}

static int unit_add(ProfileOut *o, char *take) {
        if (take && strv_contains(o->units, take)) {
                free(take);
                return 0;
        }
        return list_add(&o->units, take);
}

/* One argument quoted for the Exec line (values a user wrote). */
static int arg_add_quoted(ProfileOut *o, ProfileArg a, char *take) {
        _cleanup_free_ char *raw = take;
        return raw ? arg_add(o, a, unit_exec_quote(raw)) : -ENOMEM;
}

static const char *role_instance(const Role *role) {
        return role->run_instance ?: role->name;
}

static bool broker_reachable(const Role *role, const CloisterConf *conf) {
        return role->network == NETWORK_DAEMON_ONLY && conf->broker_socket;
}

/* --- [Role] ---------------------------------------------------------------------------- */

static int emit_description(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        _cleanup_free_ char *desc = unit_specifier_escape(role->description ?: "");

        if (!desc)
                return -ENOMEM;
        return role->description ?
                unit_settings_addf(&o->slot[SLOT_HEAD], "Unit", "Description", "cloister agent %s: %s", role->name, desc) :
                unit_settings_addf(&o->slot[SLOT_HEAD], "Unit", "Description", "cloister agent %s", role->name);
}

static int emit_exec(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        int r = 0;

        STRV_FOREACH(a, role->argv)
                if (r >= 0)
                        r = arg_add_quoted(o, ARG_EXEC, strdup(*a));
        return r;
}

/* the shim inherits nothing an administrator could set (cloister-shim(8)): systemd's
 * STATE_DIRECTORY= is passed on explicitly */
static int emit_durability(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        UnitSettings *s = &o->slot[SLOT_DURABILITY];
        int r;

        if (role->durability != DURABILITY_DURABLE)
                return 0;
        r = arg_add(o, ARG_STATE, strprintf("--setenv=STATE_DIRECTORY=/var/lib/cloister/%s", role->name));
        if (r >= 0)
                r = unit_settings_add(s, "Service", "Restart", "on-failure");
        if (r >= 0) /* timeouts and refusals are terminal (cloister.role(5), DURABILITY AND FAILURE) */
                r = unit_settings_add(s, "Service", "RestartPreventExitStatus", CLOISTER_EXIT_TERMINAL_LIST);
        /* No start limit ends a crash loop (the template has StartLimitIntervalSec=0): it is
         * slowed, from 2 s between restarts to 1 min where systemd can grow the delay. */
        if (r >= 0)
                r = unit_settings_add(s, "Service", "RestartSec", "2s");
        if (r >= 0 && systemd_version() >= RESTART_BACKOFF_SINCE) {
                r = unit_settings_add(s, "Service", "RestartSteps", "5");
                if (r >= 0)
                        r = unit_settings_add(s, "Service", "RestartMaxDelaySec", "1min");
        }
        if (r >= 0)
                r = unit_settings_addf(s, "Service", "StateDirectory", "cloister/%s", role->name);
        return r;
}

static int emit_user(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        return profile_add_identity(&o->slot[SLOT_IDENTITY], role->user, -1);
}

static int emit_environment(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        int r = 0;

        STRV_FOREACH(e, role->environment)
                if (r >= 0)
                        r = arg_add_quoted(o, ARG_ENVIRONMENT, strprintf("--setenv=%s", *e));
        return r;
}

/* --- [Sandbox] ------------------------------------------------------------------------- */

/* What each mode adds to the static, fully closed state (cloister.role(5), NETWORK MODES). */
static const ProfileRow mode_rows[_NETWORK_MODE_MAX][6] = {
        /* NETWORK_NONE adds nothing */
        [NETWORK_DAEMON_ONLY] = {
                /* The agent reaches cloister-shim's relay on its own loopback. */
                { "Service", "RestrictAddressFamilies", "AF_INET AF_INET6" },
                { "Service", "IPAddressAllow", "localhost" },
        },
        [NETWORK_EGRESS] = {
                { "Service", "PrivateNetwork", "no" },
                { "Service", "RestrictAddressFamilies", "AF_INET AF_INET6 AF_NETLINK" },
                { "Service", "IPAddressDeny", "" },
                { "Service", "IPAddressDeny", "localhost link-local multicast" },
        },
        [NETWORK_HOST] = {
                { "Service", "PrivateNetwork", "no" },
                { "Service", "RestrictAddressFamilies", "AF_INET AF_INET6 AF_NETLINK" },
                { "Service", "IPAddressDeny", "" },
        },
};

static int emit_network(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        UnitSettings *b = &o->slot[SLOT_BROKER];
        int r = arg_add(o, ARG_NETWORK, strprintf("--network=%s", network_mode_to_string(role->network)));

        if (r >= 0)
                r = profile_add_rows(&o->slot[SLOT_MODE], mode_rows[role->network], ELEMENTSOF(mode_rows[0]));
        if (r < 0 || !broker_reachable(role, conf))
                return r;
        r = unit_settings_addf(b, "Service", "BindReadOnlyPaths", "-%s:" SANDBOX_BROKER_SOCKET, conf->broker_socket);
        /* the socket must exist when the sandbox is set up, or the agent has none */
        if (r >= 0)
                r = unit_settings_add(b, "Unit", "Wants", "cloister-broker.socket");
        if (r >= 0)
                r = unit_settings_add(b, "Unit", "After", "cloister-broker.socket");
        if (r >= 0)
                r = unit_add(o, strdup("cloister-broker.socket"));
        return r;
}

static int emit_memory(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        return profile_add_limit_memory(&o->slot[SLOT_LIMITS], &role->limits);
}

static int emit_cpus(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        return profile_add_limit_cpus(&o->slot[SLOT_LIMITS], &role->limits);
}

static int emit_tasks(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        return profile_add_limit_tasks(&o->slot[SLOT_LIMITS], &role->limits);
}

static int emit_timeout(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        _cleanup_free_ char *t = format_timespan(role->limits.timeout);
        int r = t ? arg_add(o, ARG_TIMEOUT, strprintf("--timeout=%s", t)) : -ENOMEM;

        return r < 0 ? r : profile_add_limit_timeout(&o->slot[SLOT_LIMITS], &role->limits);
}

static int emit_stop_grace(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        _cleanup_free_ char *t = format_timespan(role->limits.stop_grace);
        int r = t ? arg_add(o, ARG_STOP_GRACE, strprintf("--stop-grace=%s", t)) : -ENOMEM;

        return r < 0 ? r : profile_add_limit_stop_grace(&o->slot[SLOT_LIMITS], &role->limits);
}

/* DynamicUser= forces PrivateTmp= on systemd 252, which overrides TemporaryFileSystem=: /tmp
 * and /var/tmp are bound from the size-capped mounts of profile_tmp_mount(). */
static int emit_tmp_size(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        _cleanup_free_ char *tmp = profile_tmp_path(role, "tmp"), *var_tmp = profile_tmp_path(role, "var-tmp");
        UnitSettings *s = &o->slot[SLOT_TMP];
        int r;

        if (!tmp || !var_tmp)
                return -ENOMEM;
        r = unit_settings_addf(s, "Unit", "RequiresMountsFor", "%s %s", tmp, var_tmp);
        if (r >= 0)
                r = unit_settings_addf(s, "Service", "BindPaths", "%s:/tmp", tmp);
        if (r >= 0)
                r = unit_settings_addf(s, "Service", "BindPaths", "%s:/var/tmp", var_tmp);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(profile_tmp_dirs); i++)
                r = unit_add(o, profile_tmp_mount_name(role, profile_tmp_dirs[i]));
        if (!profile_tmp_persists(role)) /* a run's own, new */
                return r;
        /* a role's mounts, and a run slot's, outlive their starts: cloister-stage empties them,
         * and checks that the slot is this run's */
        if (r >= 0)
                r = stage_add(o, STAGE_TMP, strprintf("--tmp=%s:%llu", tmp, (unsigned long long) role->limits.tmp_size));
        if (r >= 0)
                r = stage_add(o, STAGE_TMP, strprintf("--tmp=%s:%llu", var_tmp, (unsigned long long) role->limits.tmp_size));
        if (r >= 0 && role->run_tmp_slot)
                r = stage_add(o, STAGE_TMP, strprintf("--claim=" CLOISTER_TMP_CLAIM_DIR "/%s", role->run_tmp_slot));
        return r;
}

static int emit_shm_size(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        return profile_add_shm(&o->slot[SLOT_SHM], role->limits.shm_size);
}

/* A role mount: staged by cloister-stage, bound from the staging directory, the agent
 * ordered after the file system its source lives on, and the shim told to expect it.
 *
 * Role mounts are bound with "-" (a missing source does not stop namespace setup, whose
 * error would name only the target); the shim then refuses to start the agent if any is
 * not mounted, naming the role key and the missing source.
 *
 * systemd resolves a bind source as root on the host, following symlinks: a source under a
 * path an agent can write (its workspace, another role's Output=) could be made to point at
 * the host's /run. So no source is named to systemd: cloister-stage (ExecStartPre=+, root,
 * outside the sandbox) opens each with RESOLVE_NO_SYMLINKS and binds it under a root-owned
 * directory, or refuses the start naming the path; the unit binds from there. */
static int add_staged_mount(ProfileOut *o, const Role *role, const char *key, const char *name,
                            const char *source, const char *target, bool writable) {
        int r = stage_add(o, STAGE_MOUNTS, strprintf("%s:%s:%s", key, name, source));

        if (r >= 0)
                r = unit_settings_addf(&o->slot[SLOT_BINDS], "Service", writable ? "BindPaths" : "BindReadOnlyPaths",
                                       "-" CLOISTER_STAGE_DIR "/%s/%s:%s", role_instance(role), name, target);
        if (r >= 0 && !streq(name, "workspace-git"))
                r = unit_settings_add(&o->slot[SLOT_MOUNT_ORDER], "Unit", "RequiresMountsFor", source);
        if (r >= 0 && !streq(name, "workspace-git"))
                r = arg_add(o, ARG_EXPECT_MOUNT, strprintf("--expect-mount=%s=%s:%s", key, source, target));
        return r;
}

static int emit_input(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        return role->input ? add_staged_mount(o, role, "Input", "input", role->input, "/input", false) : 0;
}

/* Without Output=, systemd makes the output directory and owns it for the role's user
 * (StateDirectory=): there is nothing for an admin to prepare, and nothing to stage, as no
 * agent can replace a directory whose parents only root writes. */
static int add_managed_output(ProfileOut *o, const Role *role) {
        _cleanup_free_ char *dir = profile_managed_output(role);
        UnitSettings *s = &o->slot[SLOT_MANAGED_OUTPUT];
        int r;

        if (!dir)
                return -ENOMEM;
        r = arg_add(o, ARG_EXPECT_MOUNT, strprintf("--expect-mount=Output=%s:/output", dir));
        if (r >= 0)
                r = unit_settings_addf(s, "Service", "StateDirectory", "cloister-output/%s", role_instance(role));
        /* 257+ keeps a dynamic user's directory owned by "nobody" on disk and shows it as the
         * unit's user only through the id-mapped mount it makes at its own path; /output binds
         * the directory itself, so only the "other" write bit lets the agent write there (1777,
         * as for an explicit Output=). The directory stays unreachable from the host but by
         * root: /var/lib/private is 0700. docs/profile.md, "Per systemd version". */
        if (r >= 0 && !role->user && systemd_version() >= MANAGED_OUTPUT_IDMAPPED_SINCE)
                r = unit_settings_add(s, "Service", "StateDirectoryMode", "1777");
        return r < 0 ? r : unit_settings_addf(s, "Service", "BindPaths", "%s:/output", dir);
}

static int emit_output(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        return role->output ? add_staged_mount(o, role, "Output", "output", role->output, "/output", true) :
                              add_managed_output(o, role);
}

static int emit_read_only_mount(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < role->n_read_only_mounts; i++) {
                char name[32];
                snprintf(name, sizeof name, "ro-%zu", i);
                r = add_staged_mount(o, role, "ReadOnlyMount", name, role->read_only_mounts[i].source,
                                     role->read_only_mounts[i].target, false);
        }
        return r;
}

static int add_deps_set(ProfileOut *o, const Role *role, DepsEcosystem e) {
        _cleanup_free_ char *link = deps_project_link(NULL, role->project, e);
        const char *eco = deps_ecosystem_to_string(e);
        int r;

        if (!link)
                return -ENOMEM;
        r = arg_add(o, ARG_DEPS, strprintf("--expect-mount=%s=%s:" DEPS_SANDBOX_DIR "/%s", deps_ecosystem_key(e), link, eco));
        if (r >= 0)
                r = arg_add(o, ARG_DEPS, strprintf("--setenv=%s=%s", deps_ecosystem_env_name(e), deps_ecosystem_env_value(e)));
        /* the link is read once by cloister-stage; its target must be in the cache and is
         * opened without following symlinks */
        if (r >= 0)
                r = stage_add(o, STAGE_DEPS, strprintf("%s:deps-%s:@%s", deps_ecosystem_key(e), eco, link));
        if (r >= 0)
                r = unit_settings_addf(&o->slot[SLOT_DEPS], "Service", "BindReadOnlyPaths",
                                       "-" CLOISTER_STAGE_DIR "/%s/deps-%s:" DEPS_SANDBOX_DIR "/%s", role_instance(role), eco, eco);
        return r;
}

/* Project=: the project's workspace (a staged mount like Input=) and its dependency sets
 * (cloister.project(5)): materialised by cloister-deps@<project>.service before the agent
 * starts, bound read-only through the stable by-project link (the generator cannot hash a
 * lockfile on a workspace that is not mounted yet). The agent keeps its own network mode:
 * only the daemon-side unit has egress. */
static int emit_project(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        _cleanup_free_ char *git = NULL, *unit = NULL;
        bool any = false;
        int r = 0;

        if (role->workspace) {
                git = strprintf("%s/.git", role->workspace);
                if (!git)
                        return -ENOMEM;
                r = add_staged_mount(o, role, "Workspace", "workspace", role->workspace, "/workspace", true);
                /* the history stays read-only even in a writable tree */
                if (r >= 0)
                        r = add_staged_mount(o, role, "Workspace", "workspace-git", git, "/workspace/.git", false);
        }
        for (DepsEcosystem e = 0; r >= 0 && e < _DEPS_ECOSYSTEM_MAX; e++)
                if (role->deps[e]) {
                        any = true;
                        r = add_deps_set(o, role, e);
                }
        if (r < 0 || !any)
                return r;
        unit = project_deps_unit(role->project);
        if (!unit)
                return -ENOMEM;
        r = unit_settings_add(&o->slot[SLOT_DEPS], "Unit", "Requires", unit);
        if (r >= 0)
                r = unit_settings_add(&o->slot[SLOT_DEPS], "Unit", "After", unit);
        if (r >= 0)
                r = unit_add(o, strdup(unit));
        if (r >= 0)
                r = unit_settings_add(&o->slot[SLOT_DEPS], "Unit", "RequiresMountsFor", DEPS_CACHE_DIR);
        return r;
}

static int emit_gpus(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        return role->gpus ? profile_add_gpus(&o->slot[SLOT_GPUS], role->gpus, role->path) : 0;
}

/* CLOISTER_SERVICE_<NAME>_SOCKET (cloister-shim(8), ENVIRONMENT): the name upper-cased, "-" as "_". */
static char *service_socket_variable(const char *name) {
        char *v = strprintf("CLOISTER_SERVICE_%s_SOCKET", name);

        if (!v)
                return NULL;
        for (char *p = v + strlen("CLOISTER_SERVICE_"); p < v + strlen(v) - strlen("_SOCKET"); p++)
                *p = *p == '-' ? '_' : (char) toupper((unsigned char) *p);
        return v;
}

static int emit_service(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        UnitSettings *s = &o->slot[SLOT_SERVICES];
        int r = 0;

        STRV_FOREACH(svc, role->services) {
                _cleanup_free_ char *var = service_socket_variable(*svc);
                if (!var)
                        return -ENOMEM;
                r = arg_add(o, ARG_SERVICES, strprintf("--setenv=%s=" SIDECAR_SERVICES_DIR "/%s/service.sock", var, *svc));
                /* The socket unit makes the directory: ordering after it means a sidecar added
                 * after boot is there when the sandbox is set up ("-" would skip it silently). */
                if (r >= 0)
                        r = unit_settings_addf(s, "Service", "BindReadOnlyPaths", "-" SIDECAR_SERVICES_DIR "/%s", *svc);
                if (r >= 0)
                        r = unit_settings_addf(s, "Unit", "Wants", "sidecar@%s.socket", *svc);
                if (r >= 0)
                        r = unit_settings_addf(s, "Unit", "After", "sidecar@%s.socket", *svc);
                if (r >= 0)
                        r = unit_add(o, strprintf("sidecar@%s.socket", *svc));
                if (r < 0)
                        return r;
        }
        return 0;
}

static int emit_jit(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        return profile_add_identity(&o->slot[SLOT_IDENTITY], NULL, role->jit);
}

/* --- [LLM], [Broker]: the variables (cloister-shim(8), ENVIRONMENT) that point unmodified
 * clients at the broker, through the shim's relay; daemon-only with a broker socket only --- */

static int emit_loopback_port(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        unsigned port = role->broker.loopback_port;

        if (!broker_reachable(role, conf))
                return 0;
        return arg_add(o, ARG_BROKER, strprintf(
                "--loopback-port=%u --setenv=CLOISTER_BROKER_SOCKET=" SANDBOX_BROKER_SOCKET
                " --setenv=CLOISTER_BROKER_URL=http://127.0.0.1:%u"
                " --setenv=OPENAI_BASE_URL=http://127.0.0.1:%u/v1"
                " --setenv=OPENAI_API_BASE=http://127.0.0.1:%u/v1"
                /* clients insist on a key; the real one never enters the sandbox */
                " --setenv=OPENAI_API_KEY=cloister-broker-holds-the-key", port, port, port, port));
}

static int emit_model(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        const char *model = role->llm_model ?: conf->llm.model ?: conf->chat.model;

        if (!broker_reachable(role, conf) || !model)
                return 0;
        return arg_add_quoted(o, ARG_MODEL, strprintf("--setenv=CLOISTER_LLM_MODEL=%s", model));
}

static int emit_context_size(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        uint64_t ctx = role->llm_context_size != UNSET_U64 ? role->llm_context_size :
                       conf->llm.context_size != UNSET_U64 ? conf->llm.context_size : conf->chat.context_size;

        if (!broker_reachable(role, conf) || ctx == UNSET_U64)
                return 0;
        return arg_add(o, ARG_CONTEXT_SIZE, strprintf("--setenv=CLOISTER_LLM_CONTEXT_SIZE=%llu", (unsigned long long) ctx));
}

static int emit_allow(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        unsigned port = role->broker.loopback_port;
        int r = 0;

        if (!broker_reachable(role, conf))
                return 0;
        STRV_FOREACH(name, role->broker_allow) {
                const Upstream *u = cloister_conf_find_upstream(conf, *name);
                bool mcp = u && streq_ptr(u->kind, "mcp");
                _cleanup_free_ char *var = strprintf("CLOISTER_%s_%s_URL", mcp ? "MCP" : "API", *name);
                if (!var)
                        return -ENOMEM;
                for (char *p = var; *p; p++)
                        *p = *p == '-' ? '_' : (char) toupper((unsigned char) *p);
                r = arg_add(o, ARG_ALLOW, strprintf("--setenv=%s=http://127.0.0.1:%u/%s/%s", var, port, mcp ? "mcp" : "upstream", *name));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* In the order of the unit: each slot's directives come out in the order the emitters run. */
const RoleKeyEmitter role_key_emitters[] = {
        { "Role",    "Description",       emit_description,   "Description=" },
        { "Role",    "Exec",              emit_exec,          "ExecStart= — the words after the shim's \"--\"" },
        { "Role",    "Durability",        emit_durability,    "Restart= RestartPreventExitStatus= RestartSec= RestartSteps= RestartMaxDelaySec= StateDirectory= --setenv= — durable only; RestartSteps= and RestartMaxDelaySec= from systemd 254" },
        { "Role",    "User",              emit_user,          "DynamicUser= User=" },
        { "Role",    "Environment",       emit_environment,   "--setenv=" },
        { "Sandbox", "Network",           emit_network,       "--network= PrivateNetwork= RestrictAddressFamilies= IPAddressAllow= IPAddressDeny= BindReadOnlyPaths= Wants= After= — the mode's rows; daemon-only binds the broker socket" },
        { "Sandbox", "Memory",            emit_memory,        "MemoryMax=" },
        { "Sandbox", "CPUs",              emit_cpus,          "CPUQuota=" },
        { "Sandbox", "Tasks",             emit_tasks,         "TasksMax=" },
        { "Sandbox", "Timeout",           emit_timeout,       "--timeout= RuntimeMaxSec=" },
        { "Sandbox", "StopGrace",         emit_stop_grace,    "--stop-grace= TimeoutStopSec= — StopGrace= plus 5 s" },
        { "Sandbox", "TmpSize",           emit_tmp_size,      "RequiresMountsFor= BindPaths= ExecStartPre= ExecStopPost= — the size-capped /tmp and /var/tmp mount units, emptied by cloister-stage" },
        { "Sandbox", "ShmSize",           emit_shm_size,      "TemporaryFileSystem= — /dev/shm" },
        { "Sandbox", "Input",             emit_input,         "ExecStartPre= ExecStopPost= BindReadOnlyPaths= RequiresMountsFor= --expect-mount= — staged by cloister-stage" },
        { "Sandbox", "Output",            emit_output,        "ExecStartPre= ExecStopPost= BindPaths= RequiresMountsFor= StateDirectory= StateDirectoryMode= --expect-mount= — staged by cloister-stage; without Output=, systemd's managed directory (StateDirectoryMode= from systemd 257, for a dynamic user)" },
        { "Role",    "Project",           emit_project,       "ExecStartPre= ExecStopPost= BindPaths= BindReadOnlyPaths= RequiresMountsFor= Requires= After= --expect-mount= --setenv= — the workspace and its dependency sets" },
        { "Sandbox", "ReadOnlyMount",     emit_read_only_mount, "ExecStartPre= ExecStopPost= BindReadOnlyPaths= RequiresMountsFor= --expect-mount= — staged by cloister-stage" },
        { "Sandbox", "Service",           emit_service,       "BindReadOnlyPaths= Wants= After= --setenv=" },
        { "Sandbox", "JIT",               emit_jit,           "MemoryDenyWriteExecute=" },
        { "Sandbox", "GPUs",              emit_gpus,          "DeviceAllow= BindReadOnlyPaths= ExecStartPre=" },
        { "Broker",  "LoopbackPort",      emit_loopback_port, "--loopback-port= --setenv= — daemon-only with a broker socket" },
        { "LLM",     "Model",             emit_model,         "--setenv= — daemon-only with a broker socket" },
        { "LLM",     "ContextSize",       emit_context_size,  "--setenv= — daemon-only with a broker socket" },
        { "Broker",  "Allow",             emit_allow,         "--setenv= — daemon-only with a broker socket; cloister-broker reads it too" },
        { "LLM",     "Endpoint",          NULL,               "nothing in the unit: the agent calls it itself (egress or host only)" },
        { "Install", "WantedBy",          NULL,               "nothing in the unit: cloister-generator's .wants/ links" },
        { "Broker",  "AllowTool",         NULL,               "nothing in the unit: read by cloister-broker" },
        { "Broker",  "RequestsPerMinute", NULL,               "nothing in the unit: read by cloister-broker" },
        { "Broker",  "TokensPerMinute",   NULL,               "nothing in the unit: read by cloister-broker" },
        { "Broker",  "MaxRequestBytes",   NULL,               "nothing in the unit: read by cloister-broker" },
        { "Broker",  "MaxConcurrent",     NULL,               "nothing in the unit: read by cloister-broker" },
};

const size_t role_key_emitters_n = ELEMENTSOF(role_key_emitters);

/* The words blank-separated ("" for none), NULL on OOM. */
static char *join_words(char * const *l, const char *sep) {
        size_t n = 1;
        char *v, *t;

        STRV_FOREACH(w, l)
                n += strlen(*w) + strlen(sep);
        v = t = malloc(n);
        if (!v)
                return NULL;
        *t = 0;
        STRV_FOREACH(w, l)
                t = stpcpy(stpcpy(t, w == l ? "" : sep), *w);
        return v;
}

/* The shim's command line: the arguments the keys' emitters collected, in ProfileArg order. */
static int render_exec_start(UnitSettings *s, const Role *role, ProfileOut *o) {
        _cleanup_free_ char *line = strprintf("%s --role=%s", CLOISTER_SHIM_PATH, role->name);
        int r;

        for (ProfileArg a = 0; line && a < _ARG_MAX; a++) {
                _cleanup_free_ char *args = join_words(o->arg[a], " ");
                char *l = args && (*args || a == ARG_EXEC) ?
                        strprintf("%s%s %s", line, a == ARG_EXEC ? " --" : "", args) : NULL;
                if (!args)
                        return -ENOMEM;
                if (!*args && a != ARG_EXEC)
                        continue;
                free(line);
                line = l;
        }
        if (!line)
                return -ENOMEM;
        r = unit_settings_add(s, "Service", "ExecStart", "");
        return r < 0 ? r : unit_settings_add(s, "Service", "ExecStart", line);
}

/* cloister-stage empties the role's /tmp mounts and binds every role mount the emitters
 * staged; when the unit stops, it unbinds them and empties /tmp again. */
static int render_stage(UnitSettings *s, const Role *role, ProfileOut *o) {
        const char *inst = role->run_instance ?: role->name;
        _cleanup_free_ char *tmp = join_words(o->stage[STAGE_TMP], " "), *mounts = join_words(o->stage[STAGE_MOUNTS], " "),
                *deps = join_words(o->stage[STAGE_DEPS], " ");
        int r;

        if (!tmp || !mounts || !deps)
                return -ENOMEM;
        if (!o->stage[STAGE_TMP] && !o->stage[STAGE_MOUNTS] && !o->stage[STAGE_DEPS])
                return 0;
        r = unit_settings_addf(s, "Service", "ExecStartPre", "+" CLOISTER_STAGE_PATH " start %s%s%s%s%s%s%s", inst,
                               *tmp ? " " : "", tmp, *mounts ? " " : "", mounts, *deps ? " " : "", deps);
        return r < 0 ? r : unit_settings_addf(s, "Service", "ExecStopPost", "+" CLOISTER_STAGE_PATH " stop %s%s%s",
                                              inst, *tmp ? " " : "", tmp);
}

static int render_slots(UnitSettings *s, const Role *role, ProfileOut *o) {
        int r = 0;

        for (ProfileSlot k = 0; r >= 0 && k < _SLOT_MAX; k++) {
                if (k == SLOT_EXEC)
                        r = render_exec_start(s, role, o);
                else if (k == SLOT_STAGE)
                        r = render_stage(s, role, o);
                for (size_t i = 0; r >= 0 && i < o->slot[k].n; i++)
                        r = unit_settings_add(s, o->slot[k].items[i].section, o->slot[k].items[i].key, o->slot[k].items[i].value);
                if (r >= 0 && k == SLOT_HEAD)
                        r = unit_settings_add(s, "Unit", "SourcePath", role->path);
        }
        return r;
}

static int run_emitters(ProfileOut *o, const Role *role, const CloisterConf *conf) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < role_key_emitters_n; i++)
                if (role_key_emitters[i].emit)
                        r = role_key_emitters[i].emit(o, role, conf);
        return r;
}

int profile_role_units(const Role *role, const CloisterConf *conf, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        ProfileOut o = {};
        int r = run_emitters(&o, role, conf);

        if (r >= 0)
                r = list_add(&l, strprintf("agent@%s.service", role->name));
        STRV_FOREACH(u, o.units)
                if (r >= 0)
                        r = strv_extend(&l, *u);
        profile_out_done(&o);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

int profile_role(const Role *role, const CloisterConf *conf, UnitSettings *ret) {
        ProfileOut o = {};
        UnitSettings s = {};
        int r = run_emitters(&o, role, conf);

        if (r >= 0)
                r = render_slots(&s, role, &o);
        if (r >= 0)
                r = profile_add_versioned(&s, systemd_version());
        profile_out_done(&o);
        if (r < 0) {
                unit_settings_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}
