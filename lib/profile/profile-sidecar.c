/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cmdline.h"
#include "log.h"
#include "profile-sidecar.h"

/* The locked profile's rows that each sidecar unit replaces with its own. */
static const char *const replaced_keys[] = {
        "Description", "Documentation", "StartLimitIntervalSec", "ExecStart", "Restart", "KillMode", NULL,
};

/* The runtime (cloister.sidecar(5)): the agent's locked profile, but it listens on its own loopback and,
 * being warm and long-lived, is restarted when it fails. */
static const ProfileRow runtime_rows[] = {
        { "Unit", "Documentation", "man:cloister.sidecar(5)" },
        /* A runtime that cannot start (a missing model or GPU, a crash at load) gives up
         * after five tries a minute instead of retrying every RestartSec= for ever. */
        { "Unit", "StartLimitIntervalSec", "60s" },
        { "Unit", "StartLimitBurst", "5" },
        { "Service", "Restart", "on-failure" },
        { "Service", "RestartSec", "2s" },
        { "Service", "KillMode", "control-group" },
        /* its own network namespace holds only lo: 127.0.0.1 is the runtime's alone */
        { "Service", "RestrictAddressFamilies", "AF_INET AF_INET6" },
        { "Service", "IPAddressAllow", "localhost" },
};

/* The proxy: the same profile, in the runtime's network namespace; it listens on nothing
 * itself (systemd hands it the socket) and stays up when idle, so the runtime stays warm. */
static const ProfileRow proxy_rows[] = {
        { "Unit", "Documentation", "man:cloister-sidecar(8) man:cloister.sidecar(5)" },
        { "Service", "Restart", "on-failure" },
        { "Service", "KillMode", "control-group" },
        { "Service", "RestrictAddressFamilies", "AF_INET AF_INET6" },
        { "Service", "IPAddressAllow", "localhost" },
        { "Service", "TasksMax", "16" },
        { "Service", "MemoryMax", "256M" },
};

static const ProfileRow socket_rows[] = {
        { "Unit", "Documentation", "man:cloister.sidecar(5)" },
        { "Socket", "SocketMode", "0666" },
        { "Socket", "DirectoryMode", "0555" },
        { "Socket", "RemoveOnStop", "yes" },
        { "Install", "WantedBy", "sockets.target" },
};

static int add_description(UnitSettings *s, const Sidecar *sc, const char *what) {
        _cleanup_free_ char *desc = unit_specifier_escape(sc->description ?: "");

        if (!desc)
                return -ENOMEM;
        return sc->description ? unit_settings_addf(s, "Unit", "Description", "cloister sidecar %s %s: %s", what, sc->name, desc) :
                                 unit_settings_addf(s, "Unit", "Description", "cloister sidecar %s %s", what, sc->name);
}

static int add_exec_start(UnitSettings *s, const Sidecar *sc) {
        _cleanup_free_ char *line = NULL;
        size_t len;
        FILE *f = open_memstream(&line, &len);

        if (!f)
                return -ENOMEM;
        STRV_FOREACH(a, sc->argv) {
                _cleanup_free_ char *q = unit_exec_quote(*a);
                if (!q) {
                        fclose(f);
                        return -ENOMEM;
                }
                fprintf(f, "%s%s", a == sc->argv ? "" : " ", q);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        return unit_settings_add(s, "Service", "ExecStart", line);
}

/* A missing model directory must fail the start, naming it. The bind tolerates a missing
 * source ("-"), and a check in the sandbox then finds nothing mounted at the target (a
 * required bind would stop namespace setup naming only the target). */
static int add_mounts(UnitSettings *s, const Sidecar *sc) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < sc->n_read_only_mounts; i++) {
                const ReadOnlyMount *m = &sc->read_only_mounts[i];

                r = unit_settings_add(s, "Unit", "RequiresMountsFor", m->source);
                if (r >= 0)
                        r = unit_settings_addf(s, "Service", "BindReadOnlyPaths", "-%s:%s", m->source, m->target);
                if (r >= 0)
                        r = profile_add_start_check(s, "(while read -r _ _ _ _ mp _; do [ \"$mp\" = \"$2\" ] && exit 0; done </proc/self/mountinfo; exit 1)",
                                                    "ReadOnlyMount= source $1 is missing, so nothing is mounted at $2",
                                                    m->source, m->target);
        }
        return r;
}

