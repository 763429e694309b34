/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

#include "closed-surface.h"
#include "conf-files.h"
#include "deps.h"
#include "log.h"
#include "policy.h"
#include "profile.h"
#include "project.h"

/* What the generator itself writes into its directory: not admin drop-ins. */
static const char *const own_dropins[] = { "50-cloister.conf", "50-credentials.conf" };

/* Unit files cloister ships once: a second copy anywhere replaces the locked one. */
static const char *const shipped_units[] = { "agent@.service", "cloister-broker.socket" };

/* Unit names the generator (or cloisterctl run) writes: an admin unit file of the same
 * name, anywhere but the generator's own directory, replaces it. */
static const char *const generated_prefixes[] = {
        "agent@", "sidecar@", "cloister-deps@", "run-cloister-tmp-", "run-cloister-var\\x2dtmp-",
};

void closed_surface_index_done(ClosedSurfaceIndex *idx) {
        for (size_t i = 0; i < idx->n; i++) {
                free(idx->findings[i].unit);
                free(idx->findings[i].key);
                free(idx->findings[i].reason);
        }
        idx->findings = mfree(idx->findings);
        idx->n = 0;
        idx->alias_from = strv_free(idx->alias_from);
        idx->alias_to = strv_free(idx->alias_to);
}

int unit_search_path(const char *generator_dirs[3], char ***ret) {
        const char *normal = generator_dirs && generator_dirs[0] ? generator_dirs[0] : "/run/systemd/generator";
        const char *early = generator_dirs && generator_dirs[1] ? generator_dirs[1] : "/run/systemd/generator.early";
        const char *late = generator_dirs && generator_dirs[2] ? generator_dirs[2] : "/run/systemd/generator.late";
        const char *const defaults[] = {
                "/etc/systemd/system.control", "/run/systemd/system.control", "/run/systemd/transient",
                early, "/etc/systemd/system", "/etc/systemd/system.attached", "/run/systemd/system",
                "/run/systemd/system.attached", normal, "/usr/local/lib/systemd/system",
                SYSTEMDSYSTEMUNITDIR, "/usr/lib/systemd/system", "/lib/systemd/system", late,
        };

        return search_path_from_env("SYSTEMD_UNIT_PATH", defaults, ELEMENTSOF(defaults), ret);
}

static const ClosedSurface *closed_key(const char *key) {
        for (const ClosedSurface *c = policy_closed_surfaces; c->key; c++)
                if (streq(c->key, key))
                        return c;
        return NULL;
}

static bool allowed_key(const char *key) {
        for (const char *const *a = policy_dropin_allowed; *a; a++)
                if (streq(*a, key))
                        return true;
        return false;
}

static int add_finding_key(ClosedSurfaceIndex *idx, const char *unit, const char *key, char *reason) {
        ClosedSurfaceFinding *f;

        if (!reason)
                return -ENOMEM;
        f = realloc(idx->findings, sizeof(ClosedSurfaceFinding) * (idx->n + 1));
        if (!f) {
                free(reason);
                return -ENOMEM;
        }
        idx->findings = f;
        f[idx->n] = (ClosedSurfaceFinding) { .unit = strdup(unit), .key = key ? strdup(key) : NULL, .reason = reason };
        if (!f[idx->n].unit || (key && !f[idx->n].key)) {
                free(f[idx->n].unit);
                free(f[idx->n].key);
                free(reason);
                return -ENOMEM;
        }
        idx->n++;
        return 0;
}

static int add_finding(ClosedSurfaceIndex *idx, const char *unit, char *reason) {
        return add_finding_key(idx, unit, NULL, reason);
}

/* Keys one kind of unit may set beyond the allow-list, because they configure that unit's
 * own job and reach no sandbox: cloister-deps@ is told where to find packages this way
 * (cloister.project(5)); every package is hash-pinned, and the agents get the set
 * read-only. */
static const struct { const char *unit_prefix, *key; } unit_allowed[] = {
        { "cloister-deps@", "Environment" },
};

static bool allowed_for_unit(const char *name, const char *key) {
        for (size_t i = 0; key && i < ELEMENTSOF(unit_allowed); i++)
                if (startswith(name, unit_allowed[i].unit_prefix) && streq(key, unit_allowed[i].key))
                        return true;
        return false;
}

/* Why a drop-in's `key` in `section` may not stay, or NULL. The allow-list decides: a key in
 * neither list (one a newer systemd added) is refused until someone classifies it. */
