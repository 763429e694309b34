/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <sys/mount.h>

#include "cmdline.h"
#include "log.h"
#include "parse-util.h"
#include "profile-bus.h"

typedef enum BusKind {
        BUS_STRING,             /* s, specifiers expand */
        BUS_STDIO,              /* s: journal, null, inherit … (no "file:"/"fd:" forms) */
        BUS_STRV,               /* as: words, specifiers expand */
        BUS_BOOL,               /* b */
        BUS_SIZE,               /* t: bytes, "infinity" */
        BUS_UINT,               /* t */
        BUS_SEC,                /* t: microseconds, the property renamed …Sec → …USec */
        BUS_CPU_QUOTA,          /* t: CPUQuotaPerSecUSec */
        BUS_MODE,               /* u: octal */
        BUS_CAPS,               /* t: only the empty set */
        BUS_SECURE_BITS,        /* i */
        BUS_NAMESPACES,         /* t: RestrictNamespaces=yes|no */
        BUS_ERRNO,              /* i */
        BUS_RLIMIT,             /* t Limit… and t Limit…Soft */
        BUS_ALLOW_DENY,         /* (bas): "~" denies */
        BUS_IP_ACCESS,          /* a(iayu) */
        BUS_BIND,               /* a(ssbt) */
        BUS_TMPFS,              /* a(ss) */
        BUS_EXEC,               /* a(sasb) */
        BUS_EXIT_STATUS,        /* (aiai) */
} BusKind;

typedef struct BusProperty {
        const char *section;
        const char *key;
        BusKind kind;
        const char *property;   /* NULL: the key */
} BusProperty;

/* Every directive the profile model emits (lib/profile/profile.c), and nothing else: a new one is a
 * row here, or cloisterctl run refuses to start (the unit test renders every role shape). */
