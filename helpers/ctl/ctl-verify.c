/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "ctl-checks.h"
#include "ctl-output.h"
#include "ctl.h"
#include "log.h"

/* verify = the generator's checks (the same loaders, collected in the model) + the checks
 * only a running system can do (ctl-checks). */

typedef struct Verified {
        const char *kind;       /* "role", "sidecar", "project" */
        const char *name;
        const char *path;
        char **problems;
} Verified;

static int verify_role(const CtlModel *m, const CtlRole *role, Verified *v) {
        *v = (Verified) { .kind = "role", .name = role->name, .path = role->path };
        if (role->errors && strv_extend_strv(&v->problems, role->errors) < 0)
                return log_oom();
        if (role->closed_surface && strv_extend(&v->problems, role->closed_surface) < 0)
                return log_oom();
        return ctl_check_role(m, role, &v->problems);
}

static int verify_project(const CtlProject *project, Verified *v) {
        *v = (Verified) { .kind = "project", .name = project->name, .path = project->path };
        if (project->errors && strv_extend_strv(&v->problems, project->errors) < 0)
                return log_oom();
        return ctl_check_project(project, &v->problems);
}

static int verify_sidecar(const CtlSidecar *sidecar, Verified *v) {
        *v = (Verified) { .kind = "sidecar", .name = sidecar->name, .path = sidecar->path };
        if (sidecar->errors && strv_extend_strv(&v->problems, sidecar->errors) < 0)
                return log_oom();
        return ctl_check_sidecar(sidecar, &v->problems);
}

static bool looks_like_file(const char *arg) {
        return strchr(arg, '/') || strstr(arg, ".role") || strstr(arg, ".project") || strstr(arg, ".sidecar");
}

static bool same_file(const char *a, const char *b) {
        _cleanup_free_ char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
        return ra && rb && streq(ra, rb);
}

static Verified *append(Verified **out, size_t *n) {
        Verified *v = realloc(*out, sizeof(Verified) * (*n + 1));

        if (!v)
                return NULL;
        *out = v;
        return &v[(*n)++];
}

/* A file given by path is loaded as given, even outside the configuration directories,
 * unless it is one of the files already loaded. */
static int load_file(CtlModel *m, const char *path) {
        const char *suffix = strrchr(path, '.');

        if (access(path, F_OK) < 0)
                return log_error_errno(errno, "%s: %m", path);
        for (size_t i = 0; i < m->n_roles; i++)
                if (same_file(m->roles[i].path, path))
                        return 0;
        for (size_t i = 0; i < m->n_projects; i++)
                if (same_file(m->projects[i].path, path))
                        return 0;
        for (size_t i = 0; i < m->n_sidecars; i++)
                if (same_file(m->sidecars[i].path, path))
                        return 0;
        if (suffix && streq(suffix, ".project"))
                return ctl_model_add_project(m, path);
        if (suffix && streq(suffix, ".sidecar"))
                return ctl_model_add_sidecar(m, path);
        return ctl_model_add_role(m, path);     /* role_load refuses anything but *.role */
}

/* One argument: a file, or a role, sidecar or project name: a name shared by several kinds
 * selects all of them (role, sidecar, project, in that order), since each is a separate file
 * the admin may have meant. Appends what it selects to *out. */
static int select_arg(CtlModel *m, const char *arg, Verified **out, size_t *n) {
        bool file = looks_like_file(arg), found = false;
        Verified *v;
        int r;

        if (file && (r = load_file(m, arg)) < 0)
                return r;
        for (size_t i = 0; i < m->n_roles; i++)
                if (file ? same_file(m->roles[i].path, arg) : streq(m->roles[i].name, arg)) {
                        if (!(v = append(out, n)))
                                return log_oom();
                        r = verify_role(m, &m->roles[i], v);
                        if (r < 0)
                                return r;
                        found = true;
                        break;
                }
        for (size_t i = 0; i < m->n_sidecars; i++)
                if (file ? same_file(m->sidecars[i].path, arg) : streq(m->sidecars[i].name, arg)) {
                        if (!(v = append(out, n)))
                                return log_oom();
                        r = verify_sidecar(&m->sidecars[i], v);
                        if (r < 0)
                                return r;
                        found = true;
                        break;
                }
        for (size_t i = 0; i < m->n_projects; i++)
                if (file ? same_file(m->projects[i].path, arg) : streq(m->projects[i].name, arg)) {
                        if (!(v = append(out, n)))
                                return log_oom();
                        r = verify_project(&m->projects[i], v);
                        if (r < 0)
                                return r;
                        found = true;
                        break;
                }
        if (!found)
                return log_error_errno(ENOENT, "\"%s\": no such role, sidecar, project or file.", arg);
        return 0;
}

