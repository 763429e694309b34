/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>

#include "conf-parser.h"
#include "ctl-model.h"
#include "ctl-output.h"
#include "ctl-state.h"
#include "ctl.h"
#include "log.h"

/* One line per role and project; sidecars follow in a table of their own. */
typedef struct Entry {
        const char *name;
        const char *kind;
        const char *config;     /* "ok", "refused" */
        const char *mode;
        char *memory, *cpus, *tasks;
        const SandboxLimits *limits;   /* NULL: refused or a project */
        char **grants;          /* "service:NAME", "upstream:NAME", "deps:ECOSYSTEM" */
        char *unit;
        char *state;
} Entry;

static void entry_done(Entry *e) {
        free(e->memory);
        free(e->cpus);
        free(e->tasks);
        strv_free(e->grants);
        free(e->unit);
        free(e->state);
}

static int add_grants(char ***grants, const char *prefix, char * const *names) {
        STRV_FOREACH(n, names)
                if (strv_push(grants, strprintf("%s:%s", prefix, *n)) < 0)
                        return -ENOMEM;
        return 0;
}

static int role_entry(const CtlRole *c, Entry *e) {
        const Role *r = c->role;

        *e = (Entry) { .name = c->name, .kind = "role",
                       .config = r && !c->closed_surface ? "ok" : "refused",
                       .unit = strprintf("agent@%s.service", c->name) };
        if (!e->unit)
                return -ENOMEM;
        if (!r)
                return 0;
        e->mode = network_mode_to_string(r->network);
        e->limits = &r->limits;
        if (r->limits.memory != UNSET_U64 && !(e->memory = format_bytes(r->limits.memory)))
                return -ENOMEM;
        if (r->limits.cpus_percent > 0 && !(e->cpus = format_cpus(r->limits.cpus_percent)))
                return -ENOMEM;
        if (r->limits.tasks != UNSET_U64 && !(e->tasks = strprintf("%" PRIu64, r->limits.tasks)))
                return -ENOMEM;
        if (add_grants(&e->grants, "service", r->services) < 0 ||
            add_grants(&e->grants, "upstream", r->broker_allow) < 0)
                return -ENOMEM;
        for (DepsEcosystem d = 0; d < _DEPS_ECOSYSTEM_MAX; d++)
                if (r->deps[d] && strv_push(&e->grants, strprintf("deps:%s", deps_ecosystem_to_string(d))) < 0)
                        return -ENOMEM;
        return 0;
}

static int project_entry(const CtlProject *c, Entry *e) {
        *e = (Entry) { .name = c->name, .kind = "project", .config = c->project ? "ok" : "refused" };
        if (!c->project)
                return 0;
        for (DepsEcosystem d = 0; d < _DEPS_ECOSYSTEM_MAX; d++)
                if (c->project->lockfiles[d] &&
                    strv_push(&e->grants, strprintf("deps:%s", deps_ecosystem_to_string(d))) < 0)
                        return -ENOMEM;
        if (project_has_deps(c->project) && !(e->unit = project_deps_unit(c->name)))
                return -ENOMEM;
        return 0;
}

static int print_table(const Entry *e, size_t n, const CtlOptions *o) {
        Table t;
        int r = table_new(&t, 9, "NAME", "KIND", "CONFIG", "MODE", "MEMORY", "CPUS", "TASKS", "GRANTS", "STATE");

        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *grants = ctl_join(e[i].grants);
                r = grants ? table_add_row(&t, e[i].name, e[i].kind, e[i].config, e[i].mode, e[i].memory,
                                           e[i].cpus, e[i].tasks, grants, e[i].state) : -ENOMEM;
        }
        if (r >= 0)
                table_print(&t, o, stdout);
        table_done(&t);
        return r < 0 ? log_oom() : 0;
}

static struct json_object *entry_json(const Entry *e) {
        _cleanup_json_ struct json_object *j = json_object_new_object();

