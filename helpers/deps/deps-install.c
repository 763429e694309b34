/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "deps-install.h"
#include "log.h"

#define LOCKFILE_MAX (64U * 1024U * 1024U)

static int rm_rf_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

static int rm_rf(const char *path) {
        if (nftw(path, rm_rf_one, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT)
                return log_error_errno(errno, "Failed to remove %s: %m", path);
        return 0;
}

static int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return log_oom();
        for (char *s = p + 1; ; s++) {
                if (*s != '/' && *s)
                        continue;
                char c = *s;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return log_error_errno(errno, "Failed to create %s: %m", p);
                if (!c)
                        return 0;
                *s = c;
        }
}

static int lock_set(const char *cache_dir, const char *eco, const char *sha, bool wait) {
        _cleanup_free_ char *path = strprintf("%s/.lock-%s-%s", cache_dir, eco, sha);
        _cleanup_close_ int fd = -1;

        if (!path)
                return log_oom();
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return log_error_errno(errno, "Failed to open %s: %m", path);
        if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0)
                return wait ? log_error_errno(errno, "Failed to lock %s: %m", path) : -errno;
        return TAKE_FD(fd);
}

/* ".tmp-<eco>-<sha>-XXXXXX": the eco and sha parts, or false. */
static bool parse_tmp_name(const char *name, char eco[static 8], char sha[static 65]) {
        const char *p = startswith(name, ".tmp-"), *dash;

        if (!p || !(dash = strchr(p, '-')) || dash - p >= 8)
                return false;
        memcpy(eco, p, (size_t) (dash - p));
        eco[dash - p] = 0;
        if (deps_ecosystem_from_string(eco) < 0 || strlen(dash + 1) != 64 + 7 || dash[65] != '-')
                return false;
        memcpy(sha, dash + 1, 64);
        sha[64] = 0;
        return true;
}

void deps_clean_stale(const char *cache_dir) {
        DIR *d = opendir(cache_dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                char eco[8], sha[65];
                _cleanup_free_ char *path = NULL;
                _cleanup_close_ int lock = -1;

                if (!parse_tmp_name(de->d_name, eco, sha))
                        continue;
                lock = lock_set(cache_dir, eco, sha, false);
                if (lock < 0)
                        continue;       /* an install in progress */
                path = strprintf("%s/%s", cache_dir, de->d_name);
                if (path) {
                        log_info("Removing %s, left by an interrupted install.", path);
                        (void) rm_rf(path);
                }
        }
        closedir(d);
}

/* Reads the lockfile once, refusing one that resolves outside the workspace: the set is
 * hashed, checked and installed from these bytes, whatever happens to the file meanwhile. */
