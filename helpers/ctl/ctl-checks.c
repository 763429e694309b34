/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "ctl-checks.h"
#include "ctl-root.h"
#include "deps.h"
#include "log.h"
#include "profile.h"
#include "sandbox-keys.h"

/* The line of the last "Key=value" (or any "Key=" when value is NULL) in `path`; 0 if none. */
static unsigned assignment_line(const char *path, const char *key, const char *value) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *line = NULL;
        size_t size = 0, kl = strlen(key);
        unsigned lineno = 0, found = 0;

        if (!f)
                return 0;
        while (getline(&line, &size, f) >= 0) {
                lineno++;
                line[strcspn(line, "\r\n")] = 0;
                if (strncmp(line, key, kl) == 0 && line[kl] == '=' && (!value || streq(line + kl + 1, value)))
                        found = lineno;
        }
        return found;
}

/* Takes `reason` (NULL: out of memory). */
static int problem(char ***problems, const char *path, const char *key, const char *value, char *reason) {
        unsigned line = assignment_line(path, key, value);
        _cleanup_free_ char *r = reason;
        char *p;

        if (!r)
                return log_oom();
        p = line > 0 ? strprintf("%s:%u: %s=: %s", path, line, key, r)
                     : strprintf("%s: %s=: %s", path, key, r);
        return strv_push(problems, p) < 0 ? log_oom() : 0;
}

static bool host_path_exists(const char *path) {
        _cleanup_free_ char *p = ctl_root_path(path);
        return p && access(p, F_OK) >= 0;
}

static int check_read_only_mounts(const char *path, const ReadOnlyMount *mounts, size_t n, char * const *specs,
                                  char ***problems) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < n; i++)
                if (!host_path_exists(mounts[i].source))
                        r = problem(problems, path, "ReadOnlyMount", specs[i], strprintf("%s does not exist", mounts[i].source));
        return r;
}

/* Whether the named `user` may write a directory of mode/owner `st`: as its owner, through
 * its primary or a supplementary group, or as anyone. An ACL (which may grant more) is not
 * read: such a directory is taken as the admin's deliberate choice. */
static bool named_user_can_write(const char *path, const char *user, const struct stat *st) {
        struct passwd *pw = getpwnam(user);
        gid_t groups[64];
        int n = ELEMENTSOF(groups);

        if (!pw || getxattr(path, "system.posix_acl_access", NULL, 0) > 0)
                return true; /* nothing to say: User= is checked at start, an ACL is the admin's */
        if (st->st_mode & S_IWOTH)
                return true;
        if (st->st_uid == pw->pw_uid)
                return st->st_mode & S_IWUSR;
        if (getgrouplist(user, pw->pw_gid, groups, &n) < 0)
                return true;
        for (int i = 0; i < n; i++)
                if (groups[i] == st->st_gid)
                        return st->st_mode & S_IWGRP;
        return false;
}

/* An explicit Output= must exist and be writable by the role's user. A dynamic user's UID
 * is allocated when the unit starts, so no owner, group or ACL entry can name it before:
 * only the "other" write bit lets it write (1777, sticky like /tmp). Under --root a named
 * user cannot be looked up: only existence is checked. */
static int check_output(const Role *role, char ***problems) {
        _cleanup_free_ char *p = NULL;
        struct stat st;

        if (!role->output)
                return 0;
        p = ctl_root_path(role->output);
        if (!p)
                return log_oom();
        if (stat(p, &st) < 0)
                return problem(problems, role->path, "Output", NULL, strprintf(
                               "%s does not exist: create it for the agent with \"install -d -m 1777 %s\", "
                               "or remove Output= to use the directory systemd manages, /var/lib/cloister-output/%s",
                               role->output, role->output, role->name));
        if (!S_ISDIR(st.st_mode))
                return problem(problems, role->path, "Output", NULL, strprintf(
                               "%s is not a directory; remove Output= to use the directory systemd manages, "
                               "/var/lib/cloister-output/%s", role->output, role->name));
        if (!role->user && !(st.st_mode & S_IWOTH))
                return problem(problems, role->path, "Output", NULL, strprintf(
                               "%s (mode %04o) is not writable by the role's dynamic user, whose UID is allocated at "
                               "start: \"chmod 1777 %s\", or remove Output= to use the directory systemd manages, "
                               "/var/lib/cloister-output/%s", role->output, (unsigned) (st.st_mode & 07777),
                               role->output, role->name));
        if (role->user && !ctl_root() && !named_user_can_write(p, role->user, &st))
                return problem(problems, role->path, "Output", NULL, strprintf(
                               "%s (mode %04o, owner %u:%u) is not writable by User=%s: \"chown %s %s\", "
                               "or remove Output= to use the directory systemd manages, /var/lib/cloister-output/%s",
                               role->output, (unsigned) (st.st_mode & 07777), (unsigned) st.st_uid,
                               (unsigned) st.st_gid, role->user, role->user, role->output, role->name));
        return 0;
}

