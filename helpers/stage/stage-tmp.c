/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <libmount.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "parse-util.h"
#include "stage-tmp.h"
#include "stage.h"

/* A directory this deep is moved up to the top instead of entered: the walk then holds at
 * most this many descriptors, however deep the tree an agent left. */
#define EMPTY_MAX_DEPTH 32U

typedef struct Emptying {
        int root;
        dev_t dev;
        unsigned moved;         /* directories moved to the top, for their names */
} Emptying;

int stage_tmp_parse(char *arg, const char *prefix, StageTmp *ret) {
        char *colon = strrchr(arg, ':');
        const char *rest, *name;
        uint64_t size;

        if (!colon)
                return -EINVAL;
        *colon = 0;
        rest = startswith(arg, prefix);
        name = rest ? (startswith(rest, "tmp/") ?: startswith(rest, "var-tmp/")) : NULL;
        if (!name || !stage_instance_is_valid(name))
                return -EINVAL;
        if (parse_size(colon + 1, &size) < 0 || size == 0)
                return -EINVAL;
        *ret = (StageTmp) { .path = arg, .size = size };
        return 0;
}

static int empty_dir(Emptying *e, int dfd, unsigned depth);

static int move_to_top(Emptying *e, int dfd, const char *name) {
        for (;;) {
                char top[64];

                (void) snprintf(top, sizeof top, ".cloister-emptying-%u", e->moved++);
                if (renameat2(dfd, name, e->root, top, RENAME_NOREPLACE) >= 0)
                        return 1;
                if (errno != EEXIST)
                        return -errno;
        }
}

/* > 0: the entry was moved to the top, to be removed by a later pass */
static int remove_entry(Emptying *e, int dfd, const char *name, unsigned depth) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        if (st.st_dev != e->dev)
                return -EXDEV;
        if (depth >= EMPTY_MAX_DEPTH)
                return move_to_top(e, dfd, name);
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = empty_dir(e, fd, depth + 1);  /* everything below is removed or moved to the top */
        if (r < 0)
                return r;
        return unlinkat(dfd, name, AT_REMOVEDIR) < 0 ? -errno : r;
}

/* > 0: something was moved to the top */
static int empty_dir(Emptying *e, int dfd, unsigned depth) {
        _cleanup_(closedir_p) DIR *d = NULL;
        struct dirent *de;
        /* its own open file description: a dup would share (and start at) dfd's offset */
        int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), moved = 0;

        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                int k = -errno;
                close(fd);
                return k;
        }
        while ((errno = 0, de = readdir(d))) {
                int r;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                r = remove_entry(e, dfd, de->d_name, depth);
                if (r < 0)
                        return r;
                moved |= r > 0;
        }
        return errno > 0 ? -errno : moved;
}

static bool dir_is_empty(int fd) {
        _cleanup_(closedir_p) DIR *d = NULL;
        struct dirent *de;
        int k = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (k < 0)
                return false;
        d = fdopendir(k);
        if (!d) {
                close(k);
                return false;
        }
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        return false;
        return true;
}

int stage_tmp_empty_fd(int fd) {
        Emptying e = { .root = fd };
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        e.dev = st.st_dev;
        /* Each pass takes EMPTY_MAX_DEPTH levels off every deep chain and moves the rest to
         * the top, so the passes end; a directory that keeps refilling is not ours to chase. */
        for (unsigned pass = 0; pass < 1000000; pass++) {
                int r = empty_dir(&e, fd, 0);
                if (r < 0)
                        return r;
                if (r == 0 && dir_is_empty(fd))
                        return 0;
        }
        return -EBUSY;
}

static inline void mnt_unref_tablep(struct libmnt_table **t) {
        mnt_unref_table(*t);
}

static inline void mnt_free_iterp(struct libmnt_iter **i) {
        mnt_free_iter(*i);
}

/* The directory is a tmpfs that is mounted whole at `path` and nowhere else: not a bind of
 * /run, /dev/shm or any other file system a host relies on, which emptying would destroy. */
static int check_own_tmpfs(const char *path, int fd) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *tb = NULL;
        _cleanup_(mnt_free_iterp) struct libmnt_iter *it = NULL;
        struct libmnt_fs *fs;
        unsigned seen = 0, here = 0;
        struct statfs sfs;
        struct stat st;

        if (fstatfs(fd, &sfs) < 0 || fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to examine %s: %m", path);
        if (sfs.f_type != TMPFS_MAGIC)
                return log_error_errno(EPERM, "%s is not a tmpfs; refusing to empty it.", path);
        tb = mnt_new_table_from_file("/proc/self/mountinfo");
        it = mnt_new_iter(MNT_ITER_FORWARD);
        if (!tb || !it)
                return log_error_errno(errno > 0 ? errno : ENOMEM, "Failed to read /proc/self/mountinfo: %m");
        while (mnt_table_next_fs(tb, it, &fs) == 0) {
                if (mnt_fs_get_devno(fs) != st.st_dev)
                        continue;
                seen++;
                if (streq_ptr(mnt_fs_get_target(fs), path) && streq_ptr(mnt_fs_get_root(fs), "/"))
                        here++;
        }
        if (seen != 1 || here != 1)
                return log_error_errno(EPERM, "%s is not a tmpfs of its own (its file system is mounted %u time%s, "
                                       "%u of them whole at %s); refusing to empty it.",
                                       path, seen, seen == 1 ? "" : "s", here, path);
        return 0;
}