static int read_lockfile(const char *workspace, const char *path, char **ret, size_t *ret_size) {
        _cleanup_free_ char *ws = realpath(workspace, NULL), *real = NULL, *buf = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st;
        size_t n = 0;
        const char *rest;

        if (!ws)
                return log_error_errno(errno, "Workspace %s: %m", workspace);
        real = realpath(path, NULL);
        if (!real)
                return log_error_errno(errno, "%s: %m", path);
        rest = startswith(real, ws);
        if (!rest || *rest != '/')
                return log_error_errno(EPERM, "%s resolves to %s, outside the workspace %s; refusing it.", path, real, ws);
        fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return log_error_errno(errno, "Failed to open %s: %m", real);
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat %s: %m", real);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(EINVAL, "%s is not a regular file; refusing it.", path);
        if ((uint64_t) st.st_size > LOCKFILE_MAX)
                return log_error_errno(EFBIG, "%s is larger than %u bytes; refusing it.", path, LOCKFILE_MAX);
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return log_oom();
        while (n < (size_t) st.st_size) {
                ssize_t k = read(fd, buf + n, (size_t) st.st_size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return log_error_errno(errno, "Failed to read %s: %m", path);
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

static int write_file(const char *path, const char *data, size_t size, mode_t mode) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        size_t n = 0;

        if (fd < 0)
                return log_error_errno(errno, "Failed to create %s: %m", path);
        while (n < size) {
                ssize_t k = write(fd, data + n, size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return log_error_errno(errno, "Failed to write %s: %m", path);
                n += (size_t) k;
        }
        return 0;
}

static int run(char * const *argv, const char *cwd) {
        pid_t pid;
        int status;

        {
                _cleanup_free_ char *line = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&line, &len);
                for (size_t i = 0; f && argv[i]; i++)
                        fprintf(f, "%s%s", i ? " " : "", argv[i]);
                if (f && fclose(f) == 0)
                        log_info("Running %s", line);
        }
        pid = fork();
        if (pid < 0)
                return log_error_errno(errno, "Failed to fork: %m");
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || (cwd && chdir(cwd) < 0))
                        _exit(127);
                execvp(argv[0], argv);
                log_error_errno(errno, "Failed to execute %s: %m", argv[0]);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return log_error_errno(errno, "waitpid: %m");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return log_error_errno(EPROTO, "%s %s failed (%s %d).", argv[0], argv[1],
                                       WIFEXITED(status) ? "exit status" : "signal",
                                       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 0;
}

static int install_pip(const InstallOptions *o, const char *tmp, const char *lock_copy) {
        /* --only-binary: a wheel runs no code when installed; an sdist would run its build
         * with this unit's egress. The index is pip's own configuration (pip.conf, PIP_*). */
        char *argv[] = { (char *) o->python, (char *) "-m", (char *) "pip", (char *) "install",
                         (char *) "--require-hashes", (char *) "--no-deps", (char *) "--only-binary=:all:",
                         (char *) "--no-cache-dir", (char *) "--disable-pip-version-check", (char *) "--no-input",
                         (char *) "--no-warn-script-location",
                         (char *) "--target", (char *) tmp, (char *) "-r", (char *) lock_copy, NULL };
        return run(argv, NULL);
}

static int install_npm(const InstallOptions *o, const Project *p, const char *tmp) {
        _cleanup_free_ char *lock = project_lockfile_path(p, DEPS_NPM), *manifest = NULL, *data = NULL,
                *dst = strprintf("%s/package.json", tmp), *cache = strprintf("%s/.npm-cache", tmp);
        char *slash;
        size_t size;
        int r;

        if (!lock || !dst || !cache)
                return log_oom();
        slash = strrchr(lock, '/');
        manifest = strprintf("%.*s/package.json", (int) (slash - lock), lock);
        if (!manifest)
                return log_oom();
        r = read_lockfile(p->workspace, manifest, &data, &size);
        if (r < 0)
                return r;
        r = write_file(dst, data, size, 0644);
        if (r < 0)
                return r;

        /* integrity of every tarball is enforced by npm ci from the lockfile;
         * --ignore-scripts: no install script runs with this unit's egress */
        char *argv[] = { (char *) o->npm, (char *) "ci", (char *) "--ignore-scripts", (char *) "--no-audit",
                         (char *) "--no-fund", (char *) "--no-update-notifier", (char *) "--cache",
                         (char *) cache, NULL };
        r = run(argv, tmp);
        if (r < 0)
                return r;
        return rm_rf(cache);
}

static int update_link(const InstallOptions *o, const Project *p, DepsEcosystem e, const char *final) {
        _cleanup_free_ char *link = deps_project_link(o->cache_dir, p->name, e), *dir = NULL, *tmp = NULL,
                *target = NULL;
        const char *base = strrchr(final, '/') + 1;

        if (!link || !(dir = strndup(link, (size_t) (strrchr(link, '/') - link))) ||
            !(tmp = strprintf("%s/.%s.new", dir, deps_ecosystem_to_string(e))) ||
            !(target = strprintf("../../%s", base)))
                return log_oom();
        if (mkdir_p(dir, 0755) < 0)
                return -EIO;
        (void) unlink(tmp);
        if (symlink(target, tmp) < 0)
                return log_error_errno(errno, "Failed to create %s: %m", tmp);
        if (rename(tmp, link) < 0)
                return log_error_errno(errno, "Failed to rename %s to %s: %m", tmp, link);
        return 0;
}

/* Installs the set into the fresh directory `tmp`, the completeness marker last, syncs it and
 * renames it to `final`: a set at its final path is whole, even after a crash. */
static int install_into(const InstallOptions *o, const Project *p, DepsEcosystem e, const char *data, size_t size,
                        const char *sha, int lock, const char *tmp, const char *final) {
        _cleanup_free_ char *copy = NULL, *marker = NULL;
        int r;

        if (chmod(tmp, 0755) < 0)
                return log_error_errno(errno, "Failed to chmod %s: %m", tmp);
        copy = strprintf("%s/%s", tmp, e == DEPS_NPM ? "package-lock.json" : ".cloister-lockfile");
        marker = strprintf("%s/" DEPS_COMPLETE_MARKER, tmp);
        if (!copy || !marker)
                return log_oom();
        r = write_file(copy, data, size, 0644);
        if (r < 0)
                return r;
        r = e == DEPS_PIP ? install_pip(o, tmp, copy) : install_npm(o, p, tmp);
        if (r < 0)
                return r;
        if (e == DEPS_PIP && unlink(copy) < 0)
                return log_error_errno(errno, "Failed to remove %s: %m", copy);
        r = write_file(marker, sha, strlen(sha), 0644);
        if (r < 0)
                return r;
        if (syncfs(lock) < 0)
                return log_error_errno(errno, "Failed to sync %s: %m", o->cache_dir);
        if (rename(tmp, final) < 0)
                return log_error_errno(errno, "Failed to rename %s to %s: %m", tmp, final);
        return 0;
}

int deps_install_set(const InstallOptions *o, const Project *p, DepsEcosystem e) {
        const char *eco = deps_ecosystem_to_string(e);
        _cleanup_free_ char *path = project_lockfile_path(p, e), *data = NULL, *final = NULL, *tmp = NULL,
                *pattern = NULL;
        _cleanup_close_ int lock = -1;
        char sha[65];
        size_t size;
        int r;

        if (!path)
                return log_oom();
        r = read_lockfile(p->workspace, path, &data, &size);
        if (r < 0)
                return r;
        r = deps_check_lockfile_data(e, path, data, size);
        if (r < 0)
                return r;
        if (deps_data_sha256(data, size, sha) < 0)
                return log_error_errno(EIO, "Failed to hash %s.", path);
        final = strprintf("%s/%s-%s", o->cache_dir, eco, sha);
        if (!final)
                return log_oom();
        if (o->check_only) {
                log_info("%s: %s set %s.", path, eco, deps_materialised(final) ? "materialised at" : "not yet materialised; it goes to");
                printf("%s %s %s\n", eco, final, deps_materialised(final) ? "materialised" : "missing");
                return 0;
        }
        r = mkdir_p(o->cache_dir, 0755);
        if (r < 0)
                return r;
        lock = lock_set(o->cache_dir, eco, sha, true);
        if (lock < 0)
                return lock;

        if (deps_materialised(final))
                log_info("%s: %s set already materialised at %s.", path, eco, final);
        else {
                if (access(final, F_OK) >= 0) {
                        log_warning("%s exists but is not a complete set; removing it.", final);
                        r = rm_rf(final);
                        if (r < 0)
                                return r;
                }
                pattern = strprintf("%s/.tmp-%s-%s-XXXXXX", o->cache_dir, eco, sha);
                if (!pattern)
                        return log_oom();
                tmp = mkdtemp(pattern) ? strdup(pattern) : NULL;
                if (!tmp)
                        return errno == ENOMEM ? log_oom() : log_error_errno(errno, "Failed to create %s: %m", pattern);
                r = install_into(o, p, e, data, size, sha, lock, tmp, final);
                if (r < 0) {
                        (void) rm_rf(tmp);
                        return r;
                }
                log_info("%s: %s set materialised at %s.", path, eco, final);
        }
        r = update_link(o, p, e, final);
        if (r < 0)
                return r;
        printf("%s %s materialised\n", eco, final);
        return 0;
}
