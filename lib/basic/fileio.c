/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/basic/fileio.c: stdio on top of fds the caller owns. */

#include <errno.h>
#include <unistd.h>

#include "fileio.h"

FILE *take_fdopen(int *fd, const char *mode) {
        FILE *f;

        f = fdopen(*fd, mode);
        if (!f) {
                int saved = errno;

                if (*fd >= 0)
                        (void) close(*fd);
                *fd = -EBADF;
                errno = saved;
                return NULL;
        }
        *fd = -EBADF;
        return f;
}
