/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "exit-status.h"
#include "log.h"
#include "signal-util.h"
#include "supervise.h"

/* systemd's RuntimeMaxSec= and the shim count Timeout= from nearly the same moment: a
 * SIGTERM this close to the deadline is the deadline. */
#define DEADLINE_SLACK_USEC (1 * USEC_PER_SEC)
/* sd-event's accuracy 0 means its default, 250 ms; StopGrace= deserves better. */
#define TIMER_ACCURACY_USEC (10 * USEC_PER_MSEC)

typedef struct Supervisor {
        const SuperviseOptions *opts;
        sd_event *event;
        pid_t agent;
        usec_t deadline;        /* CLOCK_MONOTONIC; 0: none */
        sd_event_source *kill_timer;
        bool timed_out;
        siginfo_t status;
} Supervisor;

static usec_t now_monotonic(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / 1000;
}

static int on_kill_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Supervisor *sv = userdata;

        log_warning("Agent (PID %d) still running after StopGrace=; sending SIGKILL.", (int) sv->agent);
        (void) kill(sv->agent, SIGKILL);
        return 0;
}

static int begin_stop(Supervisor *sv) {
        if (sv->kill_timer)
                return 0; /* already stopping */
        return sd_event_add_time_relative(sv->event, &sv->kill_timer, CLOCK_MONOTONIC,
                                          sv->opts->stop_grace, TIMER_ACCURACY_USEC, on_kill_timer, sv);
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Supervisor *sv = userdata;
        _cleanup_free_ char *t = format_timespan(sv->opts->timeout);

        log_error("Timeout=%s reached; sending SIGTERM to the agent (PID %d).", strempty(t), (int) sv->agent);
        sv->timed_out = true;
        (void) kill(sv->agent, SIGTERM);
        return begin_stop(sv);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Supervisor *sv = userdata;

        if (si->ssi_signo == SIGTERM && sv->deadline > 0 &&
            now_monotonic() + DEADLINE_SLACK_USEC >= sv->deadline && !sv->timed_out) {
                log_error("Timeout reached (SIGTERM from RuntimeMaxSec=); stopping the agent (PID %d).", (int) sv->agent);
                sv->timed_out = true;
        }
        (void) kill(sv->agent, (int) si->ssi_signo);
        return si->ssi_signo == SIGTERM ? begin_stop(sv) : 0;
}

static int on_child(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Supervisor *sv = userdata;

        sv->status = *si;
        return sd_event_exit(sv->event, 0);
}

static _noreturn_ void exec_agent(const SuperviseOptions *o) {
        sigset_t none;

        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        if (o->nofile.rlim_cur != RLIM_INFINITY)
                (void) setrlimit(RLIMIT_NOFILE, &o->nofile);
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        execve(o->argv[0], o->argv, o->envp);
        log_error_errno(errno, "Failed to execute %s: %m", o->argv[0]);
        _exit(errno == ENOENT ? CLOISTER_EXIT_NOT_FOUND : CLOISTER_EXIT_CANNOT_EXEC);
}

static int exit_status_of(const Supervisor *sv) {
        if (sv->timed_out)
                return CLOISTER_EXIT_TIMEOUT;
        if (sv->status.si_code == CLD_EXITED)
                return sv->status.si_status;
        return SUPERVISE_SIGNALED + sv->status.si_status; /* the caller re-raises it */
}

/* The agent's exit, the signals passed on to it, and its deadline. */
static int watch_agent(Supervisor *sv, sd_event_source **ret_child) {
        static const int passed_signals[] = { SIGHUP, SIGINT, SIGTERM };
        int r;

        r = sd_event_add_child(sv->event, ret_child, sv->agent, WEXITED, on_child, sv);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(passed_signals); i++) {
                r = sd_event_add_signal(sv->event, NULL, passed_signals[i], on_signal, sv);
                if (r < 0)
                        return r;
        }
        if (sv->opts->timeout == 0)
                return 0;
        sv->deadline = now_monotonic() + sv->opts->timeout;
        /* systemd's RuntimeMaxSec= normally fires first (and sets the unit's result to
         * "timeout"); this timer holds even if that was lifted. */
        return sd_event_add_time(sv->event, NULL, CLOCK_MONOTONIC, sv->deadline + DEADLINE_SLACK_USEC,
                                 TIMER_ACCURACY_USEC, on_deadline, sv);
}

int supervise(const SuperviseOptions *o) {
        Supervisor sv = { .opts = o };
        sd_event_source *child = NULL;
        int r;

        r = sigprocmask_many(SIG_BLOCK, NULL, SIGTERM, SIGINT, SIGHUP, SIGCHLD, -1);
        if (r < 0) {
                log_error_errno(r, "sigprocmask() failed: %m");
                return CLOISTER_EXIT_CANNOT_EXEC;
        }
        r = sd_event_default(&sv.event);
        if (r < 0) {
                log_error_errno(r, "Failed to allocate event loop: %m");
                return CLOISTER_EXIT_CANNOT_EXEC;
        }
        sv.agent = fork();
        if (sv.agent < 0) {
                log_error_errno(errno, "fork() failed: %m");
                return CLOISTER_EXIT_CANNOT_EXEC;
        }
        if (sv.agent == 0)
                exec_agent(o);

        r = watch_agent(&sv, &child);
        if (r < 0) {
                (void) kill(sv.agent, SIGKILL);
                log_error_errno(r, "Failed to set up supervision: %m");
                return CLOISTER_EXIT_CANNOT_EXEC;
        }
        r = sd_event_loop(sv.event);
        if (r < 0) {
                (void) kill(sv.agent, SIGKILL);
                log_error_errno(r, "Event loop failed: %m");
                return CLOISTER_EXIT_CANNOT_EXEC;
        }
        sd_event_source_unref(child);
        sd_event_source_unref(sv.kill_timer);
        sd_event_unref(sv.event);
        return exit_status_of(&sv);
}
