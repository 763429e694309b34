/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "role.h"
#include "tap.h"
#include "test-util.h"

static _noreturn_ void bail(const char *what, const char *arg) {
        char msg[512];

        snprintf(msg, sizeof msg, "%s %s: %s", what, arg ?: "", strerror(errno));
        tap_bail_out(msg);
        abort();
}

char *test_tmpdir_new(void) {
        const char *base = getenv("TMPDIR");
        char *t = strprintf("%s/cloister-unit.XXXXXX", isempty(base) ? "/tmp" : base);

        if (!t)
                bail("out of memory", NULL);
        if (!mkdtemp(t))
                bail("mkdtemp", t);
        return t;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        if (remove(path) < 0)
                diag("could not remove %s: %s", path, strerror(errno));
        return 0;
}

void test_tmpdir_remove(char *dir) {
        if (!dir)
                return;
        if (!startswith(dir, "/tmp/") && !getenv("TMPDIR"))
                tap_bail_out("refusing to remove a directory outside /tmp");
        nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        free(dir);
}

char *test_path(const char *dir, const char *rel) {
        char *p = strprintf("%s/%s", dir, rel);

        if (!p)
                bail("out of memory", NULL);
        return p;
}

static void mkdir_parents(const char *path) {
        _cleanup_free_ char *copy = strdup(path);

        if (!copy)
                bail("out of memory", NULL);
        for (char *p = copy + 1; (p = strchr(p, '/')); p++) {
                *p = 0;
                if (mkdir(copy, 0755) < 0 && errno != EEXIST)
                        bail("mkdir", copy);
                *p = '/';
        }
}

void test_mkdir(const char *dir, const char *rel) {
        _cleanup_free_ char *p = test_path(dir, rel);

        mkdir_parents(p);
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                bail("mkdir", p);
}

char *test_write_file(const char *dir, const char *rel, const char *content) {
        char *p = test_path(dir, rel);
        FILE *f;

        mkdir_parents(p);
        f = fopen(p, "we");
        if (!f)
                bail("fopen", p);
        fputs(content, f);
        if (fclose(f) != 0)
                bail("write", p);
        return p;
}

void test_symlink(const char *target, const char *dir, const char *rel) {
        _cleanup_free_ char *p = test_path(dir, rel);

        mkdir_parents(p);
        if (symlink(target, p) < 0)
                bail("symlink", p);
}

char **test_dirs(const char *first, ...) {
        char **l = calloc(1, sizeof(char *));
        va_list ap;

        if (!l)
                bail("out of memory", NULL);
        va_start(ap, first);
        for (const char *d = first; d; d = va_arg(ap, const char *))
                if (strv_extend(&l, d) < 0)
                        bail("out of memory", NULL);
        va_end(ap);
        return l;
}

static int saved_stderr = -1;
static FILE *capture;

void test_stderr_begin(void) {
        if (saved_stderr >= 0)
                tap_bail_out("test_stderr_begin() nested");
        fflush(stderr);
        capture = tmpfile();
        if (!capture)
                bail("tmpfile", NULL);
        saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        if (saved_stderr < 0)
                bail("dup", "stderr");
        if (dup2(fileno(capture), STDERR_FILENO) < 0)
                bail("dup2", "stderr");
}

char *test_stderr_end(void) {
        char *text;
        long n;

        if (saved_stderr < 0)
                tap_bail_out("test_stderr_end() without test_stderr_begin()");
        fflush(stderr);
        if (dup2(saved_stderr, STDERR_FILENO) < 0)
                bail("dup2", "stderr");
        close(saved_stderr);
        saved_stderr = -1;

        n = lseek(fileno(capture), 0, SEEK_END);
        if (n < 0)
                n = 0;
        text = calloc(1, (size_t) n + 1);
        if (!text)
                bail("out of memory", NULL);
        if (n > 0 && pread(fileno(capture), text, (size_t) n, 0) < 0)
                bail("pread", "captured stderr");
        fclose(capture);
        capture = NULL;
        return text;
}

RoleLoad test_role_load(const char *tmpdir, const char *conf_text, const char *file_name,
                        const char *role_text, ...) {
        static unsigned counter;
        RoleLoad l = {};
        char *name = strprintf("role-case-%u", ++counter), *rel;
        char **dirs;
        va_list ap;

        if (!name)
                bail("out of memory", NULL);
        l.dir = test_path(tmpdir, name);
        free(name);
        test_mkdir(l.dir, "roles");
        if (conf_text)
                free(test_write_file(l.dir, "cloister.conf", conf_text));
        va_start(ap, role_text);
        for (const char *r = va_arg(ap, const char *); r; r = va_arg(ap, const char *))
                free(test_write_file(l.dir, r, va_arg(ap, const char *)));
        va_end(ap);
        rel = strprintf("roles/%s", file_name);
        if (!rel)
                bail("out of memory", NULL);
        l.path = test_write_file(l.dir, rel, role_text);
        free(rel);

        dirs = test_dirs(l.dir, NULL);
        test_stderr_begin();
        l.r = cloister_conf_load(dirs, &l.conf);
        if (l.r >= 0)
                l.r = role_load(l.path, l.conf, dirs, &l.role);
        l.err = test_stderr_end();
        strv_free(dirs);
        return l;
}

void test_role_load_done(RoleLoad *l) {
        role_free(l->role);
        cloister_conf_free(l->conf);
        free(l->err);
        free(l->dir);
        free(l->path);
        *l = (RoleLoad) {};
}

char *test_role_where(const RoleLoad *l, unsigned line) {
        char *s = strprintf("%s:%u:", l->path, line);

        if (!s)
                bail("out of memory", NULL);
        return s;
}
