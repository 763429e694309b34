/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <limits.h>
#include <math.h>

#include "parse-util.h"

int parse_boolean(const char *v) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(v, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(v, no[i]) == 0)
                        return 0;
        return -EINVAL;
}

int parse_uint64(const char *v, uint64_t *ret) {
        unsigned long long u;
        char *end;

        if (!isdigit((unsigned char) v[0]))
                return -EINVAL;
        errno = 0;
        u = strtoull(v, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end)
                return -EINVAL;
        *ret = u;
        return 0;
}

int parse_port(const char *v, uint16_t *ret) {
        uint64_t u;
        int r = parse_uint64(v, &u);
        if (r < 0)
                return r;
        if (u == 0 || u > 65535)
                return -ERANGE;
        *ret = (uint16_t) u;
        return 0;
}

/* Reads "123" or "123.45" into an integer part and a fraction scaled to `scale` digits.
 * Returns a pointer past the number, or NULL. */
static const char *parse_decimal(const char *p, uint64_t *ret_int, uint64_t *ret_frac,
                                 unsigned *ret_frac_digits, unsigned max_frac_digits) {
        uint64_t i = 0, f = 0;
        unsigned fd = 0;

        if (!isdigit((unsigned char) *p))
                return NULL;
        for (; isdigit((unsigned char) *p); p++) {
                uint64_t d = (uint64_t) (*p - '0');
                if (i > (UINT64_MAX - d) / 10)
                        return NULL;
                i = i * 10 + d;
        }
        if (*p == '.') {
                p++;
                if (!isdigit((unsigned char) *p))
                        return NULL;
                for (; isdigit((unsigned char) *p); p++) {
                        if (fd >= max_frac_digits)
                                return NULL;
                        f = f * 10 + (uint64_t) (*p - '0');
                        fd++;
                }
        }
        *ret_int = i;
        *ret_frac = f;
        *ret_frac_digits = fd;
        return p;
}

static uint64_t pow10u(unsigned n) {
        uint64_t r = 1;
        while (n--)
                r *= 10;
        return r;
}

int parse_size(const char *v, uint64_t *ret) {
        static const struct { char suffix; uint64_t factor; } table[] = {
                { 'B', 1ULL },
                { 'K', 1ULL << 10 }, { 'M', 1ULL << 20 }, { 'G', 1ULL << 30 },
                { 'T', 1ULL << 40 }, { 'P', 1ULL << 50 }, { 'E', 1ULL << 60 },
        };
        uint64_t i, f, factor = 1;
        unsigned fd;
        const char *p;

        p = parse_decimal(v, &i, &f, &fd, 6);
        if (!p)
                return -EINVAL;
        if (*p) {
                size_t k;
                for (k = 0; k < ELEMENTSOF(table); k++)
                        if (*p == table[k].suffix)
                                break;
                if (k >= ELEMENTSOF(table) || p[1])
                        return -EINVAL;
                factor = table[k].factor;
        }
        if (fd > 0 && factor == 1)
                return -EINVAL; /* fractions of a byte */
        if (i > UINT64_MAX / factor)
                return -ERANGE;
        unsigned __int128 frac = (unsigned __int128) f * factor / pow10u(fd);
        if (i * factor > UINT64_MAX - frac)
                return -ERANGE;
        *ret = i * factor + (uint64_t) frac;
        return 0;
}

int parse_cpus(const char *v, unsigned *ret_percent) {
        uint64_t i, f;
        unsigned fd;
        const char *p = parse_decimal(v, &i, &f, &fd, 2);

        if (!p || *p)
                return -EINVAL;
        if (i > 100000)
                return -ERANGE;
        f *= pow10u(2 - fd);
        if (i == 0 && f == 0)
                return -ERANGE;
        *ret_percent = (unsigned) (i * 100 + f);
        return 0;
}