/* TmpSize= changed since the mount unit mounted it: systemd leaves an active mount as it is. */
static int resize(const StageTmp *t, int fd) {
        long page = sysconf(_SC_PAGESIZE);
        struct statfs sfs;
        unsigned long flags = MS_REMOUNT;
        char opts[64];

        if (fstatfs(fd, &sfs) < 0)
                return log_error_errno(errno, "Failed to examine %s: %m", t->path);
        if ((uint64_t) sfs.f_blocks * (uint64_t) sfs.f_bsize == (t->size + (uint64_t) page - 1) / (uint64_t) page * (uint64_t) page)
                return 0;
        /* MS_REMOUNT resets every per-mount flag not given (but the atime ones) */
        flags |= (sfs.f_flags & ST_NOSUID ? MS_NOSUID : 0) | (sfs.f_flags & ST_NODEV ? MS_NODEV : 0) |
                 (sfs.f_flags & ST_NOEXEC ? MS_NOEXEC : 0) | (sfs.f_flags & ST_RDONLY ? MS_RDONLY : 0) |
                 (sfs.f_flags & ST_SYNCHRONOUS ? MS_SYNCHRONOUS : 0) | (sfs.f_flags & ST_MANDLOCK ? MS_MANDLOCK : 0);
#ifdef ST_NOSYMFOLLOW
        flags |= sfs.f_flags & ST_NOSYMFOLLOW ? MS_NOSYMFOLLOW : 0;
#endif
        (void) snprintf(opts, sizeof opts, "size=%llu", (unsigned long long) t->size);
        if (mount(NULL, t->path, NULL, flags, opts) < 0)
                return log_error_errno(errno, "Failed to resize %s to TmpSize=%llu: %m", t->path,
                                       (unsigned long long) t->size);
        log_info("%s resized to TmpSize=%llu.", t->path, (unsigned long long) t->size);
        return 0;
}

int stage_tmp_prepare(const StageTmp *t, bool resize_it) {
        struct open_how how = {
                .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, AT_FDCWD, t->path, &how, sizeof how);
        int r;

        if (fd < 0)
                return log_error_errno(errno, "Failed to open %s: %m", t->path);
        r = check_own_tmpfs(t->path, fd);
        if (r < 0)
                return r;
        r = stage_tmp_empty_fd(fd);
        if (r < 0)
                return log_error_errno(r, "Failed to empty %s: %m; the agent is not started with what an "
                                       "earlier run left there.", t->path);
        /* the agent cannot change them (the root is root's), but nothing is assumed */
        if (fchown(fd, 0, 0) < 0 || fchmod(fd, 01777) < 0)
                return log_error_errno(errno, "Failed to reset the owner and mode of %s: %m", t->path);
        return resize_it ? resize(t, fd) : 0;
}

int stage_claim_parse(const char *arg, const char *claim_dir) {
        const char *name = startswith(arg, claim_dir);

        name = name ? startswith(name, "/") : NULL;
        return name && stage_instance_is_valid(name) && !strchr(name, '@') ? 0 : -EINVAL;
}

/* The unit a claim names, or NULL (logged, unless it is gone and `quiet_if_gone`). */
static char *claim_read(const char *path, bool quiet_if_gone) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        char buf[512];
        struct stat st;
        ssize_t n;

        if (fd < 0 && errno == ENOENT && quiet_if_gone)
                return NULL;
        if (fd < 0)
                return log_error_errno(errno, "Failed to open the run slot's claim %s: %m", path), NULL;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022))
                return log_error("%s is not a claim cloisterctl made (a root-owned file no one else can write).", path), NULL;
        n = read(fd, buf, sizeof buf - 1);
        if (n < 0)
                return log_error_errno(errno, "Failed to read %s: %m", path), NULL;
        buf[n] = 0;
        return strndup(buf, strcspn(buf, " \n"));
}

static bool claim_is(const char *unit, const char *instance) {
        _cleanup_free_ char *want = strprintf("agent-run@%s.service", instance);
        return unit && want && streq(unit, want);
}

int stage_claim_check(const char *path, const char *instance) {
        _cleanup_free_ char *unit = claim_read(path, false);

        if (!claim_is(unit, instance))
                return log_error_errno(EPERM, "The run slot %s is claimed by %s, not by agent-run@%s.service; "
                                       "refusing to share a /tmp between runs.", path, unit ?: "nobody", instance);
        return 0;
}

/* Under the claim directory's lock, which cloisterctl takes to claim: the claim read is the
 * one removed. */
int stage_claim_release(const char *path, const char *instance) {
        _cleanup_free_ char *dir = strndup(path, (size_t) (strrchr(path, '/') - path)), *unit = NULL;
        _cleanup_close_ int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;

        if (dfd < 0 || flock(dfd, LOCK_EX) < 0)
                return log_error_errno(dir ? errno : ENOMEM, "Failed to lock the claims in %s: %m", strempty(dir));
        unit = claim_read(path, true);
        if (!claim_is(unit, instance))
                return 0;
        if (unlinkat(dfd, strrchr(path, '/') + 1, 0) < 0 && errno != ENOENT)
                return log_error_errno(errno, "Failed to release the run slot %s: %m", path);
        return 0;
}
