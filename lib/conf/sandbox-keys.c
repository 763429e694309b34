/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <pwd.h>

#include "cmdline.h"
#include "log.h"
#include "sandbox-keys.h"
#include "writable-path.h"

bool environment_name_is_reserved(const char *name) {
        static const char *const reserved[] = { "OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY" };

        if (startswith(name, "CLOISTER_"))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
                if (streq(name, reserved[i]))
                        return true;
        return false;
}

int conf_parse_exec(const ConfAssignment *a, char **exec, char ***argv) {
        _cleanup_strv_free_ char **l = NULL;
        const char *reason = NULL;

        if (cmdline_split(a->value, &l, &reason) < 0)
                return reason ? conf_invalid(a, reason) : log_oom();
        if (!l[0])
                return conf_invalid(a, "empty command line");
        if (l[0][0] != '/')
                return conf_invalid(a, "the program must be an absolute path");
        strv_free(*argv);
        *argv = TAKE_PTR(l);
        return conf_parse_string(a, exec);
}

int conf_parse_user(const ConfAssignment *a, void *data) {
        const char *v = a->value;
        struct passwd *pw;

        if (isempty(v))
                return conf_parse_string(a, data);
        if (strlen(v) > 31 || !(islower((unsigned char) v[0]) || v[0] == '_'))
                return conf_invalid(a, "not a user name");
        for (const char *p = v; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '_' && *p != '-')
                        return conf_invalid(a, "not a user name");
        if (streq(v, "root"))
                return conf_invalid(a, "cloister never runs sandboxed code as root");
        pw = getpwnam(v);
        if (pw && pw->pw_uid == 0)
                return conf_invalid(a, "this user has UID 0; cloister never runs sandboxed code as root");
        return conf_parse_string(a, data);
}

int conf_parse_environment(const ConfAssignment *a, void *data) {
        const char *eq = strchr(a->value, '=');
        _cleanup_free_ char *name = NULL;

        if (isempty(a->value))
                return conf_parse_strv(a, data);
        if (!eq || eq == a->value)
                return conf_invalid(a, "expected NAME=VALUE");
        name = strndup(a->value, (size_t) (eq - a->value));
        if (!name)
                return log_oom();
        if (!(isalpha((unsigned char) name[0]) || name[0] == '_'))
                return conf_invalid(a, "not a valid variable name");
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char) *p) && *p != '_')
                        return conf_invalid(a, "not a valid variable name");
        if (environment_name_is_reserved(name))
                return conf_invalid(a, "CLOISTER_* and the OpenAI endpoint variables are set by cloister and cannot be overridden");
        return conf_parse_strv(a, data);
}

int conf_parse_read_only_mount(const ConfAssignment *a, void *data) {
        _cleanup_free_ char *copy = strdup(a->value);
        char *source, *target, *opt;
        const char *reason;

        if (!copy)
                return log_oom();
        if (isempty(a->value))
                return conf_parse_strv(a, data);
        source = copy;
        target = strchr(source, ':');
        if (!target)
                return conf_invalid(a, "expected HOSTPATH:SANDBOXPATH[:ro]");
        *target++ = 0;
        opt = strchr(target, ':');
        if (opt) {
                *opt++ = 0;
                if (!streq(opt, "ro"))
                        return conf_invalid(a, "the only option is \":ro\"; ReadOnlyMount= is always read-only");
        }
        if ((reason = mount_path_check(source)))
                return conf_invalid(a, reason);
        if ((reason = mount_target_check(target)))
                return conf_invalid(a, reason);
        STRV_FOREACH(spec, *(char ***) data) {
                const char *t = strchr(*spec, ':') + 1;
                size_t l = strcspn(t, ":");
                if (l == strlen(target) && strncmp(t, target, l) == 0)
                        return conf_invalid(a, "another ReadOnlyMount= already mounts on this target");
        }
        return conf_parse_strv(a, data);
}

int conf_parse_gpus(const ConfAssignment *a, void *data) {
        static const char reason[] = "must be empty, \"all\" or a comma-separated list of GPU indices (0…63)";
        uint64_t seen = 0;
        const char *p = a->value;

        if (isempty(p) || streq(p, "all"))
                return conf_parse_string(a, data);
        for (;;) {
                unsigned long i = 0;
                size_t n = 0;

                for (; isdigit((unsigned char) p[n]); n++)
                        i = i * 10 + (unsigned long) (p[n] - '0');
                if (n == 0 || n > 2 || (n > 1 && p[0] == '0') || i > GPU_INDEX_MAX)
                        return conf_invalid(a, reason);
                if (seen & (UINT64_C(1) << i))
                        return conf_invalid(a, "a GPU index is listed twice");
                seen |= UINT64_C(1) << i;
                p += n;
                if (!*p)
                        break;
                if (*p++ != ',')
                        return conf_invalid(a, reason);
        }
        return conf_parse_string(a, data);
}

void read_only_mounts_free(ReadOnlyMount *m, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(m[i].source);
                free(m[i].target);
        }
        free(m);
}

int read_only_mounts_resolve(char * const *specs, ReadOnlyMount **ret, size_t *ret_n) {
        ReadOnlyMount *m = calloc(strv_length(specs) + 1, sizeof(ReadOnlyMount));
        size_t n = 0;

        if (!m)
                return log_oom();
        STRV_FOREACH(spec, specs) {
                const char *colon = strchr(*spec, ':');
                const char *end = strchr(colon + 1, ':');

                m[n].source = strndup(*spec, (size_t) (colon - *spec));
                m[n].target = end ? strndup(colon + 1, (size_t) (end - colon - 1)) : strdup(colon + 1);
                n++;
                if (!m[n - 1].source || !m[n - 1].target) {
                        read_only_mounts_free(m, n);
                        return log_oom();
                }
        }
        *ret = m;
        *ret_n = n;
        return 0;
}
