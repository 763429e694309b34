/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <pwd.h>

#include "log.h"
#include "shim-env.h"

extern char **environ;

/* The shim cannot tell which of its variables systemd set for the service and which came
 * from the manager's environment (systemctl set-environment, DefaultEnvironment=) or from a
 * drop-in: systemd merges them into one list. So nothing is inherited whose value an
 * administrator could choose; PATH, LANG, HOME and the identity are cloister's own, and the
 * role's Environment= (--setenv) is the one place to change them. Kept: the per-invocation
 * metadata systemd generates, in its own format. */
static bool is_hex(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!isxdigit((unsigned char) s[i]))
                        return false;
        return s[n] == 0;
}

static bool kept_from_systemd(const char *assignment) {
        const char *v;

        if ((v = startswith(assignment, "INVOCATION_ID=")))
                return is_hex(v, 32);
        if ((v = startswith(assignment, "JOURNAL_STREAM="))) { /* "<device>:<inode>" */
                size_t a = strspn(v, "0123456789");
                return a > 0 && v[a] == ':' && v[a + 1 + strspn(v + a + 1, "0123456789")] == 0 && v[a + 1];
        }
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

/* USER and LOGNAME when the uid has a name the sandbox can resolve (a named User=; a dynamic
 * user's name lives in systemd's userdb, which the sandbox cannot reach). */
static int add_identity(char ***env) {
        struct passwd *pw = getpwuid(getuid());
        _cleanup_free_ char *user = NULL, *logname = NULL;

        if (!pw || !pw->pw_name || !*pw->pw_name)
                return 0;
        user = strprintf("USER=%s", pw->pw_name);
        logname = strprintf("LOGNAME=%s", pw->pw_name);
        if (!user || !logname)
                return -ENOMEM;
        return env_set(env, user) < 0 ? -ENOMEM : env_set(env, logname);
}

int shim_environment(const char *role, NetworkMode mode, char * const *setenv, char ***ret) {
        _cleanup_strv_free_ char **env = calloc(1, sizeof(char *));
        _cleanup_free_ char *r_role = strprintf("CLOISTER_ROLE=%s", role);
        _cleanup_free_ char *r_mode = strprintf("CLOISTER_NETWORK=%s", network_mode_to_string(mode));
        /* A dynamic user's home is "/", read-only; a named user's is hidden (ProtectHome=yes). */
        static const char *const fixed[] = {
                "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", "SHELL=/bin/sh",
        };

        if (!env || !r_role || !r_mode)
                return log_oom();
        for (char **e = environ; e && *e; e++)
                if (kept_from_systemd(*e) && env_set(&env, *e) < 0)
                        return log_oom();
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                if (env_set(&env, fixed[i]) < 0)
                        return log_oom();
        if (add_identity(&env) < 0)
                return log_oom();
        STRV_FOREACH(s, setenv)
                if (env_set(&env, *s) < 0)
                        return log_oom();
        if (env_set(&env, r_role) < 0 || env_set(&env, r_mode) < 0)
                return log_oom();
        *ret = TAKE_PTR(env);
        return 0;
}
