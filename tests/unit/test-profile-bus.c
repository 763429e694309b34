/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/profile/profile-bus.c against lib/profile/unit-settings.c: one profile model, two renderings, compared
 * property by property so that they cannot drift.
 *
 * For each role shape, the unit-file text (template + drop-in, as systemd reads them) and the
 * StartTransientUnit properties (the sealed sd-bus message, read back) are each reduced to
 * "bus property name → normalised value", and the two maps must be equal, key for key.
 *
 * Normalised means:
 *  - every unit-file key is named by the bus property systemd sets from it
 *    (RuntimeMaxSec → RuntimeMaxUSec, CPUQuota → CPUQuotaPerSecUSec, LimitCORE → LimitCORE
 *    and LimitCORESoft);
 *  - numbers in the bus unit (bytes, microseconds, octal modes as numbers, errno names and
 *    secure-bit names as numbers, "infinity" as 2^64-1), booleans as yes/no;
 *  - specifiers expanded (%% and %i), Exec lines unquoted and split;
 *  - list assignments applied as systemd applies them: a list key accumulates its items, an
 *    empty assignment resets it; a scalar's last assignment wins. For allow/deny lists
 *    (SystemCallFilter=, RestrictAddressFamilies=) each assignment is one item
 *    "allow:WORDS" or "deny:WORDS": how the kernel-side set comes out of them is systemd's
 *    business, and the real-systemd tier compares `systemctl show` of both units for that.
 * The text side is read with this file's own table and normalisers, not the renderer's. */

#include <arpa/inet.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "cmdline.h"
#include "parse-util.h"
#include "profile-bus.h"
#include "profile.h"
#include "systemd-version.h"
#include "tap.h"
#include "test-util.h"

/* Setup that cannot fail in a working test: abort rather than test on. */
#define assert_se(x) do { if (!(x)) { printf("Bail out! %s:%d: %s\n", __FILE__, __LINE__, #x); exit(1); } } while (0)

static char *tmpdir;

/* --- a map of bus property → list of normalised items ------------------------------------ */

typedef struct Prop {
        char *name;
        char **items;
} Prop;

typedef struct Props {
        Prop *p;
        size_t n;
} Props;

static Prop *props_get(Props *ps, const char *name) {
        for (size_t i = 0; i < ps->n; i++)
                if (streq(ps->p[i].name, name))
                        return &ps->p[i];
        ps->p = realloc(ps->p, sizeof(Prop) * (ps->n + 1));
        assert_se(ps->p);
        ps->p[ps->n] = (Prop) { .name = strdup(name), .items = calloc(1, sizeof(char *)) };
        return &ps->p[ps->n++];
}

static void props_reset(Props *ps, const char *name) {
        Prop *p = props_get(ps, name);
        strv_free(p->items);
        p->items = calloc(1, sizeof(char *));
}

static void props_append(Props *ps, const char *name, const char *item) {
        assert_se(strv_extend(&props_get(ps, name)->items, item) >= 0);
}

static void props_set(Props *ps, const char *name, const char *item) {
        props_reset(ps, name);
        props_append(ps, name, item);
}

static void props_done(Props *ps) {
        for (size_t i = 0; i < ps->n; i++) {
                free(ps->p[i].name);
                strv_free(ps->p[i].items);
        }
        free(ps->p);
        *ps = (Props) {};
}

static char *joined(char * const *l, const char *sep) {
        size_t n = 1;
        char *r;

        STRV_FOREACH(s, l)
                n += strlen(*s) + strlen(sep);
        r = calloc(1, n);
        STRV_FOREACH(s, l) {
                if (s != l)
                        strcat(r, sep);
                strcat(r, *s);
        }
        return r;
}

/* --- the unit-file side -------------------------------------------------------------------- */

typedef enum Norm {
        N_STR, N_BOOL, N_SIZE, N_UINT, N_SEC, N_CPU, N_MODE, N_CAPS, N_SECBITS, N_NS, N_ERRNO,
        N_RLIMIT, N_WORDS, N_ALLOW_DENY, N_IP, N_BIND, N_TMPFS, N_EXEC, N_EXIT, N_DEVICE,
} Norm;

