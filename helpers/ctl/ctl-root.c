/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sys/stat.h>

#include "closed-surface.h"
#include "ctl-root.h"
#include "log.h"
#include "strv.h"

static const char *root;

static int set_search_path(const char *env, char **dirs) {
        _cleanup_free_ char *joined = NULL;
        size_t len = 1;

        if (getenv(env))
                return 0;
        STRV_FOREACH(d, dirs)
                len += strlen(root) + strlen(*d) + 1;
        joined = calloc(len, 1);
        if (!joined)
                return log_oom();
        STRV_FOREACH(d, dirs) {
                if (*joined)
                        strcat(joined, ":");
                strcat(joined, root);
                strcat(joined, *d);
        }
        if (setenv(env, joined, 1) < 0)
                return log_error_errno(errno, "Failed to set $%s: %m", env);
        return 0;
}

int ctl_root_apply(const char *dir) {
        _cleanup_strv_free_ char **units = NULL;
        /* conf_dirs()'s defaults, the ones this build compiled in (its prefix), below DIR */
        char *config[] = { SYSCONFDIR "/cloister", "/run/cloister", "/usr/local/lib/cloister",
                           PKGLIBDIR, NULL };
        int r;

        if (!dir)
                return 0;
        root = dir;
        r = set_search_path("CLOISTER_CONFIG_PATH", config);
        if (r < 0)
                return r;
        /* systemd's list, without $SYSTEMD_UNIT_PATH (which set_search_path leaves alone) */
        if (getenv("SYSTEMD_UNIT_PATH"))
                return 0;
        if (unit_search_path(NULL, &units) < 0)
                return log_oom();
        return set_search_path("SYSTEMD_UNIT_PATH", units);
}

char *ctl_root_path(const char *path) {
        return root ? strprintf("%s%s", root, path) : strdup(path);
}

uid_t ctl_root_owner(void) {
        struct stat st;

        if (!root || stat(root, &st) < 0)
                return 0;
        return st.st_uid;
}

const char *ctl_root(void) {
        return root;
}
