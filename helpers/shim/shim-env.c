/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"
#include "shim-env.h"

extern char **environ;

static bool kept_from_systemd(const char *assignment) {
        static const char *const keep[] = {
                "PATH=", "LANG=", "LANGUAGE=", "LC_", "TZ=", "HOME=", "USER=", "LOGNAME=", "SHELL=",
                "INVOCATION_ID=", "JOURNAL_STREAM=", "STATE_DIRECTORY=",
        };
        for (size_t i = 0; i < ELEMENTSOF(keep); i++)
                if (startswith(assignment, keep[i]))
                        return true;
        return false;
}

/* Sets NAME=VALUE in `env`, replacing an earlier NAME=. */
static int env_set(char ***env, const char *assignment) {
        size_t n = strcspn(assignment, "=") + 1;

        for (char **e = *env; e && *e; e++)
                if (strncmp(*e, assignment, n) == 0) {
                        char *c = strdup(assignment);
                        if (!c)
                                return -ENOMEM;
                        free(*e);
                        *e = c;
                        return 0;
                }
        return strv_extend(env, assignment);
}

int shim_environment(const char *role, NetworkMode mode, char * const *setenv, char ***ret) {
        _cleanup_strv_free_ char **env = calloc(1, sizeof(char *));
        _cleanup_free_ char *r_role = strprintf("CLOISTER_ROLE=%s", role);
        _cleanup_free_ char *r_mode = strprintf("CLOISTER_NETWORK=%s", network_mode_to_string(mode));
        const char *home = getenv("HOME");
        int r = env && r_role && r_mode ? 0 : -ENOMEM;

        for (char **e = environ; r >= 0 && e && *e; e++)
                if (kept_from_systemd(*e))
                        r = env_set(&env, *e);
        if (r >= 0 && !getenv("PATH"))
                r = env_set(&env, "PATH=/usr/local/bin:/usr/bin:/bin");
        /* A dynamic user's home is "/", read-only: give tools a writable one. */
        if (r >= 0 && (!home || streq(home, "/")))
                r = env_set(&env, "HOME=/tmp");
        STRV_FOREACH(s, setenv)
                if (r >= 0)
                        r = env_set(&env, *s);
        if (r >= 0)
                r = env_set(&env, r_role);
        if (r >= 0)
                r = env_set(&env, r_mode);
        if (r < 0)
                return log_oom();
        *ret = TAKE_PTR(env);
        return 0;
}
