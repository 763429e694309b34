/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A run's transient unit: StartTransientUnit with the profile rendered by
 * lib/profile/profile-bus.c, its /tmp a slot it claims (run-slot.h). Shared by cloisterctl run
 * and cloister-pool, whose executors are runs of their role. */
#include <systemd/sd-bus.h>

#include "log.h"
#include "profile-bus.h"
#include "profile.h"
#include "run-slot.h"
#include "run-transient.h"
#include "systemd-version.h"

int run_get_string(sd_bus *bus, const char *path, const char *iface, const char *prop, char **ret) {
        return sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, iface, prop, NULL, ret);
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

        /* Not part of the profile: how its caller follows the run. */
        if (u->control_fd >= 0) {
                r = sd_bus_message_append(m, "(sv)", "StandardInputFileDescriptor", "h", u->control_fd);
                if (r < 0)
                        return r;
        } else if (u->pipe) {
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
            run_get_string(bus, path, "org.freedesktop.systemd1.Unit", "ActiveState", &state) < 0)
                return false;
        return streq(state, "inactive") || streq(state, "failed");
}

static bool unit_ended(const char *unit, void *userdata) {
        return unit_over(userdata, unit, true);
}

bool run_unit_unknown(sd_bus *bus, const char *unit) {
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
                define_tmp[i] = !u->role->run_tmp_slot || !name || run_unit_unknown(bus, name);
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


/* The run is rendered for the manager that will run it: a property it does not know fails the
 * whole StartTransientUnit() (lib/profile/systemd-version.c). */
void run_use_manager_version(sd_bus *bus) {
        _cleanup_free_ char *version = NULL;
        unsigned v;

        if (run_get_string(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "Version", &version) >= 0 &&
            systemd_version_parse(version, &v) >= 0)
                systemd_version_set(v);
}

int run_transient_start(sd_bus *bus, RunUnit *u, char **ret_job) {
        int r;

        claim_tmp_slot(bus, u);
        r = start_transient(bus, u, ret_job);
        /* no unit, so nobody else releases it; but a call that failed only on its way back may
         * have made one, and its claim is then its own */
        if (r < 0 && u->role->run_tmp_slot && run_unit_unknown(bus, u->name))
                run_slot_release(CLOISTER_TMP_CLAIM_DIR, u->role->run_tmp_slot, u->name);
        return r;
}