static const struct { const char *key; Norm norm; const char *property; } text_keys[] = {
        { "Description", N_STR, NULL }, { "Documentation", N_WORDS, NULL }, { "SourcePath", N_STR, NULL },
        { "RequiresMountsFor", N_WORDS, NULL }, { "Wants", N_WORDS, NULL }, { "Requires", N_WORDS, NULL }, { "After", N_WORDS, NULL },
        { "StopWhenUnneeded", N_BOOL, NULL }, { "StartLimitIntervalSec", N_SEC, "StartLimitIntervalUSec" },
        { "Type", N_STR, NULL }, { "NotifyAccess", N_STR, NULL }, { "ExecStart", N_EXEC, NULL }, { "Restart", N_STR, NULL },
        { "ExecStartPre", N_EXEC, NULL }, { "ExecStopPost", N_EXEC, NULL },
        { "RestartSec", N_SEC, "RestartUSec" }, { "RestartSteps", N_UINT, NULL },          /* RestartSteps= 254+ */
        { "RestartMaxDelaySec", N_SEC, "RestartMaxDelayUSec" },                              /* 254+ */
        { "StateDirectoryMode", N_MODE, NULL },                                               /* 257+, a dynamic user */
        { "RestartPreventExitStatus", N_EXIT, NULL }, { "KillMode", N_STR, NULL },
        { "TimeoutStopSec", N_SEC, "TimeoutStopUSec" }, { "RuntimeMaxSec", N_SEC, "RuntimeMaxUSec" },
        { "DynamicUser", N_BOOL, NULL }, { "User", N_STR, NULL }, { "StateDirectory", N_WORDS, NULL }, { "Environment", N_WORDS, NULL },
        { "PrivateUsers", N_BOOL, NULL }, { "NoNewPrivileges", N_BOOL, NULL },
        { "CapabilityBoundingSet", N_CAPS, NULL }, { "AmbientCapabilities", N_CAPS, NULL }, { "SecureBits", N_SECBITS, NULL },
        { "ProtectSystem", N_STR, NULL }, { "ProtectHome", N_STR, NULL }, { "PrivateTmp", N_BOOL, NULL },
        { "PrivateDevices", N_BOOL, NULL }, { "DevicePolicy", N_STR, NULL }, { "DeviceAllow", N_DEVICE, NULL }, { "PrivateNetwork", N_BOOL, NULL },
        { "PrivateIPC", N_BOOL, NULL }, { "PrivateMounts", N_BOOL, NULL }, { "ProtectKernelTunables", N_BOOL, NULL },
        { "ProtectKernelModules", N_BOOL, NULL }, { "ProtectKernelLogs", N_BOOL, NULL }, { "ProtectClock", N_BOOL, NULL },
        { "ProtectHostname", N_BOOL, NULL }, { "ProtectControlGroups", N_BOOL, NULL }, { "ProtectProc", N_STR, NULL },
        { "ProcSubset", N_STR, NULL }, { "RestrictNamespaces", N_NS, NULL }, { "RestrictSUIDSGID", N_BOOL, NULL },
        { "RestrictRealtime", N_BOOL, NULL }, { "LockPersonality", N_BOOL, NULL }, { "MemoryDenyWriteExecute", N_BOOL, NULL },
        { "KeyringMode", N_STR, NULL }, { "RemoveIPC", N_BOOL, NULL }, { "UMask", N_MODE, NULL }, { "LimitCORE", N_RLIMIT, NULL },
        { "SystemCallArchitectures", N_WORDS, NULL }, { "SystemCallFilter", N_ALLOW_DENY, NULL },
        { "SystemCallErrorNumber", N_ERRNO, NULL }, { "RestrictAddressFamilies", N_ALLOW_DENY, NULL },
        { "IPAddressDeny", N_IP, NULL }, { "IPAddressAllow", N_IP, NULL }, { "TemporaryFileSystem", N_TMPFS, NULL },
        { "InaccessiblePaths", N_WORDS, NULL }, { "BindPaths", N_BIND, NULL }, { "BindReadOnlyPaths", N_BIND, NULL },
        { "MemoryMax", N_SIZE, NULL }, { "MemorySwapMax", N_SIZE, NULL }, { "TasksMax", N_UINT, NULL },
        { "MemoryPressureWatch", N_STR, NULL },   /* 254+ (lib/profile/systemd-version.c) */
        { "CPUQuota", N_CPU, "CPUQuotaPerSecUSec" }, { "StandardOutput", N_STR, NULL }, { "StandardError", N_STR, NULL },
        { "What", N_STR, NULL }, { "Where", N_STR, NULL }, { "Type", N_STR, NULL }, { "Options", N_STR, NULL }, { "DirectoryMode", N_MODE, NULL },
};

