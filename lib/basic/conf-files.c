/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <limits.h>
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

int search_path_from_env(const char *env, const char *const *defaults, size_t n, char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        const char *e = getenv(env);

        if (!l)
                return -ENOMEM;
        if (e) {
                _cleanup_free_ char *copy = strdup(e);
                char *save = NULL;
                if (!copy)
                        return -ENOMEM;
                for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
                        if (!strv_contains(l, t) && strv_extend(&l, t) < 0)
                                return -ENOMEM;
        } else
                for (size_t i = 0; i < n; i++)
                        if (!strv_contains(l, defaults[i]) && strv_extend(&l, defaults[i]) < 0)
                                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

int conf_dirs(char ***ret) {
        static const char *const defaults[] = { SYSCONFDIR "/cloister", "/run/cloister",
                                                "/usr/local/lib/cloister", PKGLIBDIR };

        return search_path_from_env("CLOISTER_CONFIG_PATH", defaults, ELEMENTSOF(defaults), ret);
}

bool path_is_masked(const char *path) {
        char target[16];
        ssize_t n = readlink(path, target, sizeof target - 1);

        if (n < 0)
                return false;
        target[n] = 0;
        return streq(target, "/dev/null");
}

typedef struct Entry {
        char *name, *path;
        unsigned priority;      /* index of the directory: lower wins */
} Entry;

static int cmp_entry(const void *a, const void *b) {
        const Entry *x = a, *y = b;
        int c = strcmp(x->name, y->name);
        return c != 0 ? c : (x->priority > y->priority) - (x->priority < y->priority);
}

static int scan_dir(const char *dir, unsigned priority, const char *suffix,
                    Entry **entries, size_t *n, size_t *allocated) {
        _cleanup_(closedir_p) DIR *d = NULL;
        struct dirent *de;
        size_t s = strlen(suffix);

        d = opendir(dir);
        if (!d)
                return errno == ENOENT || errno == ENOTDIR ? 0 : log_warning_errno(errno, "Failed to open %s: %m", dir);

        while ((de = readdir(d))) {
                size_t l = strlen(de->d_name);

                if (de->d_name[0] == '.' || l <= s || !streq(de->d_name + l - s, suffix))
                        continue;
                if (*n >= *allocated) {
                        size_t a = *allocated ? *allocated * 2 : 64;
                        Entry *e = realloc(*entries, sizeof(Entry) * a);
                        if (!e)
                                return -ENOMEM;
                        *entries = e;
                        *allocated = a;
                }
                (*entries)[*n] = (Entry) { strdup(de->d_name), strprintf("%s/%s", dir, de->d_name), priority };
                if (!(*entries)[(*n)++].name || !(*entries)[*n - 1].path)
                        return -ENOMEM;
        }
        return 0;
}

/* All directories are read, then sorted by name and priority: the first of each name is the
 * one that counts (O(n log n) for many roles), and it is dropped if it is a mask. */
int conf_files_list(char * const *dirs, const char *subdir, const char *suffix, ConfFileList *ret) {
        Entry *entries = NULL;
        size_t n = 0, allocated = 0;
        ConfFileList l = {};
        unsigned priority = 0;
        int r = 0;

        STRV_FOREACH(d, dirs) {
                _cleanup_free_ char *p = subdir ? strprintf("%s/%s", *d, subdir) : strdup(*d);
                r = p ? scan_dir(p, priority++, suffix, &entries, &n, &allocated) : -ENOMEM;
                if (r < 0)
                        break;
        }
        if (r >= 0 && n > 1)
                qsort(entries, n, sizeof(Entry), cmp_entry);
        if (r >= 0 && n > 0 && !(l.files = calloc(n, sizeof(ConfFile))))
                r = -ENOMEM;
        /* decide first, free after: each decision looks at the previous entry's name */
        for (size_t i = 0; r >= 0 && i < n; i++)
                if ((i == 0 || !streq(entries[i].name, entries[i - 1].name)) && !path_is_masked(entries[i].path)) {
                        l.files[l.n++] = (ConfFile) { entries[i].name, entries[i].path };
                        entries[i].priority = UINT_MAX; /* taken */
                }
        for (size_t i = 0; i < n; i++)
                if (r < 0 || entries[i].priority != UINT_MAX) {
                        free(entries[i].name);
                        free(entries[i].path);
                }
        free(entries);
        if (r < 0) {
                conf_file_list_done(&l);
                return r;
        }
        *ret = l;
        return 0;
}

int conf_file_find(char * const *dirs, const char *name, char **ret) {
        STRV_FOREACH(d, dirs) {
                _cleanup_free_ char *p = strprintf("%s/%s", *d, name);
                if (!p)
                        return -ENOMEM;
                if (access(p, F_OK) < 0 && !path_is_masked(p))
                        continue;
                *ret = path_is_masked(p) ? NULL : TAKE_PTR(p);
                return 0;
        }
        *ret = NULL;
        return 0;
}
