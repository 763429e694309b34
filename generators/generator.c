/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "closed-surface.h"
#include "cmdline.h"
#include "conf-files.h"
#include "exit-status.h"
#include "generator-output.h"
#include "generator-project.h"
#include "generator-sidecars.h"
#include "generator.h"
#include "log.h"
#include "profile.h"

#define TEMPLATE_PATH SYSTEMDSYSTEMUNITDIR "/agent@.service"

static int write_tmp_mount(const GeneratorOutput *o, const Role *role, const char *which) {
        _cleanup_free_ char *name = NULL;
        UnitSettings s = {};
        int r;

        r = profile_tmp_mount(role, which, &name, &s);
        if (r < 0)
                return log_oom();
        r = generator_write_unit(o, name, role->path, &s);
        unit_settings_done(&s);
        return r;
}

/* [Install] WantedBy=: also for a refused role, so that it fails visibly at boot. */
static int add_wants_symlinks(const GeneratorOutput *o, const Role *role) {
        STRV_FOREACH(w, role->wanted_by) {
                _cleanup_free_ char *link = strprintf("%s.wants/agent@%s.service", *w, role->name);
                int r;

                if (!link)
                        return log_oom();
                r = generator_add_symlink(o, link, TEMPLATE_PATH);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* "# grants: sidecar NAME -> SOCKET" for each Service=, in the drop-in's header. */
static char **grant_comments(const Role *role) {
        char **l = calloc(1, sizeof(char *));

        STRV_FOREACH(svc, role->services) {
                _cleanup_free_ char *c = strprintf("grants: sidecar %s -> " SIDECAR_SERVICES_DIR "/%s/service.sock", *svc, *svc);
                if (!l || !c || strv_extend(&l, c) < 0)
                        return strv_free(l);
        }
        return l;
}

static int write_role(const GeneratorOutput *o, const Role *role, const CloisterConf *conf) {
        _cleanup_free_ char *dropin = strprintf("agent@%s.service.d/50-cloister.conf", role->name);
        _cleanup_strv_free_ char **comments = grant_comments(role);
        UnitSettings s = {};
        int r;

        if (!dropin || !comments)
                return log_oom();
        r = profile_role(role, conf, &s);
        if (r < 0)
                return log_error_errno(r, "%s: Failed to build the settings of role %s: %m", role->path, role->name);
        r = generator_write_unit_commented(o, dropin, role->path, comments, &s);
        unit_settings_done(&s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(profile_tmp_dirs); i++) {
                r = write_tmp_mount(o, role, profile_tmp_dirs[i]);
                if (r < 0)
                        return r;
        }
        return add_wants_symlinks(o, role);
}

/* An admin drop-in re-opens what the profile closes: the role still gets a drop-in, one
 * whose only job is to make the shim refuse with the reason, so that "systemctl start"
 * fails with it in the journal rather than running a weakened sandbox. */
static int write_refusal(const GeneratorOutput *o, const char *role_name, const char *source,
                         const char *reason) {
        _cleanup_free_ char *dropin = strprintf("agent@%s.service.d/50-cloister.conf", role_name);
        UnitSettings s = {};
        int r;

        if (!dropin || profile_refusal(role_name, source, reason, &s) < 0)
                return log_oom();
        r = generator_write_unit(o, dropin, source, &s);
        unit_settings_done(&s);
        return r;
}

/* A granted sidecar with no sidecar file is a warning, not an error (cloister.sidecar(5)): the grant binds
 * the socket directory, and the agent gets a connect error until something serves it. */
static int note_grants(const Role *role, SidecarSet *sidecars) {
        STRV_FOREACH(svc, role->services) {
                _cleanup_free_ char *sock = strprintf(SIDECAR_SERVICES_DIR "/%s/service.sock", *svc);
                int r;

                if (!sock)
                        return log_oom();
                if (!sidecar_set_find(sidecars, *svc) && access(sock, F_OK) < 0)
                        log_warning("%s: Service=%s: no sidecars/%s.sidecar was generated and %s does not exist; "
                                    "the agent will get a connect error until something serves it.",
                                    role->path, *svc, *svc, sock);
                r = sidecar_set_note_grant(sidecars, *svc, role->name);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A role the closed surfaces refuse still gets its drop-in (the shim refuses with the reason)
 * and its WantedBy= symlinks. */
static int generate_refused_role(const GeneratorOutput *o, const Role *role, const char *path, const char *reason) {
        int r;

        log_error("Role %s refuses to start: %s.", role->name, reason);
        r = write_refusal(o, role->name, path, reason);
        if (r < 0)
                return r;
        return add_wants_symlinks(o, role);
}

static int generate_role(const GeneratorOutput *o, const Role *role, const char *path, const CloisterConf *conf,
                         SidecarSet *sidecars) {
        int r;

        r = note_grants(role, sidecars);
        if (role->network == NETWORK_DAEMON_ONLY && !conf->broker_socket)
                log_warning("%s: Network=daemon-only but cloister.conf has no [Broker] Socket=: the role gets no broker socket and stays fully isolated.",
                            path);
        if (r < 0)
                return r;
        return write_role(o, role, conf);
}

static int generate_roles(const GeneratorOutput *o, char * const *config_dirs, const CloisterConf *conf,
                          const ClosedSurfaceIndex *idx, SidecarSet *sidecars) {
        ConfFileList roles = {};
        bool rejected = false;
        int r;

        r = conf_files_list(config_dirs, "roles", ".role", &roles);
        if (r < 0)
                return log_error_errno(r, "Failed to list role files: %m");

        for (size_t i = 0; i < roles.n; i++) {
                _cleanup_(role_freep) Role *role = NULL;
                const char *path = roles.files[i].path, *reason;

                r = role_load(path, conf, config_dirs, &role);
                if (r < 0) {
                        rejected = true;
                        continue;
                }
                reason = closed_surface_find(idx, role, conf);
                if (reason) {
                        rejected = true;
                        (void) generate_refused_role(o, role, path, reason);
                } else if (generate_role(o, role, path, conf, sidecars) < 0)
                        rejected = true;
        }
        conf_file_list_done(&roles);
        return rejected ? 1 : 0;
}

/* A dry run on a booted system finds cloister's own drop-ins of the last boot in systemd's
 * normal generator directory: those are not admin drop-ins. */
static const char *booted_generator_dir(char * const *unit_dirs) {
        STRV_FOREACH(d, unit_dirs) {
                size_t l = strlen(*d), s = strlen("/run/systemd/generator");
                if (l >= s && streq(*d + l - s, "/run/systemd/generator"))
                        return *d;
        }
        return NULL;
}

/* The credentials cloister.conf names, each once, sorted. */
static int broker_credentials(const CloisterConf *conf, char ***ret) {
        _cleanup_strv_free_ char **creds = calloc(1, sizeof(char *));

        if (!creds)
                return log_oom();
        if (conf->llm.api_key_credential && strv_extend(&creds, conf->llm.api_key_credential) < 0)
                return log_oom();
        if (conf->chat.api_key_credential && !strv_contains(creds, conf->chat.api_key_credential) &&
            strv_extend(&creds, conf->chat.api_key_credential) < 0)
                return log_oom();
        for (size_t i = 0; i < conf->n_upstreams; i++) {
                const char *c = conf->upstreams[i]->auth_credential;
                if (c && !strv_contains(creds, c) && strv_extend(&creds, c) < 0)
                        return log_oom();
        }
        strv_sort(creds);
        *ret = TAKE_PTR(creds);
        return 0;
}

/* The broker's side (cloister-broker(8)): the credentials cloister.conf names, loaded only into
 * cloister-broker.service; and its socket, where [Broker] Socket= moves it. */
static int write_broker_credentials(const GeneratorOutput *o, const CloisterConf *conf, const char *source) {
        _cleanup_strv_free_ char **creds = NULL;
        _cleanup_(unit_settings_done) UnitSettings s = {};
        int r;

        r = broker_credentials(conf, &creds);
        if (r < 0)
                return r;
        if (!creds[0])
                return 0;
        STRV_FOREACH(c, creds) {
                _cleanup_free_ char *enc = strprintf("/etc/credstore.encrypted/%s", *c);
                /* encrypted with systemd-creds if it is there, else the plain credstore */
                r = unit_settings_add(&s, "Service", enc && access(enc, F_OK) >= 0 ? "LoadCredentialEncrypted" : "LoadCredential", *c);
                if (r < 0)
                        return r;
        }
        return generator_write_unit(o, "cloister-broker.service.d/50-credentials.conf", source, &s);
}

static int write_broker_socket(const GeneratorOutput *o, const CloisterConf *conf, const char *source) {
        _cleanup_(unit_settings_done) UnitSettings s = {};
        int r;

        if (!conf->broker_socket || streq(conf->broker_socket, SANDBOX_BROKER_SOCKET))
                return 0;
        r = unit_settings_add(&s, "Socket", "ListenStream", "");
        if (r < 0)
                return r;
        r = unit_settings_add(&s, "Socket", "ListenStream", conf->broker_socket);
        if (r < 0)
                return r;
        return generator_write_unit(o, "cloister-broker.socket.d/50-cloister.conf", source, &s);
}

static int write_broker_dropins(const GeneratorOutput *o, const CloisterConf *conf, const char *source) {
        int r;

        r = write_broker_credentials(o, conf, source);
        if (r < 0)
                return r;
        return write_broker_socket(o, conf, source);
}

int generator_run(const char *dirs[3]) {
        _cleanup_strv_free_ char **config_dirs = NULL, **unit_dirs = NULL;
        _cleanup_(cloister_conf_freep) CloisterConf *conf = NULL;
        ClosedSurfaceIndex idx = {};
        SidecarSet sidecars = {};
        GeneratorOutput o = { .dir = dirs[0] };
        bool rejected = false;
        int r;

        if (conf_dirs(&config_dirs) < 0 || unit_search_path(dirs, &unit_dirs) < 0)
                return log_oom();

        r = cloister_conf_load(config_dirs, &conf);
        if (r < 0) {
                /* Fail closed: no role is generated, so every agent@ unit refuses to start. */
                log_error("cloister.conf was refused; no role is generated.");
                return 1;
        }
        if (cloister_conf_default_network(conf) == NETWORK_DAEMON_ONLY && !conf->broker_socket)
                log_warning("Roles without Network= are daemon-only (%s) but cloister.conf has no [Broker] Socket=: "
                            "daemon-only roles get no broker socket and stay fully isolated.",
                            conf->default_network >= 0 ? "DefaultNetwork=daemon-only" : "no DefaultNetwork=: the sealed default");

        r = closed_surface_index_build(unit_dirs, dirs[0] ?: booted_generator_dir(unit_dirs), &idx);
        if (r < 0)
                return log_oom();
        /* Sidecars first, so that each role's grants can be checked against them; their units
         * last, so that the socket unit can name the roles that reach it. */
        if (sidecar_set_load(config_dirs, conf, &sidecars, &rejected) < 0)
                rejected = true;
        r = generate_roles(&o, config_dirs, conf, &idx, &sidecars);
        if (generate_projects(&o, config_dirs) != 0)
                r = 1;
        if (sidecar_set_write(&o, &sidecars) != 0 || rejected)
                r = 1;
        if (write_broker_dropins(&o, conf, conf->path ?: "cloister.conf") < 0)
                r = 1;
        sidecar_set_done(&sidecars);
        closed_surface_index_done(&idx);
        return r;
}
