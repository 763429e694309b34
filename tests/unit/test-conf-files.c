/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/basic/conf-files.c: the configuration directories and how files in them mask each other (docs/overview.md, Files and search paths). */

#include "conf-files.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;

static void test_conf_dirs(void) {
        char **dirs = NULL;

        setenv("CLOISTER_CONFIG_PATH", "/x/etc:/x/run::/x/lib:/x/etc", 1);
        is_int(conf_dirs(&dirs), 0, "conf_dirs() succeeds with CLOISTER_CONFIG_PATH");
        ok(strv_length(dirs) == 3 && streq(dirs[0], "/x/etc") && streq(dirs[1], "/x/run") &&
           streq(dirs[2], "/x/lib"),
           "CLOISTER_CONFIG_PATH is used in its order, highest first, without empty or repeated entries");
        dirs = strv_free(dirs);

        setenv("CLOISTER_CONFIG_PATH", "/only", 1);
        ok(conf_dirs(&dirs) == 0 && strv_length(dirs) == 1 && streq(dirs[0], "/only"),
           "CLOISTER_CONFIG_PATH replaces the built-in list entirely");
        dirs = strv_free(dirs);

        unsetenv("CLOISTER_CONFIG_PATH");
        is_int(conf_dirs(&dirs), 0, "conf_dirs() succeeds without CLOISTER_CONFIG_PATH");
        {
                /* With prefix=/usr/local, $prefix/lib/cloister is /usr/local/lib/cloister: listed once. */
                static const char *const expected[] = { SYSCONFDIR "/cloister", "/run/cloister",
                                                        "/usr/local/lib/cloister", PKGLIBDIR };
                size_t n = streq(PKGLIBDIR, "/usr/local/lib/cloister") ? 3 : 4;
                bool same = strv_length(dirs) == n;
                for (size_t i = 0; same && i < n; i++)
                        same = streq(dirs[i], expected[i]);
                ok(same, "the built-in list is " SYSCONFDIR "/cloister, /run/cloister, /usr/local/lib/cloister, "
                   PKGLIBDIR ", highest first, without repeats");
                if (!same)
                        STRV_FOREACH(d, dirs)
                                diag("  got: %s", *d);
        }
        dirs = strv_free(dirs);
}

static void test_list(void) {
        char *high = test_path(tmpdir, "high"), *mid = test_path(tmpdir, "mid"),
             *low = test_path(tmpdir, "low"), *missing = test_path(tmpdir, "missing");
        char **dirs = test_dirs(high, missing, mid, low, NULL);
        ConfFileList l = {};
        char *p;

        free(test_write_file(high, "roles/b.role", "[Role]\n"));
        free(test_write_file(mid, "roles/b.role", "[Role]\n"));       /* masked by high */
        free(test_write_file(low, "roles/a.role", "[Role]\n"));
        free(test_write_file(mid, "roles/c.role", "[Role]\n"));
        free(test_write_file(low, "roles/c.role", "[Role]\n"));       /* masked by mid */
        test_symlink("/dev/null", high, "roles/d.role");            /* masks low's d */
        free(test_write_file(low, "roles/d.role", "[Role]\n"));
        test_symlink("/dev/null", low, "roles/e.role");             /* masks nothing: gone */
        free(test_write_file(high, "roles/f.role", "[Role]\n"));
        test_symlink("/dev/null", mid, "roles/f.role");             /* lower mask: high wins */
        free(test_write_file(high, "roles/notes.txt", "x"));        /* wrong suffix */
        free(test_write_file(high, "roles/.hidden.role", "[Role]\n"));
        free(test_write_file(high, "roles/.role", "[Role]\n"));     /* no name */
        free(test_write_file(mid, "roles/B.role", "[Role]\n"));

        is_int(conf_files_list(dirs, "roles", ".role", &l), 0, "conf_files_list() succeeds");
        is_int(l.n, 5, "five files are found: B a b c f");
        if (l.n == 5) {
                /* Sorted by name (strcmp), not by directory. */
                is_str(l.files[0].name, "B.role", "sorted: B.role first (byte order)");
                is_str(l.files[1].name, "a.role", "sorted: a.role");
                is_str(l.files[2].name, "b.role", "sorted: b.role");
                is_str(l.files[3].name, "c.role", "sorted: c.role");
                is_str(l.files[4].name, "f.role", "sorted: f.role");

                p = test_path(low, "roles/a.role");
                is_str(l.files[1].path, p, "a file only in the lowest directory is found there");
                free(p);
                p = test_path(high, "roles/b.role");
                is_str(l.files[2].path, p, "a higher directory masks the same name below it");
                free(p);
                p = test_path(mid, "roles/c.role");
                is_str(l.files[3].path, p, "the middle directory masks the lowest");
                free(p);
                p = test_path(high, "roles/f.role");
                is_str(l.files[4].path, p, "a /dev/null symlink below a real file does not mask it");
                free(p);
        }
        for (size_t i = 0; i < l.n; i++) {
                ok(!streq(l.files[i].name, "d.role"), "a symlink to /dev/null masks the file away (entry %zu)", i);
                ok(!streq(l.files[i].name, "e.role"), "a lone /dev/null symlink is no file (entry %zu)", i);
        }
        conf_file_list_done(&l);
        ok(l.files == NULL && l.n == 0, "conf_file_list_done() empties the list");

        /* The directories themselves (subdir NULL), e.g. for cloister.conf. */
        free(test_write_file(mid, "x.conf", ""));
        ok(conf_files_list(dirs, NULL, ".conf", &l) == 0 && l.n == 1 && streq(l.files[0].name, "x.conf"),
           "subdir NULL lists the directories themselves");
        conf_file_list_done(&l);

        /* Nothing anywhere: an empty list, no error. */
        ok(conf_files_list(dirs, "sidecars", ".sidecar", &l) == 0 && l.n == 0,
           "a subdirectory that exists nowhere gives an empty list");
        conf_file_list_done(&l);

        strv_free(dirs);
        free(high);
        free(mid);
        free(low);
        free(missing);
}