static char *judge_key(const char *path, unsigned line, const char *section, const char *key) {
        const ClosedSurface *c;

        if (section && startswith(section, "X-"))
                return NULL; /* systemd ignores extension sections */
        if (allowed_key(key))
                return NULL;
        c = closed_key(key);
        if (c)
                return strprintf("%s:%u: %s= re-opens a closed surface (%s)", path, line, c->key, c->surface);
        return strprintf("%s:%u: %s= is not a setting cloister has classified, so it may re-open anything "
                         "(policy/dropin-allowed.list)", path, line, key);
}

/* systemd unit syntax, not INI: only section and key names matter here, and continuation
 * lines (an odd run of trailing backslashes) belong to the key above them. */
static int scan_dropin(ClosedSurfaceIndex *idx, const char *unit, const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *line = NULL, *section = NULL;
        size_t size = 0;
        unsigned lineno = 0;
        bool continued = false;
        ssize_t n;

        if (!f)
                return errno == ENOENT ? 0 :
                        add_finding(idx, unit, strprintf("%s: cannot be read (%s), so it may re-open anything", path, strerror(errno)));
        while ((n = getline(&line, &size, f)) >= 0) {
                char *s = line, *eq;
                bool was_continued = continued;
                size_t bs = 0;

                lineno++;
                while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                        line[--n] = 0;
                while ((size_t) n > bs && line[n - 1 - bs] == '\\')
                        bs++;
                continued = bs % 2 == 1;
                if (was_continued)
                        continue;
                s += strspn(s, " \t");
                if (*s == '#' || *s == ';' || !*s)
                        continue;
                if (*s == '[') {
                        char *e = strchr(s, ']');
                        free(section);
                        section = e ? strndup(s + 1, (size_t) (e - s - 1)) : NULL;
                        if (e && !section)
                                return -ENOMEM;
                        continue;
                }
                eq = strchr(s, '=');
                if (!eq)
                        continue;
                while (eq > s && isspace((unsigned char) eq[-1]))
                        eq--;
                *eq = 0;
                {
                        char *why = judge_key(path, lineno, section, s);
                        if (why) {
                                int r = add_finding_key(idx, unit, s, why);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

static bool is_own_dropin(const char *dir, const char *own_dir, const char *name) {
        if (!own_dir || !streq(dir, own_dir))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(own_dropins); i++)
                if (streq(name, own_dropins[i]))
                        return true;
        return false;
}

static int scan_dropin_dir(ClosedSurfaceIndex *idx, const char *dir, const char *name,
                           const char *own_dir) {
        _cleanup_free_ char *path = strprintf("%s/%s", dir, name);
        _cleanup_free_ char *unit = NULL;
        ConfFileList files = {};
        char *dirs[] = { path, NULL };
        int r;

        if (!path)
                return -ENOMEM;
        unit = strndup(name, strlen(name) - 2); /* "agent@x.service.d" → "agent@x.service" */
        if (!unit)
                return -ENOMEM;
        r = conf_files_list(dirs, NULL, ".conf", &files);
        for (size_t i = 0; r >= 0 && i < files.n; i++)
                if (!is_own_dropin(dir, own_dir, files.files[i].name))
                        r = scan_dropin(idx, unit, files.files[i].path);
        conf_file_list_done(&files);
        return r;
}

static const char *unit_type(const char *name) {
        static const char *const types[] = { ".service", ".socket", ".mount" };

        for (size_t i = 0; i < ELEMENTSOF(types); i++)
                if (endswith(name, types[i]) && strlen(name) > strlen(types[i]))
                        return types[i];
        return NULL;
}

static bool is_generated_name(const char *n) {
        for (size_t i = 0; i < ELEMENTSOF(generated_prefixes); i++)
                if (startswith(n, generated_prefixes[i]))
                        return true;
        return false;
}

static bool is_shipped_name(const char *n) {
        for (size_t i = 0; i < ELEMENTSOF(shipped_units); i++)
                if (streq(n, shipped_units[i]))
                        return true;
        return false;
}

/* The /tmp mounts of cloisterctl run's runs and slots, run-cloister-tmp-ROLE.ID.mount and
 * run-cloister-tmp-ROLE.slot\x2dN.mount (and var\x2dtmp), as StartTransientUnit writes them
 * with the profile's settings (cloister-stage checks each is a tmpfs of its own). Not a role's
 * own (no "." after ROLE): a transient unit file of that name would replace the generator's. */
static bool is_run_tmp_mount(const char *n) {
        const char *rest = startswith(n, "run-cloister-tmp-") ?: startswith(n, "run-cloister-var\\x2dtmp-");
        const char *dot = rest ? strchr(rest, '.') : NULL;

        return dot && endswith(n, ".mount") && dot < n + strlen(n) - strlen(".mount");
}

/* One top-level entry of a unit directory. */
static int scan_entry(ClosedSurfaceIndex *idx, const char *dir, const char *n, const char *own_dir,
                      char ***shipped_seen) {
        _cleanup_free_ char *p = strprintf("%s/%s", dir, n);
        size_t l = strlen(n);
        char target[PATH_MAX];
        ssize_t tl;

        if (!p)
                return -ENOMEM;
        if (l > 2 && streq(n + l - 2, ".d")) {
                _cleanup_free_ char *u = strndup(n, l - 2);
                if (!u)
                        return -ENOMEM;
                if (unit_type(u) || streq(u, "service") || streq(u, "socket") || streq(u, "mount"))
                        return scan_dropin_dir(idx, dir, n, own_dir);
                return 0;
        }
        if (!unit_type(n) || path_is_masked(p)) /* masked: closes, does not open */
                return 0;

        /* A symlink to another unit name is an alias: systemd merges the alias's drop-ins
         * (and its template's) into the unit it points to. */
        tl = readlink(p, target, sizeof target - 1);
        if (tl > 0) {
                const char *base;
                target[tl] = 0;
                base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
                if (!streq(base, n) && unit_type(base)) {
                        if (strv_extend(&idx->alias_from, n) < 0 || strv_extend(&idx->alias_to, base) < 0)
                                return -ENOMEM;
                        if (!is_generated_name(n) && !is_shipped_name(n))
                                return 0;
                }
        }

        if (is_shipped_name(n)) {
                /* the first one seen is the highest-priority copy: the one that replaces */
                STRV_FOREACH(seen, *shipped_seen)
                        if (streq(strrchr(*seen, '/') + 1, n))
                                return add_finding(idx, n, strprintf("%s: replaces the locked %s%s", *seen, n,
                                                                     streq(n, "agent@.service") ? " template" : " shipped by cloister"));
                return strv_extend(shipped_seen, p);
        }
        if (is_run_tmp_mount(n) && endswith(dir, "/systemd/transient"))
                return 0;
        if (is_generated_name(n) && !(own_dir && streq(dir, own_dir))) {
                if (startswith(n, "agent@") && endswith(n, ".socket")) {
                        _cleanup_free_ char *unit = strprintf("%.*s.service", (int) (l - 7), n);
                        return unit ? add_finding(idx, unit, strprintf("%s: a socket unit would hand file descriptors to the agent", p)) : -ENOMEM;
                }
                return add_finding(idx, n, startswith(n, "agent@") ?
                                   strprintf("%s: a unit file replaces the locked agent@.service template", p) :
                                   strprintf("%s: a unit file replaces the unit cloister generates", p));
        }
        return 0;
}

int closed_surface_index_build(char * const *dirs, const char *own_dir, ClosedSurfaceIndex *ret) {
        ClosedSurfaceIndex idx = {};
        _cleanup_strv_free_ char **seen = calloc(1, sizeof(char *)), **names = NULL,
                **shipped_seen = calloc(1, sizeof(char *));
        int r = seen && shipped_seen ? 0 : -ENOMEM;

        idx.alias_from = calloc(1, sizeof(char *));
        idx.alias_to = calloc(1, sizeof(char *));
        if (!idx.alias_from || !idx.alias_to)
                r = -ENOMEM;

        STRV_FOREACH(d, dirs) {
                _cleanup_(closedir_p) DIR *dir = NULL;
                char real[PATH_MAX];
                struct dirent *de;

                if (r < 0)
                        break;
                /* /lib → /usr/lib on merged-/usr systems: one directory, scanned once */
                if (!realpath(*d, real) || strv_contains(seen, real))
                        continue;
                if (strv_extend(&seen, real) < 0) {
                        r = -ENOMEM;
                        continue;
                }
                /* sorted, so that the first finding (the reason a role gives) is deterministic */
                strv_free(names);
                names = calloc(1, sizeof(char *));
                dir = opendir(*d);
                if (!dir || !names)
                        continue;
                while ((de = readdir(dir)))
                        if (de->d_name[0] != '.' && strv_extend(&names, de->d_name) < 0)
                                r = -ENOMEM;
                strv_sort(names);
                STRV_FOREACH(np, names)
                        if (r >= 0)
                                r = scan_entry(&idx, *d, *np, own_dir, &shipped_seen);
        }
        if (r < 0) {
                closed_surface_index_done(&idx);
                return r;
        }
        *ret = idx;
        return 0;
}

/* "prefix@instance.type" → "prefix@.type"; NULL if `name` is no instance. */
static char *template_of(const char *name) {
        const char *at = strchr(name, '@'), *type = unit_type(name);

        if (!at || !type || at + 1 >= name + strlen(name) - strlen(type))
                return NULL;
        return strprintf("%.*s%s", (int) (at - name + 1), name, type);
}

/* "prefix@.type" */
static bool is_template(const char *name) {
        const char *at = strchr(name, '@');

        return at && unit_type(name) && at + 1 == name + strlen(name) - strlen(unit_type(name));
}

/* Adds `name` and every alias that resolves to it (by instance through a template alias
 * too), until nothing new is found. */
static int add_with_aliases(const ClosedSurfaceIndex *idx, const char *name, char ***names) {
        bool grew = true;
        int r = strv_contains(*names, name) ? 0 : strv_extend(names, name);

        for (unsigned round = 0; r >= 0 && grew && round < 16; round++) {
                grew = false;
                for (size_t i = 0; r >= 0 && idx->alias_from && idx->alias_from[i]; i++) {
                        const char *from = idx->alias_from[i], *to = idx->alias_to[i];
                        STRV_FOREACH(n, *names) {
                                _cleanup_free_ char *tmpl = template_of(*n), *inst = NULL;
                                const char *add = NULL;
                                if (streq(*n, to))
                                        add = from;
                                else if (tmpl && streq(tmpl, to) && is_template(from)) {
                                        /* web@.service → agent@.service: web@x.service is agent@x.service */
                                        const char *at = strchr(*n, '@');
                                        inst = strprintf("%.*s%s", (int) (strchr(from, '@') - from + 1), from, at + 1);
                                        if (!inst)
                                                return -ENOMEM;
                                        add = inst;
                                }
                                if (add && !strv_contains(*names, add)) {
                                        r = strv_extend(names, add);
                                        grew = true;
                                        break; /* *names moved */
                                }
                        }
                }
        }
        return r;
}

/* Does a drop-in directory for `unit` (as the index names it) apply to `name`? systemd reads
 * <name>.d, its template's, every dash prefix's ("run-cloister-.mount.d" for
 * "run-cloister-tmp-x.mount") and the top-level "<type>.d". */
static bool dropin_applies(const char *unit, const char *name) {
        const char *type = unit_type(name);
        _cleanup_free_ char *tmpl = template_of(name);
        size_t stem;

        if (!type)
                return false;
        if (streq(unit, name) || (tmpl && streq(unit, tmpl)) || streq(unit, type + 1))
                return true;
        stem = strlen(name) - strlen(type);
        for (size_t i = 0; i < stem; i++)
                if (name[i] == '-' && strlen(unit) == i + 1 + strlen(type) &&
                    strncmp(unit, name, i + 1) == 0 && streq(unit + i + 1, type))
                        return true;
        return false;
}

const char *closed_surface_find_units(const ClosedSurfaceIndex *idx, char * const *units) {
        _cleanup_strv_free_ char **names = calloc(1, sizeof(char *));

        if (!names)
                return "out of memory while checking drop-ins";
        STRV_FOREACH(u, units)
                if (add_with_aliases(idx, *u, &names) < 0)
                        return "out of memory while checking drop-ins";
        for (size_t i = 0; i < idx->n; i++)
                STRV_FOREACH(n, names)
                        if (dropin_applies(idx->findings[i].unit, *n) && !allowed_for_unit(*n, idx->findings[i].key))
                                return idx->findings[i].reason;
        return NULL;
}

const char *closed_surface_find(const ClosedSurfaceIndex *idx, const Role *role, const CloisterConf *conf) {
        _cleanup_strv_free_ char **units = NULL;

        if (profile_role_units(role, conf, &units) < 0)
                return "out of memory while checking drop-ins";
        return closed_surface_find_units(idx, units);
}