static char *expand(const char *v, const char *instance) {
        char *r = calloc(1, strlen(v) * 2 + strlen(instance) * 8 + 1), *t = r;

        for (const char *p = v; *p; p++) {
                if (*p == '%' && p[1] == '%')
                        *t++ = '%', p++;
                else if (*p == '%' && p[1] == 'i')
                        t = stpcpy(t, instance), p++;
                else
                        *t++ = *p;
        }
        return r;
}

static char **words(const char *v) {
        char **l = NULL;
        const char *reason;
        assert_se(cmdline_split(v, &l, &reason) >= 0);
        return l;
}

static void text_ip(Props *ps, const char *name, const char *w) {
        static const struct { const char *name, *items[2]; } shortcuts[] = {
                { "any",        { "inet 0.0.0.0/0",     "inet6 ::/0" } },
                { "localhost",  { "inet 127.0.0.0/8",   "inet6 ::1/128" } },
                { "link-local", { "inet 169.254.0.0/16", "inet6 fe80::/64" } },
                { "multicast",  { "inet 224.0.0.0/4",   "inet6 ff00::/8" } },
        };
        for (size_t i = 0; i < ELEMENTSOF(shortcuts); i++)
                if (streq(w, shortcuts[i].name)) {
                        props_append(ps, name, shortcuts[i].items[0]);
                        props_append(ps, name, shortcuts[i].items[1]);
                        return;
                }
        props_append(ps, name, w); /* literal prefixes are not part of the profile */
}

static void text_assign(Props *ps, const char *key, const char *value, const char *instance, bool *unknown) {
        char buf[512];
        size_t i;

        for (i = 0; i < ELEMENTSOF(text_keys) && !streq(text_keys[i].key, key); i++)
                ;
        if (i == ELEMENTSOF(text_keys)) {
                diag("the test has no normaliser for %s=", key);
                *unknown = true;
                return;
        }
        const char *name = text_keys[i].property ?: key;
        _cleanup_free_ char *v = expand(value, instance);
        _cleanup_strv_free_ char **w = NULL;
        uint64_t u = 0;

        switch (text_keys[i].norm) {
        case N_STR:
                props_set(ps, name, v);
                return;
        case N_BOOL:
                props_set(ps, name, parse_boolean(value) ? "yes" : "no");
                return;
        case N_SIZE:
                if (streq(value, "infinity"))
                        u = UINT64_MAX;
                else
                        assert_se(parse_size(value, &u) >= 0);
                break;
        case N_UINT:
                assert_se(parse_uint64(value, &u) >= 0);
                break;
        case N_SEC:
                assert_se(parse_timespan(value, &u) >= 0);
                break;
        case N_CPU: {
                unsigned long long percent;
                assert_se(sscanf(value, "%llu%%", &percent) == 1);
                u = percent * 10000ULL;
                break;
        }
        case N_MODE:
                u = strtoull(value, NULL, 8);
                break;
        case N_CAPS:
                assert_se(isempty(value));
                u = 0;
                break;
        case N_SECBITS:
                assert_se(streq(value, "noroot-locked"));
                u = 2; /* 1 << SECURE_NOROOT_LOCKED */
                break;
        case N_NS:
                assert_se(streq(value, "yes"));
                u = 0; /* no namespace type allowed */
                break;
        case N_ERRNO:
                assert_se(streq(value, "EPERM"));
                u = 1;
                break;
        case N_RLIMIT:
                assert_se(parse_uint64(value, &u) >= 0);
                {
                        char soft[64];
                        snprintf(buf, sizeof buf, "%llu", (unsigned long long) u);
                        snprintf(soft, sizeof soft, "%sSoft", name);
                        props_set(ps, name, buf);
                        props_set(ps, soft, buf);
                }
                return;
        case N_WORDS:
        case N_IP:
        case N_BIND:
        case N_TMPFS:
                w = words(v);
                if (!w[0]) {
                        props_reset(ps, name);
                        return;
                }
                STRV_FOREACH(x, w) {
                        const char *src = *x, *colon;
                        bool ignore = false;
                        if (text_keys[i].norm == N_WORDS)
                                props_append(ps, name, *x);
                        else if (text_keys[i].norm == N_IP)
                                text_ip(ps, name, *x);
                        else if (text_keys[i].norm == N_TMPFS) {
                                snprintf(buf, sizeof buf, "%s%s", *x, strchr(*x, ':') ? "" : ":");
                                props_append(ps, name, buf);
                        } else {
                                if (*src == '-')
                                        ignore = true, src++;
                                colon = strchr(src, ':');
                                if (colon)
                                        snprintf(buf, sizeof buf, "%s%s:rbind", ignore ? "-" : "", src);
                                else
                                        snprintf(buf, sizeof buf, "%s%s:%s:rbind", ignore ? "-" : "", src, src);
                                props_append(ps, name, buf);
                        }
                }
                return;
        case N_ALLOW_DENY:
                if (isempty(v)) {
                        props_reset(ps, name);
                        return;
                }
                w = words(v[0] == '~' ? v + 1 : v);
                {
                        _cleanup_free_ char *j = joined(w, " ");
                        snprintf(buf, sizeof buf, "%s:%s", v[0] == '~' ? "deny" : "allow", j);
                }
                props_append(ps, name, buf);
                return;
        case N_EXEC: {
                /* "+" (privileged) travels as <Name>Ex= with the "privileged" flag */
                bool plus = v[0] == '+';
                _cleanup_free_ char *ex = plus ? strprintf("%sEx", name) : NULL;
                w = words(v + plus);
                if (!w[0]) {
                        props_reset(ps, ex ?: name);
                        return;
                }
                {
                        _cleanup_free_ char *j = joined(w, "\x1f"), *item = strprintf("%s|%s|%s", w[0], j, plus ? "privileged" : "no");
                        props_append(ps, ex ?: name, item);
                }
                return;
        }
        case N_DEVICE:
                w = words(v);
                if (!w[0]) {
                        props_reset(ps, name);
                        return;
                }
                snprintf(buf, sizeof buf, "%s:%s", w[0], strempty(w[1]));
                props_append(ps, name, buf);
                return;
        case N_EXIT:
                w = words(v);
                {
                        _cleanup_free_ char *j = joined(w, ",");
                        snprintf(buf, sizeof buf, "status:%s;signal:", j);
                }
                props_append(ps, name, buf);
                return;
        }
        snprintf(buf, sizeof buf, "%llu", (unsigned long long) u);
        props_set(ps, name, buf);
}