static const BusProperty bus_properties[] = {
        { "Unit",    "Description",             BUS_STRING, NULL },
        { "Unit",    "Documentation",           BUS_STRV, NULL },
        { "Unit",    "SourcePath",              BUS_STRING, NULL },
        { "Unit",    "RequiresMountsFor",       BUS_STRV, NULL },
        { "Unit",    "Wants",                   BUS_STRV, NULL },
        { "Unit",    "Requires",                BUS_STRV, NULL },
        { "Unit",    "After",                   BUS_STRV, NULL },
        { "Unit",    "StopWhenUnneeded",        BUS_BOOL, NULL },
        { "Service", "Type",                    BUS_STRING, NULL },
        { "Service", "NotifyAccess",            BUS_STRING, NULL },
        { "Service", "ExecStart",               BUS_EXEC, NULL },
        { "Service", "ExecStartPre",            BUS_EXEC, NULL },
        { "Service", "ExecStopPost",            BUS_EXEC, NULL },
        { "Service", "Restart",                 BUS_STRING, NULL },
        { "Service", "RestartPreventExitStatus", BUS_EXIT_STATUS, NULL },
        { "Service", "KillMode",                BUS_STRING, NULL },
        { "Service", "TimeoutStopSec",          BUS_SEC, "TimeoutStopUSec" },
        { "Service", "RuntimeMaxSec",           BUS_SEC, "RuntimeMaxUSec" },
        { "Service", "DynamicUser",             BUS_BOOL, NULL },
        { "Service", "User",                    BUS_STRING, NULL },
        { "Service", "StateDirectory",          BUS_STRV, NULL },
        { "Service", "Environment",             BUS_STRV, NULL },
        { "Service", "PrivateUsers",            BUS_BOOL, NULL },
        { "Service", "NoNewPrivileges",         BUS_BOOL, NULL },
        { "Service", "CapabilityBoundingSet",   BUS_CAPS, NULL },
        { "Service", "AmbientCapabilities",     BUS_CAPS, NULL },
        { "Service", "SecureBits",              BUS_SECURE_BITS, NULL },
        { "Service", "ProtectSystem",           BUS_STRING, NULL },
        { "Service", "ProtectHome",             BUS_STRING, NULL },
        { "Service", "PrivateTmp",              BUS_BOOL, NULL },
        { "Service", "PrivateDevices",          BUS_BOOL, NULL },
        { "Service", "DevicePolicy",            BUS_STRING, NULL },
        { "Service", "PrivateNetwork",          BUS_BOOL, NULL },
        { "Service", "PrivateIPC",              BUS_BOOL, NULL },
        { "Service", "PrivateMounts",           BUS_BOOL, NULL },
        { "Service", "ProtectKernelTunables",   BUS_BOOL, NULL },
        { "Service", "ProtectKernelModules",    BUS_BOOL, NULL },
        { "Service", "ProtectKernelLogs",       BUS_BOOL, NULL },
        { "Service", "ProtectClock",            BUS_BOOL, NULL },
        { "Service", "ProtectHostname",         BUS_BOOL, NULL },
        { "Service", "ProtectControlGroups",    BUS_BOOL, NULL },
        { "Service", "ProtectProc",             BUS_STRING, NULL },
        { "Service", "ProcSubset",              BUS_STRING, NULL },
        { "Service", "RestrictNamespaces",      BUS_NAMESPACES, NULL },
        { "Service", "RestrictSUIDSGID",        BUS_BOOL, NULL },
        { "Service", "RestrictRealtime",        BUS_BOOL, NULL },
        { "Service", "LockPersonality",         BUS_BOOL, NULL },
        { "Service", "MemoryDenyWriteExecute",  BUS_BOOL, NULL },
        { "Service", "KeyringMode",             BUS_STRING, NULL },
        { "Service", "RemoveIPC",               BUS_BOOL, NULL },
        { "Service", "UMask",                   BUS_MODE, NULL },
        { "Service", "LimitCORE",               BUS_RLIMIT, NULL },
        { "Service", "SystemCallArchitectures", BUS_STRV, NULL },
        { "Service", "SystemCallFilter",        BUS_ALLOW_DENY, NULL },
        { "Service", "SystemCallErrorNumber",   BUS_ERRNO, NULL },
        { "Service", "RestrictAddressFamilies", BUS_ALLOW_DENY, NULL },
        { "Service", "IPAddressDeny",           BUS_IP_ACCESS, NULL },
        { "Service", "IPAddressAllow",          BUS_IP_ACCESS, NULL },
        { "Service", "TemporaryFileSystem",     BUS_TMPFS, NULL },
        { "Service", "InaccessiblePaths",       BUS_STRV, NULL },
        { "Service", "BindPaths",               BUS_BIND, NULL },
        { "Service", "BindReadOnlyPaths",       BUS_BIND, NULL },
        { "Service", "MemoryMax",               BUS_SIZE, NULL },
        { "Service", "MemorySwapMax",           BUS_SIZE, NULL },
        { "Service", "MemoryPressureWatch",     BUS_STRING, NULL },   /* 254+ (systemd-version.c) */
        { "Service", "TasksMax",                BUS_UINT, NULL },
        { "Service", "CPUQuota",                BUS_CPU_QUOTA, "CPUQuotaPerSecUSec" },
        { "Service", "StandardOutput",          BUS_STDIO, NULL },
        { "Service", "StandardError",           BUS_STDIO, NULL },
        /* the private /tmp of a run (profile_tmp_mount()), an auxiliary transient unit */
        { "Mount",   "What",                    BUS_STRING, NULL },
        { "Mount",   "Where",                   BUS_STRING, NULL },
        { "Mount",   "Type",                    BUS_STRING, NULL },
        { "Mount",   "Options",                 BUS_STRING, NULL },
        { "Mount",   "DirectoryMode",           BUS_MODE, NULL },
};

static const BusProperty *bus_property_find(const char *section, const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(bus_properties); i++)
                if (streq(bus_properties[i].section, section) && streq(bus_properties[i].key, key))
                        return &bus_properties[i];
        return NULL;
}

