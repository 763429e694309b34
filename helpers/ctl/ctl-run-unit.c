/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cloisterctl run, the systemd side: the transient unit (helpers/run/run-transient.c), then
 * (with --wait) the unit's end, as systemd-run --wait does. */
#include <signal.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "ctl-run-unit.h"
#include "ctl.h"
#include "log.h"
#include "parse-util.h"
#include "run-transient.h"

typedef struct RunState {
        const char *job;        /* the start job's object path */
        char *job_result;       /* set by JobRemoved */
        bool changed;           /* a PropertiesChanged since the last look */
} RunState;

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig) {
        stop_requested = sig;
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        RunState *s = userdata;
        const char *path, *unit, *result;
        uint32_t id;

        if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
                return 0;
        if (s->job && streq(path, s->job) && !s->job_result)
                s->job_result = strdup(result);
        return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        RunState *s = userdata;
        s->changed = true;
        return 0;
}

static int get_int(sd_bus *bus, const char *path, const char *prop, int32_t *ret) {
        return sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Service",
                                           prop, NULL, 'i', ret);
}

/* Once inactive or failed: the command's exit status, as systemd-run --wait reports it. */
static int unit_exit_status(sd_bus *bus, const RunUnit *u, const char *path) {
        _cleanup_free_ char *result = NULL;
        int32_t code = 0, status = 0;
        int r;

        r = run_get_string(bus, path, "org.freedesktop.systemd1.Service", "Result", &result);
        if (r >= 0)
                r = get_int(bus, path, "ExecMainCode", &code);
        if (r >= 0)
                r = get_int(bus, path, "ExecMainStatus", &status);
        if (r < 0) {
                log_error_errno(r, "Cannot read the result of %s: %m", u->name);
                return CTL_EXIT_FAILURE;
        }
        if (!streq(result, "success") && !u->quiet)
                log_notice("%s finished: result %s, %s %d.", u->name, result,
                           code == CLD_EXITED ? "status" : "signal", status);
        if (code == CLD_EXITED)
                return status;
        if (code == CLD_KILLED || code == CLD_DUMPED)
                return 128 + status;
        log_error("%s did not run its command (result %s); see \"journalctl -u %s\".", u->name, result, u->name);
        return CTL_EXIT_FAILURE;
}

static int stop_unit(sd_bus *bus, const RunUnit *u) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                   "org.freedesktop.systemd1.Manager", "StopUnit", &error, NULL, "ss", u->name, "replace");
        if (r < 0)
                log_warning("Cannot stop %s: %s", u->name, error.message ?: strerror(-r));
        return r;
}

/* Processes bus traffic until `done` holds; a stop signal stops the unit once. Bounded waits
 * close the race between the signal flag and poll(). */
static int wait_until(sd_bus *bus, const RunUnit *u, RunState *s, bool (*done)(sd_bus *, const RunUnit *, RunState *, int *),
                      int *ret) {
        bool stopping = false;
        int r;

        for (;;) {
                do
                        r = sd_bus_process(bus, NULL);
                while (r > 0);
                if (r < 0)
                        return log_error_errno(r, "Lost the system bus: %m");
                if (done(bus, u, s, ret))
                        return 0;
                if (stop_requested && !stopping && u->wait) {
                        stopping = true;
                        if (!u->quiet)
                                log_notice("Stopping %s (SIGTERM to the command, SIGKILL after StopGrace=).", u->name);
                        (void) stop_unit(bus, u);
                }
                r = sd_bus_wait(bus, 500 * USEC_PER_MSEC);
                if (r < 0 && r != -EINTR)
                        return log_error_errno(r, "Lost the system bus: %m");
        }
}

static bool job_done(sd_bus *bus, const RunUnit *u, RunState *s, int *ret) {
        return s->job_result != NULL;
}

static bool unit_done(sd_bus *bus, const RunUnit *u, RunState *s, int *ret) {
        _cleanup_free_ char *path = NULL, *state = NULL;

        if (!s->changed)
                return false;
        s->changed = false;
        if (sd_bus_path_encode("/org/freedesktop/systemd1/unit", u->name, &path) < 0 ||
            run_get_string(bus, path, "org.freedesktop.systemd1.Unit", "ActiveState", &state) < 0)
                return false;
        if (!streq(state, "inactive") && !streq(state, "failed"))
                return false;
        *ret = unit_exit_status(bus, u, path);
        return true;
}

/* JobRemoved for the start job, PropertiesChanged of the unit with --wait. */
static int subscribe(sd_bus *bus, const RunUnit *u, RunState *s) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", u->name, &path);
        if (r < 0)
                return r;
        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                "org.freedesktop.systemd1.Manager", "JobRemoved", on_job_removed, s);
        if (r < 0)
                return r;
        if (u->wait) {
                r = sd_bus_match_signal(bus, NULL, "org.freedesktop.systemd1", path,
                                        "org.freedesktop.DBus.Properties", "PropertiesChanged", on_properties_changed, s);
                if (r < 0)
                        return r;
        }
        /* PID 1 sends its signals only while someone is subscribed */
        return sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                  "org.freedesktop.systemd1.Manager", "Subscribe", NULL, NULL, NULL);
}

int run_unit_start(RunUnit *u) {
        _cleanup_free_ char *job = NULL;
        struct sigaction sa = { .sa_handler = on_stop_signal }; /* no SA_RESTART: poll() returns */
        sd_bus *bus = NULL;
        RunState s = {};
        int r, exit_status = CTL_EXIT_FAILURE;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                log_error_errno(r, "Cannot connect to the system bus: %m");
                return CTL_EXIT_FAILURE;
        }
        r = subscribe(bus, u, &s);
        if (r < 0) {
                log_error_errno(r, "Cannot subscribe to systemd's signals: %m");
                goto finish;
        }
        if (u->wait) { /* without --wait, Ctrl-C just leaves the run running */
                sigaction(SIGINT, &sa, NULL);
                sigaction(SIGTERM, &sa, NULL);
        }

        run_use_manager_version(bus);
        r = run_transient_start(bus, u, &job);
        if (r < 0)
                goto finish;
        s.job = job;
        r = wait_until(bus, u, &s, job_done, &exit_status);
        if (r < 0)
                goto finish;
        s.changed = true; /* look once: the unit may have finished before any signal */
        if (!streq(s.job_result, "done")) {
                log_error("Job for %s failed (%s); see \"journalctl -u %s\".", u->name, s.job_result, u->name);
                exit_status = CTL_EXIT_FAILURE;
                if (u->wait) /* it may still have run (and failed): report its status */
                        (void) wait_until(bus, u, &s, unit_done, &exit_status);
                goto finish;
        }
        if (!u->wait) {
                if (!u->quiet)
                        fprintf(stderr, "Running as unit: %s\n", u->name);
                exit_status = CTL_EXIT_OK;
                goto finish;
        }
        r = wait_until(bus, u, &s, unit_done, &exit_status);
        if (r < 0)
                exit_status = CTL_EXIT_FAILURE;
finish:
        free(s.job_result);
        sd_bus_flush_close_unref(bus);
        return exit_status;
}
