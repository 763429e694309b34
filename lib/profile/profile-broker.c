/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "profile-broker.h"
#include "profile.h"

static const ProfileRow broker_rows[] = {
        { "Unit", "Description", "cloister broker: LLM, MCP and API calls for sealed agents" },
        { "Unit", "Documentation", "man:cloister-broker(8)" },
        /* Not ordered after network-online.target: agents' requests must not wait for it at
         * boot; an upstream that is not reachable yet is a 502 for that request. */
        { "Unit", "Requires", "cloister-broker.socket" },
        { "Unit", "After", "cloister-broker.socket" },
        /* Type=notify, not notify-reload (253+, unknown to 252): reload is SIGHUP sent by
         * ExecReload=, after the same strict check the broker makes, so a broken file fails
         * `systemctl reload` and the broker keeps serving the old config (cloister-broker(8),
         * RELOAD). */
        { "Service", "Type", "notify" },
        { "Service", "ExecStart", PKGLIBEXECDIR "/cloister-broker" },
        { "Service", "ExecReload", PKGLIBEXECDIR "/cloister-broker --check-config" },
        { "Service", "ExecReload", "/bin/kill -HUP $MAINPID" },
        { "Service", "Restart", "on-failure" },
};

const HardeningChange profile_broker_hardening[] = {
        { "PrivateUsers", NULL, "it tells a reused PID by its peers' UIDs, which a user namespace would all show as 65534 (the broker refuses such peers)" },
        { "PrivateNetwork", NULL, "it makes every upstream call: the one process with egress" },
        { "ProtectProc", "default", "it reads its peers' /proc/PID/cgroup to learn their unit: not \"invisible\"" },
        { "SystemCallFilter~", "~@privileged", "the broker's own deny set instead of the agents' reviewed list" },
        { "RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6 AF_NETLINK", "upstream calls need IP sockets and the resolver" },
        { "IPAddressDeny", NULL, "upstreams may be anywhere, the host's loopback included" },
        { "TemporaryFileSystem", NULL, "the resolver's sockets under /run stay reachable (DNS)" },
        { "StandardOutput", NULL, "systemd's default, the journal" },
        { "StandardError", NULL, "systemd's default, the journal" },
        {}
};

static const ProfileRow broker_limits[] = {
        { "Service", "LimitNOFILE", "65536" },
        /* The ceiling for all callers together. One caller (one unit) is held to 512
         * connections and 64 MiB of request bodies and answers (cloister-broker(8)); past
         * this the kernel ends the broker and systemd starts it again, its socket keeping
         * the queued connections. */
        { "Service", "MemoryMax", "1G" },
        /* One audit record per request: journald's default per-service rate limit would drop
         * them under load (LogRateLimitIntervalSec=0 did not lift it on 252; a huge burst does). */
        { "Service", "LogRateLimitIntervalSec", "1s" },
        { "Service", "LogRateLimitBurst", "1000000" },
};

int profile_broker(UnitSettings *ret) {
        UnitSettings s = {};
        int r;

        r = profile_add_rows(&s, broker_rows, ELEMENTSOF(broker_rows));
        if (r >= 0)
                r = hardening_add(&s, profile_broker_hardening);
        if (r >= 0)
                r = profile_add_rows(&s, broker_limits, ELEMENTSOF(broker_limits));
        if (r < 0) {
                unit_settings_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}
