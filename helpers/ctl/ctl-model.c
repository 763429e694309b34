/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "conf-files.h"
#include "ctl-model.h"
#include "ctl-root.h"
#include "log.h"

static void collect(int level, const char *message, void *userdata) {
        (void) strv_extend(userdata, message);
}

void ctl_collect_errors_begin(char ***errors) {
        log_set_sink(collect, LOG_ERR, errors);
}

void ctl_collect_errors_end(void) {
        log_set_sink(NULL, 0, NULL);
}

/* Runs `call` with its errors going into *errors; returns what it returned. */
#define COLLECTING(errors, call)                                        \
        ({                                                              \
                int _r;                                                 \
                ctl_collect_errors_begin(errors);                       \
                _r = (call);                                            \
                ctl_collect_errors_end();                               \
                _r;                                                     \
        })

const char *ctl_generator_dir(char * const *unit_dirs) {
        STRV_FOREACH(d, unit_dirs) {
                size_t l = strlen(*d), s = strlen("/run/systemd/generator");
                if (l >= s && streq(*d + l - s, "/run/systemd/generator"))
                        return *d;
        }
        return NULL;
}

static char *name_of(const char *path, const char *suffix) {
        const char *base = strrchr(path, '/');
        size_t l;

        base = base ? base + 1 : path;
        l = strlen(base);
        if (l > strlen(suffix) && streq(base + l - strlen(suffix), suffix))
                l -= strlen(suffix);
        return strndup(base, l);
}

int ctl_model_add_role(CtlModel *m, const char *path) {
        CtlRole *roles = realloc(m->roles, sizeof(CtlRole) * (m->n_roles + 1)), *c;

        if (!roles)
                return log_oom();
        m->roles = roles;
        c = &roles[m->n_roles++];
        *c = (CtlRole) { .name = name_of(path, ".role"), .path = strdup(path) };
        if (!c->name || !c->path)
                return log_oom();
        if (!m->conf) {
                if (strv_extend(&c->errors, "cloister.conf was refused; no role is generated.") < 0)
                        return log_oom();
                return 0;
        }
        if (COLLECTING(&c->errors, role_load(path, m->conf, m->config_dirs, &c->role)) < 0) {
                if (!c->errors && strv_extend(&c->errors, "refused") < 0)
                        return log_oom();
                return 0;
        }
        c->closed_surface = closed_surface_find(&m->closed, c->role, m->conf);
        return 0;
}

int ctl_model_add_project(CtlModel *m, const char *path) {
        CtlProject *projects = realloc(m->projects, sizeof(CtlProject) * (m->n_projects + 1)), *c;

        if (!projects)
                return log_oom();
        m->projects = projects;
        c = &projects[m->n_projects++];
        *c = (CtlProject) { .name = name_of(path, ".project"), .path = strdup(path) };
        if (!c->name || !c->path)
                return log_oom();
        if (COLLECTING(&c->errors, project_load(path, &c->project)) < 0 &&
            !c->errors && strv_extend(&c->errors, "refused") < 0)
                return log_oom();
        return 0;
}

int ctl_model_add_sidecar(CtlModel *m, const char *path) {
        CtlSidecar *sidecars = realloc(m->sidecars, sizeof(CtlSidecar) * (m->n_sidecars + 1)), *c;
        _cleanup_free_ char *dir = NULL, *host = NULL;

        if (!sidecars)
                return log_oom();
        m->sidecars = sidecars;
        c = &sidecars[m->n_sidecars++];
        *c = (CtlSidecar) { .name = name_of(path, ".sidecar"), .path = strdup(path) };
        if (!c->name || !c->path)
                return log_oom();
        if (!m->conf) {
                if (strv_extend(&c->errors, "cloister.conf was refused; no sidecar is generated.") < 0)
                        return log_oom();
                return 0;
        }
        if (COLLECTING(&c->errors, sidecar_load(path, m->conf, &c->sidecar)) < 0) {
                c->sidecar = NULL;
                if (!c->errors && strv_extend(&c->errors, "refused") < 0)
                        return log_oom();
                return 0;
        }
        dir = strprintf(SIDECAR_SERVICES_DIR "/%s", c->name);
        if (!dir || !(host = ctl_root_path(dir)))
                return log_oom();
        c->dir_problem = sidecar_dir_check(host, ctl_root_owner(), &c->dir_fatal);
        return 0;
}

