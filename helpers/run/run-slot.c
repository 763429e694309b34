/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run-slot.h"
#include "log.h"
#include "macro.h"

/* The claim directory: root's, 0700, not a symlink; its parent made as tmpfiles.d would. */
static int open_claim_dir(const char *claim_dir) {
        _cleanup_free_ char *parent = strndup(claim_dir, (size_t) (strrchr(claim_dir, '/') - claim_dir));
        struct stat st;
        int fd;

        if (!parent)
                return -ENOMEM;
        if (*parent && mkdir(parent, 0755) < 0 && errno != EEXIST)
                return -errno;
        if (mkdir(claim_dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        fd = open(claim_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 0077)) {
                close(fd);
                return -EPERM;
        }
        return fd;
}

static int write_claim(int fd, const char *unit) {
        char line[512];
        int n = snprintf(line, sizeof line, "%s %d\n", unit, (int) getpid());

        if (n < 0 || (size_t) n >= sizeof line)
                return -EINVAL;
        return write(fd, line, (size_t) n) == n ? 0 : -EIO;
}

/* The claim's unit and process; false if it cannot be read as one. */
static bool read_claim(int dirfd, const char *name, char unit[static 256], pid_t *ret_pid) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        char buf[512];
        ssize_t n;
        int pid;

        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof buf - 1);
        if (n <= 0)
                return false;
        buf[n] = 0;
        if (sscanf(buf, "%255s %d", unit, &pid) != 2 || pid <= 0)
                return false;
        *ret_pid = (pid_t) pid;
        return true;
}

static bool claim_is_stale(int dirfd, const char *name, run_unit_gone_t gone, void *userdata) {
        char unit[256];
        pid_t pid;

        if (!read_claim(dirfd, name, unit, &pid))
                return false; /* not ours to judge: the slot stays taken */
        if (kill(pid, 0) >= 0 || errno != ESRCH)
                return false; /* its cloisterctl may be about to start it */
        return gone(unit, userdata);
}

/* The claim appears whole or not at all: written to a file of its own, then linked to its
 * name (a new slot: fails if another cloisterctl got there first) or renamed over a stale
 * claim. An empty or cut claim would hold its slot for good. */
static int take(int dirfd, const char *name, const char *unit, bool create) {
        char tmp[64];
        int fd, r;

        (void) snprintf(tmp, sizeof tmp, ".claim-%d", (int) getpid());
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        r = write_claim(fd, unit);
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && (create ? linkat(dirfd, tmp, dirfd, name, 0) : renameat(dirfd, tmp, dirfd, name)) < 0)
                r = -errno;
        (void) unlinkat(dirfd, tmp, 0);
        return r;
}

int run_slot_claim(const char *claim_dir, const char *role, const char *unit,
                   run_unit_gone_t gone, void *userdata, char **ret_slot) {
        _cleanup_close_ int dirfd = open_claim_dir(claim_dir);

        if (dirfd < 0)
                return dirfd;
        /* one cloisterctl at a time looks and claims; the lock goes with the descriptor */
        if (flock(dirfd, LOCK_EX) < 0)
                return -errno;
        for (unsigned n = 0; n < RUN_TMP_SLOTS_MAX; n++) {
                _cleanup_free_ char *name = strprintf("%s.slot-%u", role, n);
                int r;

                if (!name)
                        return -ENOMEM;
                r = take(dirfd, name, unit, true);
                if (r == -EEXIST && claim_is_stale(dirfd, name, gone, userdata))
                        r = take(dirfd, name, unit, false);
                if (r == -EEXIST)
                        continue;
                if (r < 0)
                        return r;
                *ret_slot = TAKE_PTR(name);
                return 0;
        }
        return -EBUSY;
}

void run_slot_release(const char *claim_dir, const char *slot, const char *unit) {
        _cleanup_close_ int dirfd = open_claim_dir(claim_dir);
        char claimed[256];
        pid_t pid;

        if (dirfd < 0 || flock(dirfd, LOCK_EX) < 0)
                return;
        if (read_claim(dirfd, slot, claimed, &pid) && streq(claimed, unit) && pid == getpid())
                (void) unlinkat(dirfd, slot, 0);
}
