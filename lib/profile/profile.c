/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>

#include "cmdline.h"
#include "deps.h"
#include "exit-status.h"
#include "log.h"
#include "policy.h"
#include "profile.h"
#include "project.h"
#include "systemd-version.h"

/* Every agent, whatever its mode: the most closed state (mode "none"). A role's drop-in only
 * adds what its keys grant. */
static const ProfileRow static_rows[] = {
        { "Unit", "Description", "cloister agent %i" },
        { "Unit", "Documentation", "man:cloister.role(5) man:cloister-shim(8)" },
        /* Without a generated drop-in there is no role: the shim refuses (fail closed). */
        { "Service", "Type", "exec" },
        { "Service", "NotifyAccess", "none" },   /* no EXTEND_TIMEOUT_USEC from inside */
        { "Service", "ExecStart", CLOISTER_SHIM_PATH " --unconfigured=%i" },
        { "Service", "Restart", "no" },
        { "Service", "KillMode", "mixed" },      /* SIGTERM to the shim, which forwards it */
        { "Service", "DynamicUser", "yes" },
        { "Service", "PrivateUsers", "yes" },
        { "Service", "NoNewPrivileges", "yes" },
        { "Service", "CapabilityBoundingSet", "" },
        { "Service", "AmbientCapabilities", "" },
        { "Service", "SecureBits", "noroot-locked" },
        { "Service", "ProtectSystem", "strict" },
        { "Service", "ProtectHome", "yes" },
        { "Service", "PrivateTmp", "yes" },
        { "Service", "PrivateDevices", "yes" },
        { "Service", "DevicePolicy", "closed" },
        { "Service", "PrivateNetwork", "yes" },
        { "Service", "PrivateIPC", "yes" },
        { "Service", "PrivateMounts", "yes" },
        { "Service", "ProtectKernelTunables", "yes" },
        { "Service", "ProtectKernelModules", "yes" },
        { "Service", "ProtectKernelLogs", "yes" },
        { "Service", "ProtectClock", "yes" },
        { "Service", "ProtectHostname", "yes" },
        { "Service", "ProtectControlGroups", "yes" },
        { "Service", "ProtectProc", "invisible" },
        { "Service", "ProcSubset", "pid" },
        { "Service", "RestrictNamespaces", "yes" },
        { "Service", "RestrictSUIDSGID", "yes" },
        { "Service", "RestrictRealtime", "yes" },
        { "Service", "LockPersonality", "yes" },
        { "Service", "MemoryDenyWriteExecute", "yes" },
        { "Service", "KeyringMode", "private" },
        { "Service", "RemoveIPC", "yes" },
        { "Service", "UMask", "0077" },
        { "Service", "LimitCORE", "0" },
        { "Service", "SystemCallArchitectures", "native" },
        { "Service", "SystemCallFilter", "@system-service" },
        { "Service", "SystemCallFilter", NULL },  /* ~ the reviewed list from policy/ */
        { "Service", "SystemCallErrorNumber", "EPERM" },
        { "Service", "RestrictAddressFamilies", "AF_UNIX" },
        { "Service", "IPAddressDeny", "any" },
        /* ProtectSystem=strict leaves connect() to every socket under /run: the system bus,
         * journald, nscd, resolved's varlink (a DNS channel). Only what a mode grants is
         * bound back in. */
        { "Service", "TemporaryFileSystem", "/run:ro" },
        /* PrivateDevices= binds the host's /dev/mqueue and /dev/hugepages; /dev/shm gets a
         * private, capped tmpfs per role (ShmSize=). sysfs lists the host's interfaces. */
        { "Service", "InaccessiblePaths", "-/dev/mqueue -/dev/hugepages -/sys/class/net -/sys/devices/virtual/net" },
        { "Service", "MemorySwapMax", "0" },
        { "Service", "StandardOutput", "journal" },
        { "Service", "StandardError", "journal" },
};

