/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>

#include "closed-surface.h"
#include "conf-files.h"
#include "log.h"
#include "policy.h"

#define OWN_DROPIN "50-cloister.conf"

void closed_surface_index_done(ClosedSurfaceIndex *idx) {
        for (size_t i = 0; i < idx->n; i++) {
                free(idx->findings[i].unit);
                free(idx->findings[i].reason);
        }
        idx->findings = mfree(idx->findings);
        idx->n = 0;
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

static int add_finding(ClosedSurfaceIndex *idx, const char *unit, char *reason) {
        ClosedSurfaceFinding *f;

        if (!reason)
                return -ENOMEM;
        f = realloc(idx->findings, sizeof(ClosedSurfaceFinding) * (idx->n + 1));
        if (!f) {
                free(reason);
                return -ENOMEM;
        }
        idx->findings = f;
        f[idx->n] = (ClosedSurfaceFinding) { .unit = strdup(unit), .reason = reason };
        if (!f[idx->n].unit) {
                free(reason);
                return -ENOMEM;
        }
        idx->n++;
        return 0;
}

/* systemd unit syntax, not INI: only key names matter here, and continuation lines (a
 * trailing backslash) belong to the key above them. */
static int scan_dropin(ClosedSurfaceIndex *idx, const char *unit, const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *line = NULL;
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
                const ClosedSurface *c;

                lineno++;
                while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                        line[--n] = 0;
                continued = n > 0 && line[n - 1] == '\\';
                if (was_continued)
                        continue;
                s += strspn(s, " \t");
                if (*s == '#' || *s == ';' || *s == '[' || !*s)
                        continue;
                eq = strchr(s, '=');
                if (!eq)
                        continue;
                while (eq > s && isspace((unsigned char) eq[-1]))
                        eq--;
                *eq = 0;
                c = closed_key(s);
                if (c) {
                        int r = add_finding(idx, unit, strprintf("%s:%u: %s= re-opens a closed surface (%s)",
                                                                  path, lineno, c->key, c->surface));
                        if (r < 0)
                                return r;
                }
        }
        return 0;
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
        for (size_t i = 0; r >= 0 && i < files.n; i++) {
                if (own_dir && streq(dir, own_dir) && streq(files.files[i].name, OWN_DROPIN))
                        continue;
                r = scan_dropin(idx, unit, files.files[i].path);
        }
        conf_file_list_done(&files);
        return r;
}

int closed_surface_index_build(char * const *dirs, const char *own_dir, ClosedSurfaceIndex *ret) {
        ClosedSurfaceIndex idx = {};
        _cleanup_free_ char *template = NULL; /* the lowest-priority agent@.service: the shipped one */
        _cleanup_strv_free_ char **seen = calloc(1, sizeof(char *)), **names = NULL;
        int r = seen ? 0 : -ENOMEM;

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
                STRV_FOREACH(np, names) {
                        const char *n = *np;
                        size_t l = strlen(n);

                        if (r < 0)
                                break;

                        if (streq(n, "service.d") ||
                            (startswith(n, "agent@") && l > 10 && streq(n + l - 10, ".service.d")))
                                r = scan_dropin_dir(&idx, *d, n, own_dir);
                        else if (streq(n, "agent@.service")) {
                                if (template)
                                        r = add_finding(&idx, "agent@.service",
                                                        strprintf("%s: replaces the locked agent@.service template", template));
                                free(template);
                                template = strprintf("%s/%s", *d, n);
                                if (!template)
                                        r = -ENOMEM;
                        } else if (startswith(n, "agent@") && l > 7 && streq(n + l - 7, ".socket")) {
                                _cleanup_free_ char *p = strprintf("%s/%s", *d, n);
                                _cleanup_free_ char *unit = strprintf("%.*s.service", (int) (l - 7), n);
                                if (!p || !unit)
                                        r = -ENOMEM;
                                else if (!path_is_masked(p))
                                        r = add_finding(&idx, unit, strprintf("%s: a socket unit would hand file descriptors to the agent", p));
                        } else if (startswith(n, "agent@") && l > 8 && streq(n + l - 8, ".service")) {
                                _cleanup_free_ char *p = strprintf("%s/%s", *d, n);
                                if (!p)
                                        r = -ENOMEM;
                                else if (!path_is_masked(p)) /* masked: closes, does not open */
                                        r = add_finding(&idx, n, strprintf("%s: a unit file replaces the locked agent@.service template", p));
                        }
                }
        }
        if (r < 0) {
                closed_surface_index_done(&idx);
                return r;
        }
        *ret = idx;
        return 0;
}

const char *closed_surface_find(const ClosedSurfaceIndex *idx, const char *role) {
        for (size_t i = 0; i < idx->n; i++) {
                const char *u = idx->findings[i].unit, *inst;
                size_t l;

                if (streq(u, "service") || streq(u, "agent@.service"))
                        return idx->findings[i].reason;
                inst = startswith(u, "agent@");
                if (!inst)
                        continue;
                l = strlen(inst) - strlen(".service");
                /* agent@<role>.service, or a dash prefix of it: agent@a-.service for role a-b */
                if ((strlen(role) == l && strncmp(inst, role, l) == 0) ||
                    (l > 0 && inst[l - 1] == '-' && strlen(role) > l && strncmp(inst, role, l) == 0))
                        return idx->findings[i].reason;
        }
        return NULL;
}
