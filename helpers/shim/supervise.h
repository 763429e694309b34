/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/resource.h>

#include "parse-util.h"

typedef struct SuperviseOptions {
        char **argv;            /* the agent; argv[0] absolute */
        char **envp;
        usec_t timeout;         /* 0: none */
        usec_t stop_grace;
        struct rlimit nofile;   /* the agent's RLIMIT_NOFILE (RLIM_INFINITY: leave as is) */
} SuperviseOptions;

/* Runs the agent as a child and waits for it: SIGTERM/SIGINT/SIGHUP are forwarded; after a
 * SIGTERM (systemctl stop) the agent is killed StopGrace= later; at Timeout= it gets
 * SIGTERM, then SIGKILL after StopGrace=. Returns the shim's exit status: the agent's, or
 * CLOISTER_EXIT_TIMEOUT. An agent killed by signal N gives SUPERVISE_SIGNALED + N, for the caller to re-raise. */
#define SUPERVISE_SIGNALED 256   /* returned as SUPERVISE_SIGNALED + signal number */
int supervise(const SuperviseOptions *o);