        if (!j ||
            json_add_strv(j, "grants", e->grants) < 0 ||
            json_add_string(j, "name", e->name) < 0 ||
            json_add_string(j, "kind", e->kind) < 0 ||
            json_add_string(j, "config", e->config) < 0 ||
            json_add_string(j, "mode", e->mode) < 0 ||
            json_add_u64(j, "memory", e->limits ? e->limits->memory : UNSET_U64) < 0 ||
            json_add_cpus(j, "cpus", e->limits ? e->limits->cpus_percent : 0) < 0 ||
            json_add_u64(j, "tasks", e->limits ? e->limits->tasks : UNSET_U64) < 0 ||
            json_add_string(j, "unit", e->unit) < 0 ||
            json_add_string(j, "state", e->state) < 0)
                return NULL;
        return TAKE_PTR(j);
}

/* The roles' and projects' entries as a JSON array; NULL on out of memory. */
static struct json_object *entries_json(const Entry *e, size_t n) {
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++) {
                struct json_object *j = entry_json(&e[i]);
                if (!j || json_object_array_add(a, j) < 0) {
                        json_object_put(j);
                        json_object_put(a);
                        return NULL;
                }
        }
        return a;
}

/* Sidecars (cloister.sidecar(5)) have their own columns: the runtime's port and readiness, its limits, the
 * roles that reach it, and two states (socket-activated: the socket listens, the runtime
 * starts on the first connection). */
typedef struct SidecarEntry {
        const CtlSidecar *c;
        char *port, *memory, *cpus, *tasks;
        char *unit, *state, *runtime_unit, *runtime_state;
} SidecarEntry;

static void sidecar_entry_done(SidecarEntry *e) {
        free(e->port);
        free(e->memory);
        free(e->cpus);
        free(e->tasks);
        free(e->unit);
        free(e->state);
        free(e->runtime_unit);
        free(e->runtime_state);
}

static int sidecar_entry(sd_bus *bus, const CtlSidecar *c, SidecarEntry *e) {
        const Sidecar *sc = c->sidecar;

        *e = (SidecarEntry) { .c = c,
                              .unit = strprintf("sidecar@%s.socket", c->name),
                              .runtime_unit = strprintf("sidecar-runtime@%s.service", c->name) };
        if (!e->unit || !e->runtime_unit)
                return -ENOMEM;
        if (sc) {
                if (!(e->port = strprintf("%u", sc->port)))
                        return -ENOMEM;
                if (sc->limits.memory != UNSET_U64 && !(e->memory = format_bytes(sc->limits.memory)))
                        return -ENOMEM;
                if (sc->limits.cpus_percent > 0 && !(e->cpus = format_cpus(sc->limits.cpus_percent)))
                        return -ENOMEM;
                if (sc->limits.tasks != UNSET_U64 && !(e->tasks = strprintf("%" PRIu64, sc->limits.tasks)))
                        return -ENOMEM;
        }
        if (ctl_unit_state(bus, e->unit, &e->state) < 0 || ctl_unit_state(bus, e->runtime_unit, &e->runtime_state) < 0)
                return -ENOMEM;
        return 0;
}

static int print_sidecar_table(const SidecarEntry *e, size_t n, const CtlOptions *o) {
        Table t;
        int r = table_new(&t, 12, "NAME", "KIND", "CONFIG", "PORT", "HEALTH", "MEMORY", "CPUS", "TASKS", "GPUS",
                          "REACHED-BY", "SOCKET", "RUNTIME");

        for (size_t i = 0; r >= 0 && i < n; i++) {
                const Sidecar *sc = e[i].c->sidecar;
                _cleanup_free_ char *roles = ctl_join(e[i].c->reached_by);
                r = roles ? table_add_row(&t, e[i].c->name, "sidecar", ctl_sidecar_generated(e[i].c) ? "ok" : "refused",
                                          e[i].port, sc ? sc->health : NULL, e[i].memory, e[i].cpus, e[i].tasks,
                                          sc ? sc->gpus : NULL, roles, e[i].state, e[i].runtime_state) : -ENOMEM;
        }
        if (r >= 0)
                table_print(&t, o, stdout);
        table_done(&t);
        return r < 0 ? log_oom() : 0;
}

static struct json_object *sidecar_json(const SidecarEntry *e) {
        _cleanup_json_ struct json_object *j = json_object_new_object();
        const Sidecar *sc = e->c->sidecar;

