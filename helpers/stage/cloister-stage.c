/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cloister-stage: the privileged ExecStartPre=+ step of agent units (cloister-stage(8)). It
 * opens each mount source without following any symlink and binds it under a root-owned
 * per-unit directory, from which the unit's BindPaths=/BindReadOnlyPaths= take it; the
 * matching ExecStopPost=+ step unmounts them. */
#include <fcntl.h>
#include <sched.h>

#include "deps.h"
#include "exit-status.h"
#include "log.h"
#include "stage.h"

/* systemd 252 still applies TemporaryFileSystem= and BindPaths= to a "+" command's mount
 * namespace (only the sandboxing options are dropped): /run is the read-only tmpfs there, and
 * a mount made in it would vanish with the command. Stage in PID 1's namespace instead, where
 * the main command's namespace is built from. */
static int enter_host_mount_namespace(void) {
        _cleanup_close_ int fd = open("/proc/1/ns/mnt", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return log_error_errno(errno, "Failed to open PID 1's mount namespace: %m");
        if (setns(fd, CLONE_NEWNS) < 0)
                return log_error_errno(errno, "Failed to enter PID 1's mount namespace: %m");
        if (chdir("/") < 0)
                return log_error_errno(errno, "Failed to change to /: %m");
        return 0;
}

static int usage(void) {
        fprintf(stderr, "Usage: %s start INSTANCE KEY:NAME:SOURCE…\n"
                        "       %s stop INSTANCE\n"
                        "Stages an agent's mount sources, see cloister-stage(8).\n",
                program_invocation_short_name, program_invocation_short_name);
        return 2;
}

int main(int argc, char *argv[]) {
        const char *root = getenv("CLOISTER_STAGE_DIR") ?: STAGE_DIR; /* tests only */
        _cleanup_free_ StageMount *m = NULL;
        int n = 0;

        log_set_prefix(program_invocation_short_name);
        if (argc < 3 || !stage_instance_is_valid(argv[2]))
                return usage();
        if (!getenv("CLOISTER_STAGE_DIR") && enter_host_mount_namespace() < 0)
                return CLOISTER_EXIT_REFUSED;
        if (streq(argv[1], "stop") && argc == 3)
                return stage_clear(root, argv[2]) < 0 ? 1 : 0;
        if (!streq(argv[1], "start"))
                return usage();
        m = calloc((size_t) argc, sizeof(StageMount));
        if (!m)
                return log_oom(), 1;
        for (int i = 3; i < argc; i++)
                if (stage_mount_parse(argv[i], &m[n++]) < 0) {
                        log_error("Invalid mount \"%s\" (expected KEY:NAME:/SOURCE).", argv[i]);
                        return 2;
                }
        return stage_mounts(root, argv[2], m, (size_t) n, DEPS_CACHE_DIR) < 0 ? CLOISTER_EXIT_REFUSED : 0;
}
