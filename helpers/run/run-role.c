/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The role a sealed run gets: loaded and refused as agent@ROLE would be, narrowed by the run's
 * options and never widened (cloisterctl(1), docs/guide-runs.md). Shared by cloisterctl run and
 * cloister-pool, whose executors are runs of their role. */
#include <sys/random.h>
#include <sys/stat.h>

#include "closed-surface.h"
#include "conf-files.h"
#include "log.h"
#include "parse-util.h"
#include "profile.h"
#include "run-role.h"
#include "writable-path.h"

#define DEFAULT_ROLE "default"

static const char * const run_warm_table[_RUN_WARM_MAX] = {
        [RUN_WARM_AUTO] = "auto",
        [RUN_WARM_WAIT] = "wait",
        [RUN_WARM_NO] = "no",
};

RunWarm run_warm_from_string(const char *s) {
        for (RunWarm w = 0; s && w < _RUN_WARM_MAX; w++)
                if (streq(s, run_warm_table[w]))
                        return w;
        return _RUN_WARM_INVALID;
}

/* The unit directory of generator output among `unit_dirs`, if any. */
static const char *generator_dir(char * const *unit_dirs) {
        STRV_FOREACH(d, unit_dirs) {
                size_t l = strlen(*d), s = strlen("/run/systemd/generator");
                if (l >= s && streq(*d + l - s, "/run/systemd/generator"))
                        return *d;
        }
        return NULL;
}

/* A directory a run mounts, checked as the generator checks a role's (and it must exist
 * now: a run starts at once). */
static int check_run_mount(const char *option, const char *path, const char *(*check)(const char *)) {
        const char *reason = check(path) ?: path_check(path);
        struct stat st;

        if (reason)
                return log_error_errno(EINVAL, "--%s=%s: %s.", option, path, reason);
        if (stat(path, &st) < 0)
                return log_error_errno(errno, "--%s=%s: %m", option, path);
        if (!S_ISDIR(st.st_mode))
                return log_error_errno(ENOTDIR, "--%s=%s: not a directory.", option, path);
        return 0;
}

/* `path` is `base` or lies below it (both normalised by path_check()). */
static bool path_below(const char *path, const char *base) {
        size_t l = base ? strlen(base) : 0;

        return base && strncmp(path, base, l) == 0 && (path[l] == 0 || path[l] == '/' || streq(base, "/"));
}

/* A run only narrows its role's mounts (docs/security.md): --input below one of the role's
 * read-only sources, --output below its Output=. Never an arbitrary host path, which would
 * hand the run a mount the role never named. The sources are still staged by cloister-stage,
 * so a symlink under the role's directory cannot lead out of it. */
static int check_narrows(const char *option, const char *path, const Role *role) {
        if (streq(option, "output")) {
                if (role->output && path_below(path, role->output))
                        return 0;
                return log_error_errno(EPERM, "--output=%s is not below role %s's Output=%s: a run can only narrow its role's mounts.",
                                       path, role->name, role->output ?: " (none)");
        }
        if (role->input && path_below(path, role->input))
                return 0;
        for (size_t i = 0; i < role->n_read_only_mounts; i++)
                if (path_below(path, role->read_only_mounts[i].source))
                        return 0;
        return log_error_errno(EPERM, "--input=%s is not below role %s's Input= or a ReadOnlyMount= source: a run can only narrow its role's mounts.",
                               path, role->name);
}

/* Without --role and without roles/default.role: the most closed profile there is. */
static int builtin_default_role(const CloisterConf *conf, Role **ret) {
        _cleanup_(role_freep) Role *r = calloc(1, sizeof(Role));

        if (!r)
                return log_oom();
        r->name = strdup(DEFAULT_ROLE);
        /* its limits are cloister.conf's [Sandbox] defaults */
        r->path = strdup(conf->path ?: SYSCONFDIR "/cloister/cloister.conf");
        if (!r->name || !r->path)
                return log_oom();
        r->network = NETWORK_NONE;
        r->durability = DURABILITY_TRANSIENT;
        r->jit = -1;
        r->llm_context_size = UNSET_U64;
        sandbox_limits_init(&r->limits);
        sandbox_limits_inherit(&r->limits, &conf->defaults);
        broker_policy_init(&r->broker);
        broker_policy_inherit(&r->broker, &conf->broker);
        if (r->limits.memory == UNSET_U64)
                return log_error_errno(EINVAL, "The built-in default role needs Memory= in cloister.conf's [Sandbox]; or pass --role=.");
        r->read_only_mounts = calloc(1, sizeof(ReadOnlyMount));
        if (!r->read_only_mounts)
                return log_oom();
        *ret = TAKE_PTR(r);
        return 0;
}

static int load_run_role(const char *name, const CloisterConf *conf, char * const *dirs, Role **ret) {
        _cleanup_free_ char *rel = strprintf("roles/%s.role", name ?: DEFAULT_ROLE), *path = NULL;
        int r;

        if (!rel)
                return log_oom();
        r = conf_file_find(dirs, rel, &path);
        if (r < 0)
                return log_error_errno(r, "Cannot look up %s: %m", rel);
        if (!path && !name)
                return builtin_default_role(conf, ret);
        if (!path)
                return log_error_errno(ENOENT, "No role \"%s\": there is no %s in the configuration directories (or it is masked).", name, rel);
        r = role_load(path, conf, dirs, ret);
        return r < 0 ? log_error_errno(r, "Role %s is refused (see above); nothing was started.", name ?: DEFAULT_ROLE) : 0;
}

static const char *mode_str(NetworkMode m) {
        return network_mode_to_string(m);
}

