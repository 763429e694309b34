/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/stage/stage.c: a mount source is opened without following any symlink on the
 * way, so a path an agent could have written never leads a bind elsewhere; a
 * dependency-set link is read once and must name an entry of the cache. (The binds
 * themselves need root: nspawn-sandbox proves them.) A role's /tmp mount is emptied without
 * following symlinks or entering other file systems, however deep the tree left in it, and
 * only when it is a tmpfs mounted there alone. */
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "stage-tmp.h"
#include "stage.h"
#include "tap.h"

#define assert_se(x) do { if (!(x)) { printf("Bail out! %s:%d: %s\n", __FILE__, __LINE__, #x); exit(1); } } while (0)

static char dir[] = "/tmp/cloister-test-stage.XXXXXX";

static int try_open(const char *rel, const char **reason) {
        _cleanup_free_ char *p = rel[0] == '@' ? strprintf("@%s/%s", dir, rel + 1) : strprintf("%s/%s", dir, rel);
        _cleanup_free_ char *deps = strprintf("%s/deps", dir);
        int fd = -1, r = stage_open_source(p, deps, &fd, reason);

        if (fd >= 0)
                close(fd);
        return r;
}

static void cleanup(void) {
        _cleanup_free_ char *cmd = strprintf("rm -rf '%s'", dir);

        if (!cmd || system(cmd) != 0)
                diag("could not remove %s", dir);
}

static void mk(const char *rel) {
        _cleanup_free_ char *p = strprintf("%s/%s", dir, rel);
        assert_se(mkdir(p, 0755) == 0);
}

static void ln(const char *target, const char *rel) {
        _cleanup_free_ char *p = strprintf("%s/%s", dir, rel);
        assert_se(symlink(target, p) == 0);
}

static bool dir_empty(int fd) {
        int k = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        DIR *d = k >= 0 ? fdopendir(k) : NULL;
        struct dirent *de;
        bool empty = true;

        assert_se(d);
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        empty = false;
        closedir(d);
        return empty;
}

static void test_tmp_parse(void) {
        char good[] = "/run/cloister/tmp/role:67108864", var[] = "/run/cloister/var-tmp/r-1.0abc:1M",
                stage[] = "/run/cloister/stage/role:1M", up[] = "/run/cloister/tmp/../x:1M",
                deep[] = "/run/cloister/tmp/a/b:1M", zero[] = "/run/cloister/tmp/role:0", nosize[] = "/run/cloister/tmp/role";
        StageTmp t;

        ok(stage_tmp_parse(good, "/run/cloister/", &t) == 0 && streq(t.path, "/run/cloister/tmp/role") && t.size == 67108864,
           "--tmp=PATH:SIZE parses");
        ok(stage_tmp_parse(var, "/run/cloister/", &t) == 0 && t.size == 1048576, "a var-tmp mount of a run instance parses");
        ok(stage_tmp_parse(stage, "/run/cloister/", &t) < 0, "only tmp/ and var-tmp/ mounts are ever emptied (stage/ refused)");
        ok(stage_tmp_parse(up, "/run/cloister/", &t) < 0 && stage_tmp_parse(deep, "/run/cloister/", &t) < 0,
           "a NAME with '..' or '/' is refused");
        ok(stage_tmp_parse(zero, "/run/cloister/", &t) < 0 && stage_tmp_parse(nosize, "/run/cloister/", &t) < 0,
           "a size of 0 or none is refused");
}

/* What an agent can leave in its /tmp: files, fifos, symlinks to the host's files and
 * directories, directories it made unreadable, and a chain deeper than any path. */
