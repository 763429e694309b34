/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "ctl-checks.h"
#include "deps.h"
#include "ctl-output.h"
#include "ctl-security.h"
#include "ctl-state.h"
#include "ctl.h"
#include "log.h"

/* doctor = verify's findings, per role and project, plus what verify does not judge: the
 * state of each socket and dependency set one by one and the systemd-analyze exposure. The
 * JSON object is the record; the table is printed from it. */

static struct json_object *strv_json(char * const *l) {
        struct json_object *a = json_object_new_array();

        STRV_FOREACH(s, l)
                if (a && json_object_array_add(a, json_object_new_string(*s)) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        return a;
}

static int add(struct json_object *o, const char *key, struct json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static struct json_object *deps_json(const Project *p, const char **summary) {
        struct json_object *a = json_object_new_array();

        *summary = "-";
        for (DepsEcosystem e = 0; a && e < _DEPS_ECOSYSTEM_MAX; e++) {
                _cleanup_free_ char *dir = NULL;
                struct json_object *s;
                bool done;

                if (!p->lockfiles[e])
                        continue;
                done = ctl_deps_set_dir(p, e, &dir) >= 0 && deps_materialised(dir);
                *summary = !done ? "missing" : streq(*summary, "missing") ? "missing" : "ok";
                s = json_object_new_object();
                if (!s || json_object_array_add(a, s) < 0 ||
                    json_add_string(s, "ecosystem", deps_ecosystem_to_string(e)) < 0 ||
                    json_add_string(s, "lockfile", p->lockfiles[e]) < 0 ||
                    json_add_string(s, "cache_dir", dir) < 0 ||
                    json_add_bool(s, "materialised", done) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        }
        return a;
}

static struct json_object *services_json(const CtlModel *m, const Role *role, char **summary) {
        struct json_object *a = json_object_new_array();
        unsigned present = 0, total = 0;

        STRV_FOREACH(svc, role->services) {
                _cleanup_free_ char *p = ctl_service_socket(*svc);
                struct json_object *s = json_object_new_object();
                const CtlSidecar *sc = ctl_model_find_sidecar(m, *svc);
                bool ok = ctl_is_socket(p);

                present += ok;
                total++;
                if (!a || !p || !s || json_object_array_add(a, s) < 0 || json_add_string(s, "name", *svc) < 0 ||
                    json_add_string(s, "socket", p) < 0 || json_add_bool(s, "present", ok) < 0 ||
                    json_add_string(s, "sidecar_file", sc ? sc->path : NULL) < 0 ||
                    json_add_bool(s, "sidecar_generated", sc && ctl_sidecar_generated(sc)) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        }
        if (total > 0 && !(*summary = strprintf("%u/%u", present, total))) {
                json_object_put(a);
                return NULL;
        }
        return a;
}

typedef struct Row {
        const char *name, *kind, *status, *generated, *broker, *deps;
        char *services;         /* "present/granted" */
        char *exposure;
} Row;

static int doctor_role(const CtlModel *m, const CtlRole *c, struct json_object *o, Row *row) {
        _cleanup_strv_free_ char **problems = NULL;
        const CtlProject *project = NULL;
        const Role *r = c->role;
        bool generated = ctl_role_generated(c);
        int k = 0;

        *row = (Row) { .name = c->name, .kind = "role", .generated = generated ? "yes" : "refused",
                       .broker = "-", .deps = "-" };
        if (strv_extend_strv(&problems, c->errors) < 0 ||
            (c->closed_surface && strv_extend(&problems, c->closed_surface) < 0) ||
            ctl_check_role(m, c, &problems) < 0)
                return -ENOMEM;
        k = json_add_string(o, "name", c->name);
        if (k >= 0) k = json_add_string(o, "kind", "role");
        if (k >= 0) k = json_add_string(o, "path", c->path);
        if (k >= 0) k = json_add_bool(o, "generated", generated);
        if (k >= 0) k = add(o, "refused", strv_json(c->errors));
        if (k >= 0) k = json_add_string(o, "closed_surface", c->closed_surface);
        if (k < 0 || !r)
                goto finish;

        if (r->network == NETWORK_DAEMON_ONLY) {
                _cleanup_free_ char *p = ctl_broker_socket(m->conf);
                bool present = ctl_is_socket(p);
                struct json_object *b = json_object_new_object();

                row->broker = !m->conf->broker_socket ? "unset" : present ? "present" : "missing";
                k = add(o, "broker_socket", b);
                if (k >= 0) k = json_add_string(b, "path", p);
                if (k >= 0) k = json_add_bool(b, "present", present);
        }
        if (k >= 0) k = json_add_string(o, "mode", network_mode_to_string(r->network));
        if (k >= 0) k = add(o, "services", services_json(m, r, &row->services));
        if (k >= 0 && r->project && (project = ctl_model_find_project(m, r->project)) && project->project)
                k = add(o, "dependencies", deps_json(project->project, &row->deps));
        if (k >= 0 && generated) {
                k = ctl_security_exposure(m, c, &row->exposure);
                if (k >= 0) k = json_add_exposure(o, "exposure", "exposure_level", row->exposure);
        }
finish:
        row->status = problems ? "broken" : "ok";
        if (k >= 0) k = add(o, "problems", strv_json(problems));
        if (k >= 0) k = json_add_bool(o, "ok", !problems);
        return k < 0 ? -ENOMEM : problems ? 1 : 0;
}

static int doctor_project(const CtlProject *c, struct json_object *o, Row *row) {
        _cleanup_strv_free_ char **problems = NULL;
        int k;

        *row = (Row) { .name = c->name, .kind = "project", .generated = c->project ? "yes" : "refused",
                       .broker = "-", .deps = "-" };
        if (strv_extend_strv(&problems, c->errors) < 0 || ctl_check_project(c, &problems) < 0)
                return -ENOMEM;
        k = json_add_string(o, "name", c->name);
        if (k >= 0) k = json_add_string(o, "kind", "project");
        if (k >= 0) k = json_add_string(o, "path", c->path);
        if (k >= 0) k = json_add_bool(o, "generated", !!c->project);
        if (k >= 0) k = add(o, "refused", strv_json(c->errors));
        if (k >= 0 && c->project)
                k = add(o, "dependencies", deps_json(c->project, &row->deps));
        row->status = problems ? "broken" : "ok";
        if (k >= 0) k = add(o, "problems", strv_json(problems));
        if (k >= 0) k = json_add_bool(o, "ok", !problems);
        return k < 0 ? -ENOMEM : problems ? 1 : 0;
}

/* A sidecar (cloister.sidecar(5)): generated or refused and why, its socket and socket directory, the states
 * of its socket and runtime units, the roles that reach it, the exposure of runtime and proxy. */
typedef struct SidecarRow {
        const char *name, *status, *generated, *socket;
        char *socket_state, *runtime_state;
        char *reached_by;
        char *runtime_exposure, *proxy_exposure;
} SidecarRow;

static int unit_state_json(sd_bus *bus, struct json_object *o, const char *unit, char **ret_state) {
        struct json_object *u = json_object_new_object();
        int k = add(o, "unit", u);

        if (k >= 0) k = json_add_string(u, "name", unit);
        if (k >= 0) k = ctl_unit_state(bus, unit, ret_state);
        if (k >= 0) k = json_add_string(u, "state", *ret_state);
        return k;
}

static int doctor_sidecar(sd_bus *bus, const CtlSidecar *c, struct json_object *o, SidecarRow *row) {
        _cleanup_strv_free_ char **problems = NULL;
        _cleanup_free_ char *socket = ctl_service_socket(c->name), *socket_unit = strprintf("sidecar@%s.socket", c->name),
                *runtime_unit = strprintf("sidecar-runtime@%s.service", c->name), *dir = NULL;
        struct json_object *sock, *runtime, *exposure;
        bool generated = ctl_sidecar_generated(c), present = ctl_is_socket(socket);
        int k;

        *row = (SidecarRow) { .name = c->name, .generated = generated ? "yes" : "refused",
                              .socket = present ? "present" : "missing" };
        if (!socket || !socket_unit || !runtime_unit || !(row->reached_by = ctl_join(c->reached_by)))
                return -ENOMEM;
        if (strv_extend_strv(&problems, c->errors) < 0 || ctl_check_sidecar(c, &problems) < 0)
                return -ENOMEM;
        if (generated && !present &&
            strv_push(&problems, strprintf("%s: socket %s is missing (is %s listening?)", c->path, socket, socket_unit)) < 0)
                return -ENOMEM;
        dir = strndup(socket, strrchr(socket, '/') - socket);
        k = dir ? 0 : -ENOMEM;
        if (k >= 0) k = json_add_string(o, "name", c->name);
        if (k >= 0) k = json_add_string(o, "kind", "sidecar");
        if (k >= 0) k = json_add_string(o, "path", c->path);
        if (k >= 0) k = json_add_bool(o, "generated", generated);
        if (k >= 0) k = add(o, "refused", strv_json(c->errors));
        if (k >= 0) k = add(o, "reached_by", strv_json(c->reached_by));
        if (k >= 0) k = add(o, "socket", sock = json_object_new_object());
        if (k >= 0) k = json_add_string(sock, "path", socket);
        if (k >= 0) k = json_add_bool(sock, "present", present);
        if (k >= 0) k = json_add_string(sock, "directory", dir);
        if (k >= 0) k = json_add_string(sock, "directory_problem", c->dir_problem);
        if (k >= 0) k = unit_state_json(bus, sock, socket_unit, &row->socket_state);
        if (k >= 0) k = add(o, "runtime", runtime = json_object_new_object());
        if (k >= 0) k = unit_state_json(bus, runtime, runtime_unit, &row->runtime_state);
        if (k >= 0 && generated)
                k = ctl_security_exposure_sidecar(c->sidecar, &row->runtime_exposure, &row->proxy_exposure);
        if (k >= 0) k = add(o, "exposure", exposure = json_object_new_object());
        if (k >= 0) k = json_add_exposure(exposure, "runtime", "runtime_level", row->runtime_exposure);
        if (k >= 0) k = json_add_exposure(exposure, "proxy", "proxy_level", row->proxy_exposure);
        row->status = problems ? "broken" : "ok";
        if (k >= 0) k = add(o, "problems", strv_json(problems));
        if (k >= 0) k = json_add_bool(o, "ok", !problems);
        return k < 0 ? -ENOMEM : problems ? 1 : 0;
}

static int print_sidecar_table(const SidecarRow *rows, size_t n, const CtlOptions *o) {
        Table t;
        int r = table_new(&t, 10, "NAME", "KIND", "STATUS", "GENERATED", "SOCKET", "SOCKET-STATE", "RUNTIME-STATE",
                          "REACHED-BY", "RUNTIME-EXPOSURE", "PROXY-EXPOSURE");

        for (size_t i = 0; r >= 0 && i < n; i++) {
                const char *none = streq(rows[i].generated, "yes") ? "unknown" : "-";
                r = table_add_row(&t, rows[i].name, "sidecar", rows[i].status, rows[i].generated, rows[i].socket,
                                  rows[i].socket_state, rows[i].runtime_state, rows[i].reached_by,
                                  rows[i].runtime_exposure ?: none, rows[i].proxy_exposure ?: none);
        }
        if (r >= 0)
                table_print(&t, o, stdout);
        table_done(&t);
        return r < 0 ? log_oom() : 0;
}

static void print_problems(struct json_object *items) {
        for (size_t i = 0; i < json_object_array_length(items); i++) {
                struct json_object *it = json_object_array_get_idx(items, i), *p, *name;

                if (!json_object_object_get_ex(it, "problems", &p) || !json_object_object_get_ex(it, "name", &name))
                        continue;
                for (size_t j = 0; j < json_object_array_length(p); j++)
                        printf("%s: %s\n", json_object_get_string(name),
                               json_object_get_string(json_object_array_get_idx(p, j)));
        }
}

static int print_text(struct json_object *root, struct json_object *items, const Row *rows, size_t n,
                      const SidecarRow *srows, size_t ns, const CtlOptions *o) {
        struct json_object *conf;
        Table t;
        int r = table_new(&t, 8, "NAME", "KIND", "STATUS", "GENERATED", "BROKER", "SERVICES", "DEPS", "EXPOSURE");

        for (size_t i = 0; r >= 0 && i < n; i++)
                r = table_add_row(&t, rows[i].name, rows[i].kind, rows[i].status, rows[i].generated,
                                  rows[i].broker, rows[i].services, rows[i].deps,
                                  rows[i].exposure ?: (streq(rows[i].kind, "role") && streq(rows[i].generated, "yes") ? "unknown" : "-"));
        if (r >= 0)
                table_print(&t, o, stdout);
        table_done(&t);
        if (r < 0)
                return log_oom();
        if (ns > 0) {
                if (o->tty)
                        putchar('\n');
                r = print_sidecar_table(srows, ns, o);
                if (r < 0)
                        return r;
        }
        if (json_object_object_get_ex(root, "conf_problems", &conf))
                for (size_t j = 0; j < json_object_array_length(conf); j++)
                        printf("cloister.conf: %s\n", json_object_get_string(json_object_array_get_idx(conf, j)));
        if (o->tty)
                putchar('\n');
        print_problems(items);
        return 0;
}

typedef struct Report {
        Row *rows;
        SidecarRow *srows;
        size_t n, ns;
        bool broken;
} Report;

static void report_done(Report *d) {
        for (size_t i = 0; i < d->n; i++) {
                free(d->rows[i].services);
                free(d->rows[i].exposure);
        }
        for (size_t i = 0; i < d->ns; i++) {
                free(d->srows[i].socket_state);
                free(d->srows[i].runtime_state);
                free(d->srows[i].reached_by);
                free(d->srows[i].runtime_exposure);
                free(d->srows[i].proxy_exposure);
        }
        free(d->rows);
        free(d->srows);
}

/* One item (and one row) per role, project and sidecar; a problem found marks the report broken. */
static int doctor_items(const CtlModel *m, sd_bus *bus, struct json_object *items, Report *d) {
        for (size_t i = 0; i < m->n_roles + m->n_projects + m->n_sidecars; i++) {
                struct json_object *it = json_object_new_object();
                int r;

                if (!it || json_object_array_add(items, it) < 0) {
                        json_object_put(it);
                        return -ENOMEM;
                }
                if (i < m->n_roles)
                        r = doctor_role(m, &m->roles[i], it, &d->rows[d->n++]);
                else if (i < m->n_roles + m->n_projects)
                        r = doctor_project(&m->projects[i - m->n_roles], it, &d->rows[d->n++]);
                else
                        r = doctor_sidecar(bus, &m->sidecars[i - m->n_roles - m->n_projects], it, &d->srows[d->ns++]);
                if (r < 0)
                        return r;
                if (r > 0)
                        d->broken = true;
        }
        return 0;
}

static int doctor(const CtlModel *m, const CtlOptions *o) {
        _cleanup_json_ struct json_object *root = json_new_root();
        _cleanup_(report_done) Report d = {
                .rows = calloc(m->n_roles + m->n_projects + 1, sizeof(Row)),
                .srows = calloc(m->n_sidecars + 1, sizeof(SidecarRow)),
                .broken = m->conf_errors,
        };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = ctl_bus_open(o);
        struct json_object *items = json_object_new_array();
        int r;

        if (!root || !items || !d.rows || !d.srows) {
                json_object_put(items);
                return log_oom();
        }
        if (add(root, "items", items) < 0 ||
            add(root, "conf_problems", strv_json(m->conf_errors)) < 0 ||
            doctor_items(m, bus, items, &d) < 0 ||
            json_add_bool(root, "ok", !d.broken) < 0)
                return log_oom();
        r = o->json ? json_print(root, o) : print_text(root, items, d.rows, d.n, d.srows, d.ns, o);
        if (r < 0)
                return r;
        return d.broken;
}

void help_doctor(void) {
        printf("cloisterctl doctor [--json]\n\n"
               "Diagnoses every role, project and sidecar: generated or refused and why, broker\n"
               "and sidecar sockets, dependency sets, admin drop-ins that re-open a closed\n"
               "surface, sidecar socket directories, the states of each sidecar's socket and\n"
               "runtime, the roles that reach it, and the systemd-analyze security exposure of\n"
               "each unit (a sidecar's runtime and proxy).\n");
}

int verb_doctor(char **args, const CtlOptions *o) {
        _cleanup_(ctl_model_done) CtlModel m = {};

        if (args[0]) {
                log_error("doctor takes no arguments.");
                return CTL_EXIT_USAGE;
        }
        if (ctl_model_load(&m) < 0)
                return CTL_EXIT_FAILURE;
        return doctor(&m, o) != 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}
