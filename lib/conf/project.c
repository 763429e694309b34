/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>

#include "conf-files.h"
#include "conf-parser.h"
#include "ini-strict.h"
#include "log.h"
#include "project.h"
#include "writable-path.h"

Project *project_free(Project *p) {
        if (!p)
                return NULL;
        free(p->name);
        free(p->path);
        free(p->workspace);
        for (size_t i = 0; i < ELEMENTSOF(p->lockfiles); i++)
                free(p->lockfiles[i]);
        return mfree(p);
}

static int parse_workspace(const ConfAssignment *a, void *data) {
        const char *reason = writable_path_check(a->value);

        if (!isempty(a->value) && reason)
                return conf_invalid(a, reason);
        return conf_parse_path(a, data);
}

static int parse_lockfile(const ConfAssignment *a, void *data) {
        const char *reason = deps_lockfile_path_check(a->value);

        if (!isempty(a->value) && reason)
                return conf_invalid(a, reason);
        return conf_parse_string(a, data);
}

static const ConfKey project_table[] = {
        { "Project",      "Workspace", parse_workspace, offsetof(Project, workspace), 0 },
        { "Dependencies", "Pip",       parse_lockfile,  offsetof(Project, lockfiles[DEPS_PIP]), 0 },
        { "Dependencies", "Npm",       parse_lockfile,  offsetof(Project, lockfiles[DEPS_NPM]), 0 },
};

typedef struct ProjectParse {
        Project *project;
        ConfFileState state;
} ProjectParse;

static int project_handler(void *userdata, const char *path, unsigned line,
                           const char *section, const char *key, const char *value) {
        ProjectParse *p = userdata;
        ConfAssignment a = { path, line, section, key, value };

        if (!key) {
                if (!conf_table_has_section(project_table, ELEMENTSOF(project_table), section))
                        return log_error_errno(EINVAL, "%s:%u: Unknown section [%s]; refusing the file.",
                                               path, line, section);
                return 0;
        }
        return conf_apply(project_table, ELEMENTSOF(project_table), &p->state, p->project, &a);
}

int project_load(const char *path, Project **ret) {
        _cleanup_(project_freep) Project *p = calloc(1, sizeof(Project));
        _cleanup_fclose_ FILE *f = NULL;
        ProjectParse parse = {};
        int r;

        if (!p)
                return log_oom();
        r = conf_file_name(path, ".project", "project", &p->name);
        if (r < 0)
                return r;
        p->path = strdup(path);
        if (!p->path)
                return log_oom();

        f = fopen(path, "re");
        if (!f)
                return log_error_errno(errno, "Failed to open %s: %m", path);
        parse.project = p;
        r = ini_strict_parse(path, f, project_handler, &parse);
        conf_file_state_done(&parse.state);
        if (r < 0)
                return r;
        if (!p->workspace)
                return log_error_errno(EINVAL, "%s: [Project] Workspace= is required; refusing the file.", path);
        *ret = TAKE_PTR(p);
        return 0;
}

int project_find_and_load(char * const *dirs, const char *name, Project **ret) {
        _cleanup_free_ char *fn = strprintf("projects/%s.project", name), *path = NULL;
        int r;

        if (!fn)
                return log_oom();
        r = conf_file_find(dirs, fn, &path);
        if (r < 0)
                return log_oom();
        if (!path)
                return log_error_errno(ENOENT, "Project \"%s\" not found (no %s in the configuration directories).", name, fn);
        return project_load(path, ret);
}

bool project_has_deps(const Project *p) {
        for (size_t i = 0; i < ELEMENTSOF(p->lockfiles); i++)
                if (p->lockfiles[i])
                        return true;
        return false;
}

char *project_lockfile_path(const Project *p, DepsEcosystem e) {
        if (e < 0 || e >= _DEPS_ECOSYSTEM_MAX || !p->lockfiles[e])
                return NULL;
        return strprintf("%s/%s", p->workspace, p->lockfiles[e]);
}

char *project_deps_unit(const char *name) {
        return strprintf("cloister-deps@%s.service", name);
}
