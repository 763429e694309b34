/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cmdline.h"
#include "exit-status.h"
#include "hardening.h"
#include "profile.h"

/* Every agent, whatever its mode: the most closed state (mode "none"), that is these rows
 * and the hardening base (hardening.c) unchanged. A role's drop-in only adds what its keys
 * grant. */
static const ProfileRow static_rows[] = {
        { "Unit", "Description", "cloister agent %i" },
        { "Unit", "Documentation", "man:cloister.role(5) man:cloister-shim(8)" },
        /* An admin's start or restart is never refused: systemd's start rate limit (5 in
         * 10 s) counts a start made while ExecStopPost= still runs more than once, and
         * refused back-to-back restarts from the 4th on. A durable role's crash loop is
         * slowed by RestartSec= instead (cloister.role(5), DURABILITY AND FAILURE). */
        { "Unit", "StartLimitIntervalSec", "0" },
        /* Without a generated drop-in there is no role: the shim refuses (fail closed). */
        { "Service", "Type", "exec" },
        { "Service", "NotifyAccess", "none" },   /* no EXTEND_TIMEOUT_USEC from inside */
        { "Service", "ExecStart", CLOISTER_SHIM_PATH " --unconfigured=%i" },
        { "Service", "Restart", "no" },
        { "Service", "KillMode", "mixed" },      /* SIGTERM to the shim, which forwards it */
};

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

        for (size_t i = 0; i < ELEMENTSOF(static_rows) && r >= 0; i++)
                if (!strv_contains((char **) skip, static_rows[i].key))
                        r = unit_settings_add(s, static_rows[i].section, static_rows[i].key, static_rows[i].value);
        return r < 0 ? r : hardening_add(s, NULL);
}

/* A run's /tmp is its own, not its role's: runs of one role may overlap. */
const char *const profile_tmp_dirs[2] = { "tmp", "var-tmp" };

char *profile_tmp_path(const Role *role, const char *which) {
        return strprintf(CLOISTER_TMP_PREFIX "%s/%s", which, role->run_tmp_slot ?: role->run_instance ?: role->name);
}

bool profile_tmp_persists(const Role *role) {
        return !role->run_instance || role->run_tmp_slot;
}

char *profile_tmp_mount_name(const Role *role, const char *which) {
        _cleanup_free_ char *where = profile_tmp_path(role, which);
        _cleanup_free_ char *esc = where ? unit_name_path_escape(where) : NULL;

        return esc ? strprintf("%s.mount", esc) : NULL;
}

int profile_tmp_mount(const Role *role, const char *which, char **ret_name, UnitSettings *ret) {
        _cleanup_free_ char *where = profile_tmp_path(role, which), *name = profile_tmp_mount_name(role, which);
        UnitSettings s = {};
        int r;

        if (!where || !name)
                return -ENOMEM;
        r = unit_settings_addf(&s, "Unit", "Description", "cloister private /%s of role %s",
                               streq(which, "tmp") ? "tmp" : "var/tmp", role->name);
        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "SourcePath", role->path);
        /* A role's mount, and a run slot's, stays mounted between starts, so that a start
         * makes no mount event (PID 1 rate-limits those): cloister-stage empties it before
         * each start and after each stop. A run without a slot has mounts of its own,
         * unmounted (and so emptied) when it ends. */
        if (r >= 0 && !profile_tmp_persists(role))
                r = unit_settings_add(&s, "Unit", "StopWhenUnneeded", "yes");
        if (r >= 0) /* an admin who restarts it, or runs started often, are never refused */
                r = unit_settings_add(&s, "Unit", "StartLimitIntervalSec", "0");
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
        if (ret_name)
                *ret_name = TAKE_PTR(name);
        *ret = s;
        return 0;
}

char *profile_managed_output(const Role *role) {
        /* DynamicUser= keeps the directory under /var/lib/private (0700), with a symlink at
         * /var/lib/cloister-output/<instance>; the bind names the real directory */
        return strprintf("/var/lib/%scloister-output/%s", role->user ? "" : "private/", role->run_instance ?: role->name);
}

/* systemd's own SIGKILL comes this long after the shim's, as a backstop. */
#define STOP_BACKSTOP_USEC (5 * USEC_PER_SEC)

int profile_add_limit_memory(UnitSettings *s, const SandboxLimits *l) {
        return unit_settings_addf(s, "Service", "MemoryMax", "%llu", (unsigned long long) l->memory);
}

int profile_add_limit_cpus(UnitSettings *s, const SandboxLimits *l) {
        return unit_settings_addf(s, "Service", "CPUQuota", "%u%%", l->cpus_percent);
}

int profile_add_limit_tasks(UnitSettings *s, const SandboxLimits *l) {
        return unit_settings_addf(s, "Service", "TasksMax", "%llu", (unsigned long long) l->tasks);
}

int profile_add_limit_timeout(UnitSettings *s, const SandboxLimits *l) {
        _cleanup_free_ char *t = NULL;

        if (l->timeout == 0)
                return 0;
        t = format_timespan(l->timeout);
        return t ? unit_settings_add(s, "Service", "RuntimeMaxSec", t) : -ENOMEM;
}

int profile_add_limit_stop_grace(UnitSettings *s, const SandboxLimits *l) {
        _cleanup_free_ char *stop = format_timespan(l->stop_grace + STOP_BACKSTOP_USEC);
        return stop ? unit_settings_add(s, "Service", "TimeoutStopSec", stop) : -ENOMEM;
}

int profile_add_limits(UnitSettings *s, const SandboxLimits *l) {
        int r = profile_add_limit_memory(s, l);

        if (r >= 0)
                r = profile_add_limit_cpus(s, l);
        if (r >= 0)
                r = profile_add_limit_tasks(s, l);
        if (r >= 0)
                r = profile_add_limit_timeout(s, l);
        if (r >= 0)
                r = profile_add_limit_stop_grace(s, l);
        return r;
}

int profile_add_shm(UnitSettings *s, uint64_t size) {
        return unit_settings_addf(s, "Service", "TemporaryFileSystem", "/dev/shm:size=%llu,mode=1777,nosuid,nodev,noexec",
                                  (unsigned long long) size);
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