int ctl_check_mounts(const Role *role, char ***problems) {
        int r;

        if (role->input && !host_path_exists(role->input)) {
                r = problem(problems, role->path, "Input", NULL, strprintf("%s does not exist", role->input));
                if (r < 0)
                        return r;
        }
        r = check_output(role, problems);
        if (r < 0)
                return r;
        return check_read_only_mounts(role->path, role->read_only_mounts, role->n_read_only_mounts,
                                      role->read_only_mount_specs, problems);
}

/* The nodes profile_add_gpus() makes the unit's start check require: /dev/nvidiactl,
 * /dev/nvidia-uvm and /dev/nvidia<N> for each listed N (for "all": at least one). */
int ctl_check_gpus(const char *path, const char *gpus, char ***problems) {
        static const char *const common[] = { "/dev/nvidiactl", "/dev/nvidia-uvm" };
        _cleanup_strv_free_ char **nodes = NULL;
        int r = 0;

        if (!gpus || !*gpus)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(common); i++)
                if (strv_extend(&nodes, common[i]) < 0)
                        return log_oom();
        if (streq(gpus, "all")) {
                bool any = false;
                for (unsigned i = 0; i <= GPU_INDEX_MAX && !any; i++) {
                        _cleanup_free_ char *n = strprintf("/dev/nvidia%u", i);
                        if (!n)
                                return log_oom();
                        any = host_path_exists(n);
                }
                if (!any)
                        r = problem(problems, path, "GPUs", NULL, strdup("all, but no /dev/nvidia<N> exists (is the NVIDIA driver loaded?)"));
        } else
                for (const char *p = gpus; *p; p += *p == ',') {
                        size_t l = strspn(p, "0123456789");
                        char *n;

                        if (l == 0)     /* conf_parse_gpus() accepted only digits and commas */
                                break;
                        n = strprintf("/dev/nvidia%.*s", (int) l, p);
                        if (!n || strv_push(&nodes, n) < 0)
                                return log_oom();
                        p += l;
                }
        STRV_FOREACH(n, nodes)
                if (r >= 0 && !host_path_exists(*n))
                        r = problem(problems, path, "GPUs", NULL, strprintf(
                                    "%s does not exist (is the NVIDIA driver loaded?); the unit refuses to start", *n));
        return r;
}

int ctl_check_sidecar(const CtlSidecar *c, char ***problems) {
        const Sidecar *sc = c->sidecar;
        int r;

        if (!sc)
                return 0;
        r = check_read_only_mounts(sc->path, sc->read_only_mounts, sc->n_read_only_mounts,
                                   sc->read_only_mount_specs, problems);
        if (r < 0)
                return r;
        r = ctl_check_gpus(sc->path, sc->gpus, problems);
        if (r >= 0 && c->dir_problem) {
                _cleanup_free_ char *dir = strprintf(SIDECAR_SERVICES_DIR "/%s", c->name), *host = NULL;
                char *p;

                if (!dir || !(host = ctl_root_path(dir)))
                        return log_oom();
                p = strprintf("%s: socket directory %s %s%s", sc->path, host, c->dir_problem,
                              c->dir_fatal ? "; anyone who can write there could put their own socket in the sidecar's place: "
                                             "the generator does not generate this sidecar (make it root-owned, mode 0555, or remove it)"
                                           : " (systemd creates it 0555 only when it does not exist yet)");
                if (!p || strv_push(problems, p) < 0)
                        return log_oom();
        }
        return r;
}

