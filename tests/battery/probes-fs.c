/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File system probes: what is writable, how big the private tmpfs mounts are, set-id bits. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "battery.h"
#include "macro.h"

PROBE(root_ro) {
        static const char *const paths[] = { "/", "/usr", "/etc", "/var" };
        char writable[100] = "";

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                struct statvfs sv;
                if (statvfs(paths[i], &sv) < 0)
                        return failed(r, "%s: %s", paths[i], strerrorname_np(errno));
                if (!(sv.f_flag & ST_RDONLY))
                        append(writable, sizeof writable, "%s ", paths[i]);
        }
        if (*writable)
                opened(r, "writable mounts: %s", writable);
        else
                blocked(r, "all read-only mounts");
}

/* A role without Output= has systemd's managed directory at /output (StateDirectory=), which
 * systemd also mounts under its own name: writable, but only as a second name for the very
 * directory at /output. */
static bool is_managed_output(const char *target) {
        struct stat t, o;

        if (strncmp(target, "/var/lib/private/cloister-output/", strlen("/var/lib/private/cloister-output/")) != 0 &&
            strncmp(target, "/var/lib/cloister-output/", strlen("/var/lib/cloister-output/")) != 0)
                return false;
        return stat(target, &t) == 0 && stat("/output", &o) == 0 && t.st_dev == o.st_dev && t.st_ino == o.st_ino;
}

/* Writable by design (docs/profile.md): the scoped mounts, and the kernel's API file systems, whose
 * writable parts the other probes cover (/proc: ProtectProc=, /dev: PrivateDevices=). */
static bool expected_writable(const char *target, const char *fstype) {
        static const char *const targets[] = { "/tmp", "/var/tmp", "/dev/shm", "/output", "/workspace" };
        static const char *const api[] = { "proc", "devpts", "mqueue" };

        for (size_t i = 0; i < ELEMENTSOF(targets); i++)
                if (streq(target, targets[i]))
                        return true;
        if (is_managed_output(target))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(api); i++)
                if (streq(fstype, api[i]))
                        return true;
        return false;
}

static void census(const char *target, const char *fstype, bool rw, void *userdata) {
        char *unexpected = userdata;
        if (rw && !expected_writable(target, fstype))
                append(unexpected, 300, "%s(%s) ", target, fstype);
}

PROBE(writable_mounts) {
        char unexpected[300] = "";
        int k = for_each_mount(census, unexpected);

        if (k < 0)
                failed(r, "mountinfo: %s", strerrorname_np(-k));
        else if (*unexpected)
                opened(r, "unexpected writable mounts: %s", unexpected);
        else
                blocked(r, "writable: only the expected set");
}

/* The directories are world-writable (the suite makes them so): a refused write can only be
 * the mount's doing. */
static void write_refused(Result *r, const char *dir) {
        char path[256];
        int fd;

        snprintf(path, sizeof path, "%s/.battery-write", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
                close(fd);
                unlink(path);
                opened(r, "%s created", path);
        } else if (errno == EROFS)
                blocked(r, "%s: EROFS", path);
        else
                failed(r, "%s: %s (not the mount: is the directory world-writable?)", path, strerrorname_np(errno));
}

PROBE(input_ro) { write_refused(r, "/input"); }
PROBE(git_ro) { write_refused(r, "/workspace/.git"); }

static void tmpfs_capped(Result *r, const char *path, uint64_t max) {
        struct statfs sf;
        uint64_t size;

        if (statfs(path, &sf) < 0)
                return failed(r, "%s: %s", path, strerrorname_np(errno));
        size = (uint64_t) sf.f_blocks * (uint64_t) sf.f_bsize;
        if (sf.f_type == TMPFS_MAGIC && size <= max)
                blocked(r, "%s: tmpfs of %llu bytes (cap %llu)", path, (unsigned long long) size, (unsigned long long) max);
        else
                opened(r, "%s: %s of %llu bytes (cap %llu)", path, sf.f_type == TMPFS_MAGIC ? "tmpfs" : "not a tmpfs",
                       (unsigned long long) size, (unsigned long long) max);
}

PROBE(tmp_cap) { tmpfs_capped(r, "/tmp", b->tmp_max); }
PROBE(var_tmp_cap) { tmpfs_capped(r, "/var/tmp", b->tmp_max); }
PROBE(shm_cap) { tmpfs_capped(r, "/dev/shm", b->shm_max); }

/* A refused call, or a mode without the bit, is blocked. */
static void setid_result(Result *r, int fd, const char *call, int err, mode_t bit) {
        struct stat st;

        if (fd < 0)
                return blocked(r, "%s: %s", call, strerrorname_np(err));
        if (fstat(fd, &st) < 0)
                return failed(r, "fstat: %s", strerrorname_np(errno));
        if (st.st_mode & bit)
                opened(r, "%s: mode %04o kept the bit", call, (unsigned) st.st_mode & 07777);
        else
                blocked(r, "%s: bit stripped (mode %04o)", call, (unsigned) st.st_mode & 07777);
}

PROBE(suid_chmod) {
        const char *path = "/tmp/.battery-suid";
        _cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
        int k, err;

        if (fd < 0)
                return failed(r, "%s: %s", path, strerrorname_np(errno));
        k = fchmod(fd, 04700);
        err = errno;
        setid_result(r, k < 0 ? -1 : fd, "fchmod(04700)", err, S_ISUID);
        unlink(path);
}

PROBE(sgid_create) {
        const char *path = "/tmp/.battery-sgid";
        _cleanup_close_ int fd = -1;
        int err;

        unlink(path);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 02700);
        err = errno;
        setid_result(r, fd, "open(O_CREAT, 02700)", err, S_ISGID);
        unlink(path);
}

PROBE(umask) {
        mode_t m = umask(0);

        if ((m & 0077) == 0077)
                blocked(r, "umask %04o", (unsigned) m);
        else
                opened(r, "umask %04o lets others read", (unsigned) m);
}
