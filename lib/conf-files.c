/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <sys/stat.h>

#include "conf-files.h"
#include "log.h"

void conf_file_list_done(ConfFileList *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->files[i].name);
                free(l->files[i].path);
        }
        l->files = mfree(l->files);
        l->n = 0;
}

int conf_dirs(char ***ret) {
        _cleanup_strv_free_ char **dirs = calloc(1, sizeof(char *));
        const char *e = getenv("CLOISTER_CONFIG_PATH");
        const char *defaults[] = { SYSCONFDIR "/cloister", "/run/cloister",
                                   "/usr/local/lib/cloister", PKGLIBDIR };

        if (!dirs)
                return -ENOMEM;
        if (e) {
                _cleanup_free_ char *copy = strdup(e);
                char *save = NULL;
                if (!copy)
                        return -ENOMEM;
                for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
                        if (!strv_contains(dirs, t) && strv_extend(&dirs, t) < 0)
                                return -ENOMEM;
        } else
                for (size_t i = 0; i < ELEMENTSOF(defaults); i++)
                        if (!strv_contains(dirs, defaults[i]) && strv_extend(&dirs, defaults[i]) < 0)
                                return -ENOMEM;
        *ret = TAKE_PTR(dirs);
        return 0;
}

static bool is_masked(const char *path) {
        char target[16];
        ssize_t n = readlink(path, target, sizeof target - 1);

        if (n < 0)
                return false;
        target[n] = 0;
        return streq(target, "/dev/null");
}

static bool list_has(const ConfFileList *l, const char *name) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->files[i].name, name))
                        return true;
        return false;
}

static int cmp_conf_file(const void *a, const void *b) {
        return strcmp(((const ConfFile *) a)->name, ((const ConfFile *) b)->name);
}

static int scan_dir(const char *dir, const char *suffix, ConfFileList *l) {
        _cleanup_(closedir_p) DIR *d = NULL;
        struct dirent *de;

        d = opendir(dir);
        if (!d)
                return errno == ENOENT || errno == ENOTDIR ? 0 : log_warning_errno(errno, "Failed to open %s: %m", dir);

        while ((errno = 0, de = readdir(d))) {
                size_t n = strlen(de->d_name), s = strlen(suffix);
                ConfFile *f;

                if (de->d_name[0] == '.' || n <= s || !streq(de->d_name + n - s, suffix))
                        continue;
                if (list_has(l, de->d_name))
                        continue; /* masked by a higher directory */
                f = realloc(l->files, sizeof(ConfFile) * (l->n + 1));
                if (!f)
                        return -ENOMEM;
                l->files = f;
                f = &l->files[l->n];
                f->name = strdup(de->d_name);
                f->path = strprintf("%s/%s", dir, de->d_name);
                l->n++;
                if (!f->name || !f->path)
                        return -ENOMEM;
        }
        return 0;
}

int conf_files_list(char * const *dirs, const char *subdir, const char *suffix, ConfFileList *ret) {
        ConfFileList l = {};
        size_t k = 0;
        int r;

        STRV_FOREACH(d, dirs) {
                _cleanup_free_ char *p = subdir ? strprintf("%s/%s", *d, subdir) : strdup(*d);
                if (!p) {
                        conf_file_list_done(&l);
                        return -ENOMEM;
                }
                r = scan_dir(p, suffix, &l);
                if (r < 0) {
                        conf_file_list_done(&l);
                        return r;
                }
        }

        /* Drop masked entries now that they have shadowed lower directories. */
        for (size_t i = 0; i < l.n; i++) {
                if (is_masked(l.files[i].path)) {
                        free(l.files[i].name);
                        free(l.files[i].path);
                        continue;
                }
                l.files[k++] = l.files[i];
        }
        l.n = k;
        if (l.n > 1)
                qsort(l.files, l.n, sizeof(ConfFile), cmp_conf_file);
        *ret = l;
        return 0;
}

int conf_file_find(char * const *dirs, const char *name, char **ret) {
        STRV_FOREACH(d, dirs) {
                _cleanup_free_ char *p = strprintf("%s/%s", *d, name);
                if (!p)
                        return -ENOMEM;
                if (access(p, F_OK) < 0 && !is_masked(p))
                        continue;
                *ret = is_masked(p) ? NULL : TAKE_PTR(p);
                return 0;
        }
        *ret = NULL;
        return 0;
}
