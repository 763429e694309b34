/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The benchmark agent: its first action is to read CLOCK_MONOTONIC (shared by everything
 * in the container, sandboxes included), then it writes the value in nanoseconds to FILE,
 * or to stdout without one, and exits. Built static by bench/start-latency.sh, so that no
 * dynamic loader runs before main(). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        struct timespec ts;
        char buf[32];
        int fd = 1, n;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        n = snprintf(buf, sizeof buf, "%lld\n", (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec);
        if (argc > 1) {
                fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0) {
                        perror(argv[1]);
                        return 1;
                }
        }
        if (write(fd, buf, (size_t) n) != n) {
                perror("write");
                return 1;
        }
        return fd == 1 || close(fd) == 0 ? 0 : 1;
}