/* As generate_roles() notes grants: every Service= of a generated role. */
static int note_grants(CtlModel *m) {
        for (size_t i = 0; i < m->n_roles; i++) {
                if (!ctl_role_generated(&m->roles[i]))
                        continue;
                STRV_FOREACH(svc, m->roles[i].role->services)
                        for (size_t j = 0; j < m->n_sidecars; j++)
                                if (streq(m->sidecars[j].name, *svc) &&
                                    strv_extend(&m->sidecars[j].reached_by, m->roles[i].name) < 0)
                                        return log_oom();
        }
        return 0;
}

static int load_kind(CtlModel *m, const char *subdir, const char *suffix,
                     int (*add)(CtlModel *m, const char *path)) {
        ConfFileList l = {};
        int r = conf_files_list(m->config_dirs, subdir, suffix, &l);

        if (r < 0)
                return log_error_errno(r, "Failed to list %s files: %m", subdir);
        for (size_t i = 0; i < l.n && r >= 0; i++)
                r = add(m, l.files[i].path);
        conf_file_list_done(&l);
        return r;
}

int ctl_model_load(CtlModel *m) {
        int r;

        *m = (CtlModel) {};
        if (conf_dirs(&m->config_dirs) < 0 || unit_search_path(NULL, &m->unit_dirs) < 0)
                return log_oom();
        if (COLLECTING(&m->conf_errors, cloister_conf_load(m->config_dirs, &m->conf)) < 0) {
                m->conf = NULL;
                if (!m->conf_errors && strv_extend(&m->conf_errors, "cloister.conf was refused") < 0)
                        return log_oom();
        }
        r = closed_surface_index_build(m->unit_dirs, ctl_generator_dir(m->unit_dirs), &m->closed);
        if (r < 0)
                return log_oom();
        r = load_kind(m, "roles", ".role", ctl_model_add_role);
        if (r < 0)
                return r;
        r = load_kind(m, "projects", ".project", ctl_model_add_project);
        if (r < 0)
                return r;
        r = load_kind(m, "sidecars", ".sidecar", ctl_model_add_sidecar);
        if (r < 0)
                return r;
        return note_grants(m);
}

void ctl_model_done(CtlModel *m) {
        for (size_t i = 0; i < m->n_roles; i++) {
                free(m->roles[i].name);
                free(m->roles[i].path);
                role_free(m->roles[i].role);
                strv_free(m->roles[i].errors);
        }
        free(m->roles);
        for (size_t i = 0; i < m->n_projects; i++) {
                free(m->projects[i].name);
                free(m->projects[i].path);
                project_free(m->projects[i].project);
                strv_free(m->projects[i].errors);
        }
        free(m->projects);
        for (size_t i = 0; i < m->n_sidecars; i++) {
                free(m->sidecars[i].name);
                free(m->sidecars[i].path);
                sidecar_free(m->sidecars[i].sidecar);
                strv_free(m->sidecars[i].errors);
                strv_free(m->sidecars[i].reached_by);
        }
        free(m->sidecars);
        closed_surface_index_done(&m->closed);
        cloister_conf_free(m->conf);
        strv_free(m->conf_errors);
        strv_free(m->config_dirs);
        strv_free(m->unit_dirs);
        *m = (CtlModel) {};
}

const CtlRole *ctl_model_find_role(const CtlModel *m, const char *name) {
        for (size_t i = 0; i < m->n_roles; i++)
                if (streq(m->roles[i].name, name))
                        return &m->roles[i];
        return NULL;
}

const CtlProject *ctl_model_find_project(const CtlModel *m, const char *name) {
        for (size_t i = 0; i < m->n_projects; i++)
                if (streq(m->projects[i].name, name))
                        return &m->projects[i];
        return NULL;
}

const CtlSidecar *ctl_model_find_sidecar(const CtlModel *m, const char *name) {
        for (size_t i = 0; i < m->n_sidecars; i++)
                if (streq(m->sidecars[i].name, name))
                        return &m->sidecars[i];
        return NULL;
}
