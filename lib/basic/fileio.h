/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/* fdopen() that takes ownership of *fd: on success the FILE owns it and *fd is set to -EBADF;
 * on failure the fd is closed, *fd is set to -EBADF too, NULL is returned with errno set. */
FILE *take_fdopen(int *fd, const char *mode);