/* Reads unit-file text as systemd would, files in order. */
static bool text_props(const char *text, const char *instance, Props *ps) {
        _cleanup_free_ char *copy = strdup(text);
        bool unknown = false;
        char *save = NULL;

        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *eq;
                if (line[0] == '#' || line[0] == '[' || !(eq = strchr(line, '=')))
                        continue;
                *eq = 0;
                text_assign(ps, line, eq + 1, instance, &unknown);
        }
        return !unknown;
}

static char *render_text(const UnitSettings *a, const UnitSettings *b) {
        char *buf = NULL;
        size_t n;
        FILE *f = open_memstream(&buf, &n);

        assert_se(f);
        if (a)
                assert_se(unit_settings_write(f, a) >= 0);
        if (b)
                assert_se(unit_settings_write(f, b) >= 0);
        assert_se(fclose(f) == 0);
        return buf;
}

/* --- the D-Bus side: the sealed message read back, by signature only ---------------------- */

static int decode_array(sd_bus_message *m, const char *name, const char *contents, Props *ps) {
        const char *elem = contents + 1;
        bool any = false;
        char buf[1024];
        int r;

        assert_se(sd_bus_message_enter_container(m, 'a', elem) >= 0);
        for (;;) {
                if (streq(elem, "s")) {
                        const char *s;
                        r = sd_bus_message_read(m, "s", &s);
                        if (r > 0)
                                snprintf(buf, sizeof buf, "%s", s);
                } else if (streq(elem, "(ss)")) {
                        const char *a, *b;
                        r = sd_bus_message_read(m, "(ss)", &a, &b);
                        if (r > 0)
                                snprintf(buf, sizeof buf, "%s:%s", a, b);
                } else if (streq(elem, "(ssbt)")) {
                        const char *a, *b;
                        int ign;
                        uint64_t flags;
                        r = sd_bus_message_read(m, "(ssbt)", &a, &b, &ign, &flags);
                        if (r > 0)
                                snprintf(buf, sizeof buf, "%s%s:%s:%s", ign ? "-" : "", a, b, flags == 16384 ? "rbind" : "norbind");
                } else if (streq(elem, "(sasb)")) {
                        const char *path;
                        char **argv = NULL;
                        int ign;
                        r = sd_bus_message_enter_container(m, 'r', "sasb");
                        if (r > 0) {
                                assert_se(sd_bus_message_read(m, "s", &path) > 0);
                                assert_se(sd_bus_message_read_strv(m, &argv) > 0);
                                assert_se(sd_bus_message_read(m, "b", &ign) > 0);
                                assert_se(sd_bus_message_exit_container(m) >= 0);
                                _cleanup_free_ char *j = joined(argv, "\x1f");
                                snprintf(buf, sizeof buf, "%s|%s|%s", path, j, ign ? "yes" : "no");
                                strv_free(argv);
                        }
                } else if (streq(elem, "(sasas)")) {
                        const char *path;
                        char **argv = NULL, **flags = NULL;
                        r = sd_bus_message_enter_container(m, 'r', "sasas");
                        if (r > 0) {
                                assert_se(sd_bus_message_read(m, "s", &path) > 0);
                                assert_se(sd_bus_message_read_strv(m, &argv) > 0);
                                assert_se(sd_bus_message_read_strv(m, &flags) > 0);
                                assert_se(sd_bus_message_exit_container(m) >= 0);
                                _cleanup_free_ char *j = joined(argv, "\x1f"), *fl = joined(flags, ",");
                                snprintf(buf, sizeof buf, "%s|%s|%s", path, j, fl);
                                strv_free(argv);
                                strv_free(flags);
                        }
                } else if (streq(elem, "(iayu)")) {
                        int32_t family;
                        const void *addr;
                        size_t sz;
                        uint32_t len;
                        char a[INET6_ADDRSTRLEN];
                        r = sd_bus_message_enter_container(m, 'r', "iayu");
                        if (r > 0) {
                                assert_se(sd_bus_message_read(m, "i", &family) > 0);
                                assert_se(sd_bus_message_read_array(m, 'y', &addr, &sz) > 0);
                                assert_se(sd_bus_message_read(m, "u", &len) > 0);
                                assert_se(sd_bus_message_exit_container(m) >= 0);
                                assert_se(sz == (family == AF_INET ? 4U : 16U));
                                assert_se(inet_ntop(family, addr, a, sizeof a));
                                snprintf(buf, sizeof buf, "%s %s/%u", family == AF_INET ? "inet" : "inet6", a, len);
                        }
                } else {
                        diag("%s: unexpected array type a%s", name, elem);
                        return -EINVAL;
                }
                assert_se(r >= 0);
                if (r == 0)
                        break;
                any = true;
                props_append(ps, name, buf);
        }
        assert_se(sd_bus_message_exit_container(m) >= 0);
        if (!any)
                props_reset(ps, name);
        return 0;
}