static int add_environment(UnitSettings *s, const Sidecar *sc) {
        int r = 0;

        STRV_FOREACH(e, sc->environment) {
                _cleanup_free_ char *q = unit_env_quote(*e);
                r = q ? unit_settings_add(s, "Service", "Environment", q) : -ENOMEM;
                if (r < 0)
                        break;
        }
        return r;
}

static int finish(UnitSettings *s, int r, UnitSettings *ret) {
        if (r < 0) {
                unit_settings_done(s);
                return r;
        }
        *ret = *s;
        return 0;
}

int profile_sidecar_runtime(const Sidecar *sc, UnitSettings *ret) {
        UnitSettings s = {};
        int r = add_description(&s, sc, "runtime");

        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "SourcePath", sc->path);
        if (r >= 0)
                r = profile_add_static(&s, replaced_keys);
        if (r >= 0)
                r = profile_add_rows(&s, runtime_rows, ELEMENTSOF(runtime_rows));
        if (r >= 0)
                r = add_exec_start(&s, sc);
        if (r >= 0)
                r = add_environment(&s, sc);
        if (r >= 0)
                r = profile_add_limits(&s, &sc->limits);
        if (r >= 0)
                r = profile_add_shm(&s, sc->limits.shm_size);
        if (r >= 0)
                r = add_mounts(&s, sc);
        if (r >= 0)
                r = profile_add_identity(&s, sc->user, sc->jit);
        if (r >= 0 && sc->gpus)
                r = profile_add_gpus(&s, sc->gpus, sc->path);
        return finish(&s, r, ret);
}

int profile_sidecar_proxy(const Sidecar *sc, UnitSettings *ret) {
        _cleanup_free_ char *runtime = strprintf("sidecar-runtime@%s.service", sc->name),
                *timeout = format_timespan(sc->start_timeout), *health = NULL;
        UnitSettings s = {};
        int r;

        if (!runtime || !timeout)
                return -ENOMEM;
        if (sc->health && !(health = strprintf(" --health=%s", sc->health)))
                return -ENOMEM;
        r = add_description(&s, sc, "proxy");
        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "SourcePath", sc->path);
        /* systemd starts the runtime; the proxy only waits until it answers */
        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "Wants", runtime);
        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "After", runtime);
        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "JoinsNamespaceOf", runtime);
        if (r >= 0)
                r = profile_add_static(&s, replaced_keys);
        if (r >= 0)
                r = profile_add_rows(&s, proxy_rows, ELEMENTSOF(proxy_rows));
        if (r >= 0)
                r = unit_settings_addf(&s, "Service", "ExecStart",
                                       "%s/cloister-sidecar --port=%u%s --start-timeout=%s --max-connections=%llu %s",
                                       PKGLIBEXECDIR, sc->port, health ?: "", timeout,
                                       (unsigned long long) sc->max_connections, sc->name);
        /* per connection: two sockets and two pipes */
        if (r >= 0)
                r = unit_settings_addf(&s, "Service", "LimitNOFILE", "%llu",
                                       (unsigned long long) sc->max_connections * 6 + 64);
        return finish(&s, r, ret);
}

int profile_sidecar_socket(const Sidecar *sc, UnitSettings *ret) {
        UnitSettings s = {};
        int r = add_description(&s, sc, "socket");

        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "SourcePath", sc->path);
        if (r >= 0)
                r = profile_add_rows(&s, socket_rows, ELEMENTSOF(socket_rows));
        if (r >= 0)
                r = unit_settings_addf(&s, "Socket", "ListenStream", SIDECAR_SERVICES_DIR "/%s/service.sock", sc->name);
        if (r >= 0)
                r = unit_settings_addf(&s, "Socket", "Service", "sidecar@%s.service", sc->name);
        return finish(&s, r, ret);
}

const SidecarUnit profile_sidecar_units[_SIDECAR_UNIT_MAX] = {
        [SIDECAR_UNIT_SOCKET]  = { "sidecar@",         ".socket",  profile_sidecar_socket },
        [SIDECAR_UNIT_PROXY]   = { "sidecar@",         ".service", profile_sidecar_proxy },
        [SIDECAR_UNIT_RUNTIME] = { "sidecar-runtime@", ".service", profile_sidecar_runtime },
};

char *profile_sidecar_unit_name(SidecarUnitKind k, const char *name) {
        return strprintf("%s%s%s", profile_sidecar_units[k].prefix, name, profile_sidecar_units[k].suffix);
}