/* What a run may change: only ever less than the role grants. */
int run_role_narrow(Role *role, const RunOptions *a, const CloisterConf *conf) {
        if (a->network >= 0 && a->network != role->network) {
                if (a->network != NETWORK_NONE)
                        return log_error_errno(EPERM, "--network=%s would widen role %s (Network=%s): a run can only narrow its role.",
                                               mode_str(a->network), role->name, mode_str(role->network));
                role->network = a->network;
        }
        if (!network_mode_is_sealed(role->network) && conf->require_sealed_runs != 0)
                return log_error_errno(EPERM, "Role %s is Network=%s, and runs are sealed while cloister.conf's [Runtime] RequireSealedRuns=yes: pass --network=none, or use a sealed role.",
                                       role->name, mode_str(role->network));

        if (a->timeout != UNSET_U64) {
                if (role->limits.timeout > 0 && (a->timeout == 0 || a->timeout > role->limits.timeout)) {
                        _cleanup_free_ char *t = format_timespan(role->limits.timeout);
                        return log_error_errno(EPERM, "--timeout would widen role %s (Timeout=%s): a run can only shorten it.",
                                               role->name, strempty(t));
                }
                role->limits.timeout = a->timeout;
        }
        if (a->input) {
                if (check_run_mount("input", a->input, mount_path_check) < 0)
                        return -EINVAL;
                if (check_narrows("input", a->input, role) < 0)
                        return -EPERM;
                free(role->input);
                if (!(role->input = strdup(a->input)))
                        return log_oom();
        }
        if (a->output) {
                if (check_run_mount("output", a->output, writable_path_check) < 0)
                        return -EINVAL;
                if (check_narrows("output", a->output, role) < 0)
                        return -EPERM;
                free(role->output);
                if (!(role->output = strdup(a->output)))
                        return log_oom();
        }
        /* a run is one-off: never restarted, no checkpoint directory */
        role->durability = DURABILITY_TRANSIENT;
        return 0;
}

/* An ID of letters and digits only: the broker attributes agent-run@ROLE.ID.service to ROLE
 * (helpers/broker/peer.c). */
char *run_id_new(void) {
        uint8_t b[8];
        char *id = malloc(sizeof b * 2 + 1);

        if (!id || getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return mfree(id);
        for (size_t i = 0; i < sizeof b; i++)
                sprintf(id + 2 * i, "%02x", b[i]);
        return id;
}

static bool endswith_str(const char *s, const char *suffix) {
        size_t l = strlen(s), n = strlen(suffix);
        return l >= n && streq(s + l - n, suffix);
}

/* The profile is closed for runs as for agent@ROLE (cloister.role(5), THE LOCKED PROFILE): a role refused for an admin drop-in
 * that re-opens a closed surface is refused here too, and so is any admin unit file or
 * drop-in for agent-run@ units (there is no reason to have one). */
/* A run's /tmp mount units (its own, run-cloister-tmp-ROLE.ID.mount, or a slot's,
 * run-cloister-tmp-ROLE.slot\x2dN.mount) are not known before it starts: a drop-in for any
 * of this role's is a finding. */
static const char *find_run_mount_dropin(const ClosedSurfaceIndex *idx, const Role *role) {
        for (size_t w = 0; w < ELEMENTSOF(profile_tmp_dirs); w++) {
                _cleanup_free_ char *own = profile_tmp_mount_name(role, profile_tmp_dirs[w]);
                size_t l = own ? strlen(own) - strlen("mount") : 0;    /* "run-cloister-tmp-ROLE." */

                for (size_t i = 0; own && i < idx->n; i++)
                        if (strncmp(idx->findings[i].unit, own, l) == 0)
                                return idx->findings[i].reason;
        }
        return NULL;
}

static int check_closed_surfaces(const Role *role, const CloisterConf *conf) {
        _cleanup_strv_free_ char **unit_dirs = NULL;
        ClosedSurfaceIndex idx = {};
        const char *reason;
        const char *gen[3] = {};
        int r;

        if (unit_search_path(gen, &unit_dirs) < 0 || closed_surface_index_build(unit_dirs, generator_dir(unit_dirs), &idx) < 0)
                return log_oom();
        reason = closed_surface_find(&idx, role, conf) ?: find_run_mount_dropin(&idx, role);
        r = reason ? log_error_errno(EPERM, "Role %s refuses to start: %s; so does a run of it.", role->name, reason) : 0;
        closed_surface_index_done(&idx);
        STRV_FOREACH(d, unit_dirs) {
                _cleanup_(closedir_p) DIR *dir = r >= 0 ? opendir(*d) : NULL;
                /* the unit files there are the runs themselves, made by this command */
                bool transient = endswith_str(*d, "/systemd/transient");
                struct dirent *de;
                while (dir && (de = readdir(dir)))
                        if ((startswith(de->d_name, "agent-run@") || startswith(de->d_name, "agent-.service")) &&
                            !(transient && !endswith_str(de->d_name, ".d")))
                                return log_error_errno(EPERM, "%s/%s: admin units and drop-ins for agent-run@ would re-open the locked profile of runs; refusing to start one.",
                                                       *d, de->d_name);
        }
        return r;
}

int run_role_load(const char *name, const CloisterConf *conf, char * const *dirs, Role **ret) {
        _cleanup_(role_freep) Role *role = NULL;
        int r;

        r = load_run_role(name, conf, dirs, &role);
        if (r < 0)
                return r;
        r = check_closed_surfaces(role, conf);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(role);
        return 0;
}

int run_role_set_instance(Role *role, const char *id) {
        free(role->description);
        role->description = strprintf("run %s", id);
        free(role->run_instance);
        role->run_instance = strprintf("%s.%s", role->name, id);
        return role->description && role->run_instance ? 0 : -ENOMEM;
}
