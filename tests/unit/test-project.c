/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/conf/project.c: projects/<name>.project (cloister.project(5)). Workspace= is required and must be a place a
 * sandbox may write to; [Dependencies] Pip=/Npm= name lockfiles relative to the workspace. */

#include "conf-files.h"
#include "project.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;

typedef struct Load {
        int r;
        Project *project;
        char *err;
        char *path;
} Load;

static void load_done(Load *l) {
        project_free(l->project);
        free(l->err);
        free(l->path);
}

static Load load(const char *name, const char *content) {
        Load l = {};
        char *rel = strprintf("projects/%s", name);

        l.path = test_write_file(tmpdir, rel, content);
        free(rel);
        test_stderr_begin();
        l.r = project_load(l.path, &l.project);
        l.err = test_stderr_end();
        return l;
}

static void check_refused(const char *what, const char *name, const char *content, unsigned line,
                          const char *reason_part) {
        Load l = load(name, content);
        char *where = line ? strprintf("%s:%u:", l.path, line) : strdup(l.path);

        ok(l.r < 0, "%s: the project is refused", what);
        ok(l.project == NULL, "%s: no project is returned", what);
        like(l.err, where, "%s: the error names %s", what, line ? "file:line" : "the file");
        if (reason_part)
                like(l.err, reason_part, "%s: the error says why", what);
        free(where);
        load_done(&l);
}

static void test_good(void) {
        Load l = load("webapp.project", "# the web app\n[Project]\nWorkspace=/srv/projects/webapp\n");

        is_int(l.r, 0, "a project with a Workspace= is accepted");
        is_str(l.err, "", "...and logs nothing");
        if (l.project) {
                is_str(l.project->name, "webapp", "the name comes from the file name");
                is_str(l.project->path, l.path, "the path is kept");
                is_str(l.project->workspace, "/srv/projects/webapp", "Workspace= is read");
        }
        load_done(&l);

        l = load("w2.project", "[Project]\nWorkspace=/var/lib/agents/w2\n");
        ok(l.r == 0 && l.project && streq_ptr(l.project->workspace, "/var/lib/agents/w2"),
           "a workspace under /var/lib (not cloister's own) is accepted");
        load_done(&l);
}

static void test_dependencies(void) {
        Load l = load("deps.project", "[Project]\nWorkspace=/srv/projects/deps\n[Dependencies]\n"
                                      "Pip=requirements.lock\nNpm=web/package-lock.json\n");
        char *s;

        is_int(l.r, 0, "a project with [Dependencies] Pip= and Npm= is accepted");
        is_str(l.err, "", "...and logs nothing");
        if (l.project) {
                is_str(l.project->lockfiles[DEPS_PIP], "requirements.lock", "Pip= is read");
                is_str(l.project->lockfiles[DEPS_NPM], "web/package-lock.json", "Npm= is read");
                ok(project_has_deps(l.project), "project_has_deps() is true");
                s = project_lockfile_path(l.project, DEPS_NPM);
                is_str(s, "/srv/projects/deps/web/package-lock.json", "the lockfile path is under the workspace");
                free(s);
                s = project_deps_unit(l.project->name);
                is_str(s, "cloister-deps@deps.service", "the materialising unit is cloister-deps@<project>.service");
                free(s);
        }
        load_done(&l);

        l = load("pipreset.project", "[Project]\nWorkspace=/srv/projects/p\n[Dependencies]\nPip=\n");
        ok(l.r == 0 && l.project && !project_has_deps(l.project) && !project_lockfile_path(l.project, DEPS_PIP),
           "an empty Pip= declares no set");
        load_done(&l);

        l = load("nodeps.project", "[Project]\nWorkspace=/srv/projects/n\n[Dependencies]\n");
        ok(l.r == 0 && l.project && !project_has_deps(l.project), "an empty [Dependencies] section declares no set");
        load_done(&l);
}