static int decode_property(sd_bus_message *m, Props *ps) {
        const char *name, *contents;
        char buf[4096];
        char type;

        assert_se(sd_bus_message_enter_container(m, 'r', "sv") > 0);
        assert_se(sd_bus_message_read(m, "s", &name) > 0);
        assert_se(sd_bus_message_peek_type(m, &type, &contents) > 0);
        assert_se(sd_bus_message_enter_container(m, 'v', contents) > 0);
        if (streq(contents, "s")) {
                const char *s;
                assert_se(sd_bus_message_read(m, "s", &s) > 0);
                props_set(ps, name, s);
        } else if (streq(contents, "b")) {
                int b;
                assert_se(sd_bus_message_read(m, "b", &b) > 0);
                props_set(ps, name, b ? "yes" : "no");
        } else if (streq(contents, "t") || streq(contents, "u") || streq(contents, "i")) {
                uint64_t t = 0;
                uint32_t u = 0;
                int32_t i = 0;
                if (contents[0] == 't')
                        assert_se(sd_bus_message_read(m, "t", &t) > 0);
                else if (contents[0] == 'u') {
                        assert_se(sd_bus_message_read(m, "u", &u) > 0);
                        t = u;
                } else {
                        assert_se(sd_bus_message_read(m, "i", &i) > 0);
                        t = (uint64_t) i;
                }
                snprintf(buf, sizeof buf, "%llu", (unsigned long long) t);
                props_set(ps, name, buf);
        } else if (streq(contents, "(bas)")) {
                int allow;
                char **l = NULL;
                assert_se(sd_bus_message_enter_container(m, 'r', "bas") > 0);
                assert_se(sd_bus_message_read(m, "b", &allow) > 0);
                assert_se(sd_bus_message_read_strv(m, &l) > 0);
                assert_se(sd_bus_message_exit_container(m) >= 0);
                if (!l || !l[0])
                        props_reset(ps, name);
                else {
                        _cleanup_free_ char *j = joined(l, " ");
                        snprintf(buf, sizeof buf, "%s:%s", allow ? "allow" : "deny", j);
                        props_append(ps, name, buf);
                }
                strv_free(l);
        } else if (streq(contents, "(aiai)")) {
                const void *st, *sig;
                size_t nst, nsig;
                char *t = buf;
                assert_se(sd_bus_message_enter_container(m, 'r', "aiai") > 0);
                assert_se(sd_bus_message_read_array(m, 'i', &st, &nst) >= 0);
                assert_se(sd_bus_message_read_array(m, 'i', &sig, &nsig) >= 0);
                assert_se(sd_bus_message_exit_container(m) >= 0);
                t = stpcpy(t, "status:");
                for (size_t k = 0; k < nst / sizeof(int32_t); k++)
                        t += sprintf(t, "%s%d", k ? "," : "", ((const int32_t *) st)[k]);
                t = stpcpy(t, ";signal:");
                for (size_t k = 0; k < nsig / sizeof(int32_t); k++)
                        t += sprintf(t, "%s%d", k ? "," : "", ((const int32_t *) sig)[k]);
                props_append(ps, name, buf);
        } else if (contents[0] == 'a') {
                if (decode_array(m, name, contents, ps) < 0)
                        return -EINVAL;
        } else {
                diag("%s: unexpected type %s", name, contents);
                return -EINVAL;
        }
        assert_se(sd_bus_message_exit_container(m) >= 0);
        assert_se(sd_bus_message_exit_container(m) >= 0);
        return 0;
}

