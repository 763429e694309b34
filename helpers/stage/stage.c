/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "log.h"
#include "stage.h"

bool stage_instance_is_valid(const char *s) {
        if (!*s || strlen(s) > 255 || streq(s, ".") || streq(s, ".."))
                return false;
        for (const char *p = s; *p; p++)
                if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') ||
                      strchr("_.@-", *p)))
                        return false;
        return true;
}

int stage_mount_parse(char *arg, StageMount *ret) {
        char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        const char *src;

        if (!c1 || !c2)
                return -EINVAL;
        *c1 = *c2 = 0;
        src = c2 + 1;
        if (!*arg || !stage_instance_is_valid(c1 + 1) || strchr(c1 + 1, '@') ||
            (src[0] != '/' && !(src[0] == '@' && src[1] == '/')))
                return -EINVAL;
        *ret = (StageMount) { .key = arg, .name = c1 + 1, .source = src };
        return 0;
}

static int openat2_nofollow(const char *path, int *ret_fd) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);

        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

static int openat2_beneath(int dirfd, const char *path, int *ret_fd) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH,
        };
        int fd = (int) syscall(SYS_openat2, dirfd, path, &how, sizeof how);

        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

/* The dependency-set link "@LINK", LINK being <deps_dir>/by-project/<project>/<ecosystem>
 * (deps-install.c writes "../../<ecosystem>-<sha256>" there). deps_dir itself is taken as
 * systemd lays it out (CacheDirectory= under DynamicUser= makes it a symlink into
 * /var/cache/private, in root-owned directories); below it nothing is followed: the link's
 * directory is opened beneath it without symlinks, the link read there, and its target must
 * name an entry of deps_dir, opened the same way. */
static int open_deps_link(const char *link, const char *deps_dir, int *ret_fd, const char **ret_reason) {
        _cleanup_close_ int root = open(deps_dir, O_PATH | O_DIRECTORY | O_CLOEXEC), dfd = -1;
        _cleanup_free_ char *dir = NULL;
        size_t dl = strlen(deps_dir);
        const char *rel, *name;
        char target[PATH_MAX];
        ssize_t l;
        int r;

        if (root < 0)
                return errno == ENOENT ? -ENOENT : (*ret_reason = "the dependency cache cannot be opened", -errno);
        if (strncmp(link, deps_dir, dl) != 0 || link[dl] != '/')
                return *ret_reason = "is not in the dependency cache", -EPERM;
        rel = link + dl + 1;
        dir = strndup(rel, (size_t) (strrchr(rel, '/') ? strrchr(rel, '/') - rel : 0));
        if (!dir)
                return -ENOMEM;
        r = openat2_beneath(root, *dir ? dir : ".", &dfd);
        if (r == -ENOENT)
                return r;
        if (r < 0)
                return *ret_reason = r == -ELOOP ? "a path component is a symbolic link" : "cannot be opened", r;
        l = readlinkat(dfd, strrchr(link, '/') + 1, target, sizeof target - 1);
        if (l < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                *ret_reason = errno == EINVAL ? "is not a symbolic link" : "cannot be read";
                return -errno;
        }
        target[l] = 0;
        name = startswith(target, "../../");
        if (!name && strncmp(target, deps_dir, dl) == 0 && target[dl] == '/')
                name = target + dl + 1;
        if (!name || !*name || strchr(name, '/') || name[0] == '.')
                return *ret_reason = "points outside the dependency cache", -EPERM;
        r = openat2_beneath(root, name, ret_fd);
        if (r < 0 && r != -ENOENT)
                *ret_reason = r == -ELOOP ? "a path component is a symbolic link" : "cannot be opened";
        return r;
}

