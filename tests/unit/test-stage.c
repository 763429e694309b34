/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/stage/stage.c: a mount source is opened without following any symlink on the
 * way, so a path an agent could have written never leads a bind elsewhere; a
 * dependency-set link is read once and must name an entry of the cache. (The binds
 * themselves need root: nspawn-sandbox proves them.) */
#include <fcntl.h>
#include <sys/stat.h>

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
        cleanup();
        return tap_done();
}