/* Service=NAME names a sidecar file that loads: else nothing of cloister serves the socket
 * (the generator only warns; verify fails closed). */
static int check_service_files(const CtlModel *m, const Role *role, char ***problems) {
        STRV_FOREACH(svc, role->services) {
                const CtlSidecar *c = ctl_model_find_sidecar(m, *svc);
                int r = 0;

                if (!c)
                        r = problem(problems, role->path, "Service", *svc, strprintf(
                                    "no sidecar file %s.sidecar in the configuration directories: nothing of cloister serves this socket", *svc));
                else if (!ctl_sidecar_generated(c))
                        r = problem(problems, role->path, "Service", *svc, strprintf(
                                    "sidecar %s is refused (%s): its units are not generated", *svc, c->path));
                if (r < 0)
                        return r;
        }
        return 0;
}

char *ctl_service_socket(const char *name) {
        _cleanup_free_ char *p = strprintf("/run/cloister/services/%s/service.sock", name);
        return p ? ctl_root_path(p) : NULL;
}

char *ctl_broker_socket(const CloisterConf *conf) {
        return conf->broker_socket ? ctl_root_path(conf->broker_socket) : NULL;
}

bool ctl_is_socket(const char *path) {
        struct stat st;
        return path && stat(path, &st) >= 0 && S_ISSOCK(st.st_mode);
}

int ctl_check_service_sockets(const Role *role, char ***problems) {
        STRV_FOREACH(svc, role->services) {
                _cleanup_free_ char *p = ctl_service_socket(*svc);
                int r;

                if (!p)
                        return log_oom();
                if (ctl_is_socket(p))
                        continue;
                r = problem(problems, role->path, "Service", *svc, strprintf("sidecar socket %s is missing", p));
                if (r < 0)
                        return r;
        }
        return 0;
}

int ctl_check_broker_socket(const Role *role, const CloisterConf *conf, char ***problems) {
        _cleanup_free_ char *p = NULL;

        if (role->network != NETWORK_DAEMON_ONLY)
                return 0;
        if (!conf->broker_socket)
                return problem(problems, role->path, "Network", NULL,
                               strdup("daemon-only, but cloister.conf has no [Broker] Socket=: the role gets no broker socket"));
        p = ctl_broker_socket(conf);
        if (!p)
                return log_oom();
        if (!ctl_is_socket(p))
                return problem(problems, role->path, "Network", NULL, strprintf("daemon-only, but the broker socket %s is missing", p));
        return 0;
}

/* The lockfile rules cloister-deps applies before any installer runs (hash-pinned pip
 * requirements, npm integrity hashes): a lockfile it would refuse never materialises. */
static int check_lockfile(const Project *p, DepsEcosystem e, char ***problems) {
        _cleanup_free_ char *lockfile = project_lockfile_path(p, e), *host = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        int r;

        if (!lockfile || !(host = ctl_root_path(lockfile)))
                return log_oom();
        ctl_collect_errors_begin(&errors);
        r = deps_check_lockfile(e, host);
        ctl_collect_errors_end();
        if (r >= 0)
                return 0;
        if (!errors)
                return problem(problems, p->path, deps_ecosystem_key(e), NULL,
                               strprintf("lockfile %s is refused (%s)", lockfile, strerror(-r)));
        STRV_FOREACH(err, errors)
                if (strv_extend(problems, *err) < 0)
                        return log_oom();
        return 0;
}

/* A set is materialised when the cache directory named by its lockfile's hash is complete
 * (deps_materialised()): a changed lockfile names a new directory, so a stale set counts as
 * missing. */
int ctl_deps_set_dir(const Project *p, DepsEcosystem e, char **ret) {
        _cleanup_free_ char *lockfile = project_lockfile_path(p, e), *host_lockfile = NULL;
        _cleanup_free_ char *cache = ctl_root_path(DEPS_CACHE_DIR);

        if (!lockfile || !cache || !(host_lockfile = ctl_root_path(lockfile)))
                return -ENOMEM;
        return deps_cache_dir_in(cache, deps_ecosystem_to_string(e), host_lockfile, ret);
}

/* A set is materialised when the cache directory named by its lockfile's hash is complete
 * (deps_materialised()): a changed lockfile names a new directory, so a stale set counts as
 * missing. */