/* A bus that never connects: enough to build and seal messages (sd-bus refuses an unstarted one). */
static sd_bus *bus;

static void bus_setup(void) {
        int fds[2];

        assert_se(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) >= 0);
        assert_se(sd_bus_new(&bus) >= 0);
        assert_se(sd_bus_set_fd(bus, fds[0], fds[0]) >= 0);
        assert_se(sd_bus_start(bus) >= 0);
        close(fds[1]);
}

/* Renders `a` then `b` (NULL: none) into one a(sv) and reads it back; returns the renderer's result. */
static int bus_props(const UnitSettings *a, const UnitSettings *b, const char *instance, Props *ps) {
        sd_bus_message *m = NULL;
        int r;

        assert_se(sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                                 "org.freedesktop.systemd1.Manager", "StartTransientUnit") >= 0);
        assert_se(sd_bus_message_open_container(m, 'a', "(sv)") >= 0);
        r = a ? profile_bus_append(m, a, instance) : 0;
        if (r >= 0 && b)
                r = profile_bus_append(m, b, instance);
        if (r < 0) {
                sd_bus_message_unref(m);
                return r;
        }
        assert_se(sd_bus_message_close_container(m) >= 0);
        assert_se(sd_bus_message_seal(m, 1, 0) >= 0);
        assert_se(sd_bus_message_rewind(m, true) >= 0);
        assert_se(sd_bus_message_enter_container(m, 'a', "(sv)") > 0);
        while ((r = sd_bus_message_at_end(m, false)) == 0)
                if (decode_property(m, ps) < 0) {
                        r = -EINVAL;
                        break;
                }
        sd_bus_message_unref(m);
        return r < 0 ? r : 0;
}

/* --- the comparison -------------------------------------------------------------------------- */

static bool props_equal(const Props *text, const Props *busp) {
        bool same = text->n == busp->n;

        for (size_t i = 0; i < text->n; i++) {
                const Prop *t = &text->p[i], *b = NULL;
                for (size_t j = 0; j < busp->n; j++)
                        if (streq(busp->p[j].name, t->name))
                                b = &busp->p[j];
                _cleanup_free_ char *tv = joined(t->items, " | "), *bv = b ? joined(b->items, " | ") : NULL;
                if (!b || !streq(tv, bv)) {
                        diag("  %s: unit file: %s", t->name, tv);
                        diag("  %s: D-Bus:     %s", t->name, bv ?: "(missing)");
                        same = false;
                }
        }
        for (size_t j = 0; j < busp->n; j++) {
                bool found = false;
                for (size_t i = 0; i < text->n; i++)
                        found = found || streq(text->p[i].name, busp->p[j].name);
                if (!found) {
                        diag("  %s: only on D-Bus", busp->p[j].name);
                        same = false;
                }
        }
        return same;
}

static size_t props_count(const Props *ps, const char *name) {
        for (size_t i = 0; i < ps->n; i++)
                if (streq(ps->p[i].name, name))
                        return strv_length(ps->p[i].items);
        return 0;
}

