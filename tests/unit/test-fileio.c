/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/basic/fileio.c: take_fdopen() owns the fd it is given, on success and on failure. */

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "fileio.h"
#include "tap.h"

static void test_success(void) {
        int fds[2];
        FILE *f;
        char buf[8] = {};

        if (pipe2(fds, O_CLOEXEC) < 0) {
                tap_bail_out("pipe2() failed");
                return;
        }
        f = take_fdopen(&fds[1], "w");
        ok(f, "take_fdopen() of a pipe's write end gives a FILE");
        is_int(fds[1], -EBADF, "the fd now belongs to the FILE");
        fputs("ok", f);
        is_int(fclose(f), 0, "the FILE closes");
        is_int((int) read(fds[0], buf, sizeof(buf) - 1), 2, "what was written arrives");
        is_str(buf, "ok", "and is what was written");
        close(fds[0]);
}

static void test_failure_closes(void) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), copy = fd;
        FILE *f;

        ok(fd >= 0, "/dev/null opens");
        errno = 0;
        f = take_fdopen(&fd, "q");              /* an invalid mode: fdopen() fails with EINVAL */
        ok(!f, "take_fdopen() with an invalid mode fails");
        is_int(errno, EINVAL, "errno says why");
        is_int(fd, -EBADF, "the caller's fd is reset");
        ok(fcntl(copy, F_GETFD) < 0 && errno == EBADF, "and the fd itself is closed (no leak)");

        fd = -EBADF;
        ok(!take_fdopen(&fd, "r"), "take_fdopen() of no fd fails");
        is_int(fd, -EBADF, "and leaves it as no fd");
}

int main(void) {
        test_success();
        test_failure_closes();
        return tap_done();
}
