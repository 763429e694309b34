/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>

#include "signal-util.h"

int sigprocmask_many(int how, sigset_t *ret_old, ...) {
        sigset_t mask;
        va_list ap;
        int r = 0;

        sigemptyset(&mask);
        va_start(ap, ret_old);
        for (int sig; (sig = va_arg(ap, int)) >= 0; )
                if (sigaddset(&mask, sig) < 0 && r == 0)
                        r = -errno;
        va_end(ap);
        if (r < 0)
                return r;
        return sigprocmask(how, &mask, ret_old) < 0 ? -errno : 0;
}