#define BASE_CONF "[Sandbox]\nMemory=1G\n[Broker]\nSocket=/run/cloister/broker.sock\n"

/* Loads `role_text`, renders template + drop-in both ways, compares. */
static void compare_role(const char *what, const char *conf, const char *role_text) {
        RoleLoad l = test_role_load(tmpdir, conf, "agent.role", role_text, NULL);
        UnitSettings st = {}, rs = {};
        Props tp = {}, bp = {};
        _cleanup_free_ char *text = NULL;
        bool known;

        if (!ok(l.role, "%s: the role loads", what)) {
                diag("%s", l.err);
                test_role_load_done(&l);
                return;
        }
        assert_se(profile_static(&st) >= 0);
        assert_se(profile_role(l.role, l.conf, &rs) >= 0);
        text = render_text(&st, &rs);
        known = text_props(text, l.role->name, &tp);
        if (is_int(bus_props(&st, &rs, l.role->name, &bp), 0, "%s: the D-Bus renderer takes every directive", what) && known)
                ok(props_equal(&tp, &bp), "%s: unit file and D-Bus properties agree (%zu properties)", what, tp.n);
        else
                ok(false, "%s: unit file and D-Bus properties agree", what);
        ok(props_count(&bp, "ExecStart") == 1, "%s: exactly one ExecStart= after the template's is reset", what);

        /* the role's private /tmp mount unit: an auxiliary unit of a run */
        UnitSettings ms = {};
        Props mt = {}, mb = {};
        _cleanup_free_ char *mtext = NULL;
        assert_se(profile_tmp_mount(l.role, "tmp", NULL, &ms) >= 0);
        mtext = render_text(&ms, NULL);
        known = text_props(mtext, l.role->name, &mt);
        if (is_int(bus_props(&ms, NULL, l.role->name, &mb), 0, "%s: the /tmp mount unit renders", what) && known)
                ok(props_equal(&mt, &mb), "%s: the /tmp mount unit agrees", what);
        else
                ok(false, "%s: the /tmp mount unit agrees", what);

        props_done(&tp);
        props_done(&bp);
        props_done(&mt);
        props_done(&mb);
        unit_settings_done(&st);
        unit_settings_done(&rs);
        unit_settings_done(&ms);
        test_role_load_done(&l);
}