static char *denied_syscalls_value(void) {
        size_t len = 2;
        char *v, *t;

        for (const char *const *s = policy_denied_syscalls; *s; s++)
                len += strlen(*s) + 1;
        v = t = malloc(len);
        if (!v)
                return NULL;
        *t++ = '~';
        for (const char *const *s = policy_denied_syscalls; *s; s++)
                t += sprintf(t, "%s%s", s == policy_denied_syscalls ? "" : " ", *s);
        return v;
}

int profile_add_rows(UnitSettings *s, const ProfileRow *rows, size_t n) {
        int r = 0;

        for (size_t i = 0; i < n && rows[i].key && r >= 0; i++)
                r = unit_settings_add(s, rows[i].section, rows[i].key, rows[i].value);
        return r;
}

int profile_static(UnitSettings *ret) {
        UnitSettings s = {};
        int r = profile_add_static(&s, NULL);

        if (r < 0) {
                unit_settings_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

int profile_add_static(UnitSettings *s, const char *const *skip) {
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(static_rows) && r >= 0; i++) {
                _cleanup_free_ char *v = NULL;
                bool skipped = false;

                for (const char *const *k = skip; k && *k && !skipped; k++)
                        skipped = streq(*k, static_rows[i].key);
                if (skipped)
                        continue;
                v = static_rows[i].value ? NULL : denied_syscalls_value();
                if (!static_rows[i].value && !v)
                        r = -ENOMEM;
                else
                        r = unit_settings_add(s, static_rows[i].section, static_rows[i].key,
                                              static_rows[i].value ?: v);
        }
        return r;
}

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

/* A run's /tmp is its own, not its role's: runs of one role may overlap. */
char *profile_tmp_path(const Role *role, const char *which) {
        return strprintf("/run/cloister/%s/%s", which, role->run_instance ?: role->name);
}

int profile_tmp_mount(const Role *role, const char *which, UnitSettings *ret) {
        _cleanup_free_ char *where = profile_tmp_path(role, which);
        UnitSettings s = {};
        int r;

        if (!where)
                return -ENOMEM;
        r = unit_settings_addf(&s, "Unit", "Description", "cloister private /%s of role %s",
                               streq(which, "tmp") ? "tmp" : "var/tmp", role->name);
        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "SourcePath", role->path);
        if (r >= 0) /* unmounted, and so emptied, when the agent stops */
                r = unit_settings_add(&s, "Unit", "StopWhenUnneeded", "yes");
        if (r >= 0)
                r = unit_settings_add(&s, "Mount", "What", "tmpfs");
        if (r >= 0)
                r = unit_settings_add(&s, "Mount", "Where", where);
        if (r >= 0)
                r = unit_settings_add(&s, "Mount", "Type", "tmpfs");
        if (r >= 0) /* no host user may reach into a running agent's /tmp */
                r = unit_settings_add(&s, "Mount", "DirectoryMode", "0700");
        if (r >= 0) /* 1777: the dynamic UID is not known in advance */
                r = unit_settings_addf(&s, "Mount", "Options", "size=%llu,mode=1777,nosuid,nodev",
                                       (unsigned long long) role->limits.tmp_size);
        if (r < 0) {
                unit_settings_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

/* systemd's own SIGKILL comes this long after the shim's, as a backstop. */
#define STOP_BACKSTOP_USEC (5 * USEC_PER_SEC)

/* CLOISTER_SERVICE_<NAME>_SOCKET (cloister-shim(8), ENVIRONMENT): the name upper-cased, "-" as "_". */
static char *service_socket_variable(const char *name) {
        char *v = strprintf("CLOISTER_SERVICE_%s_SOCKET", name);

        if (!v)
                return NULL;
        for (char *p = v + strlen("CLOISTER_SERVICE_"); p < v + strlen(v) - strlen("_SOCKET"); p++)
                *p = *p == '-' ? '_' : (char) toupper((unsigned char) *p);
        return v;
}

/* The variables (cloister-shim(8), ENVIRONMENT) that point unmodified clients at the broker, through the shim's relay. */
static void write_broker_environment(FILE *f, const Role *role, const CloisterConf *conf) {
        const char *model = role->llm_model ?: conf->llm.model ?: conf->chat.model;
        uint64_t ctx = role->llm_context_size != UNSET_U64 ? role->llm_context_size :
                       conf->llm.context_size != UNSET_U64 ? conf->llm.context_size : conf->chat.context_size;
        unsigned port = role->broker.loopback_port;
        _cleanup_free_ char *qmodel = NULL;

        fprintf(f, " --loopback-port=%u --setenv=CLOISTER_BROKER_SOCKET=" SANDBOX_BROKER_SOCKET
                   " --setenv=CLOISTER_BROKER_URL=http://127.0.0.1:%u"
                   " --setenv=OPENAI_BASE_URL=http://127.0.0.1:%u/v1"
                   " --setenv=OPENAI_API_BASE=http://127.0.0.1:%u/v1"
                   /* clients insist on a key; the real one never enters the sandbox */
                   " --setenv=OPENAI_API_KEY=cloister-broker-holds-the-key", port, port, port, port);
        if (model) {
                _cleanup_free_ char *arg = strprintf("--setenv=CLOISTER_LLM_MODEL=%s", model);
                qmodel = arg ? unit_exec_quote(arg) : NULL;
                if (qmodel)
                        fprintf(f, " %s", qmodel);
        }
        if (ctx != UNSET_U64)
                fprintf(f, " --setenv=CLOISTER_LLM_CONTEXT_SIZE=%llu", (unsigned long long) ctx);
        STRV_FOREACH(name, role->broker_allow) {
                const Upstream *u = cloister_conf_find_upstream(conf, *name);
                bool mcp = u && streq_ptr(u->kind, "mcp");
                _cleanup_free_ char *var = strprintf("CLOISTER_%s_%s_URL", mcp ? "MCP" : "API", *name);
                if (!var)
                        continue;
                for (char *p = var; *p; p++)
                        *p = *p == '-' ? '_' : (char) toupper((unsigned char) *p);
                fprintf(f, " --setenv=%s=http://127.0.0.1:%u/%s/%s", var, port, mcp ? "mcp" : "upstream", *name);
        }
}

static int add_exec_start(UnitSettings *s, const Role *role, const CloisterConf *conf) {
        _cleanup_free_ char *line = NULL, *timeout = format_timespan(role->limits.timeout),
                *grace = format_timespan(role->limits.stop_grace);
        size_t len;
        FILE *f;
        int r;

        if (!timeout || !grace)
                return -ENOMEM;
        f = open_memstream(&line, &len);
        if (!f)
                return -ENOMEM;
        fprintf(f, "%s --role=%s --network=%s --timeout=%s --stop-grace=%s", CLOISTER_SHIM_PATH,
                role->name, network_mode_to_string(role->network), timeout, grace);
        if (role->network == NETWORK_DAEMON_ONLY && conf->broker_socket)
                write_broker_environment(f, role, conf);
        if (role->input)
                fprintf(f, " --expect-mount=Input=%s:/input", role->input);
        if (role->output)
                fprintf(f, " --expect-mount=Output=%s:/output", role->output);
        if (role->workspace)
                fprintf(f, " --expect-mount=Workspace=%s:/workspace", role->workspace);
        for (size_t i = 0; i < role->n_read_only_mounts; i++)
                fprintf(f, " --expect-mount=ReadOnlyMount=%s:%s",
                        role->read_only_mounts[i].source, role->read_only_mounts[i].target);
        /* the shim inherits nothing an administrator could set (cloister-shim(8)): systemd's
         * STATE_DIRECTORY= is passed on explicitly */
        if (role->durability == DURABILITY_DURABLE)
                fprintf(f, " --setenv=STATE_DIRECTORY=/var/lib/cloister/%s", role->name);
        STRV_FOREACH(svc, role->services) {
                _cleanup_free_ char *var = service_socket_variable(*svc);
                if (!var) {
                        fclose(f);
                        return -ENOMEM;
                }
                fprintf(f, " --setenv=%s=/run/cloister/services/%s/service.sock", var, *svc);
        }
        for (DepsEcosystem e = 0; e < _DEPS_ECOSYSTEM_MAX; e++) {
                _cleanup_free_ char *link = role->deps[e] ? deps_project_link(NULL, role->project, e) : NULL;
                if (!role->deps[e])
                        continue;
                if (!link) {
                        fclose(f);
                        return -ENOMEM;
                }
                fprintf(f, " --expect-mount=%s=%s:" DEPS_SANDBOX_DIR "/%s --setenv=%s=%s", deps_ecosystem_key(e), link,
                        deps_ecosystem_to_string(e), deps_ecosystem_env_name(e), deps_ecosystem_env_value(e));
        }
        STRV_FOREACH(e, role->environment) {
                _cleanup_free_ char *arg = strprintf("--setenv=%s", *e), *q = NULL;
                if (!arg || !(q = unit_exec_quote(arg))) {
                        fclose(f);
                        return -ENOMEM;
                }
                fprintf(f, " %s", q);
        }
        fputs(" --", f);
        STRV_FOREACH(a, role->argv) {
                _cleanup_free_ char *q = unit_exec_quote(*a);
                if (!q) {
                        fclose(f);
                        return -ENOMEM;
                }
                fprintf(f, " %s", q);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        r = unit_settings_add(s, "Service", "ExecStart", "");
        return r < 0 ? r : unit_settings_add(s, "Service", "ExecStart", line);
}

int profile_add_limits(UnitSettings *s, const SandboxLimits *l) {
        _cleanup_free_ char *stop = format_timespan(l->stop_grace + STOP_BACKSTOP_USEC);
        int r;

        if (!stop)
                return -ENOMEM;
        r = unit_settings_addf(s, "Service", "MemoryMax", "%llu", (unsigned long long) l->memory);
        if (r >= 0)
                r = unit_settings_addf(s, "Service", "CPUQuota", "%u%%", l->cpus_percent);
        if (r >= 0)
                r = unit_settings_addf(s, "Service", "TasksMax", "%llu", (unsigned long long) l->tasks);
        if (r >= 0 && l->timeout > 0) {
                _cleanup_free_ char *t = format_timespan(l->timeout);
                r = t ? unit_settings_add(s, "Service", "RuntimeMaxSec", t) : -ENOMEM;
        }
        if (r >= 0)
                r = unit_settings_add(s, "Service", "TimeoutStopSec", stop);
        return r;
}

/* Order the agent after the file systems its mount sources live on. */
static int add_mount_ordering(UnitSettings *s, const Role *role) {
        int r = 0;

        if (role->input)
                r = unit_settings_add(s, "Unit", "RequiresMountsFor", role->input);
        if (r >= 0 && role->output)
                r = unit_settings_add(s, "Unit", "RequiresMountsFor", role->output);
        if (r >= 0 && role->workspace)
                r = unit_settings_add(s, "Unit", "RequiresMountsFor", role->workspace);
        for (size_t i = 0; r >= 0 && i < role->n_read_only_mounts; i++)
                r = unit_settings_add(s, "Unit", "RequiresMountsFor", role->read_only_mounts[i].source);
        return r;
}

/* The project's dependency sets (cloister.project(5)): materialised by cloister-deps@<project>.service before
 * the agent starts, bound read-only through the stable by-project link (the generator cannot
 * hash a lockfile on a workspace that is not mounted yet). The agent keeps its own network
 * mode: only the daemon-side unit has egress. */
static int add_deps(UnitSettings *s, const Role *role) {
        _cleanup_free_ char *unit = NULL;
        bool any = false;
        int r = 0;

        for (DepsEcosystem e = 0; e < _DEPS_ECOSYSTEM_MAX && r >= 0; e++) {
                if (!role->deps[e])
                        continue;
                any = true;
                /* staged by add_role_mounts(): the link is read once, its target must be in
                 * the cache and is opened without following symlinks */
                r = unit_settings_addf(s, "Service", "BindReadOnlyPaths", "-" CLOISTER_STAGE_DIR "/%s/deps-%s:" DEPS_SANDBOX_DIR "/%s",
                                       role->run_instance ?: role->name, deps_ecosystem_to_string(e), deps_ecosystem_to_string(e));
        }
        if (r < 0 || !any)
                return r;
        unit = project_deps_unit(role->project);
        if (!unit)
                return -ENOMEM;
        r = unit_settings_add(s, "Unit", "Requires", unit);
        if (r >= 0)
                r = unit_settings_add(s, "Unit", "After", unit);
        if (r >= 0)
                r = unit_settings_add(s, "Unit", "RequiresMountsFor", DEPS_CACHE_DIR);
        return r;
}

/* One role mount: staged by cloister-stage, bound from the staging directory. */
typedef struct StagedMount {
        const char *key, *source, *target;
        bool writable;
        char name[32];
} StagedMount;

static size_t role_staged_mounts(const Role *role, StagedMount *m, char **git) {
        size_t n = 0;

        if (role->input)
                m[n++] = (StagedMount) { "Input", role->input, "/input", false, "input" };
        if (role->output)
                m[n++] = (StagedMount) { "Output", role->output, "/output", true, "output" };
        if (role->workspace) {
                m[n++] = (StagedMount) { "Workspace", role->workspace, "/workspace", true, "workspace" };
                /* the history stays read-only even in a writable tree */
                m[n++] = (StagedMount) { "Workspace", *git, "/workspace/.git", false, "workspace-git" };
        }
        for (size_t i = 0; i < role->n_read_only_mounts; i++) {
                m[n] = (StagedMount) { "ReadOnlyMount", role->read_only_mounts[i].source,
                                       role->read_only_mounts[i].target, false, "" };
                snprintf(m[n++].name, sizeof m[0].name, "ro-%zu", i);
        }
        return n;
}

/* Role mounts are bound with "-" (a missing source does not stop namespace setup, whose
 * error would name only the target); the shim then refuses to start the agent if any is
 * not mounted, naming the role key and the missing source.
 *
 * systemd resolves a bind source as root on the host, following symlinks: a source under a
 * path an agent can write (its workspace, another role's Output=) could be made to point at
 * the host's /run. So no source is named to systemd: cloister-stage (ExecStartPre=+, root,
 * outside the sandbox) opens each with RESOLVE_NO_SYMLINKS and binds it under a root-owned
 * directory, or refuses the start naming the path; the unit binds from there. */
static int add_role_mounts(UnitSettings *s, const Role *role) {
        const char *inst = role->run_instance ?: role->name;
        _cleanup_free_ char *git = role->workspace ? strprintf("%s/.git", role->workspace) : NULL;
        _cleanup_free_ char *line = NULL;
        StagedMount *m;
        bool deps = false;
        size_t n, len;
        FILE *f;
        int r = 0;

        if (role->workspace && !git)
                return -ENOMEM;
        m = calloc(4 + role->n_read_only_mounts + _DEPS_ECOSYSTEM_MAX, sizeof(StagedMount));
        if (!m)
                return -ENOMEM;
        n = role_staged_mounts(role, m, &git);
        f = open_memstream(&line, &len);
        if (!f) {
                free(m);
                return -ENOMEM;
        }
        fprintf(f, "+" CLOISTER_STAGE_PATH " start %s", inst);
        for (size_t i = 0; i < n; i++)
                fprintf(f, " %s:%s:%s", m[i].key, m[i].name, m[i].source);
        for (DepsEcosystem e = 0; e < _DEPS_ECOSYSTEM_MAX; e++)
                if (role->deps[e]) {
                        _cleanup_free_ char *link = deps_project_link(NULL, role->project, e);
                        deps = true;
                        if (!link)
                                r = -ENOMEM;
                        else
                                fprintf(f, " %s:deps-%s:@%s", deps_ecosystem_key(e), deps_ecosystem_to_string(e), link);
                }
        if (fclose(f) != 0)
                r = -ENOMEM;
        if (r >= 0 && (n > 0 || deps)) {
                r = unit_settings_add(s, "Service", "ExecStartPre", line);
                if (r >= 0)
                        r = unit_settings_addf(s, "Service", "ExecStopPost", "+" CLOISTER_STAGE_PATH " stop %s", inst);
        }
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = unit_settings_addf(s, "Service", m[i].writable ? "BindPaths" : "BindReadOnlyPaths",
                                       "-" CLOISTER_STAGE_DIR "/%s/%s:%s", inst, m[i].name, m[i].target);
        free(m);
        return r;
}

static int add_mounts(UnitSettings *s, const Role *role, const CloisterConf *conf) {
        _cleanup_free_ char *tmp = profile_tmp_path(role, "tmp"), *var_tmp = profile_tmp_path(role, "var-tmp");
        int r;

        if (!tmp || !var_tmp)
                return -ENOMEM;
        r = unit_settings_addf(s, "Unit", "RequiresMountsFor", "%s %s", tmp, var_tmp);
        if (r >= 0)
                r = unit_settings_addf(s, "Service", "BindPaths", "%s:/tmp", tmp);
        if (r >= 0)
                r = unit_settings_addf(s, "Service", "BindPaths", "%s:/var/tmp", var_tmp);
        if (r >= 0)
                r = profile_add_shm(s, role->limits.shm_size);
        if (r >= 0)
                r = add_role_mounts(s, role);
        if (r >= 0)
                r = add_mount_ordering(s, role);
        if (r >= 0 && role->network == NETWORK_DAEMON_ONLY && conf->broker_socket) {
                r = unit_settings_addf(s, "Service", "BindReadOnlyPaths", "-%s:" SANDBOX_BROKER_SOCKET, conf->broker_socket);
                /* the socket must exist when the sandbox is set up, or the agent has none */
                if (r >= 0)
                        r = unit_settings_add(s, "Unit", "Wants", "cloister-broker.socket");
                if (r >= 0)
                        r = unit_settings_add(s, "Unit", "After", "cloister-broker.socket");
        }
        STRV_FOREACH(svc, role->services) {
                /* The socket unit makes the directory: ordering after it means a sidecar added
                 * after boot is there when the sandbox is set up ("-" would skip it silently). */
                if (r >= 0)
                        r = unit_settings_addf(s, "Service", "BindReadOnlyPaths", "-/run/cloister/services/%s", *svc);
                if (r >= 0)
                        r = unit_settings_addf(s, "Unit", "Wants", "sidecar@%s.socket", *svc);
                if (r >= 0)
                        r = unit_settings_addf(s, "Unit", "After", "sidecar@%s.socket", *svc);
        }
        if (r >= 0)
                r = add_deps(s, role);
        return r;
}

int profile_add_start_check(UnitSettings *s, const char *test, const char *message, const char *arg1, const char *arg2) {
        _cleanup_free_ char *script = strprintf("%s || { echo \"cloister: %s; not starting.\" >&2; exit 1; }", test, message),
                *q_script = NULL, *q1 = NULL, *q2 = NULL;

        if (!script || !(q_script = unit_exec_quote(script)) || !(q1 = unit_exec_quote(arg1)) ||
            (arg2 && !(q2 = unit_exec_quote(arg2))))
                return -ENOMEM;
        return unit_settings_addf(s, "Service", "ExecStartPre", "/bin/sh -c %s sh %s%s%s", q_script, q1,
                                  q2 ? " " : "", q2 ?: "");
}

int profile_add_shm(UnitSettings *s, uint64_t size) {
        return unit_settings_addf(s, "Service", "TemporaryFileSystem", "/dev/shm:size=%llu,mode=1777,nosuid,nodev,noexec",
                                  (unsigned long long) size);
}

static int add_mode(UnitSettings *s, const Role *role) {
        return profile_add_rows(s, mode_rows[role->network], ELEMENTSOF(mode_rows[0]));
}

int profile_add_identity(UnitSettings *s, const char *user, int jit) {
        int r = 0;

        if (user) {
                r = unit_settings_add(s, "Service", "DynamicUser", "no");
                if (r >= 0)
                        r = unit_settings_add(s, "Service", "User", user);
        }
        if (r >= 0 && jit > 0) /* JIT runtimes need W+X mappings */
                r = unit_settings_add(s, "Service", "MemoryDenyWriteExecute", "no");
        return r;
}

static int add_identity_and_durability(UnitSettings *s, const Role *role) {
        int r = profile_add_identity(s, role->user, role->jit);

        if (r >= 0 && role->durability == DURABILITY_DURABLE) {
                r = unit_settings_add(s, "Service", "Restart", "on-failure");
                if (r >= 0) /* timeouts and refusals are terminal (cloister.role(5), DURABILITY AND FAILURE) */
                        r = unit_settings_add(s, "Service", "RestartPreventExitStatus", CLOISTER_EXIT_TERMINAL_LIST);
                if (r >= 0)
                        r = unit_settings_addf(s, "Service", "StateDirectory", "cloister/%s", role->name);
        }
        return r;
}

int profile_role(const Role *role, const CloisterConf *conf, UnitSettings *ret) {
        _cleanup_free_ char *desc = unit_specifier_escape(role->description ?: "");
        UnitSettings s = {};
        int r;

        if (!desc)
                return -ENOMEM;
        r = role->description ? unit_settings_addf(&s, "Unit", "Description", "cloister agent %s: %s", role->name, desc) :
                                unit_settings_addf(&s, "Unit", "Description", "cloister agent %s", role->name);
        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "SourcePath", role->path);
        if (r >= 0)
                r = add_exec_start(&s, role, conf);
        if (r >= 0)
                r = add_mode(&s, role);
        if (r >= 0)
                r = profile_add_limits(&s, &role->limits);
        if (r >= 0)
                r = add_mounts(&s, role, conf);
        if (r >= 0)
                r = add_identity_and_durability(&s, role);
        if (r >= 0 && role->gpus)
                r = profile_add_gpus(&s, role->gpus, role->path);
        if (r >= 0)
                r = profile_add_versioned(&s, systemd_version());
        if (r < 0) {
                unit_settings_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

int profile_refusal(const char *role_name, const char *source, const char *reason, UnitSettings *ret) {
        _cleanup_free_ char *arg = strprintf("--refuse=%s", reason), *q = NULL;
        UnitSettings s = {};
        int r;

        if (!arg || !(q = unit_exec_quote(arg)))
                return -ENOMEM;
        r = unit_settings_add(&s, "Unit", "SourcePath", source);
        if (r >= 0)
                r = unit_settings_add(&s, "Service", "ExecStart", "");
        if (r >= 0)
                r = unit_settings_addf(&s, "Service", "ExecStart", "%s --role=%s %s", CLOISTER_SHIM_PATH, role_name, q);
        if (r >= 0)
                r = unit_settings_add(&s, "Service", "RestartPreventExitStatus", CLOISTER_EXIT_TERMINAL_LIST);
        if (r < 0) {
                unit_settings_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}