int parse_timespan(const char *v, usec_t *ret) {
        static const struct { const char *suffix; usec_t usec; } table[] = {
                /* longest first among those sharing a prefix */
                { "seconds", USEC_PER_SEC }, { "second", USEC_PER_SEC }, { "sec", USEC_PER_SEC },
                { "s", USEC_PER_SEC },
                { "minutes", 60 * USEC_PER_SEC }, { "minute", 60 * USEC_PER_SEC },
                { "min", 60 * USEC_PER_SEC }, { "months", 2629800 * USEC_PER_SEC },
                { "month", 2629800 * USEC_PER_SEC }, { "msec", USEC_PER_MSEC },
                { "ms", USEC_PER_MSEC }, { "m", 60 * USEC_PER_SEC },
                { "hours", 3600 * USEC_PER_SEC }, { "hour", 3600 * USEC_PER_SEC },
                { "hr", 3600 * USEC_PER_SEC }, { "h", 3600 * USEC_PER_SEC },
                { "days", 86400 * USEC_PER_SEC }, { "day", 86400 * USEC_PER_SEC },
                { "d", 86400 * USEC_PER_SEC },
                { "weeks", 604800 * USEC_PER_SEC }, { "week", 604800 * USEC_PER_SEC },
                { "w", 604800 * USEC_PER_SEC },
                { "M", 2629800 * USEC_PER_SEC },
                { "years", 31557600 * USEC_PER_SEC }, { "year", 31557600 * USEC_PER_SEC },
                { "y", 31557600 * USEC_PER_SEC },
                { "usec", 1 }, { "us", 1 }, { "\xc2\xb5s", 1 },
        };
        const char *p = v;
        usec_t total = 0;
        bool any = false;

        for (;;) {
                uint64_t i, f;
                unsigned fd;
                usec_t mult = USEC_PER_SEC;
                size_t len = 0;

                while (*p == ' ')
                        p++;
                if (!*p)
                        break;
                p = parse_decimal(p, &i, &f, &fd, 9);
                if (!p)
                        return -EINVAL;
                while (*p == ' ')
                        p++;
                for (size_t k = 0; k < ELEMENTSOF(table); k++) {
                        size_t l = strlen(table[k].suffix);
                        if (strncmp(p, table[k].suffix, l) == 0 && !isalpha((unsigned char) p[l])) {
                                mult = table[k].usec;
                                len = l;
                                break;
                        }
                }
                if (len == 0 && isalpha((unsigned char) *p))
                        return -EINVAL;
                p += len;
                if (i > UINT64_MAX / mult)
                        return -ERANGE;
                unsigned __int128 frac = (unsigned __int128) f * mult / pow10u(fd);
                if (i * mult > UINT64_MAX - frac)
                        return -ERANGE;
                usec_t add = i * mult + (usec_t) frac;
                if (total > UINT64_MAX - add)
                        return -ERANGE;
                total += add;
                any = true;
        }
        if (!any)
                return -EINVAL;
        *ret = total;
        return 0;
}

char *format_timespan(usec_t u) {
        if (u % USEC_PER_SEC == 0)
                return strprintf("%llus", (unsigned long long) (u / USEC_PER_SEC));
        if (u % USEC_PER_MSEC == 0)
                return strprintf("%llums", (unsigned long long) (u / USEC_PER_MSEC));
        return strprintf("%lluus", (unsigned long long) u);
}

bool name_is_valid(const char *name) {
        size_t n = strlen(name);

        if (n < 1 || n > 63)
                return false;
        if (!islower((unsigned char) name[0]) && !isdigit((unsigned char) name[0]))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!islower((unsigned char) name[i]) && !isdigit((unsigned char) name[i]) &&
                    name[i] != '_' && name[i] != '-')
                        return false;
        return true;
}

bool utf8_is_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        while (*p) {
                unsigned n, c;

                if (*p < 0x80) {
                        p++;
                        continue;
                }
                if (*p >= 0xC2 && *p <= 0xDF)
                        n = 1, c = *p & 0x1F;
                else if (*p >= 0xE0 && *p <= 0xEF)
                        n = 2, c = *p & 0x0F;
                else if (*p >= 0xF0 && *p <= 0xF4)
                        n = 3, c = *p & 0x07;
                else
                        return false; /* a continuation byte, C0/C1 (overlong) or F5…FF */
                for (unsigned i = 1; i <= n; i++) {
                        if ((p[i] & 0xC0) != 0x80)
                                return false;
                        c = (c << 6) | (p[i] & 0x3F);
                }
                if ((n == 2 && c < 0x800) || (n == 3 && c < 0x10000) || c > 0x10FFFF ||
                    (c >= 0xD800 && c <= 0xDFFF))
                        return false;
                p += n + 1;
        }
        return true;
}

const char *path_check(const char *path) {
        if (path[0] != '/')
                return "not an absolute path";
        if (strlen(path) > PATH_MAX - 1)
                return "path too long";
        for (const char *p = path; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("/._-+,@~", *p))
                        return "contains a character other than letters, digits and /._-+,@~";
        if (strstr(path, "//"))
                return "not normalized (\"//\")";
        if (strcmp(path, "/") != 0 && path[strlen(path) - 1] == '/')
                return "not normalized (trailing \"/\")";
        for (const char *p = path; (p = strchr(p, '/')); p++) {
                const char *c = p + 1;
                size_t l = strcspn(c, "/");
                if ((l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return "not normalized (\".\" or \"..\")";
        }
        return NULL;
}

char *unit_name_path_escape(const char *path) {
        char *r, *t;

        while (*path == '/')
                path++;
        if (!*path)
                return strdup("-");
        r = malloc(strlen(path) * 4 + 1);
        if (!r)
                return NULL;
        t = r;
        for (const char *p = path; *p; p++) {
                if (*p == '/')
                        *t++ = '-';
                else if (isalnum((unsigned char) *p) || *p == '_' || *p == ':' ||
                         (*p == '.' && p != path))
                        *t++ = *p;
                else
                        t += sprintf(t, "\\x%02x", (unsigned char) *p);
        }
        *t = 0;
        return r;
}
