/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <sys/mount.h>

#include "cmdline.h"
#include "log.h"
#include "parse-util.h"
#include "directives.h"
#include "profile-bus.h"

const char *profile_bus_property(const char *section, const char *key) {
        const Directive *p = directive_find(section, key);
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

/* A property whose value is a container: "(sv)" with `name`, the variant of type `variant`,
 * and the variant's own container (`type`, `contents`), left open for the caller's items;
 * close_property() closes all three. */
static int open_property(sd_bus_message *m, const char *name, const char *variant, char type, const char *contents) {
        int r = sd_bus_message_open_container(m, 'r', "sv");

        if (r >= 0)
                r = sd_bus_message_append_basic(m, 's', name);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', variant);
        return r < 0 ? r : sd_bus_message_open_container(m, type, contents);
}

static int close_property(sd_bus_message *m, int r) {
        for (int i = 0; i < 3 && r >= 0; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

static int append_allow_deny(sd_bus_message *m, const char *name, const char *v) {
        _cleanup_strv_free_ char **words = NULL;
        int allow = v[0] != '~', r;

        r = split_words(allow ? v : v + 1, &words);
        if (r < 0)
                return r;
        r = open_property(m, name, "(bas)", 'r', "bas");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 'b', &allow);
        if (r >= 0)
                r = append_words_array(m, words);
        return close_property(m, r);
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
        r = open_property(m, name, variant, 'a', signature);
        STRV_FOREACH(w, words)
                if (r >= 0)
                        r = append_word(m, *w);
        return close_property(m, r);
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
        r = open_property(m, ex ?: name, privileged ? "a(sasas)" : "a(sasb)", 'a', privileged ? "(sasas)" : "(sasb)");
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
        return close_property(m, r);
}

/* One (ss) pair: ListenStream=PATH as (`first`, PATH); with `first` NULL, the value split at
 * `sep`: LoadCredential=ID:PATH, DeviceAllow=NODE [rwm] (GPUs=; the permissions may be
 * missing). An empty assignment resets the list, as in a unit file. */
static int append_pair(sd_bus_message *m, const char *name, const char *first, const char *v, char sep) {
        _cleanup_free_ char *copy = strdup(v);
        char *second = copy;
        int r;

        if (!copy)
                return -ENOMEM;
        if (!first && !isempty(v)) {
                second = strchr(copy, sep);
                if (second)
                        *second++ = 0;
                else if (sep == ' ')
                        second = copy + strlen(copy);
                else
                        return -EBADMSG;
                if (sep == ' ' && strchr(second, ' '))
                        return -EBADMSG;
                first = copy;
        }
        r = open_property(m, name, "a(ss)", 'a', "(ss)");
        if (r >= 0 && !isempty(v))
                r = sd_bus_message_append(m, "(ss)", first, second);
        return close_property(m, r);
}

/* Exit statuses only: signal names are not part of the profile. */
static int append_exit_status(sd_bus_message *m, const char *name, const char *v) {
        _cleanup_strv_free_ char **words = NULL;
        int r = split_words(v, &words);

        if (r < 0)
                return r;
        r = open_property(m, name, "(aiai)", 'r', "aiai");
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
        return close_property(m, r);
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

static int append_value(sd_bus_message *m, const Directive *p, const char *v) {
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
                        r = open_property(m, name, "as", 'a', "s");
                STRV_FOREACH(w, words)
                        if (r >= 0)
                                r = sd_bus_message_append_basic(m, 's', *w);
                return close_property(m, r);
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
        case BUS_DEVICE_ALLOW:
                return append_pair(m, name, NULL, v, ' ');
        case BUS_UINT32:
                if (parse_uint64(v, &u) < 0 || u > UINT32_MAX)
                        return -EBADMSG;
                return sd_bus_message_append(m, "(sv)", name, "u", (uint32_t) u);
        case BUS_CREDENTIAL:
                return append_pair(m, name, NULL, v, ':');
        case BUS_LISTEN:
                return append_pair(m, name, "Stream", v, 0);
        case BUS_NONE:
                return -EOPNOTSUPP;
        }
        return -EOPNOTSUPP;
}

static bool kind_expands_specifiers(DirectiveKind k) {
        return k == BUS_STRING || k == BUS_STRV || k == BUS_BIND || k == BUS_TMPFS || k == BUS_EXEC;
}

int profile_bus_append(sd_bus_message *m, const UnitSettings *s, const char *instance) {
        for (size_t i = 0; i < s->n; i++) {
                const UnitSetting *u = &s->items[i];
                const Directive *p = directive_find(u->section, u->key);
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
