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
        int r = env && r_role && r_mode ? 0 : -ENOMEM;

        for (char **e = environ; r >= 0 && e && *e; e++)
                if (kept_from_systemd(*e))
                        r = env_set(&env, *e);
        if (r >= 0)
                r = env_set(&env, "PATH=/usr/local/bin:/usr/bin:/bin");
        if (r >= 0)
                r = env_set(&env, "LANG=C.UTF-8");
        /* A dynamic user's home is "/", read-only; a named user's is hidden (ProtectHome=yes). */
        if (r >= 0)
                r = env_set(&env, "HOME=/tmp");
        if (r >= 0)
                r = env_set(&env, "SHELL=/bin/sh");
        if (r >= 0)
                r = add_identity(&env);
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
