/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "macro.h"
#include "parse-util.h"
#include "writable-path.h"

static bool path_is_at_or_under(const char *path, const char *prefix) {
        const char *rest = startswith(path, prefix);
        return rest && (*rest == 0 || *rest == '/');
}

static const char *under_any(const char *path, const char *const *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (path_is_at_or_under(path, list[i]))
                        return list[i];
        return NULL;
}

const char *mount_path_check(const char *path) {
        static const char *const kernel[] = { "/proc", "/sys", "/dev", "/run" };
        const char *reason = path_check(path);

        if (reason)
                return reason;
        if (streq(path, "/"))
                return "the root directory cannot be mounted into a sandbox";
        if (under_any(path, kernel, ELEMENTSOF(kernel)))
                return "paths under /proc, /sys, /dev and /run cannot be mounted into a sandbox";
        return NULL;
}

const char *writable_path_check(const char *path) {
        static const char *const system[] = { "/etc", "/usr", "/boot", "/bin", "/sbin", "/lib",
                                              "/lib32", "/lib64", "/libx32", "/var/lib/cloister",
                                              /* the output systemd manages for roles without Output=,
                                               * and every dynamic user's state */
                                              "/var/lib/cloister-output", "/var/lib/private" };
        static const char *const exact[] = { "/var", "/var/lib", "/home", "/root", "/srv", "/opt", "/tmp", "/var/tmp" };
        const char *reason = mount_path_check(path);

        if (reason)
                return reason;
        if (under_any(path, system, ELEMENTSOF(system)))
                return "a writable mount cannot be part of the operating system";
        for (size_t i = 0; i < ELEMENTSOF(exact); i++)
                if (streq(path, exact[i]))
                        return "a writable mount must be a dedicated directory, not a top-level one";
        return NULL;
}

const char *mount_target_check(const char *path) {
        static const char *const reserved[] = { "/tmp", "/var/tmp", "/input", "/output",
                                                "/workspace", "/opt/cloister", "/usr", "/etc" };
        const char *reason = mount_path_check(path);

        if (reason)
                return reason;
        if (under_any(path, reserved, ELEMENTSOF(reserved)))
                return "the target is one of the sandbox's own places (/tmp, /var/tmp, /input, /output, /workspace, /opt/cloister) or the OS (/usr, /etc)";
        return NULL;
}