static void test_tmp_empty(void) {
        _cleanup_free_ char *t = strprintf("%s/tmpmount", dir), *keep = strprintf("%s/outside/keep", dir),
                *outside = strprintf("%s/outside", dir);
        _cleanup_close_ int fd = -1;
        int cur;

        mk("tmpmount"); mk("outside");
        assert_se(close(open(keep, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) == 0);
        fd = open(t, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_se(fd >= 0);
        assert_se(symlinkat(outside, fd, "to-outside") == 0);
        assert_se(symlinkat(keep, fd, "to-keep") == 0);
        assert_se(mkfifoat(fd, "fifo", 0600) == 0);
        assert_se(close(openat(fd, ".hidden", O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == 0);
        assert_se(mkdirat(fd, "a", 0700) == 0 && mkdirat(fd, "a/b", 0700) == 0);
        assert_se(symlinkat(outside, fd, "a/b/link") == 0);
        if (geteuid() == 0) { /* root reads what the agent locked (cloister-stage runs as root) */
                assert_se(mkdirat(fd, "locked", 0700) == 0 && mkdirat(fd, "locked/inner", 0700) == 0);
                assert_se(fchmodat(fd, "locked", 0, 0) == 0);
        }
        cur = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (unsigned i = 0; i < 1500; i++) { /* 3000 bytes of path: a walk by paths would fail */
                int next;
                assert_se(mkdirat(cur, "dd", 0700) == 0);
                next = openat(cur, "dd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                assert_se(next >= 0);
                close(cur);
                cur = next;
        }
        assert_se(close(openat(cur, "bottom", O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == 0);
        close(cur);

        is_int(stage_tmp_empty_fd(fd), 0, "a /tmp with symlinks, a fifo, a locked directory and a 1500-deep chain is emptied");
        ok(dir_empty(fd), "...and nothing is left in it");
        ok(access(keep, F_OK) == 0 && access(outside, F_OK) == 0, "...and what its symlinks pointed to is untouched");
        ok(access(t, F_OK) == 0, "...and the directory itself stays");
}

/* Root only: a tmpfs in a private mount namespace of this test. */
static void test_tmp_prepare(void) {
        _cleanup_free_ char *t = strprintf("%s/t1", dir), *other = strprintf("%s/t2", dir), *f = NULL;
        StageTmp st = { .path = t, .size = 2 << 20 };
        struct statfs sfs;

        if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                tap_skip("a private mount namespace needs root (cloister-stage's tmpfs checks)");
                return;
        }
        mk("t1"); mk("t2");
        assert_se(mount("tmpfs", t, "tmpfs", MS_NOSUID | MS_NODEV, "size=1M,mode=1777") == 0);
        f = strprintf("%s/left", t);
        assert_se(close(open(f, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == 0);
        is_int(stage_tmp_prepare(&st, true), 0, "a tmpfs of its own is emptied");
        ok(access(f, F_OK) < 0, "...what the last run left is gone");
        ok(statfs(t, &sfs) == 0 && (uint64_t) sfs.f_blocks * sfs.f_bsize == 2 << 20,
           "...and it is resized to TmpSize= when that changed (1M -> 2M)");
        ok(statfs(t, &sfs) == 0 && (sfs.f_flags & ST_NOSUID) && (sfs.f_flags & ST_NODEV), "...keeping nosuid,nodev");
        {
                _cleanup_free_ char *sub = strprintf("%s/sub", t), *inner = strprintf("%s/sub/inner", t);
                assert_se(mkdir(sub, 0755) == 0 && mount("tmpfs", sub, "tmpfs", 0, "size=1M") == 0);
                assert_se(close(open(inner, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == 0);
                is_int(stage_tmp_prepare(&st, true), -EXDEV, "a file system mounted inside is not entered (the start is refused)");
                ok(access(inner, F_OK) == 0, "...its files are still there");
                assert_se(umount2(sub, MNT_DETACH) == 0 && rmdir(sub) == 0);
        }
        free(f);
        f = strprintf("%s/left", t);
        assert_se(mount(t, other, NULL, MS_BIND, NULL) == 0);
        assert_se(close(open(f, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == 0);
        is_int(stage_tmp_prepare(&st, true), -EPERM, "a tmpfs that is also mounted elsewhere is never emptied");
        ok(access(f, F_OK) == 0, "...its files are still there");
        assert_se(umount2(other, MNT_DETACH) == 0 && umount2(t, MNT_DETACH) == 0);
        assert_se(mount(dir, t, NULL, MS_BIND, NULL) == 0);
        is_int(stage_tmp_prepare(&st, true), -EPERM, "a bind of another directory is never emptied");
        free(f);
        f = strprintf("%s/outside/keep", t);
        ok(access(f, F_OK) == 0, "...the bound directory's files are still there");
        assert_se(umount2(t, MNT_DETACH) == 0);
}

static void put(const char *path, const char *text, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_se(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t) strlen(text));
        close(fd);
        assert_se(chmod(path, mode) == 0);
}

/* A run slot is used by the run that claimed it only; its claim is released by that run. */
static void test_claims(void) {
        _cleanup_free_ char *c = strprintf("%s/r.slot-0", dir);

        ok(stage_claim_parse("/run/cloister/tmp-slots/r.slot-0", "/run/cloister/tmp-slots") == 0, "--claim=PATH parses");
        ok(stage_claim_parse("/run/cloister/stage/r.slot-0", "/run/cloister/tmp-slots") < 0 &&
           stage_claim_parse("/run/cloister/tmp-slots/../x", "/run/cloister/tmp-slots") < 0,
           "a claim outside the claim directory is refused");
        put(c, "agent-run@r.1234.service 42\n", 0644);
        if (geteuid() != 0) {
                is_int(stage_claim_check(c, "r.1234"), -EPERM, "not root: a claim that is not root's is refused");
                tap_skip("claims are root's files (cloisterctl runs as root)");
                return;
        }
        is_int(stage_claim_check(c, "r.1234"), 0, "the run that claimed the slot may use it");
        is_int(stage_claim_check(c, "r.5678"), -EPERM, "another run may not (two runs never share a /tmp)");
        assert_se(stage_claim_release(c, "r.5678") == 0);
        ok(access(c, F_OK) == 0, "...nor release it");
        put(c, "agent-run@r.1234.service 42\n", 0666);
        is_int(stage_claim_check(c, "r.1234"), -EPERM, "a claim anyone could have written is refused");
        put(c, "agent-run@r.1234.service 42\n", 0644);
        assert_se(stage_claim_release(c, "r.1234") == 0);
        ok(access(c, F_OK) < 0, "its run releases it");
        is_int(stage_claim_check(c, "r.1234"), -EPERM, "a run whose claim is gone is refused");
}

int main(void) {
        const char *reason;
        StageMount m;
        char arg[] = "Input:input:/srv/in", bad1[] = "Input:in/put:/srv/in", bad2[] = "Input:input:relative";

        assert_se(mkdtemp(dir));
        mk("ws"); mk("ws/real"); mk("out"); mk("deps"); mk("deps/pip-abc"); mk("deps/by-project"); mk("deps/by-project/p");
        ln("/run", "ws/.git");
        ln("/etc", "out/data");
        ln("../../pip-abc", "deps/by-project/p/pip");
        ln("../../../../etc", "deps/by-project/p/npm");
        ln("/etc", "deps/by-project/p/abs");
        mk("deps/by-project/q-real");
        ln("q-real", "deps/by-project/q");
        ln("../../pip-abc", "deps/by-project/q-real/pip");
        test_tmp_parse();
        test_tmp_empty();
        test_claims();

        if (try_open("ws/real", &reason) == -ENOSYS) {
                /* valgrind 3.19 (Debian 12) does not know openat2(2); cloister-stage then
                 * refuses every start ("cannot be opened"), which is closed, not open */
                tap_skip("openat2(2) is not available here (valgrind before 3.20 does not know it)");
                is_str(reason, "cannot be opened", "without openat2(2) a source is refused, never followed");
                cleanup();
                return tap_done();
        }
        is_int(try_open("ws/real", &reason), 0, "a plain directory opens");
        is_int(try_open("ws/.git", &reason), -ELOOP, "a planted workspace .git -> /run is refused (ELOOP)");
        is_str(reason, "a path component is a symbolic link", "...and the reason says why");
        is_int(try_open("out/data/passwd", &reason), -ELOOP, "a symlink in a middle component is refused");
        is_int(try_open("ws/missing", &reason), -ENOENT, "a missing source is -ENOENT (skipped; the shim names the key)");
        is_int(try_open("@deps/by-project/p/pip", &reason), 0, "a dependency-set link to ../../<set> opens the set");
        is_int(try_open("@deps/by-project/p/npm", &reason), -EPERM, "a dependency-set link leading out of the cache is refused");
        is_int(try_open("@deps/by-project/p/abs", &reason), -EPERM, "a dependency-set link to an absolute path elsewhere is refused");
        is_int(try_open("@deps/by-project/q/pip", &reason), -ELOOP, "a symlink on the way to the link inside the cache is refused");
        is_int(try_open("@deps/pip-abc", &reason), -EINVAL, "a dependency-set 'link' that is a directory is refused");
        is_int(try_open("@ws/real", &reason), -EPERM, "a dependency-set link outside the cache is refused");

        ok(stage_mount_parse(arg, &m) == 0 && streq(m.key, "Input") && streq(m.name, "input") && streq(m.source, "/srv/in"),
           "KEY:NAME:SOURCE parses");
        ok(stage_mount_parse(bad1, &m) < 0, "a NAME with a slash is refused");
        ok(stage_mount_parse(bad2, &m) < 0, "a relative SOURCE is refused");
        ok(!stage_instance_is_valid("..") && !stage_instance_is_valid("a/b") && stage_instance_is_valid("role.0123abcd"),
           "instances: no '..', no '/'; run instances allowed");
        test_tmp_prepare();
        cleanup();
        return tap_done();
}