const char *profile_bus_property(const char *section, const char *key) {
        const BusProperty *p = bus_property_find(section, key);
        return p ? p->property ?: p->key : NULL;
}

/* "%%" → "%", "%i" → instance; any other specifier cannot be resolved outside a unit file. */
static int expand_specifiers(const char *v, const char *instance, char **ret) {
        size_t n = strlen(v) + 1;
        char *r, *t;

        for (const char *p = v; *p; p++)
                if (p[0] == '%' && p[1] == 'i')
                        n += strlen(instance);
        r = t = malloc(n);
        if (!r)
                return -ENOMEM;
        for (const char *p = v; *p; p++) {
                if (*p != '%') {
                        *t++ = *p;
                        continue;
                }
                p++;
                if (*p == '%')
                        *t++ = '%';
                else if (*p == 'i')
                        t = stpcpy(t, instance);
                else {
                        free(r);
                        return -EBADMSG;
                }
        }
        *t = 0;
        *ret = r;
        return 0;
}

static int split_words(const char *v, char ***ret) {
        const char *reason = NULL;
        int r = cmdline_split(v, ret, &reason);
        return r == -EINVAL ? -EBADMSG : r;
}

static int append_words_array(sd_bus_message *m, char * const *words) {
        int r = sd_bus_message_open_container(m, 'a', "s");
        STRV_FOREACH(w, words)
                if (r >= 0)
                        r = sd_bus_message_append_basic(m, 's', *w);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

static int append_allow_deny(sd_bus_message *m, const char *name, const char *v) {
        _cleanup_strv_free_ char **words = NULL;
        int allow = v[0] != '~', r;

        r = split_words(allow ? v : v + 1, &words);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 's', name);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "(bas)");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "bas");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 'b', &allow);
        if (r >= 0)
                r = append_words_array(m, words);
        for (int i = 0; i < 3 && r >= 0; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

static int append_ip_prefix(sd_bus_message *m, int family, const char *addr, unsigned prefixlen) {
        unsigned char buf[16];
        int r;

        if (inet_pton(family, addr, buf) != 1)
                return -EBADMSG;
        r = sd_bus_message_open_container(m, 'r', "iayu");
        if (r >= 0)
                r = sd_bus_message_append(m, "i", (int32_t) family);
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', buf, family == AF_INET ? 4 : 16);
        if (r >= 0)
                r = sd_bus_message_append(m, "u", (uint32_t) prefixlen);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

/* The shortcuts of systemd.resource-control(5), each word on its own. */
static const struct { const char *name, *v4; unsigned len4; const char *v6; unsigned len6; } ip_shortcuts[] = {
        { "any",        "0.0.0.0",     0,  "::",     0 },
        { "localhost",  "127.0.0.0",   8,  "::1",    128 },
        { "link-local", "169.254.0.0", 16, "fe80::", 64 },
        { "multicast",  "224.0.0.0",   4,  "ff00::", 8 },
};

static int append_ip_word(sd_bus_message *m, const char *w) {
        _cleanup_free_ char *addr = strdup(w);
        char *slash;
        unsigned len;
        int family;

        for (size_t i = 0; i < ELEMENTSOF(ip_shortcuts); i++)
                if (streq(w, ip_shortcuts[i].name)) {
                        int r = append_ip_prefix(m, AF_INET, ip_shortcuts[i].v4, ip_shortcuts[i].len4);
                        return r < 0 ? r : append_ip_prefix(m, AF_INET6, ip_shortcuts[i].v6, ip_shortcuts[i].len6);
                }
        if (!addr)
                return -ENOMEM;
        family = strchr(addr, ':') ? AF_INET6 : AF_INET;
        len = family == AF_INET ? 32 : 128;
        slash = strchr(addr, '/');
        if (slash) {
                uint64_t l;
                *slash = 0;
                if (parse_uint64(slash + 1, &l) < 0 || l > len)
                        return -EBADMSG;
                len = (unsigned) l;
        }
        return append_ip_prefix(m, family, addr, len);
}

/* "[-]SOURCE[:TARGET[:rbind|norbind]]" words; "-" tolerates a missing source. */
static int append_bind_word(sd_bus_message *m, const char *w) {
        _cleanup_free_ char *copy = strdup(w);
        char *source, *target, *options;
        int ignore = 0;
        uint64_t flags = MS_REC;

        if (!copy)
                return -ENOMEM;
        source = copy;
        if (*source == '-') {
                ignore = 1;
                source++;
        }
        target = strchr(source, ':');
        if (target) {
                *target++ = 0;
                options = strchr(target, ':');
                if (options) {
                        *options++ = 0;
                        if (streq(options, "norbind"))
                                flags = 0;
                        else if (!isempty(options) && !streq(options, "rbind"))
                                return -EOPNOTSUPP;
                }
        } else
                target = source;
        return sd_bus_message_append(m, "(ssbt)", source, target, ignore, flags);
}

static int append_tmpfs_word(sd_bus_message *m, const char *w) {
        _cleanup_free_ char *path = strdup(w);
        char *options;

        if (!path)
                return -ENOMEM;
        options = strchr(path, ':');
        if (options)
                *options++ = 0;
        return sd_bus_message_append(m, "(ss)", path, strempty(options));
}

static int append_array_of(sd_bus_message *m, const char *name, const char *signature, const char *v,
                           int (*append_word)(sd_bus_message *m, const char *w)) {
        _cleanup_strv_free_ char **words = NULL;
        _cleanup_free_ char *variant = strprintf("a%s", signature);
        int r;

        if (!variant)
                return -ENOMEM;
        r = split_words(v, &words);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 's', name);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', variant);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', signature);
        STRV_FOREACH(w, words)
                if (r >= 0)
                        r = append_word(m, *w);
        for (int i = 0; i < 3 && r >= 0; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

/* Exec*= without prefixes, or with "+" alone (cloister-stage's privileged step, sent as
 * Exec*Ex= with the "privileged" flag): systemd's other "-@:!" forms are not part of the
 * profile. An empty assignment is an empty array, which resets the list as in a unit file. */
static int append_exec(sd_bus_message *m, const char *name, const char *v) {
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *ex = NULL;
        bool privileged = v[0] == '+';
        int r;

        if (privileged)
                v++;
        if (strchr("-@:+!", v[0]) && v[0])
                return -EOPNOTSUPP;
        r = split_words(v, &argv);
        if (r < 0)
                return r;
        if (argv[0] && argv[0][0] != '/')
                return -EBADMSG;
        if (privileged && !(ex = strprintf("%sEx", name)))
                return -ENOMEM;
        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 's', ex ?: name);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', privileged ? "a(sasas)" : "a(sasb)");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', privileged ? "(sasas)" : "(sasb)");
        if (r >= 0 && argv[0]) {
                r = sd_bus_message_open_container(m, 'r', privileged ? "sasas" : "sasb");
                if (r >= 0)
                        r = sd_bus_message_append_basic(m, 's', argv[0]);
                if (r >= 0)
                        r = append_words_array(m, argv);
                if (r >= 0)
                        r = privileged ? sd_bus_message_append(m, "as", 1, "privileged") : sd_bus_message_append(m, "b", 0);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
        }
        for (int i = 0; i < 3 && r >= 0; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

/* Exit statuses only: signal names are not part of the profile. */
static int append_exit_status(sd_bus_message *m, const char *name, const char *v) {
        _cleanup_strv_free_ char **words = NULL;
        int r = split_words(v, &words);

        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 's', name);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "(aiai)");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "aiai");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "i");
        STRV_FOREACH(w, words) {
                uint64_t u;
                if (r < 0)
                        break;
                if (parse_uint64(*w, &u) < 0 || u > 255)
                        return -EOPNOTSUPP;
                r = sd_bus_message_append(m, "i", (int32_t) u);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "ai", 0);
        for (int i = 0; i < 3 && r >= 0; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

static int parse_secure_bits(const char *v, int32_t *ret) {
        static const char *const names[] = { "noroot", "noroot-locked", "no-setuid-fixup",
                                             "no-setuid-fixup-locked", "keep-caps", "keep-caps-locked" };
        _cleanup_strv_free_ char **words = NULL;
        int32_t bits = 0;
        int r = split_words(v, &words);

        if (r < 0)
                return r;
        STRV_FOREACH(w, words) {
                size_t i;
                for (i = 0; i < ELEMENTSOF(names) && !streq(*w, names[i]); i++)
                        ;
                if (i == ELEMENTSOF(names))
                        return -EBADMSG;
                bits |= 1 << i;
        }
        *ret = bits;
        return 0;
}

static int parse_errno_name(const char *v, int32_t *ret) {
        for (int e = 1; e < 4096; e++) {
                const char *n = strerrorname_np(e);
                if (n && streq(n, v)) {
                        *ret = e;
                        return 0;
                }
        }
        return -EBADMSG;
}

static int parse_size_or_infinity(const char *v, uint64_t *ret) {
        if (streq(v, "infinity")) {
                *ret = UINT64_MAX;
                return 0;
        }
        return parse_size(v, ret) < 0 ? -EBADMSG : 0;
}

/* "150%" → 1.5 s of CPU time per second. */
static int parse_cpu_quota(const char *v, uint64_t *ret) {
        size_t n = strlen(v);
        _cleanup_free_ char *num = n > 1 && v[n - 1] == '%' ? strndup(v, n - 1) : NULL;
        uint64_t percent;

        if (!num || parse_uint64(num, &percent) < 0 || percent == 0 || percent > UINT64_MAX / 10000)
                return -EBADMSG;
        *ret = percent * USEC_PER_SEC / 100;
        return 0;
}

static int append_value(sd_bus_message *m, const BusProperty *p, const char *v) {
        const char *name = p->property ?: p->key;
        uint64_t u;
        int32_t i;
        int r;

        switch (p->kind) {
        case BUS_STRING:
                return sd_bus_message_append(m, "(sv)", name, "s", v);
        case BUS_STDIO:
                if (strchr(v, ':'))
                        return -EOPNOTSUPP;
                return sd_bus_message_append(m, "(sv)", name, "s", v);
        case BUS_STRV: {
                _cleanup_strv_free_ char **words = NULL;
                r = split_words(v, &words);
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'r', "sv");
                if (r >= 0)
                        r = sd_bus_message_append_basic(m, 's', name);
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = append_words_array(m, words);
                for (int k = 0; k < 2 && r >= 0; k++)
                        r = sd_bus_message_close_container(m);
                return r;
        }
        case BUS_BOOL:
                r = parse_boolean(v);
                return r < 0 ? -EBADMSG : sd_bus_message_append(m, "(sv)", name, "b", r);
        case BUS_SIZE:
                r = parse_size_or_infinity(v, &u);
                return r < 0 ? r : sd_bus_message_append(m, "(sv)", name, "t", u);
        case BUS_UINT:
                if (streq(v, "infinity"))
                        u = UINT64_MAX;
                else if (parse_uint64(v, &u) < 0)
                        return -EBADMSG;
                return sd_bus_message_append(m, "(sv)", name, "t", u);
        case BUS_SEC:
                if (streq(v, "infinity"))
                        u = UINT64_MAX;
                else if (parse_timespan(v, &u) < 0)
                        return -EBADMSG;
                return sd_bus_message_append(m, "(sv)", name, "t", u);
        case BUS_CPU_QUOTA:
                r = parse_cpu_quota(v, &u);
                return r < 0 ? r : sd_bus_message_append(m, "(sv)", name, "t", u);
        case BUS_MODE: {
                char *end;
                unsigned long mode;
                errno = 0;
                mode = strtoul(v, &end, 8);
                if (isempty(v) || *end || errno || mode > 07777)
                        return -EBADMSG;
                return sd_bus_message_append(m, "(sv)", name, "u", (uint32_t) mode);
        }
        case BUS_CAPS: /* the profile only ever empties a capability set */
                return isempty(v) ? sd_bus_message_append(m, "(sv)", name, "t", (uint64_t) 0) : -EOPNOTSUPP;
        case BUS_SECURE_BITS:
                r = parse_secure_bits(v, &i);
                return r < 0 ? r : sd_bus_message_append(m, "(sv)", name, "i", i);
        case BUS_NAMESPACES: /* yes: no namespace may be created (flags 0) */
                return parse_boolean(v) == 1 ? sd_bus_message_append(m, "(sv)", name, "t", (uint64_t) 0) : -EOPNOTSUPP;
        case BUS_ERRNO:
                r = parse_errno_name(v, &i);
                return r < 0 ? r : sd_bus_message_append(m, "(sv)", name, "i", i);
        case BUS_RLIMIT: {
                _cleanup_free_ char *soft = strprintf("%sSoft", name);
                if (!soft)
                        return -ENOMEM;
                if (streq(v, "infinity"))
                        u = UINT64_MAX;
                else if (parse_uint64(v, &u) < 0)
                        return -EOPNOTSUPP; /* "soft:hard" is not part of the profile */
                r = sd_bus_message_append(m, "(sv)", name, "t", u);
                return r < 0 ? r : sd_bus_message_append(m, "(sv)", soft, "t", u);
        }
        case BUS_ALLOW_DENY:
                return append_allow_deny(m, name, v);
        case BUS_IP_ACCESS:
                return append_array_of(m, name, "(iayu)", v, append_ip_word);
        case BUS_BIND:
                return append_array_of(m, name, "(ssbt)", v, append_bind_word);
        case BUS_TMPFS:
                return append_array_of(m, name, "(ss)", v, append_tmpfs_word);
        case BUS_EXEC:
                return append_exec(m, name, v);
        case BUS_EXIT_STATUS:
                return append_exit_status(m, name, v);
        }
        return -EOPNOTSUPP;
}