static void test_refused(void) {
        check_refused("Workspace= missing", "empty.project", "[Project]\n", 0, "Workspace=");
        check_refused("an empty file", "nothing.project", "", 0, "Workspace=");
        check_refused("Workspace= empty", "emptyval.project", "[Project]\nWorkspace=\n", 0, "Workspace=");
        check_refused("an absolute Pip=", "abs.project",
                      "[Project]\nWorkspace=/srv/projects/a\n[Dependencies]\nPip=/etc/requirements.lock\n", 4, "relative");
        check_refused("Npm= escaping with \"..\"", "esc.project",
                      "[Project]\nWorkspace=/srv/projects/a\n[Dependencies]\nNpm=web/../../x/package-lock.json\n", 4, "\"..\"");
        check_refused("Pip=..", "dotdot.project", "[Project]\nWorkspace=/srv/projects/a\n[Dependencies]\nPip=..\n", 4, "Pip=");
        check_refused("Pip= with a \".\" component", "dot.project",
                      "[Project]\nWorkspace=/srv/projects/a\n[Dependencies]\nPip=./r.lock\n", 4, "Pip=");
        check_refused("Pip= with \"//\"", "slashes.project",
                      "[Project]\nWorkspace=/srv/projects/a\n[Dependencies]\nPip=a//r.lock\n", 4, "empty component");
        check_refused("Npm= with a trailing \"/\"", "trailing.project",
                      "[Project]\nWorkspace=/srv/projects/a\n[Dependencies]\nNpm=web/\n", 4, "Npm=");
        check_refused("Pip= twice", "pip2.project",
                      "[Project]\nWorkspace=/srv/projects/a\n[Dependencies]\nPip=a.lock\nPip=b.lock\n", 5, "line 4");
        check_refused("an unknown [Dependencies] key", "cargo.project",
                      "[Project]\nWorkspace=/srv/projects/a\n[Dependencies]\nCargo=Cargo.lock\n", 4, "Cargo=");
        check_refused("Workspace= in [Dependencies]", "misplaced.project",
                      "[Dependencies]\nWorkspace=/srv/projects/a\n", 2, "Workspace=");
        check_refused("Workspace=/usr/x", "usr.project", "[Project]\nWorkspace=/usr/x\n", 2, "Workspace=");
        check_refused("Workspace=/", "root.project", "[Project]\nWorkspace=/\n", 2, "Workspace=");
        check_refused("Workspace=/etc/x", "etc.project", "[Project]\nWorkspace=/etc/x\n", 2, "operating system");
        check_refused("Workspace=/home", "home.project", "[Project]\nWorkspace=/home\n", 2, "Workspace=");
        check_refused("Workspace=/srv", "srv.project", "[Project]\nWorkspace=/srv\n", 2, "Workspace=");
        check_refused("Workspace=/proc/x", "proc.project", "[Project]\nWorkspace=/proc/x\n", 2, "Workspace=");
        check_refused("Workspace=/run/x", "run.project", "[Project]\nWorkspace=/run/x\n", 2, "Workspace=");
        check_refused("Workspace=/var/lib/cloister/x", "state.project", "[Project]\nWorkspace=/var/lib/cloister/x\n",
                      2, "Workspace=");
        check_refused("a relative Workspace=", "rel.project", "[Project]\nWorkspace=srv/x\n", 2, "Workspace=");
        check_refused("Workspace= with \"..\"", "dots.project", "[Project]\nWorkspace=/srv/x/../../etc\n", 2, "Workspace=");
        check_refused("Workspace= twice", "twice.project",
                      "[Project]\nWorkspace=/srv/projects/a\nWorkspace=/srv/projects/b\n", 3, "line 2");
        check_refused("an unknown key", "key.project", "[Project]\nWorkspace=/srv/projects/k\nOwner=me\n", 3, "Owner=");
        check_refused("an unknown section", "sect.project", "[Project]\nWorkspace=/srv/projects/s\n[Build]\n", 3, "[Build]");
        check_refused("an inline comment", "comment.project", "[Project]\nWorkspace=/srv/projects/c ; main\n", 2, NULL);
        check_refused("an invalid project name", "Web.App.project", "[Project]\nWorkspace=/srv/projects/x\n", 0, "Web.App");
        check_refused("a file that is no .project", "webapp.proj", "[Project]\nWorkspace=/srv/projects/x\n", 0, NULL);
}

static void test_find(void) {
        char **dirs = test_dirs(tmpdir, NULL);
        Project *p = NULL;
        char *err;
        int r;

        test_stderr_begin();
        r = project_find_and_load(dirs, "webapp", &p);
        err = test_stderr_end();
        ok(r == 0 && p && streq_ptr(p->workspace, "/srv/projects/webapp"), "project_find_and_load() finds projects/webapp.project");
        p = project_free(p);
        free(err);

        test_stderr_begin();
        r = project_find_and_load(dirs, "nosuch", &p);
        err = test_stderr_end();
        is_int(r, -ENOENT, "project_find_and_load() of a missing project is -ENOENT");
        like(err, "nosuch", "the error names the project");
        free(err);

        test_symlink("/dev/null", tmpdir, "projects/masked.project");
        test_stderr_begin();
        r = project_find_and_load(dirs, "masked", &p);
        err = test_stderr_end();
        is_int(r, -ENOENT, "a project masked by a /dev/null symlink is not found");
        free(err);
        strv_free(dirs);
}

int main(void) {
        tmpdir = test_tmpdir_new();

        test_good();
        test_dependencies();
        test_refused();
        test_find();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