int stage_open_source(const char *source, const char *deps_dir, int *ret_fd, const char **ret_reason) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        *ret_reason = NULL;
        r = source[0] == '@' ? open_deps_link(source + 1, deps_dir, &fd, ret_reason) : openat2_nofollow(source, &fd);
        if (source[0] == '@' && r < 0)
                return r;
        if (r == -ENOENT)
                return r;
        if (r == -ELOOP)
                return *ret_reason = "a path component is a symbolic link", r;
        if (r == -EXDEV)
                return *ret_reason = "a path component is a magic link", r;
        if (r < 0)
                return *ret_reason = "cannot be opened", r;
        if (fstat(fd, &st) < 0)
                return *ret_reason = "cannot be examined", -errno;
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return *ret_reason = "is neither a directory nor a regular file", -EPERM;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* A root-owned 0700 directory, not followed if it is a symlink. */
static int ensure_dir(const char *path) {
        struct stat st;

        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Failed to create %s: %m", path);
        if (lstat(path, &st) < 0)
                return log_error_errno(errno, "Failed to examine %s: %m", path);
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
                return log_error_errno(EPERM, "%s is not a root-owned directory; refusing to stage mounts there.", path);
        if ((st.st_mode & 07777) != 0700 && chmod(path, 0700) < 0)
                return log_error_errno(errno, "Failed to set the mode of %s: %m", path);
        return 0;
}

int stage_clear(const char *root, const char *instance) {
        _cleanup_free_ char *dir = strprintf("%s/%s", root, instance);
        _cleanup_(closedir_p) DIR *d = NULL;
        struct dirent *de;
        int r = 0;

        if (!dir)
                return log_oom();
        d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : log_error_errno(errno, "Failed to open %s: %m", dir);
        while ((de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                p = strprintf("%s/%s", dir, de->d_name);
                if (!p)
                        return log_oom();
                /* a bind may be stacked (an interrupted start): unmount until nothing is left */
                while (umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW) >= 0)
                        ;
                if (errno != EINVAL && errno != ENOENT)
                        r = log_error_errno(errno, "Failed to unmount %s: %m", p);
                if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno == EISDIR)
                        (void) unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
        }
        if (rmdir(dir) < 0 && errno != ENOENT && r >= 0)
                r = log_error_errno(errno, "Failed to remove %s: %m", dir);
        return r;
}

static int stage_one(const char *dir, const StageMount *m, const char *deps_dir) {
        _cleanup_free_ char *target = strprintf("%s/%s", dir, m->name), *from = NULL;
        _cleanup_close_ int fd = -1;
        const char *reason;
        struct stat st;
        int r;

        if (!target)
                return log_oom();
        r = stage_open_source(m->source, deps_dir, &fd, &reason);
        if (r == -ENOENT) {
                log_info("%s= source %s does not exist; not staged.", m->key, m->source);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "%s= source %s: %s; refusing to bind it into the sandbox "
                                       "(an agent may have written a path on the way).", m->key, m->source, reason);
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to examine %s: %m", m->source);
        if (S_ISDIR(st.st_mode) ? mkdir(target, 0700) < 0 : mknod(target, S_IFREG | 0600, 0) < 0)
                return log_error_errno(errno, "Failed to create %s: %m", target);
        from = strprintf("/proc/self/fd/%d", fd);
        if (!from)
                return log_oom();
        if (mount(from, target, NULL, MS_BIND | MS_REC, NULL) < 0)
                return log_error_errno(errno, "Failed to bind %s= source %s at %s: %m", m->key, m->source, target);
        return 0;
}

static int stage_mounts_into(const char *root, const char *dir, const StageMount *m, size_t n,
                             const char *deps_dir) {
        /* /run/cloister, as tmpfiles.d would make it */
        _cleanup_free_ char *parent = strndup(root, (size_t) (strrchr(root, '/') - root));
        int r;

        if (!parent)
                return log_oom();
        if (*parent && mkdir(parent, 0755) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Failed to create %s: %m", parent);
        r = ensure_dir(root);
        if (r < 0)
                return r;
        r = ensure_dir(dir);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = stage_one(dir, &m[i], deps_dir);
                if (r < 0)
                        return r;
        }
        return 0;
}

int stage_mounts(const char *root, const char *instance, const StageMount *m, size_t n, const char *deps_dir) {
        _cleanup_free_ char *dir = strprintf("%s/%s", root, instance);
        int r;

        if (!dir)
                return log_oom();
        r = stage_clear(root, instance);
        if (r < 0)
                return r;
        r = stage_mounts_into(root, dir, m, n, deps_dir);
        if (r < 0)
                (void) stage_clear(root, instance);
        return r;
}
