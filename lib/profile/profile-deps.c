/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cmdline.h"
#include "hardening.h"
#include "profile-deps.h"
#include "profile.h"

/* DynamicUser= with CacheDirectory=: systemd keeps the cache at
 * /var/cache/private/cloister/deps with /var/cache/cloister/deps a symlink to it, chowned to
 * the (shared, "cloister-deps") dynamic user; agents get their sets through read-only binds
 * that PID 1 sets up, so the 0700 /var/cache/private is no obstacle, and UMask=0022 keeps
 * the files readable by the agents' own users. */
static const ProfileRow deps_rows[] = {
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
};

static const HardeningChange deps_hardening[] = {
        { "DynamicUser", NULL, "set above, next to User= and the cache directory it owns (same value)" },
        { "UMask", NULL, "0022, set above: the agents' own users read the sets" },
        { "ProtectHome", "tmpfs", "the workspace, often under /home, is bound back in read-only" },
        { "PrivateNetwork", NULL, "pip and npm download the locked packages: the unit's purpose" },
        { "MemoryDenyWriteExecute", NULL, "set last, and only without Npm=: node's JIT needs W+X mappings" },
        { "RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6 AF_NETLINK", "downloads need IP sockets and the resolver" },
        /* the lockfiles pin every hash */
        { "IPAddressDeny", "link-local multicast", "cloud metadata and multicast stay closed; the host's loopback stays open for a resolver stub or a local package mirror" },
        { "TemporaryFileSystem", NULL, "the resolver's sockets under /run stay reachable (DNS)" },
        {}
};

int profile_deps_unit(const Project *p, UnitSettings *ret) {
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
        if (r >= 0)
                r = profile_add_rows(&s, deps_rows, ELEMENTSOF(deps_rows));
        if (r >= 0)
                r = hardening_add(&s, deps_hardening);
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
