/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statvfs.h>

#include "log.h"
#include "sandbox-check.h"

/* Each check returns 0 when closed, 1 when open (after logging), or -errno. */

static int check_network_devices(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/net/dev", "re");
        char line[512];
        unsigned lineno = 0;
        int open = 0;

        if (!f)
                return log_error_errno(errno, "Cannot read /proc/self/net/dev to list network devices: %m");
        while (fgets(line, sizeof line, f)) {
                char *name = line, *colon;

                if (++lineno <= 2) /* two header lines */
                        continue;
                name += strspn(name, " ");
                colon = strchr(name, ':');
                if (!colon)
                        continue;
                *colon = 0;
                if (!streq(name, "lo")) {
                        log_error("Network device %s is present: the sandbox shares a network namespace (PrivateNetwork= not in effect).", name);
                        open = 1;
                }
        }
        return open;
}

static int check_no_inet(void) {
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd >= 0) {
                log_error("AF_INET sockets can be created (RestrictAddressFamilies= not in effect).");
                return 1;
        }
        return 0;
}

/* egress keeps the host's network but loses its loopback through IPAddressDeny=, a cgroup
 * BPF filter that systemd silently skips where it cannot load it (cgroup v1). A filtered
 * SYN just disappears; a refused or accepted connection means packets reach the host. */
static int check_host_loopback_filtered(void) {
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct pollfd p = { .events = POLLOUT };
        int err = 0;
        socklen_t len = sizeof err;

        if (fd < 0)
                return log_error_errno(errno, "Cannot create an AF_INET socket to check the host's loopback: %m");
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                if (errno == EPERM || errno == EACCES)
                        return 0;
                if (errno != EINPROGRESS)
                        err = errno;
        }
        if (!err) {
                p.fd = fd;
                if (poll(&p, 1, 200) == 0)
                        return 0; /* dropped: filtered */
                (void) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err == EPERM || err == EACCES || err == ETIMEDOUT)
                        return 0;
        }
        log_error("The host's loopback answers (%s): IPAddressDeny= is not in effect (it needs cgroup v2 with BPF).",
                  err ? strerror(err) : "connected");
        return 1;
}

static int read_status_field(const char *field, char *buf, size_t size) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        size_t l = strlen(field);

        if (!f)
                return log_error_errno(errno, "Cannot read /proc/self/status: %m");
        while (fgets(line, sizeof line, f))
                if (strncmp(line, field, l) == 0 && line[l] == ':') {
                        const char *v = line + l + 1;
                        v += strspn(v, " \t");
                        snprintf(buf, size, "%.*s", (int) strcspn(v, "\n"), v);
                        return 0;
                }
        return log_error_errno(ENOENT, "/proc/self/status has no %s field.", field);
}

static int check_capabilities(void) {
        static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
        int open = 0;

        for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
                char v[64];
                int r = read_status_field(sets[i], v, sizeof v);
                if (r < 0)
                        return r;
                if (strspn(v, "0") != strlen(v)) {
                        log_error("Capability set %s is %s, not empty (CapabilityBoundingSet= not in effect).", sets[i], v);
                        open = 1;
                }
        }
        return open;
}

static int check_seccomp(void) {
        char v[16];
        int r = read_status_field("Seccomp", v, sizeof v);

        if (r < 0)
                return r;
        if (!streq(v, "2")) {
                log_error("Seccomp mode is %s, not 2 (SystemCallFilter= not in effect).", v);
                return 1;
        }
        return 0;
}

static int check_no_new_privs(void) {
        int r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);

        if (r < 0)
                return log_error_errno(errno, "PR_GET_NO_NEW_PRIVS failed: %m");
        if (r != 1) {
                log_error("no_new_privs is not set (NoNewPrivileges= not in effect).");
                return 1;
        }
        return 0;
}

static int check_read_only(const char *path) {
        struct statvfs st;

        if (statvfs(path, &st) < 0)
                return log_error_errno(errno, "statvfs(%s) failed: %m", path);
        if (!(st.f_flag & ST_RDONLY)) {
                log_error("%s is writable (ProtectSystem=strict not in effect).", path);
                return 1;
        }
        return 0;
}

static int check_not_root(void) {
        if (getuid() == 0 || geteuid() == 0 || getgid() == 0 || getegid() == 0) {
                log_error("Running as UID %u GID %u: an agent never runs as root.",
                          (unsigned) geteuid(), (unsigned) getegid());
                return 1;
        }
        return 0;
}

int sandbox_check(NetworkMode mode) {
        int (*const always[])(void) = { check_capabilities, check_no_new_privs, check_seccomp, check_not_root };
        int open = 0, r;

        for (size_t i = 0; i < ELEMENTSOF(always); i++) {
                r = always[i]();
                if (r < 0)
                        return r;
                open += r;
        }
        for (const char *const *p = (const char *const[]) { "/", "/usr", "/etc", NULL }; *p; p++) {
                r = check_read_only(*p);
                if (r < 0)
                        return r;
                open += r;
        }
        if (network_mode_is_sealed(mode)) {
                r = check_network_devices();
                if (r < 0)
                        return r;
                open += r;
        }
        if (mode == NETWORK_EGRESS) {
                r = check_host_loopback_filtered();
                if (r < 0)
                        return r;
                open += r;
        }
        if (mode == NETWORK_NONE) {
                r = check_no_inet();
                if (r < 0)
                        return r;
                open += r;
        }
        return open;
}

static bool is_mount_point(const char *target) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[4096];

        /* Mount points are octal-escaped in mountinfo; role paths never need escaping. */
        while (f && fgets(line, sizeof line, f)) {
                char mp[4096];
                if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && streq(mp, target))
                        return true;
        }
        return false;
}

int sandbox_check_mounts(const char *role, char * const *expected) {
        int missing = 0;

        STRV_FOREACH(e, expected) {
                const char *eq = strchr(*e, '='), *colon = strrchr(*e, ':');

                if (!is_mount_point(colon + 1)) {
                        log_error("agent@%s: %.*s= source %.*s is missing (nothing is mounted at %s).",
                                  strempty(role), (int) (eq - *e), *e, (int) (colon - eq - 1), eq + 1, colon + 1);
                        missing++;
                }
        }
        return missing;
}