/* The role shapes the renderers are compared on (and that --print records for tests/golden/). */
static const struct { const char *what, *conf, *role; } shapes[] = {
        { "none with mounts and limits", BASE_CONF,
          "[Role]\nDescription=100% of a reviewer\nExec=/usr/bin/python3 -c \"print('$HOME %i')\"\n"
          "[Sandbox]\nNetwork=none\nMemory=512M\nCPUs=1.5\nTasks=64\nTmpSize=32M\nShmSize=16M\n"
          "Timeout=15min\nStopGrace=3s\nInput=/srv/in\nOutput=/srv/out\n"
          "ReadOnlyMount=/srv/data:/data\nReadOnlyMount=/srv/models:/models:ro\n" },
        { "daemon-only with a service grant and environment", BASE_CONF,
          "[Role]\nExec=/bin/true\nEnvironment=A=b c\n[Sandbox]\nNetwork=daemon-only\nService=inference\n"
          "[LLM]\nModel=qwen3.6:35b\nContextSize=8192\n" },
        { "daemon-only without a broker socket", "[Sandbox]\nMemory=1G\n",
          "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=daemon-only\n" },
        { "egress", BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=egress\nTimeout=0\n" },
        { "host", "[Sandbox]\nMemory=1G\nAllowHostNetwork=yes\n",
          "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=host\n" },
        { "durable, named user, JIT", BASE_CONF,
          "[Role]\nExec=/bin/true\nDurability=durable\nUser=nobody\n[Sandbox]\nJIT=yes\n" },
        /* DeviceAllow= and the start checks' ExecStartPre= (on a host without NVIDIA nodes,
         * GPUs=all falls back to /dev/nvidia0 with a warning) */
        { "GPUs=0", BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nGPUs=0\n" },
        { "GPUs=all", BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nGPUs=all\n" },
};

static void test_roles(void) {
        for (size_t i = 0; i < ELEMENTSOF(shapes); i++)
                compare_role(shapes[i].what, shapes[i].conf, shapes[i].role);
}

static void print_props(const char *unit, const Props *ps) {
        for (size_t i = 0; i < ps->n; i++) {
                _cleanup_free_ char *v = joined(ps->p[i].items, " | ");
                const char *t = startswith(v, tmpdir);  /* the test's own directory varies */
                printf("%s: %s=%s%s\n", unit, ps->p[i].name, t ? "@TMP@" : "", t ?: v);
        }
}

/* --print: the D-Bus properties of every shape, decoded to text, for tests/golden/bus.txt. */
static int print_shapes(void) {
        for (size_t i = 0; i < ELEMENTSOF(shapes); i++) {
                RoleLoad l = test_role_load(tmpdir, shapes[i].conf, "agent.role", shapes[i].role, NULL);
                UnitSettings st = {}, rs = {}, ms = {};
                Props bp = {}, mb = {};
                int r;

                printf("=== %s ===\n", shapes[i].what);
                if (!l.role) {
                        printf("role refused: %s\n", l.err);
                        test_role_load_done(&l);
                        continue;
                }
                assert_se(profile_static(&st) >= 0);
                assert_se(profile_role(l.role, l.conf, &rs) >= 0);
                r = bus_props(&st, &rs, l.role->name, &bp);
                if (r < 0)
                        printf("service: refused (%s)\n", strerror(-r));
                else
                        print_props("service", &bp);
                assert_se(profile_tmp_mount(l.role, "tmp", NULL, &ms) >= 0);
                r = bus_props(&ms, NULL, l.role->name, &mb);
                if (r < 0)
                        printf("tmp mount: refused (%s)\n", strerror(-r));
                else
                        print_props("tmp mount", &mb);
                props_done(&bp);
                props_done(&mb);
                unit_settings_done(&st);
                unit_settings_done(&rs);
                unit_settings_done(&ms);
                test_role_load_done(&l);
        }
        return 0;
}

/* Fail closed: what the table does not know is an error, never dropped. */
static void test_refusals(void) {
        UnitSettings s = {};
        Props p = {};

        assert_se(unit_settings_add(&s, "Service", "PrivateNetwork", "yes") >= 0);
        assert_se(unit_settings_add(&s, "Service", "NoSuchDirective", "yes") >= 0);
        test_stderr_begin();
        is_int(bus_props(&s, NULL, "x", &p), -EOPNOTSUPP, "a directive the table does not know is refused");
        free(test_stderr_end());
        unit_settings_done(&s);
        props_done(&p);

        static const char *const bad[][2] = {
                { "Description", "agent %u" },          /* a specifier only a unit file resolves */
                { "ExecStart", "-/bin/true" },          /* an Exec prefix */
                { "ExecStartPre", "+-/bin/true" },      /* "+" with another prefix */
                { "ExecStopPost", "!/bin/true" },       /* a prefix other than "+" */
                { "ExecStart", "true" },                /* not an absolute path */
                { "RestrictNamespaces", "no" },         /* a form the table does not marshal */
                { "CapabilityBoundingSet", "CAP_NET_RAW" },
                { "IPAddressDeny", "not-an-address" },
                { "MemoryMax", "lots" },
                { "StandardOutput", "file:/tmp/x" },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                const char *section = streq(bad[i][0], "Description") ? "Unit" : "Service";
                int r;
                assert_se(unit_settings_add(&s, section, bad[i][0], bad[i][1]) >= 0);
                test_stderr_begin();
                r = bus_props(&s, NULL, "x", &p);
                free(test_stderr_end());
                ok(r == -EOPNOTSUPP || r == -EBADMSG, "%s=%s is refused (%d)", bad[i][0], bad[i][1], r);
                unit_settings_done(&s);
                props_done(&p);
        }
        ok(streq_ptr(profile_bus_property("Service", "RuntimeMaxSec"), "RuntimeMaxUSec"), "RuntimeMaxSec= is RuntimeMaxUSec on the bus");
        ok(!profile_bus_property("Service", "ExecStartPost"), "ExecStartPost= is not in the table");
}

int main(int argc, char *argv[]) {
        tmpdir = test_tmpdir_new();
        bus_setup();

        if (argc == 2 && streq(argv[1], "--print")) {
                int r = print_shapes();
                sd_bus_flush_close_unref(bus);
                test_tmpdir_remove(tmpdir);
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }

        /* every versioned row rendered (lib/profile/systemd-version.c), whatever systemd runs here */
        systemd_version_set(SYSTEMD_VERSION_NEWEST);
        test_roles();
        test_refusals();

        sd_bus_flush_close_unref(bus);
        test_tmpdir_remove(tmpdir);
        return tap_done();
}
