/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cloisterctl run: the command line, and the role it gets (helpers/run/run-role.c). */
#include "conf-files.h"
#include "ctl-run-unit.h"
#include "ctl-run.h"
#include "log.h"
#include "parse-util.h"
#include "run-role.h"

void help_run(void) {
        printf("cloisterctl run [OPTIONS] -- CMD [ARGS…]\n\n"
               "Run CMD as a sealed transient unit agent-run@ROLE.ID.service with ROLE's locked profile.\n\n"
               "  --role=ROLE           the role whose profile the run gets (default: roles/default.role,\n"
               "                        else the built-in default: Network=none, cloister.conf's limits)\n"
               "  --input=DIR           read-only at /input: DIR below the role's Input= or a\n"
               "                        ReadOnlyMount= source\n"
               "  --output=DIR          writable at /output: DIR below the role's Output=\n"
               "  --timeout=SPAN        wall-clock ceiling, at most the role's Timeout= (exit 124)\n"
               "  --network=MODE        none, or daemon-only for a daemon-only role\n"
               "  --wait                wait for CMD and exit with its status\n"
               "  --pipe                connect CMD's stdin/stdout/stderr to ours (not a terminal)\n"
               "  -q --quiet            no notices\n\n"
               "See cloisterctl(1).\n");
}

/* The sandbox sees the host's /usr: a bare name is looked up in our $PATH, as systemd-run
 * does; the program must then be an absolute path (the sandbox's working directory is /). */
static int resolve_program(const char *name, char **ret) {
        const char *path = getenv("PATH") ?: "/usr/local/bin:/usr/bin:/bin";
        _cleanup_free_ char *copy = strdup(path);
        char *save = NULL;

        if (!copy)
                return log_oom();
        if (name[0] == '/') {
                *ret = strdup(name);
                return *ret ? 0 : log_oom();
        }
        if (strchr(name, '/'))
                return log_error_errno(EINVAL, "%s: give the program as an absolute path or a name in $PATH.", name);
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *p = d[0] == '/' ? strprintf("%s/%s", d, name) : NULL;
                if (p && access(p, X_OK) >= 0) {
                        *ret = TAKE_PTR(p);
                        return 0;
                }
        }
        return log_error_errno(ENOENT, "%s: command not found in $PATH.", name);
}

/* A terminal handed into the sandbox could be written to with TIOCSTI: refuse it. */
static int check_pipe_fds(void) {
        for (int fd = 0; fd <= 2; fd++)
                if (isatty(fd))
                        return log_error_errno(ENOTTY, "--pipe: %s is a terminal, which the sandbox could inject input into (TIOCSTI); redirect it (e.g. \"</dev/null\", \"| cat\").",
                                               fd == 0 ? "stdin" : fd == 1 ? "stdout" : "stderr");
        return 0;
}

static int prepare_role(const RunOptions *a, char **argv, CloisterConf *conf, char * const *dirs, Role **ret) {
        _cleanup_(role_freep) Role *role = NULL;
        _cleanup_free_ char *id = run_id_new(), *program = NULL;
        int r;

        if (!id)
                return log_oom();
        r = run_role_load(a->role, conf, dirs, &role);
        if (r < 0)
                return r;
        r = run_role_narrow(role, a, conf);
        if (r < 0)
                return r;
        r = resolve_program(argv[0], &program);
        if (r < 0)
                return r;
        strv_free(role->argv);
        role->argv = strv_copy(argv);
        if (!role->argv)
                return log_oom();
        free(role->argv[0]);
        role->argv[0] = TAKE_PTR(program);
        if (run_role_set_instance(role, id) < 0)
                return log_oom();
        *ret = TAKE_PTR(role);
        return 0;
}

int verb_run(char **args, const CtlOptions *o) {
        const RunOptions *a = &o->run;
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_(cloister_conf_freep) CloisterConf *conf = NULL;
        _cleanup_(role_freep) Role *role = NULL;
        _cleanup_free_ char *name = NULL;
        RunUnit u;

        if (!args[0]) {
                log_error("Expected a command: cloisterctl run [OPTIONS] -- CMD [ARGS…].");
                return CTL_EXIT_USAGE;
        }
        if (a->pipe && check_pipe_fds() < 0)
                return CTL_EXIT_USAGE;
        if (conf_dirs(&dirs) < 0)
                return log_oom(), CTL_EXIT_FAILURE;
        if (cloister_conf_load(dirs, &conf) < 0) {
                log_error("cloister.conf is refused (see above); nothing was started.");
                return CTL_EXIT_FAILURE;
        }
        if (prepare_role(a, args, conf, dirs, &role) < 0)
                return CTL_EXIT_FAILURE;
        name = strprintf("agent-run@%s.service", role->run_instance);
        if (!name)
                return log_oom(), CTL_EXIT_FAILURE;
        if (role->network == NETWORK_DAEMON_ONLY && !conf->broker_socket && !a->quiet)
                log_warning("Network=daemon-only but cloister.conf has no [Broker] Socket=: the run gets no broker socket and stays fully isolated.");
        u = (RunUnit) { .role = role, .conf = conf, .name = name, .wait = a->wait, .pipe = a->pipe, .quiet = a->quiet,
                       .control_fd = -1 };
        return run_unit_start(&u);
}
