/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cloisterctl run, the systemd side: StartTransientUnit with the profile rendered by
 * lib/profile/profile-bus.c, then (with --wait) the unit's end, as systemd-run --wait does. */
#include <signal.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "ctl-run-slot.h"
#include "ctl-run-unit.h"
#include "ctl.h"
#include "log.h"
#include "parse-util.h"
#include "profile-bus.h"
#include "profile.h"
#include "systemd-version.h"

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

/* The role's private /tmp and /var/tmp, mounted by PID 1 for this run only (lib/profile). */
static int append_tmp_mount(sd_bus_message *m, const Role *role, const char *which) {
        _cleanup_free_ char *name = NULL;
        _cleanup_(unit_settings_done) UnitSettings s = {};
        int r;

        r = profile_tmp_mount(role, which, &name, &s);
        if (r < 0)
                return log_oom();
        r = sd_bus_message_open_container(m, 'r', "sa(sv)");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", name);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;
        r = profile_bus_append(m, &s, role->run_instance);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* The locked profile: the template's static rows, then the role's, as in agent@ROLE. */
static int append_profile(sd_bus_message *m, const RunUnit *u) {
        _cleanup_(unit_settings_done) UnitSettings st = {}, rs = {};
        int r;

        if (profile_static(&st) < 0 || profile_role(u->role, u->conf, &rs) < 0)
                return log_oom();
        r = profile_bus_append(m, &st, u->role->run_instance);
        if (r < 0)
                return r;
        r = profile_bus_append(m, &rs, u->role->run_instance);
        if (r < 0)
                return r;

        /* Not part of the profile: how this client follows the run. */
        if (u->pipe) {
                r = sd_bus_message_append(m, "(sv)(sv)(sv)",
                                          "StandardInputFileDescriptor", "h", STDIN_FILENO,
                                          "StandardOutputFileDescriptor", "h", STDOUT_FILENO,
                                          "StandardErrorFileDescriptor", "h", STDERR_FILENO);
                if (r < 0)
                        return r;
        }
        if (u->wait) /* the unit stays until we have read its result */
                return sd_bus_message_append(m, "(sv)(sv)", "AddRef", "b", 1,
                                             "CollectMode", "s", "inactive-or-failed");
        return 0;
}

/* The properties, then the auxiliary units (StartTransientUnit's "a(sv)" and "a(sa(sv))"):
 * the run's own /tmp mounts, or a slot's that no run has defined yet. */
static int append_start_transient(sd_bus_message *m, const RunUnit *u, const bool define_tmp[2]) {
        int r;

        r = sd_bus_message_append(m, "ss", u->name, "fail");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;
        r = append_profile(m, u);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "(sa(sv))");
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(profile_tmp_dirs); i++) {
                r = define_tmp[i] ? append_tmp_mount(m, u->role, profile_tmp_dirs[i]) : 0;
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(m);
}

static int get_string(sd_bus *bus, const char *path, const char *iface, const char *prop, char **ret) {
        return sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, iface, prop, NULL, ret);
}

/* Whether systemd no longer knows the unit; with `or_ended`, also whether it has ended
 * (inactive or failed: its processes are gone, its ExecStopPost= has run). */
static bool unit_over(sd_bus *bus, const char *unit, bool or_ended) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *state = NULL;
        const char *path;
        int r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                   "org.freedesktop.systemd1.Manager", "GetUnit", &error, &reply, "s", unit);

        if (r < 0)
                return sd_bus_error_has_name(&error, "org.freedesktop.systemd1.NoSuchUnit");
        if (!or_ended || sd_bus_message_read(reply, "o", &path) < 0 ||
            get_string(bus, path, "org.freedesktop.systemd1.Unit", "ActiveState", &state) < 0)
                return false;
        return streq(state, "inactive") || streq(state, "failed");
}

static bool unit_ended(const char *unit, void *userdata) {
        return unit_over(userdata, unit, true);
}

static bool unit_unknown(sd_bus *bus, const char *unit) {
        return unit_over(bus, unit, false);
}

/* A free slot, if there is one: a run that finds none, or cannot use slots here, mounts its
 * own /tmp (the same cap, never anything less closed). */
static void claim_tmp_slot(sd_bus *bus, RunUnit *u) {
        int r = run_slot_claim(CLOISTER_TMP_CLAIM_DIR, u->role->name, u->name, unit_ended, bus, &u->role->run_tmp_slot);

        if (r == -EBUSY && !u->quiet)
                log_notice("All %u /tmp slots of role %s are in use; this run mounts its own.", RUN_TMP_SLOTS_MAX, u->role->name);
        else if (r < 0)
                log_warning_errno(r, "Cannot claim a /tmp slot in " CLOISTER_TMP_CLAIM_DIR " (%m); this run mounts its own.");
}

/* The first run of a slot defines its mount units; later ones find them (RequiresMountsFor=). */
static void tmp_to_define(sd_bus *bus, const RunUnit *u, bool define_tmp[2]) {
        for (size_t i = 0; i < ELEMENTSOF(profile_tmp_dirs); i++) {
                _cleanup_free_ char *name = profile_tmp_mount_name(u->role, profile_tmp_dirs[i]);
                define_tmp[i] = !u->role->run_tmp_slot || !name || unit_unknown(bus, name);
        }
}

static int start_transient(sd_bus *bus, const RunUnit *u, char **ret_job) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const char *job;
        int r;

        bool define_tmp[2];

        tmp_to_define(bus, u, define_tmp);
        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r >= 0)
                r = append_start_transient(m, u, define_tmp);
        if (r < 0)
                return r == -EOPNOTSUPP || r == -EBADMSG ? r : log_error_errno(r, "Cannot build the StartTransientUnit call: %m");
        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0)
                return log_error_errno(r, "Failed to start %s: %s", u->name, error.message ?: strerror(-r));
        r = sd_bus_message_read(reply, "o", &job);
        if (r < 0)
                return log_error_errno(r, "Unexpected answer to StartTransientUnit: %m");
        *ret_job = strdup(job);
        return *ret_job ? 0 : log_oom();
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

        r = get_string(bus, path, "org.freedesktop.systemd1.Service", "Result", &result);
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
            get_string(bus, path, "org.freedesktop.systemd1.Unit", "ActiveState", &state) < 0)
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

/* The run is rendered for the manager that will run it: a property it does not know fails the
 * whole StartTransientUnit() (lib/profile/systemd-version.c). */
static void use_manager_version(sd_bus *bus) {
        _cleanup_free_ char *version = NULL;
        unsigned v;

        if (get_string(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "Version", &version) >= 0 &&
            systemd_version_parse(version, &v) >= 0)
                systemd_version_set(v);
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

        use_manager_version(bus);
        claim_tmp_slot(bus, u);
        r = start_transient(bus, u, &job);
        if (r < 0) {
                /* no unit, so nobody else releases it; but a call that failed only on its way
                 * back may have made one, and its claim is then its own */
                if (u->role->run_tmp_slot && unit_unknown(bus, u->name))
                        run_slot_release(CLOISTER_TMP_CLAIM_DIR, u->role->run_tmp_slot, u->name);
                goto finish;
        }
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