static bool kind_expands_specifiers(BusKind k) {
        return k == BUS_STRING || k == BUS_STRV || k == BUS_BIND || k == BUS_TMPFS || k == BUS_EXEC;
}

int profile_bus_append(sd_bus_message *m, const UnitSettings *s, const char *instance) {
        for (size_t i = 0; i < s->n; i++) {
                const UnitSetting *u = &s->items[i];
                const BusProperty *p = bus_property_find(u->section, u->key);
                _cleanup_free_ char *v = NULL;
                int r;

                if (!p)
                        return log_error_errno(EOPNOTSUPP, "[%s] %s= has no D-Bus rendering in lib/profile/profile-bus.c; refusing the run.",
                                               u->section, u->key);
                if (kind_expands_specifiers(p->kind)) {
                        r = expand_specifiers(u->value, instance, &v);
                        if (r == -EBADMSG)
                                return log_error_errno(EBADMSG, "[%s] %s=%s: a specifier other than %%i or %%%% cannot be rendered for a transient unit.",
                                                       u->section, u->key, u->value);
                        if (r < 0)
                                return log_oom();
                }
                r = append_value(m, p, v ?: u->value);
                if (r == -EOPNOTSUPP || r == -EBADMSG)
                        return log_error_errno(r, "[%s] %s=%s cannot be rendered as the D-Bus property %s; refusing the run.",
                                               u->section, u->key, u->value, p->property ?: p->key);
                if (r < 0)
                        return log_error_errno(r, "Cannot append %s= to the D-Bus message: %m", u->key);
        }
        return 0;
}