static int check_deps_set(const Project *p, DepsEcosystem e, char ***problems) {
        _cleanup_free_ char *dir = NULL;
        const char *key = deps_ecosystem_key(e);
        int r = ctl_deps_set_dir(p, e, &dir);

        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return problem(problems, p->path, key, NULL,
                               strprintf("lockfile %s/%s cannot be read (%s)", p->workspace, p->lockfiles[e], strerror(-r)));
        r = check_lockfile(p, e, problems);
        if (r < 0)
                return r;
        if (!deps_materialised(dir))
                return problem(problems, p->path, key, NULL,
                               strprintf("dependency set not materialised: %s is missing (see cloister-deps@%s.service)",
                                         dir, p->name));
        return 0;
}

int ctl_check_project(const CtlProject *project, char ***problems) {
        const Project *p = project->project;
        int r = 0;

        if (!p)
                return 0;
        if (!host_path_exists(p->workspace))
                return problem(problems, p->path, "Workspace", NULL, strprintf("%s does not exist", p->workspace));
        for (DepsEcosystem e = 0; r >= 0 && e < _DEPS_ECOSYSTEM_MAX; e++)
                if (p->lockfiles[e])
                        r = check_deps_set(p, e, problems);
        return r;
}

/* `path` lies strictly below `dir`: a component of it is something the writer of `dir` can
 * replace (with a symlink, say). */
static bool strictly_below(const char *path, const char *dir) {
        size_t l = strlen(dir);

        return strncmp(path, dir, l) == 0 && path[l] == '/' && path[l + 1];
}

static int check_source_writers(const CtlModel *m, const Role *role, const char *key, const char *source,
                                char ***problems) {
        for (size_t i = 0; i < m->n_roles; i++) {
                const Role *w = m->roles[i].role;
                if (w && w->output && strictly_below(source, w->output))
                        return problem(problems, role->path, key, NULL,
                                       strprintf("%s lies under role %s's Output=%s, which its agent writes: a path "
                                                 "component there can be swapped for a symlink (cloister-stage then "
                                                 "refuses the start); mount a directory no agent writes",
                                                 source, w->name, w->output));
        }
        for (size_t i = 0; i < m->n_projects; i++) {
                const Project *p = m->projects[i].project;
                if (p && p->workspace && strictly_below(source, p->workspace))
                        return problem(problems, role->path, key, NULL,
                                       strprintf("%s lies under project %s's Workspace=%s, which its agents write: a path "
                                                 "component there can be swapped for a symlink (cloister-stage then "
                                                 "refuses the start); mount a directory no agent writes",
                                                 source, m->projects[i].name, p->workspace));
        }
        return 0;
}

/* No mount source of `role` lies under a path an agent can write (another role's Output=, a
 * project's Workspace=): systemd would resolve it through that path; cloister-stage refuses
 * a symlink there at start, this says so before. */
static int check_sources_under_writable(const CtlModel *m, const Role *role, char ***problems) {
        int r = 0;

        if (role->input)
                r = check_source_writers(m, role, "Input", role->input, problems);
        if (r >= 0 && role->output)
                r = check_source_writers(m, role, "Output", role->output, problems);
        for (size_t i = 0; r >= 0 && i < role->n_read_only_mounts; i++)
                r = check_source_writers(m, role, "ReadOnlyMount", role->read_only_mounts[i].source, problems);
        return r;
}

int ctl_check_role(const CtlModel *m, const CtlRole *role, char ***problems) {
        const CtlProject *project;
        int r;

        if (!role->role)
                return 0;
        r = ctl_check_mounts(role->role, problems);
        if (r < 0)
                return r;
        r = check_sources_under_writable(m, role->role, problems);
        if (r < 0)
                return r;
        r = ctl_check_service_sockets(role->role, problems);
        if (r < 0)
                return r;
        r = check_service_files(m, role->role, problems);
        if (r < 0)
                return r;
        r = ctl_check_gpus(role->role->path, role->role->gpus, problems);
        if (r < 0)
                return r;
        r = ctl_check_broker_socket(role->role, m->conf, problems);
        if (r < 0)
                return r;
        project = role->role->project ? ctl_model_find_project(m, role->role->project) : NULL;
        return project ? ctl_check_project(project, problems) : 0;
}
