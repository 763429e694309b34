/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "stage-kill.h"

/* Whether the cgroup is the unit of INSTANCE: run by hand, cloister-stage kills nothing. */
static bool is_unit_cgroup(const char *cg, const char *instance) {
        const char *base = strrchr(cg, '/');
        _cleanup_free_ char *agent = strprintf("agent@%s.service", instance), *run = strprintf("agent-run@%s.service", instance);

        return base && agent && run && (streq(base + 1, agent) || streq(base + 1, run));
}

/* The unit's cgroup.procs: the unified hierarchy's (cgroup v2, or v1 hybrid's "unified"),
 * else systemd's named v1 hierarchy. */
static char *procs_path(const char *instance) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
        char line[4096];

        if (!f)
                return NULL;
        while (fgets(line, sizeof line, f)) {
                const char *p = startswith(line, "0::") ?: startswith(line, "1:name=systemd:");
                const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd" };

                if (!p)
                        continue;
                line[strcspn(line, "\n")] = 0;
                if (!is_unit_cgroup(p, instance))
                        continue;
                for (size_t i = startswith(line, "0::") ? 0 : 2; i < ELEMENTSOF(roots); i++) {
                        char *path = strprintf("%s%s/cgroup.procs", roots[i], streq(p, "/") ? "" : p);
                        if (path && access(path, R_OK) == 0)
                                return path;
                        free(path);
                }
        }
        return NULL;
}

/* Kills every process listed but this one; how many there were, or -errno. */
static int kill_others(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        int pid, n = 0;

        if (!f)
                return -errno;
        while (fscanf(f, "%d", &pid) == 1)
                if (pid != getpid() && pid > 0) {
                        (void) kill(pid, SIGKILL);
                        n++;
                }
        return n;
}

int stage_kill_leftovers(const char *instance) {
        _cleanup_free_ char *path = procs_path(instance);
        struct timespec pause = { .tv_nsec = 10 * 1000 * 1000 };

        if (!path)
                return log_error_errno(ENOENT, "Not in the cgroup of agent@%s.service or agent-run@%s.service; nothing killed, "
                                       "so no run slot is handed on.", instance, instance);
        for (unsigned i = 0; i < 500; i++) { /* 5 s */
                int n = kill_others(path);
                if (n < 0)
                        return log_error_errno(n, "Failed to read %s: %m", path);
                if (n == 0)
                        return 0;
                if (i == 0)
                        log_notice("Killed %d process%s the agent left behind its main process.", n, n == 1 ? "" : "es");
                (void) nanosleep(&pause, NULL);
        }
        return log_error_errno(EBUSY, "Processes of this unit are still alive after SIGKILL; /tmp is not handed on.");
}
