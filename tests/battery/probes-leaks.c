/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the sandbox lets the agent see: descriptors, environment, credentials, other
 * processes, /sys, devices, home directories. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "battery.h"
#include "macro.h"

extern char **environ;

PROBE(fds) {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;
        char extra[300] = "";

        if (!d)
                return failed(r, "/proc/self/fd: %s", strerrorname_np(errno));
        while ((de = readdir(d))) {
                char target[256] = "";
                int fd = atoi(de->d_name);
                bool own = fd == dirfd(d);

                for (size_t i = 0; i < ELEMENTSOF(b->own_fds); i++)
                        own = own || fd == b->own_fds[i];
                if (de->d_name[0] == '.' || fd <= 2 || own)
                        continue;
                (void) readlinkat(dirfd(d), de->d_name, target, sizeof target - 1);
                append(extra, sizeof extra, "%d→%s ", fd, target);
        }
        closedir(d);
        if (*extra)
                opened(r, "inherited: %s", extra);
        else
                blocked(r, "only 0-2 (and the battery's own)");
}

/* cloister-shim(8), ENVIRONMENT, and what cloister-shim keeps from systemd (helpers/shim/shim-env.c). */
static bool allowed_variable(const char *assignment) {
        static const char *const prefixes[] = {
                "CLOISTER_", "OPENAI_BASE_URL=", "OPENAI_API_BASE=", "OPENAI_API_KEY=",
                "PATH=", "LANG=", "LANGUAGE=", "LC_", "TZ=", "HOME=", "USER=", "LOGNAME=", "SHELL=",
                "INVOCATION_ID=", "JOURNAL_STREAM=", "STATE_DIRECTORY=",
        };
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (startswith(assignment, prefixes[i]))
                        return true;
        return false;
}

PROBE(environment) {
        char extra[300] = "";
        unsigned n = 0;

        for (char **e = environ; e && *e; e++, n++)
                if (!allowed_variable(*e))
                        append(extra, sizeof extra, "%.*s ", (int) strcspn(*e, "="), *e);
        if (*extra)
                opened(r, "unexpected: %s", extra);
        else
                blocked(r, "%u variables, all expected", n);
}

PROBE(credentials) {
        const char *dir = getenv("CREDENTIALS_DIRECTORY");
        DIR *d = opendir("/run/credentials");
        struct dirent *de;
        char found[200] = "";

        if (dir)
                append(found, sizeof found, "$CREDENTIALS_DIRECTORY=%s ", dir);
        while (d && (de = readdir(d)))
                if (de->d_name[0] != '.')
                        append(found, sizeof found, "/run/credentials/%s ", de->d_name);
        if (d)
                closedir(d);
        if (*found)
                opened(r, "%s", found);
        else
                blocked(r, "none");
}

PROBE(proc_pids) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        unsigned mine = 0, foreign = 0;
        char example[64] = "";

        if (!d)
                return failed(r, "/proc: %s", strerrorname_np(errno));
        while ((de = readdir(d))) {
                struct stat st;
                if (de->d_name[0] < '1' || de->d_name[0] > '9' || fstatat(dirfd(d), de->d_name, &st, 0) < 0)
                        continue;
                if (st.st_uid == getuid())
                        mine++;
                else if (foreign++ == 0)
                        snprintf(example, sizeof example, "/proc/%.16s (uid %u)", de->d_name, (unsigned) st.st_uid);
        }
        closedir(d);
        if (foreign)
                opened(r, "%u processes of other users visible, e.g. %s", foreign, example);
        else
                blocked(r, "%u own processes, no others", mine);
}

PROBE(proc_subset) {
        static const char *const p[] = { "/proc/kallsyms", "/proc/sys/kernel", "/proc/cmdline", "/proc/sysvipc" };
        char seen[200] = "";

        for (size_t i = 0; i < ELEMENTSOF(p); i++)
                if (access(p[i], F_OK) == 0)
                        append(seen, sizeof seen, "%s ", p[i]);
        if (*seen)
                opened(r, "visible: %s", seen);
        else
                blocked(r, "no system-wide /proc entries");
}

PROBE(sys_net) {
        struct stat st;

        if (stat("/sys/class/net/lo", &st) == 0)
                opened(r, "/sys/class/net/lo visible");
        else
                blocked(r, "/sys/class/net/lo: %s", strerrorname_np(errno));
}

static void mount_read_only(Result *r, const char *path) {
        struct statvfs sv;

        if (statvfs(path, &sv) < 0)
                return failed(r, "%s: %s", path, strerrorname_np(errno));
        if (sv.f_flag & ST_RDONLY)
                blocked(r, "%s is a read-only mount", path);
        else
                opened(r, "%s is a writable mount", path);
}

PROBE(sys_ro) { mount_read_only(r, "/sys"); }

static void cgroup_mount(const char *target, const char *fstype, bool rw, void *userdata) {
        char *writable = userdata;
        if (rw && startswith(target, "/sys/fs/cgroup"))
                append(writable, 200, "%s ", target);
}

PROBE(cgroup_ro) {
        char writable[200] = "";
        int k = for_each_mount(cgroup_mount, writable);

        if (k < 0)
                failed(r, "mountinfo: %s", strerrorname_np(-k));
        else if (*writable)
                opened(r, "writable: %s", writable);
        else
                blocked(r, "every mount under /sys/fs/cgroup is read-only");
}

/* What PrivateDevices= leaves in /dev (systemd's mount_private_dev()). */
static bool pseudo_device(const char *name) {
        static const char *const ok[] = { "null", "zero", "full", "random", "urandom", "tty", "ptmx" };
        for (size_t i = 0; i < ELEMENTSOF(ok); i++)
                if (streq(name, ok[i]))
                        return true;
        return false;
}

static char device_nodes[300];

static int visit_dev(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        if (type == FTW_D && streq(path, "/dev/pts"))
                return FTW_SKIP_SUBTREE;
        if ((S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) && !(ftw->level == 1 && pseudo_device(path + ftw->base)))
                append(device_nodes, sizeof device_nodes, "%s ", path);
        return FTW_CONTINUE;
}

/* Every device node under /dev but the pseudo devices at its top (the terminals under
 * /dev/pts are the sandbox's own). */
PROBE(devices) {
        if (nftw("/dev", visit_dev, 16, FTW_PHYS | FTW_ACTIONRETVAL) < 0)
                return failed(r, "nftw /dev: %s", strerrorname_np(errno));
        if (*device_nodes)
                opened(r, "device nodes: %s", device_nodes);
        else
                blocked(r, "only the pseudo devices");
}

PROBE(home) {
        _cleanup_fclose_ FILE *f = fopen(b->home_marker, "re");

        if (f)
                opened(r, "%s readable", b->home_marker);
        else
                blocked(r, "%s: %s", b->home_marker, strerrorname_np(errno));
}
