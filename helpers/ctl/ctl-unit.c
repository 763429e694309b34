/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "conf-files.h"
#include "ctl-unit.h"
#include "log.h"
#include "profile.h"

#define OWN_DROPIN "50-cloister.conf"

/* cat shows what systemd would load from the current files: the generated drop-in is
 * rendered in-process with the generator's model (profile_role()), not read from
 * /run/systemd/generator, which holds what the last daemon-reload generated. It is shown
 * under the path the generator writes it to. */

void unit_parts_free(UnitPart *parts, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(parts[i].name);
                free(parts[i].path);
                free(parts[i].text);
        }
        free(parts);
}

static int first_in_path(char * const *dirs, const char *name, char **ret) {
        STRV_FOREACH(d, dirs) {
                _cleanup_free_ char *p = strprintf("%s/%s", *d, name);
                if (!p)
                        return log_oom();
                if (access(p, F_OK) >= 0) {
                        *ret = path_is_masked(p) ? NULL : TAKE_PTR(p);
                        return 1;
                }
        }
        *ret = NULL;
        return 0;
}

/* The drop-in directory names systemd reads for agent@<role>.service, in its order: the
 * unit's own, its dash prefixes (agent@a-.service.d for role a-b), the template's, and the
 * top-level service.d. */
static int dropin_dir_names(const char *role, char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        _cleanup_free_ char *own = strprintf("agent@%s.service.d", role);

        if (!l || !own || strv_extend(&l, own) < 0)
                return log_oom();
        for (size_t i = strlen(role); i > 0; i--)
                if (role[i - 1] == '-') {
                        _cleanup_free_ char *p = strprintf("agent@%.*s.service.d", (int) i, role);
                        if (!p || strv_extend(&l, p) < 0)
                                return log_oom();
                }
        if (strv_extend(&l, "agent@.service.d") < 0 || strv_extend(&l, "service.d") < 0)
                return log_oom();
        *ret = TAKE_PTR(l);
        return 0;
}

static int add_part(UnitPart **parts, size_t *n, const char *name, char *path, char *text) {
        UnitPart *p = realloc(*parts, sizeof(UnitPart) * (*n + 1));

        if (!p || !path) {
                free(path);
                free(text);
                return log_oom();
        }
        *parts = p;
        p[*n] = (UnitPart) { .name = name ? strdup(name) : NULL, .path = path, .text = text };
        (*n)++;
        return 0;
}

static bool have_dropin(const UnitPart *parts, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (parts[i].name && streq(parts[i].name, name))
                        return true;
        return false;
}

/* Drop-ins: one per file name, the highest-priority directory wins (as in systemd), across
 * every drop-in directory name. cloister's own file in the generator directory is replaced
 * by the in-process rendering, added by the caller. */
static int collect_dropins(char * const *unit_dirs, const char *role, const char *generator_dir,
                           UnitPart **parts, size_t *n) {
        _cleanup_strv_free_ char **names = NULL;
        int r = dropin_dir_names(role, &names);

        if (r < 0)
                return r;
        STRV_FOREACH(d, unit_dirs)
                STRV_FOREACH(dn, names) {
                        _cleanup_free_ char *dir = strprintf("%s/%s", *d, *dn);
                        char *dirs[] = { dir, NULL };
                        ConfFileList files = {};

                        if (!dir)
                                return log_oom();
                        if (conf_files_list(dirs, NULL, ".conf", &files) < 0)
                                return log_oom();
                        for (size_t i = 0; r >= 0 && i < files.n; i++) {
                                const char *fn = files.files[i].name;
                                if (generator_dir && streq(*d, generator_dir) && streq(fn, OWN_DROPIN) &&
                                    streq(*dn, names[0]))
                                        continue;
                                if (!have_dropin(*parts + 1, *n - 1, fn))
                                        r = add_part(parts, n, fn, TAKE_PTR(files.files[i].path), NULL);
                        }
                        conf_file_list_done(&files);
                        if (r < 0)
                                return r;
                }
        return 0;
}

static char *render_dropin(const CtlModel *m, const CtlRole *role) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        UnitSettings s = {};
        FILE *f;
        int r;

        r = profile_role(role->role, m->conf, &s);
        if (r < 0)
                return NULL;
        f = open_memstream(&text, &size);
        if (!f) {
                unit_settings_done(&s);
                return NULL;
        }
        fprintf(f, "# Automatically generated by cloister-generator\n# Source: %s\n\n", role->path);
        r = unit_settings_write(f, &s);
        unit_settings_done(&s);
        if (fclose(f) != 0 || r < 0)
                return NULL;
        return TAKE_PTR(text);
}

static int compare_parts(const void *a, const void *b) {
        return strcmp(((const UnitPart *) a)->name, ((const UnitPart *) b)->name);
}

int unit_part_write(const UnitPart *p, FILE *out) {
        _cleanup_fclose_ FILE *f = NULL;
        char buf[4096];
        size_t k;

        if (p->text) {
                fputs(p->text, out);
                return 0;
        }
        f = fopen(p->path, "re");
        if (!f)
                return log_error_errno(errno, "Failed to read %s: %m", p->path);
        while ((k = fread(buf, 1, sizeof buf, f)) > 0)
                fwrite(buf, 1, k, out);
        return 0;
}

int ctl_unit_text(const CtlModel *m, const CtlRole *role, UnitPart **ret, size_t *ret_n) {
        _cleanup_free_ char *unit_name = strprintf("agent@%s.service", role->name), *unit = NULL;
        const char *gen = ctl_generator_dir(m->unit_dirs);
        UnitPart *parts = NULL;
        size_t n = 0;
        int r;

        if (!unit_name)
                return log_oom();
        r = first_in_path(m->unit_dirs, unit_name, &unit);
        if (r == 0)
                r = first_in_path(m->unit_dirs, "agent@.service", &unit);
        if (r < 0)
                return r;
        if (!unit)
                return log_error_errno(ENOENT, "No agent@.service template in the unit path; is cloister installed?");
        r = add_part(&parts, &n, NULL, TAKE_PTR(unit), NULL);
        if (r >= 0)
                r = collect_dropins(m->unit_dirs, role->name, gen, &parts, &n);
        if (r >= 0 && role->role && !role->closed_surface && !have_dropin(parts + 1, n - 1, OWN_DROPIN)) {
                char *text = render_dropin(m, role);
                r = text ? add_part(&parts, &n, OWN_DROPIN,
                                    strprintf("%s/%s.d/" OWN_DROPIN, gen ?: "/run/systemd/generator", unit_name), text)
                         : log_oom();
        }
        if (r < 0) {
                unit_parts_free(parts, n);
                return r;
        }
        qsort(parts + 1, n - 1, sizeof(UnitPart), compare_parts);
        *ret = parts;
        *ret_n = n;
        return 0;
}
