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
#include "stage-kill.h"
#include "stage-tmp.h"
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
        fprintf(stderr, "Usage: %s start INSTANCE [--tmp=PATH:SIZE…] [--claim=PATH] [KEY:NAME:SOURCE…]\n"
                        "       %s stop INSTANCE [--tmp=PATH:SIZE…] [--claim=PATH]\n"
                        "Stages an agent's mount sources and empties its /tmp mounts, see cloister-stage(8).\n",
                program_invocation_short_name, program_invocation_short_name);
        return 2;
}

typedef struct StageArgs {
        const char *claim;      /* a run slot's claim, or NULL */
        StageTmp *tmp;
        size_t n_tmp;
        StageMount *mounts;
        size_t n_mounts;
} StageArgs;

static void stage_args_done(StageArgs *a) {
        free(a->tmp);
        free(a->mounts);
}

static int parse_args(int argc, char *argv[], bool stop, StageArgs *a) {
        const char *prefix = getenv("CLOISTER_TMP_PREFIX") ?: CLOISTER_TMP_PREFIX; /* tests only */

        a->tmp = calloc((size_t) argc, sizeof(StageTmp));
        a->mounts = calloc((size_t) argc, sizeof(StageMount));
        if (!a->tmp || !a->mounts)
                return log_oom();
        _cleanup_free_ char *claim_dir = strprintf("%stmp-slots", prefix);

        if (!claim_dir)
                return log_oom();
        for (int i = 3; i < argc; i++) {
                const char *v = startswith(argv[i], "--tmp="), *c = startswith(argv[i], "--claim=");
                int r;

                if (v)
                        r = stage_tmp_parse(argv[i] + strlen("--tmp="), prefix, &a->tmp[a->n_tmp++]);
                else if (c && !a->claim)
                        r = stage_claim_parse(a->claim = c, claim_dir);
                else
                        r = stop || c ? -EINVAL : stage_mount_parse(argv[i], &a->mounts[a->n_mounts++]);
                if (r < 0)
                        return log_error_errno(EINVAL, "Invalid argument \"%s\" (expected --tmp=%s…:SIZE, --claim=%s/NAME%s).",
                                               argv[i], prefix, claim_dir, stop ? "" : " or KEY:NAME:/SOURCE");
        }
        /* a claim covers the slot it names: its /tmp and /var/tmp, nothing else */
        for (size_t i = 0; a->claim && i < a->n_tmp; i++)
                if (!streq(strrchr(a->tmp[i].path, '/'), strrchr(a->claim, '/')))
                        return log_error_errno(EINVAL, "--tmp=%s is not the slot --claim=%s names.", a->tmp[i].path, a->claim);
        return 0;
}

/* Stop: unbind the mounts; kill what the agent left running (KillMode=mixed kills it only
 * after this step), empty /tmp (its memory is freed now, not at the next start), then let the
 * next run have the slot. A slot claimed by another unit is not touched; one that could not
 * be emptied, or whose processes could not all be killed, keeps its claim (taken over only
 * once this unit has ended: run-slot.h). */
static int stage_stop(const char *root, const char *instance, const StageArgs *a, bool kill_leftovers) {
        int r = stage_clear(root, instance), k;
        bool settled;

        if (a->claim && stage_claim_check(a->claim, instance) < 0)
                return -EPERM;
        settled = !kill_leftovers || stage_kill_leftovers(instance) >= 0;
        for (size_t i = 0; i < a->n_tmp; i++) {
                k = stage_tmp_prepare(&a->tmp[i], false);
                if (k < 0 && r >= 0)
                        r = k;
        }
        if (r < 0 || !settled)
                return r < 0 ? r : -EBUSY;
        return a->claim ? stage_claim_release(a->claim, instance) : 0;
}

/* Start: a run slot must be this run's; the agent gets empty /tmp mounts of its size, then
 * its mounts. */
static int stage_start(const char *root, const char *instance, const StageArgs *a) {
        if (a->claim && stage_claim_check(a->claim, instance) < 0)
                return -EPERM;
        for (size_t i = 0; i < a->n_tmp; i++) {
                int r = stage_tmp_prepare(&a->tmp[i], true);
                if (r < 0)
                        return r;
        }
        return stage_mounts(root, instance, a->mounts, a->n_mounts, DEPS_CACHE_DIR);
}

int main(int argc, char *argv[]) {
        const char *root = getenv("CLOISTER_STAGE_DIR") ?: STAGE_DIR; /* tests only */
        _cleanup_(stage_args_done) StageArgs a = {};
        bool stop;

        log_set_prefix(program_invocation_short_name);
        if (argc < 3 || !stage_instance_is_valid(argv[2]) || (!streq(argv[1], "start") && !streq(argv[1], "stop")))
                return usage();
        stop = streq(argv[1], "stop");
        if (parse_args(argc, argv, stop, &a) < 0)
                return 2;
        if (!getenv("CLOISTER_STAGE_DIR") && enter_host_mount_namespace() < 0)
                return CLOISTER_EXIT_REFUSED;
        if (stop) /* tests run it outside any unit: nothing to kill there */
                return stage_stop(root, argv[2], &a, !getenv("CLOISTER_STAGE_DIR")) < 0 ? 1 : 0;
        return stage_start(root, argv[2], &a) < 0 ? CLOISTER_EXIT_REFUSED : 0;
}