        if (!j ||
            json_add_strv(j, "reached_by", e->c->reached_by) < 0 ||
            json_add_string(j, "name", e->c->name) < 0 ||
            json_add_string(j, "kind", "sidecar") < 0 ||
            json_add_string(j, "config", ctl_sidecar_generated(e->c) ? "ok" : "refused") < 0 ||
            json_object_object_add(j, "port", sc ? json_object_new_int(sc->port) : NULL) < 0 ||
            json_add_string(j, "health", sc ? sc->health : NULL) < 0 ||
            json_add_u64(j, "memory", sc ? sc->limits.memory : UNSET_U64) < 0 ||
            json_add_cpus(j, "cpus", sc ? sc->limits.cpus_percent : 0) < 0 ||
            json_add_u64(j, "tasks", sc ? sc->limits.tasks : UNSET_U64) < 0 ||
            json_add_string(j, "gpus", sc ? sc->gpus : NULL) < 0 ||
            json_add_string(j, "unit", e->unit) < 0 ||
            json_add_string(j, "state", e->state) < 0 ||
            json_add_string(j, "runtime_unit", e->runtime_unit) < 0 ||
            json_add_string(j, "runtime_state", e->runtime_state) < 0)
                return NULL;
        return TAKE_PTR(j);
}

typedef struct Listing {
        Entry *e;
        SidecarEntry *se;
        size_t n, ns;
} Listing;

static void listing_done(Listing *l) {
        for (size_t i = 0; l->e && i < l->n; i++)
                entry_done(&l->e[i]);
        for (size_t i = 0; l->se && i < l->ns; i++)
                sidecar_entry_done(&l->se[i]);
        free(l->e);
        free(l->se);
}

/* An entry per role and project, with its unit's state, then one per sidecar. */
static int collect(const CtlModel *m, sd_bus *bus, Listing *l) {
        int r;

        for (size_t i = 0; i < m->n_roles; i++) {
                r = role_entry(&m->roles[i], &l->e[l->n++]);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < m->n_projects; i++) {
                r = project_entry(&m->projects[i], &l->e[l->n++]);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < l->n; i++) {
                if (!l->e[i].unit)
                        continue;
                r = ctl_unit_state(bus, l->e[i].unit, &l->e[i].state);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < m->n_sidecars; i++) {
                r = sidecar_entry(bus, &m->sidecars[i], &l->se[l->ns++]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int print_json(const Listing *l, const CtlOptions *o) {
        _cleanup_json_ struct json_object *root = json_new_root(), *a = entries_json(l->e, l->n);

        if (!root || !a)
                return log_oom();
        for (size_t i = 0; i < l->ns; i++) {
                struct json_object *j = sidecar_json(&l->se[i]);
                if (!j || json_object_array_add(a, j) < 0) {
                        json_object_put(j);
                        return log_oom();
                }
        }
        if (json_object_object_add(root, "entries", a) < 0)
                return log_oom();
        TAKE_PTR(a);
        return json_print(root, o);
}

static int print_text(const Listing *l, const CtlOptions *o) {
        int r;

        r = print_table(l->e, l->n, o);
        if (r < 0)
                return r;
        if (l->ns > 0) {
                if (o->tty)
                        putchar('\n');
                r = print_sidecar_table(l->se, l->ns, o);
                if (r < 0)
                        return r;
        }
        if (o->tty)
                printf("\n%zu entries listed.\n", l->n + l->ns);
        return 0;
}

static int list(const CtlModel *m, const CtlOptions *o) {
        _cleanup_(listing_done) Listing l = {
                .e = calloc(m->n_roles + m->n_projects + 1, sizeof(Entry)),
                .se = calloc(m->n_sidecars + 1, sizeof(SidecarEntry)),
        };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = ctl_bus_open(o);

        if (!l.e || !l.se || collect(m, bus, &l) < 0)
                return log_oom();
        return o->json ? print_json(&l, o) : print_text(&l, o);
}

void help_list(void) {
        printf("cloisterctl list\n\nLists roles and projects with mode, limits, grants and state, then sidecars\n"
               "with port, health path, limits, the roles that reach them and the states of\n"
               "their socket and runtime.\n");
}

int verb_list(char **args, const CtlOptions *o) {
        _cleanup_(ctl_model_done) CtlModel m = {};

        if (args[0]) {
                log_error("list takes no arguments.");
                return CTL_EXIT_USAGE;
        }
        if (ctl_model_load(&m) < 0)
                return CTL_EXIT_FAILURE;
        return list(&m, o) < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}
