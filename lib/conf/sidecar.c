/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <sys/stat.h>

#include "ini-strict.h"
#include "log.h"
#include "sidecar.h"

Sidecar *sidecar_free(Sidecar *s) {
        if (!s)
                return NULL;
        free(s->name);
        free(s->path);
        free(s->description);
        free(s->exec);
        strv_free(s->argv);
        free(s->health);
        free(s->user);
        free(s->gpus);
        strv_free(s->read_only_mount_specs);
        read_only_mounts_free(s->read_only_mounts, s->n_read_only_mounts);
        strv_free(s->environment);
        return mfree(s);
}

static int parse_exec(const ConfAssignment *a, void *data) {
        Sidecar *s = data;
        return conf_parse_exec(a, &s->exec, &s->argv);
}

/* An origin-form path the proxy sends as is: no query, no blanks, nothing to escape. */
static int parse_health(const ConfAssignment *a, void *data) {
        const char *v = a->value;

        if (isempty(v))
                return conf_parse_string(a, data);
        if (v[0] != '/')
                return conf_invalid(a, "must be an HTTP path starting with \"/\" (or empty: ready when the port accepts)");
        if (strlen(v) > 1024)
                return conf_invalid(a, "longer than 1024 characters");
        for (const char *p = v; *p; p++)
                if (*p <= ' ' || *p >= 127 || strchr("\"\\%<>`{}|^#", *p))
                        return conf_invalid(a, "only printable ASCII without blanks, quotes, \"%\", \"\\\" or \"#\"");
        return conf_parse_string(a, data);
}

static int parse_start_timeout(const ConfAssignment *a, void *data) {
        usec_t *u = data;
        int r = conf_parse_timespan(a, data);

        if (r >= 0 && *u == 0)
                return conf_invalid(a, "must be greater than 0");
        return r;
}

static int parse_max_connections(const ConfAssignment *a, void *data) {
        uint64_t *u = data;
        int r = conf_parse_uint(a, data);

        if (r >= 0 && *u != UNSET_U64 && *u > SIDECAR_MAX_CONNECTIONS_MAX)
                return conf_invalid(a, "at most 65536");
        return r;
}

static const ConfKey sidecar_table[] = {
        { "Sidecar", "Description",    conf_parse_string,          offsetof(Sidecar, description), 0 },
        { "Sidecar", "Exec",           parse_exec,                 0, 0 },
        { "Sidecar", "Port",           conf_parse_port,            offsetof(Sidecar, port), 0 },
        { "Sidecar", "Health",         parse_health,               offsetof(Sidecar, health), 0 },
        { "Sidecar", "StartTimeout",   parse_start_timeout,        offsetof(Sidecar, start_timeout), 0 },
        { "Sidecar", "Memory",         conf_parse_size,            offsetof(Sidecar, limits.memory), 0 },
        { "Sidecar", "CPUs",           conf_parse_cpus,            offsetof(Sidecar, limits.cpus_percent), 0 },
        { "Sidecar", "Tasks",          conf_parse_uint,            offsetof(Sidecar, limits.tasks), 0 },
        { "Sidecar", "ShmSize",        conf_parse_size,            offsetof(Sidecar, limits.shm_size), 0 },
        { "Sidecar", "User",           conf_parse_user,            offsetof(Sidecar, user), 0 },
        { "Sidecar", "GPUs",           conf_parse_gpus,            offsetof(Sidecar, gpus), 0 },
        { "Sidecar", "ReadOnlyMount",  conf_parse_read_only_mount, offsetof(Sidecar, read_only_mount_specs), CONF_REPEATABLE },
        { "Sidecar", "Environment",    conf_parse_environment,     offsetof(Sidecar, environment), CONF_REPEATABLE },
        { "Sidecar", "MaxConnections", parse_max_connections,      offsetof(Sidecar, max_connections), 0 },
        { "Sidecar", "JIT",            conf_parse_bool,            offsetof(Sidecar, jit), 0 },
};

static int sidecar_validate(Sidecar *s, const CloisterConf *conf) {
        SandboxLimits defaults = conf->defaults;

        if (!s->exec)
                return log_error_errno(EINVAL, "%s: [Sidecar] Exec= is required; refusing the file.", s->path);
        if (s->port == 0)
                return log_error_errno(EINVAL, "%s: [Sidecar] Port= is required (the runtime's loopback port); refusing the file.", s->path);
        if (s->start_timeout == UNSET_U64)
                s->start_timeout = SIDECAR_START_TIMEOUT_DEFAULT;
        if (s->max_connections == UNSET_U64)
                s->max_connections = SIDECAR_MAX_CONNECTIONS_DEFAULT;
        /* A warm runtime has no wall-clock ceiling, and its /tmp is charged to MemoryMax=. */
        defaults.timeout = 0;
        sandbox_limits_inherit(&s->limits, &defaults);
        if (s->limits.memory == UNSET_U64)
                return log_error_errno(EINVAL, "%s: Memory= is required, in the sidecar's [Sidecar] or in cloister.conf's [Sandbox]; refusing the file.", s->path);
        return read_only_mounts_resolve(s->read_only_mount_specs, &s->read_only_mounts, &s->n_read_only_mounts);
}

int sidecar_load_from_file(const char *path, FILE *f, const CloisterConf *conf, Sidecar **ret) {
        _cleanup_(sidecar_freep) Sidecar *s = calloc(1, sizeof(Sidecar));
        ConfTableParse p = { .table = sidecar_table, .n = ELEMENTSOF(sidecar_table) };
        int k;

        if (!s)
                return log_oom();
        s->jit = -1;
        s->start_timeout = UNSET_U64;
        s->max_connections = UNSET_U64;
        sandbox_limits_init(&s->limits);

        k = conf_file_name(path, ".sidecar", "sidecar", &s->name);
        if (k < 0)
                return k;
        s->path = strdup(path);
        if (!s->path)
                return log_oom();

        p.base = s;
        k = ini_strict_parse(path, f, conf_table_handler, &p);
        if (k >= 0)
                k = sidecar_validate(s, conf);
        conf_file_state_done(&p.state);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(s);
        return 0;
}

int sidecar_load(const char *path, const CloisterConf *conf, Sidecar **ret) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");

        if (!f)
                return log_error_errno(errno, "Failed to open %s: %m", path);
        return sidecar_load_from_file(path, f, conf, ret);
}

const char *sidecar_dir_check(const char *dir, uid_t owner, bool *ret_fatal) {
        struct stat st;

        *ret_fatal = false;
        if (lstat(dir, &st) < 0)
                return NULL; /* not there (yet): systemd creates it 0555 with the socket */
        *ret_fatal = true;
        if (!S_ISDIR(st.st_mode))
                return "is not a directory";
        if (st.st_uid != owner)
                return owner == 0 ? "is not owned by root" : "is not owned by the owner of --root";
        if (st.st_mode & 0022)
                return "is writable by group or others";
        *ret_fatal = false;
        if ((st.st_mode & 07777) != 0555)
                return "is not mode 0555 (the socket directory stays write-proof even for root's slips)";
        return NULL;
}
