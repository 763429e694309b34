/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cmdline.h"
#include "conf-files.h"
#include "deps.h"
#include "generator-output.h"
#include "generator.h"
#include "log.h"
#include "project.h"

typedef struct DepsRow {
        const char *section;
        const char *key;
        const char *value;
} DepsRow;

/* cloister-deps@<project>.service (cloister.project(5)): the one step with egress, hardened otherwise.
 * DynamicUser= with CacheDirectory=: systemd keeps the cache at
 * /var/cache/private/cloister/deps with /var/cache/cloister/deps a symlink to it, chowned to
 * the (shared, "cloister-deps") dynamic user; agents get their sets through read-only binds
 * that PID 1 sets up, so the 0700 /var/cache/private is no obstacle, and UMask=0022 keeps
 * the files readable by the agents' own users. */
static const DepsRow deps_rows[] = {
        { "Unit", "Documentation", "man:cloister.project(5)" },
        { "Unit", "Wants", "network-online.target" },
        { "Unit", "After", "network-online.target" },
        { "Service", "Type", "oneshot" },
        { "Service", "RemainAfterExit", "yes" },
        { "Service", "TimeoutStartSec", "30min" },
        { "Service", "DynamicUser", "yes" },
        { "Service", "User", "cloister-deps" },
        { "Service", "CacheDirectory", "cloister/deps" },
        { "Service", "CacheDirectoryMode", "0755" },
        { "Service", "UMask", "0022" },
        /* pip and npm read $HOME; the private /tmp is the only writable place besides the cache */
        { "Service", "Environment", "HOME=/tmp" },
        { "Service", "PrivateUsers", "yes" },
        { "Service", "NoNewPrivileges", "yes" },
        { "Service", "CapabilityBoundingSet", "" },
        { "Service", "AmbientCapabilities", "" },
        { "Service", "ProtectSystem", "strict" },
        { "Service", "ProtectHome", "tmpfs" },
        { "Service", "PrivateTmp", "yes" },
        { "Service", "PrivateDevices", "yes" },
        { "Service", "DevicePolicy", "closed" },
        { "Service", "PrivateIPC", "yes" },
        { "Service", "ProtectKernelTunables", "yes" },
        { "Service", "ProtectKernelModules", "yes" },
        { "Service", "ProtectKernelLogs", "yes" },
        { "Service", "ProtectClock", "yes" },
        { "Service", "ProtectHostname", "yes" },
        { "Service", "ProtectControlGroups", "yes" },
        { "Service", "ProtectProc", "invisible" },
        { "Service", "ProcSubset", "pid" },
        { "Service", "RestrictNamespaces", "yes" },
        { "Service", "RestrictSUIDSGID", "yes" },
        { "Service", "RestrictRealtime", "yes" },
        { "Service", "LockPersonality", "yes" },
        { "Service", "KeyringMode", "private" },
        { "Service", "RemoveIPC", "yes" },
        { "Service", "LimitCORE", "0" },
        { "Service", "SystemCallArchitectures", "native" },
        { "Service", "SystemCallFilter", "@system-service" },
        { "Service", "SystemCallErrorNumber", "EPERM" },
        { "Service", "RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6 AF_NETLINK" },
        /* cloud metadata and multicast stay closed; the host's loopback stays open for a
         * resolver stub or a local package mirror (the lockfiles pin every hash). */
        { "Service", "IPAddressDeny", "link-local multicast" },
        { "Service", "StandardOutput", "journal" },
        { "Service", "StandardError", "journal" },
};

static int deps_unit(const Project *p, UnitSettings *ret) {
        _cleanup_free_ char *desc = unit_specifier_escape(p->name);
        UnitSettings s = {};
        int r;

        if (!desc)
                return -ENOMEM;
        r = unit_settings_addf(&s, "Unit", "Description", "cloister dependency sets of project %s", desc);
        if (r >= 0)
                r = unit_settings_add(&s, "Unit", "SourcePath", p->path);
        if (r >= 0)
                r = unit_settings_addf(&s, "Unit", "RequiresMountsFor", "%s " DEPS_CACHE_DIR, p->workspace);
        for (size_t i = 0; i < ELEMENTSOF(deps_rows) && r >= 0; i++)
                r = unit_settings_add(&s, deps_rows[i].section, deps_rows[i].key, deps_rows[i].value);
        if (r >= 0)
                r = unit_settings_addf(&s, "Service", "ExecStart", CLOISTER_DEPS_PATH " %s", p->name);
        /* the workspace is read-only here (ProtectSystem=strict), and visible under /home too */
        if (r >= 0)
                r = unit_settings_addf(&s, "Service", "BindReadOnlyPaths", "%s", p->workspace);
        /* node's JIT needs W+X mappings; pip alone does not */
        if (r >= 0 && !p->lockfiles[DEPS_NPM])
                r = unit_settings_add(&s, "Service", "MemoryDenyWriteExecute", "yes");
        if (r < 0) {
                unit_settings_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

int generate_projects(const GeneratorOutput *o, char * const *config_dirs) {
        ConfFileList projects = {};
        bool rejected = false;
        int r;

        r = conf_files_list(config_dirs, "projects", ".project", &projects);
        if (r < 0)
                return log_error_errno(r, "Failed to list project files: %m");

        for (size_t i = 0; i < projects.n; i++) {
                _cleanup_(project_freep) Project *p = NULL;
                _cleanup_free_ char *unit = NULL;
                UnitSettings s = {};

                if (project_load(projects.files[i].path, &p) < 0) {
                        rejected = true;
                        continue;
                }
                if (!project_has_deps(p))
                        continue;
                unit = project_deps_unit(p->name);
                if (!unit || deps_unit(p, &s) < 0) {
                        log_oom();
                        rejected = true;
                        continue;
                }
                if (generator_write_unit(o, unit, p->path, &s) < 0)
                        rejected = true;
                unit_settings_done(&s);
        }
        conf_file_list_done(&projects);
        return rejected ? 1 : 0;
}
