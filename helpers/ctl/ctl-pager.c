/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl-pager.h"
#include "parse-util.h"
#include "macro.h"

static pid_t pager_pid;

/* -1: not a boolean. SYSTEMD_COLORS also takes a colour depth, which means "on". */
static int parse_boolean_env(const char *v) {
        static const char *const depths[] = { "16", "256", "24bit" };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(depths); i++)
                if (strcasecmp(v, depths[i]) == 0)
                        return 1;
        r = parse_boolean(v);
        return r < 0 ? -1 : r;
}

bool ctl_colors_enabled(void) {
        const char *v = getenv("SYSTEMD_COLORS"), *term = getenv("TERM");
        int b = v ? parse_boolean_env(v) : -1;

        if (b >= 0)
                return b;
        if (!isempty(getenv("NO_COLOR")))
                return false;
        if (term && streq(term, "dumb"))
                return false;
        return isatty(STDOUT_FILENO);
}

static const char *pager_command(void) {
        const char *p = getenv("SYSTEMD_PAGER");

        if (!p)
                p = getenv("PAGER");
        return p;
}

static _noreturn_ void pager_exec(int read_fd, const char *cmd) {
        const char *less = getenv("SYSTEMD_LESS");

        if (dup2(read_fd, STDIN_FILENO) < 0)
                _exit(EXIT_FAILURE);
        close(read_fd);
        if (setenv("LESS", less ?: "FRSXMK", 1) < 0)
                _exit(EXIT_FAILURE);
        if (cmd) {
                /* A command line with arguments ("less -S") goes through the shell, as git does. */
                if (strpbrk(cmd, " \t|&;<>()$`\\\"'*?[#~=%"))
                        execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
                else
                        execlp(cmd, cmd, (char *) NULL);
        }
        execlp("less", "less", (char *) NULL);
        execlp("more", "more", (char *) NULL);
        /* No pager at all: copy through, so the output is not lost. */
        execlp("cat", "cat", (char *) NULL);
        _exit(EXIT_FAILURE);
}

int ctl_pager_open(void) {
        const char *cmd = pager_command();
        int fd[2];

        if (pager_pid > 0)
                return 1;
        if (!isatty(STDOUT_FILENO))
                return 0;
        if (cmd && (isempty(cmd) || streq(cmd, "cat")))
                return 0;
        if (pipe2(fd, O_CLOEXEC) < 0)
                return -errno;
        fflush(stdout);
        pager_pid = fork();
        if (pager_pid < 0) {
                int r = -errno;
                close(fd[0]);
                close(fd[1]);
                pager_pid = 0;
                return r;
        }
        if (pager_pid == 0) {
                close(fd[1]);
                pager_exec(fd[0], cmd);
        }
        if (dup2(fd[1], STDOUT_FILENO) < 0) {
                int r = -errno;
                close(fd[0]);
                close(fd[1]);
                return r;
        }
        close(fd[0]);
        close(fd[1]);
        return 1;
}

void ctl_pager_close(void) {
        if (pager_pid <= 0)
                return;
        fflush(stdout);
        fclose(stdout);
        /* ^C belongs to the pager (less clears the screen on it); we only wait. */
        signal(SIGINT, SIG_IGN);
        while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        pager_pid = 0;
}