static int select_all(CtlModel *m, Verified **out, size_t *n) {
        int r = 0;

        *out = calloc(m->n_roles + m->n_sidecars + m->n_projects + 1, sizeof(Verified));
        if (!*out)
                return log_oom();
        for (size_t i = 0; r >= 0 && i < m->n_roles; i++)
                r = verify_role(m, &m->roles[i], &(*out)[(*n)++]);
        for (size_t i = 0; r >= 0 && i < m->n_sidecars; i++)
                r = verify_sidecar(&m->sidecars[i], &(*out)[(*n)++]);
        for (size_t i = 0; r >= 0 && i < m->n_projects; i++)
                r = verify_project(&m->projects[i], &(*out)[(*n)++]);
        return r;
}

/* One checked file: {"problems": [...], "kind", "name", "path", "ok"}, added to `files`. */
static int add_verified_json(struct json_object *files, const Verified *v) {
        struct json_object *f = json_object_new_object();
        int r;

        if (!f || json_object_array_add(files, f) < 0) {
                json_object_put(f);
                return -ENOMEM;
        }
        r = json_add_strv(f, "problems", v->problems);
        if (r < 0)
                return r;
        r = json_add_string(f, "kind", v->kind);
        if (r < 0)
                return r;
        r = json_add_string(f, "name", v->name);
        if (r < 0)
                return r;
        r = json_add_string(f, "path", v->path);
        if (r < 0)
                return r;
        return json_add_bool(f, "ok", !v->problems);
}

static int print_json(const CtlModel *m, const Verified *v, size_t n, bool ok, const CtlOptions *o) {
        _cleanup_json_ struct json_object *root = json_new_root(), *files = json_object_new_array();

        if (!root || !files)
                return log_oom();
        for (size_t i = 0; i < n; i++)
                if (add_verified_json(files, &v[i]) < 0)
                        return log_oom();
        if (json_add_bool(root, "ok", ok) < 0 || json_add_strv(root, "conf", m->conf_errors) < 0)
                return log_oom();
        if (json_object_object_add(root, "files", files) < 0)
                return log_oom();
        files = NULL; /* root owns it now */
        return json_print(root, o);
}

void help_verify(void) {
        printf("cloisterctl verify [FILE|NAME...]\n\n"
               "Checks cloister.conf, roles, sidecars and projects as the generator does, and what\n"
               "only a running system can check: mount sources, GPU device nodes, sidecar and\n"
               "broker sockets, socket directories, dependency sets. Prints file:line: key: reason\n"
               "for each problem; exits 1 if there is any. A NAME shared by several kinds selects\n"
               "each of them.\n");
}

int verb_verify(char **args, const CtlOptions *o) {
        CtlModel m = {};
        Verified *v = NULL;
        size_t n = 0;
        bool ok;
        int r = 0;

        if (ctl_model_load(&m) < 0) {
                ctl_model_done(&m);
                return CTL_EXIT_FAILURE;
        }
        if (!args[0])
                r = select_all(&m, &v, &n);
        for (size_t i = 0; args[i] && r >= 0; i++)
                r = select_arg(&m, args[i], &v, &n);
        ok = r >= 0 && !m.conf_errors;
        for (size_t i = 0; i < n; i++)
                ok = ok && !v[i].problems;
        if (o->json && r >= 0)
                r = print_json(&m, v, n, ok, o);
        else {
                STRV_FOREACH(e, m.conf_errors)
                        fprintf(stderr, "%s\n", *e);
                for (size_t i = 0; i < n; i++)
                        STRV_FOREACH(e, v[i].problems)
                                fprintf(stderr, "%s\n", *e);
        }
        for (size_t i = 0; i < n; i++)
                strv_free(v[i].problems);
        free(v);
        ctl_model_done(&m);
        return r < 0 || !ok ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}
