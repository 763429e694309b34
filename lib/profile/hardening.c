/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "hardening.h"
#include "policy.h"
#include "strv.h"

typedef struct HardeningRow {
        const char *section;
        const char *key;
        const char *value;      /* NULL: the reviewed syscall deny list of policy/ */
} HardeningRow;

/* What every cloister unit gets unless a HardeningChange of its own says otherwise (the
 * agent's profile takes it unchanged: cloister.role(5), THE LOCKED PROFILE). */
static const HardeningRow base[] = {
        { "Service", "DynamicUser", "yes" },
        { "Service", "PrivateUsers", "yes" },
        { "Service", "NoNewPrivileges", "yes" },
        { "Service", "CapabilityBoundingSet", "" },
        { "Service", "AmbientCapabilities", "" },
        { "Service", "SecureBits", "noroot-locked" },
        { "Service", "ProtectSystem", "strict" },
        { "Service", "ProtectHome", "yes" },
        { "Service", "PrivateTmp", "yes" },
        { "Service", "PrivateDevices", "yes" },
        { "Service", "DevicePolicy", "closed" },
        { "Service", "PrivateNetwork", "yes" },
        { "Service", "PrivateIPC", "yes" },
        { "Service", "PrivateMounts", "yes" },
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
        { "Service", "MemoryDenyWriteExecute", "yes" },
        { "Service", "KeyringMode", "private" },
        { "Service", "RemoveIPC", "yes" },
        { "Service", "UMask", "0077" },
        { "Service", "LimitCORE", "0" },
        { "Service", "SystemCallArchitectures", "native" },
        { "Service", "SystemCallFilter", "@system-service" },
        { "Service", "SystemCallFilter", NULL },  /* ~ the reviewed list from policy/ (named "SystemCallFilter~") */
        { "Service", "SystemCallErrorNumber", "EPERM" },
        { "Service", "RestrictAddressFamilies", "AF_UNIX" },
        { "Service", "IPAddressDeny", "any" },
        /* ProtectSystem=strict leaves connect() to every socket under /run: the system bus,
         * journald, nscd, resolved's varlink (a DNS channel). Only what a mode grants is
         * bound back in. */
        { "Service", "TemporaryFileSystem", "/run:ro" },
        /* PrivateDevices= binds the host's /dev/mqueue and /dev/hugepages; /dev/shm gets a
         * private, capped tmpfs per role (ShmSize=). sysfs lists the host's interfaces. */
        { "Service", "InaccessiblePaths", "-/dev/mqueue -/dev/hugepages -/sys/class/net -/sys/devices/virtual/net" },
        { "Service", "MemorySwapMax", "0" },
        { "Service", "StandardOutput", "journal" },
        { "Service", "StandardError", "journal" },
};

static char *denied_syscalls_value(void) {
        size_t len = 2;
        char *v, *t;

        for (const char *const *s = policy_denied_syscalls; *s; s++)
                len += strlen(*s) + 1;
        v = t = malloc(len);
        if (!v)
                return NULL;
        *t++ = '~';
        for (const char *const *s = policy_denied_syscalls; *s; s++)
                t += sprintf(t, "%s%s", s == policy_denied_syscalls ? "" : " ", *s);
        return v;
}

static const char *row_name(const HardeningRow *row) {
        return row->value ? row->key : "SystemCallFilter~";
}

static const HardeningChange *change_of(const HardeningChange *changes, const char *name) {
        for (const HardeningChange *c = changes; c && c->name; c++)
                if (streq(c->name, name))
                        return c;
        return NULL;
}

static bool is_row(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(base); i++)
                if (streq(row_name(&base[i]), name))
                        return true;
        return false;
}

int hardening_add(UnitSettings *s, const HardeningChange *changes) {
        int r = 0;

        /* a change of a row the base no longer has would silently change nothing */
        for (const HardeningChange *c = changes; c && c->name; c++)
                if (!is_row(c->name))
                        return -EINVAL;

        for (size_t i = 0; i < ELEMENTSOF(base) && r >= 0; i++) {
                const HardeningChange *c = change_of(changes, row_name(&base[i]));
                _cleanup_free_ char *deny = NULL;
                const char *v = base[i].value;

                if (c && !c->value)
                        continue;
                if (c)
                        v = c->value;
                else if (!v) {
                        v = deny = denied_syscalls_value();
                        if (!v)
                                return -ENOMEM;
                }
                r = unit_settings_add(s, base[i].section, base[i].key, v);
        }
        return r;
}

bool hardening_row(size_t i, const char **ret_section, const char **ret_name, const char **ret_key) {
        if (i >= ELEMENTSOF(base))
                return false;
        *ret_section = base[i].section;
        *ret_name = row_name(&base[i]);
        *ret_key = base[i].key;
        return true;
}