/* No file at all is the common case (no sidecars, no drop-ins): it must be an empty list, and
 * clean under UBSan too (qsort() and memcpy() must not be handed a NULL array). Runs first:
 * UBSan reports each source location only once per process. */
static void test_empty_list(void) {
        char *empty = test_path(tmpdir, "empty");
        char **dirs = test_dirs(empty, NULL);
        ConfFileList l = { .n = 42 };
        char *err;
        int r;

        test_mkdir(empty, "roles");
        test_stderr_begin();
        r = conf_files_list(dirs, "roles", ".role", &l);
        err = test_stderr_end();
        is_int(r, 0, "conf_files_list() of an empty directory succeeds");
        is_int(l.n, 0, "conf_files_list() of an empty directory gives no file");
        is_str(err, "", "conf_files_list() of an empty directory logs nothing (and trips no sanitizer)");
        conf_file_list_done(&l);
        free(err);
        strv_free(dirs);
        free(empty);
}

static void test_find(void) {
        char *high = test_path(tmpdir, "f-high"), *low = test_path(tmpdir, "f-low");
        char **dirs = test_dirs(high, low, NULL);
        char *path = NULL, *want;

        test_mkdir(high, "");
        free(test_write_file(low, "projects/webapp.project", "[Project]\n"));
        is_int(conf_file_find(dirs, "projects/webapp.project", &path), 0, "conf_file_find() succeeds");
        want = test_path(low, "projects/webapp.project");
        is_str(path, want, "conf_file_find() finds a file in a lower directory");
        free(want);
        free(path);

        free(test_write_file(high, "projects/webapp.project", "[Project]\n"));
        path = NULL;
        conf_file_find(dirs, "projects/webapp.project", &path);
        want = test_path(high, "projects/webapp.project");
        is_str(path, want, "conf_file_find() prefers the highest directory");
        free(want);
        free(path);

        test_symlink("/dev/null", high, "projects/masked.project");
        free(test_write_file(low, "projects/masked.project", "[Project]\n"));
        path = (char *) "sentinel";
        is_int(conf_file_find(dirs, "projects/masked.project", &path), 0, "conf_file_find() of a masked file succeeds");
        ok(path == NULL, "conf_file_find() of a masked file finds nothing");

        path = (char *) "sentinel";
        is_int(conf_file_find(dirs, "projects/none.project", &path), 0, "conf_file_find() of a missing file succeeds");
        ok(path == NULL, "conf_file_find() of a missing file finds nothing");

        strv_free(dirs);
        free(high);
        free(low);
}

int main(void) {
        tmpdir = test_tmpdir_new();

        test_empty_list();
        test_conf_dirs();
        test_list();
        test_find();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
