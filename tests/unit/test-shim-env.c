/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/shim/shim-env.c: the agent's environment holds nothing an administrator could set
 * outside the role file. systemd merges the manager's environment (systemctl set-environment,
 * DefaultEnvironment=) and a unit's Environment= into the shim's; none of PATH, LANG, LC_*,
 * TZ, HOME, USER, LOGNAME, SHELL or STATE_DIRECTORY set there reaches the agent. */

#include "shim-env.h"
#include "tap.h"

static const char *get(char **env, const char *name) {
        size_t n = strlen(name);

        STRV_FOREACH(e, env)
                if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

int main(void) {
        static const char *const planted[][2] = {
                { "PATH", "/var/tmp/evil:/usr/bin" }, { "LANG", "xx_XX.UTF-8" }, { "LC_ALL", "xx_XX.UTF-8" },
                { "LANGUAGE", "xx" }, { "TZ", ":/var/tmp/evil-zone" }, { "HOME", "/var/lib/evil" },
                { "USER", "evil" }, { "LOGNAME", "evil" }, { "SHELL", "/var/tmp/evil-sh" },
                { "STATE_DIRECTORY", "/var/tmp/evil" }, { "LD_PRELOAD", "/var/tmp/evil.so" },
        };
        char *setenv_args[] = { (char *) "GREETING=hi", (char *) "PATH=/opt/tool/bin:/usr/bin", NULL };
        char **env = NULL;

        for (size_t i = 0; i < ELEMENTSOF(planted); i++)
                setenv(planted[i][0], planted[i][1], 1);
        setenv("INVOCATION_ID", "0123456789abcdef0123456789abcdef", 1);
        setenv("JOURNAL_STREAM", "8:12345", 1);

        is_int(shim_environment("r", NETWORK_NONE, NULL, &env), 0, "the environment is built");
        for (size_t i = 0; i < ELEMENTSOF(planted); i++)
                ok(!streq_ptr(get(env, planted[i][0]), planted[i][1]), "%s from the manager or a drop-in does not reach the agent",
                   planted[i][0]);
        is_str(get(env, "PATH"), "/usr/local/bin:/usr/bin:/bin", "PATH is cloister's");
        is_str(get(env, "LANG"), "C.UTF-8", "LANG is C.UTF-8");
        is_str(get(env, "HOME"), "/tmp", "HOME is /tmp (writable)");
        ok(!get(env, "TZ") && !get(env, "LC_ALL") && !get(env, "LD_PRELOAD"), "no TZ, LC_*, LD_PRELOAD");
        is_str(get(env, "INVOCATION_ID"), "0123456789abcdef0123456789abcdef", "INVOCATION_ID (systemd's) is kept");
        is_str(get(env, "JOURNAL_STREAM"), "8:12345", "JOURNAL_STREAM (systemd's) is kept");
        is_str(get(env, "CLOISTER_ROLE"), "r", "CLOISTER_ROLE");
        strv_free(env);

        setenv("INVOCATION_ID", "not-an-id; rm -rf", 1);
        setenv("JOURNAL_STREAM", "8:1 x", 1);
        is_int(shim_environment("r", NETWORK_NONE, setenv_args, &env), 0, "built again");
        ok(!get(env, "INVOCATION_ID") && !get(env, "JOURNAL_STREAM"), "metadata not in systemd's format is dropped");
        is_str(get(env, "PATH"), "/opt/tool/bin:/usr/bin", "the role's Environment= (--setenv) may set PATH");
        is_str(get(env, "GREETING"), "hi", "the role's Environment= reaches the agent");
        strv_free(env);
        return tap_done();
}
