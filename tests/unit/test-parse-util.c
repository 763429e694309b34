/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/basic/parse-util.c: the value grammars every configuration key is read with. */

#include "parse-util.h"
#include "tap.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define PiB (UINT64_C(1) << 50)
#define EiB (UINT64_C(1) << 60)

static void test_parse_boolean(void) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on", "YES", "True", "On" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off", "NO", "False", "OFF" };
        static const char *const bad[] = { "", "2", "yess", "enable", "oui", " yes", "yes ", "-1" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                is_int(parse_boolean(yes[i]), 1, "parse_boolean(\"%s\") is true", yes[i]);
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                is_int(parse_boolean(no[i]), 0, "parse_boolean(\"%s\") is false", no[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                is_int(parse_boolean(bad[i]), -EINVAL, "parse_boolean(\"%s\") is refused", bad[i]);
}

static void test_parse_size(void) {
        static const struct { const char *in; uint64_t out; } good[] = {
                { "512M", 512 * MiB },
                { "1G", GiB },
                { "1.5G", GiB + GiB / 2 },
                { "100", 100 },
                { "0", 0 },             /* the grammar allows it; the conf layer refuses 0 */
                { "1B", 1 },
                { "64K", 64 * KiB },
                { "2T", UINT64_C(2) << 40 },
                { "0.5K", 512 },
                { "1.25G", GiB + GiB / 4 },
                { "15E", 15 * EiB },
                { "1.5E", EiB + EiB / 2 },
        };
        static const char *const bad[] = {
                "", "M", "512MB", "512m", "512 M", " 512M", "512M ", "512X", "1.5",
                "1.5B", "1.G", ".5G", "1..5G", "-1M", "+1M", "1,5G", "infinity", "0x10",
                "1.1234567G", /* more decimals than the grammar allows */
        };
        uint64_t u;

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                u = 0xdeadbeef;
                if (is_int(parse_size(good[i].in, &u), 0, "parse_size(\"%s\") succeeds", good[i].in))
                        is_u64(u, good[i].out, "parse_size(\"%s\") = %" PRIu64, good[i].in, good[i].out);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ok(parse_size(bad[i], &u) < 0, "parse_size(\"%s\") is refused", bad[i]);

        /* Overflow is an error, never a wrapped value. */
        is_int(parse_size("16E", &u), -ERANGE, "parse_size(\"16E\") overflows (2^64)");
        is_int(parse_size("17179869184G", &u), -ERANGE, "parse_size(\"17179869184G\") overflows (2^64)");
        ok(parse_size("18446744073709551616", &u) < 0, "parse_size(2^64) is refused");
        ok(parse_size("99999999999999999999999", &u) < 0, "parse_size(23 digits) is refused");

        /* A fraction with a large suffix must not overflow in the intermediate product. */
        u = 0;
        if (is_int(parse_size("1.25E", &u), 0, "parse_size(\"1.25E\") succeeds"))
                is_u64(u, EiB + EiB / 4, "parse_size(\"1.25E\") = 1.25 * 2^60, not a wrapped product");
        u = 0;
        if (is_int(parse_size("1.5P", &u), 0, "parse_size(\"1.5P\") succeeds"))
                is_u64(u, PiB + PiB / 2, "parse_size(\"1.5P\") = 1.5 * 2^50");
        u = 0;
        if (is_int(parse_size("1.999999P", &u), 0, "parse_size(\"1.999999P\") succeeds"))
                is_u64(u, PiB + (uint64_t) (((unsigned __int128) 999999 * PiB) / 1000000),
                       "parse_size(\"1.999999P\") = 1.999999 * 2^50, not a wrapped product");
}

static void test_parse_timespan(void) {
        static const struct { const char *in; usec_t out; } good[] = {
                { "15min", 15 * 60 * USEC_PER_SEC },
                { "1h 30min", 90 * 60 * USEC_PER_SEC },
                { "1h30min", 90 * 60 * USEC_PER_SEC },
                { "90s", 90 * USEC_PER_SEC },
                { "500ms", 500 * USEC_PER_MSEC },
                { "30", 30 * USEC_PER_SEC },            /* bare number = seconds */
                { "0", 0 },
                { "1.5h", 90 * 60 * USEC_PER_SEC },
                { "10 sec", 10 * USEC_PER_SEC },
                { "2 minutes", 120 * USEC_PER_SEC },
                { "5m", 300 * USEC_PER_SEC },
                { "1d", 86400 * USEC_PER_SEC },
                { "1w", 7 * 86400 * USEC_PER_SEC },
                { "250us", 250 },
                { "2msec", 2 * USEC_PER_MSEC },
                { "1h 1m 1s 1ms 1us", 3661 * USEC_PER_SEC + USEC_PER_MSEC + 1 },
                { "0.5s", USEC_PER_SEC / 2 },
        };
        static const char *const bad[] = {
                "", " ", "abc", "15 parsecs", "15min!", "1h30xyz", "-5s", "s", "min",
                "1..5s", "1.s", ".5s", "infinity", "15mins", "5 m s", "1h,30min", "1e3",
        };
        usec_t u;

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                u = 0xdeadbeef;
                if (is_int(parse_timespan(good[i].in, &u), 0, "parse_timespan(\"%s\") succeeds", good[i].in))
                        is_u64(u, good[i].out, "parse_timespan(\"%s\") = %" PRIu64 "us", good[i].in, good[i].out);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ok(parse_timespan(bad[i], &u) < 0, "parse_timespan(\"%s\") is refused", bad[i]);
        ok(parse_timespan("999999999999y", &u) < 0, "parse_timespan() refuses an overflowing span");
        ok(parse_timespan("18446744073709551615s 1s", &u) < 0, "parse_timespan() refuses an overflowing sum");
}

static void test_format_timespan(void) {
        static const usec_t values[] = {
                0, 1, 999, USEC_PER_MSEC, 1500 * USEC_PER_MSEC, USEC_PER_SEC, 90 * USEC_PER_SEC,
                15 * 60 * USEC_PER_SEC, 3600 * USEC_PER_SEC, 1234567, 86400 * 365 * USEC_PER_SEC,
                UINT64_C(18446744073709551000),
        };
        char *s;

        s = format_timespan(0);
        is_str(s, "0s", "format_timespan(0)");
        free(s);
        s = format_timespan(15 * 60 * USEC_PER_SEC);
        is_str(s, "900s", "format_timespan(15min)");
        free(s);
        s = format_timespan(500 * USEC_PER_MSEC);
        is_str(s, "500ms", "format_timespan(500ms)");
        free(s);
        s = format_timespan(7);
        is_str(s, "7us", "format_timespan(7us)");
        free(s);

        for (size_t i = 0; i < ELEMENTSOF(values); i++) {
                usec_t back = 0xdeadbeef;
                s = format_timespan(values[i]);
                ok(s && parse_timespan(s, &back) == 0 && back == values[i],
                   "format_timespan(%" PRIu64 ") = \"%s\" reads back the same value", values[i], s ?: "(null)");
                free(s);
        }

        /* The largest value that is not UNSET_U64: 20 digits, read back digit by digit. */
        {
                usec_t v = UINT64_MAX - 1, back = 0;
                s = format_timespan(v);
                ok(s && parse_timespan(s, &back) == 0 && back == v,
                   "format_timespan(UINT64_MAX - 1) = \"%s\" reads back the same value", s ?: "(null)");
                free(s);
        }
}

static void test_parse_cpus(void) {
        static const struct { const char *in; unsigned out; } good[] = {
                { "1.5", 150 }, { "1", 100 }, { "2", 200 }, { "0.01", 1 }, { "0.5", 50 },
                { "2.25", 225 }, { "64", 6400 }, { "1.50", 150 },
        };
        static const char *const bad[] = {
                "0", "0.0", "0.00", "1.505", "0.001", "", "-1", "1.", ".5", "abc", "1,5", "1.5 ", "1%",
        };
        unsigned p;

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                p = 12345;
                if (is_int(parse_cpus(good[i].in, &p), 0, "parse_cpus(\"%s\") succeeds", good[i].in))
                        is_int(p, good[i].out, "parse_cpus(\"%s\") = %u%%", good[i].in, good[i].out);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ok(parse_cpus(bad[i], &p) < 0, "parse_cpus(\"%s\") is refused", bad[i]);
}

static void test_parse_uint_and_port(void) {
        uint64_t u;
        uint16_t port;

        ok(parse_uint64("42", &u) == 0 && u == 42, "parse_uint64(\"42\")");
        ok(parse_uint64("18446744073709551615", &u) == 0 && u == UINT64_MAX, "parse_uint64(UINT64_MAX)");
        ok(parse_uint64("18446744073709551616", &u) < 0, "parse_uint64(2^64) is refused");
        ok(parse_uint64("-1", &u) < 0, "parse_uint64(\"-1\") is refused");
        ok(parse_uint64("+1", &u) < 0, "parse_uint64(\"+1\") is refused");
        ok(parse_uint64(" 1", &u) < 0, "parse_uint64(\" 1\") is refused");
        ok(parse_uint64("1k", &u) < 0, "parse_uint64(\"1k\") is refused");
        ok(parse_uint64("", &u) < 0, "parse_uint64(\"\") is refused");

        ok(parse_port("7800", &port) == 0 && port == 7800, "parse_port(\"7800\")");
        ok(parse_port("1", &port) == 0 && port == 1, "parse_port(\"1\")");
        ok(parse_port("65535", &port) == 0 && port == 65535, "parse_port(\"65535\")");
        ok(parse_port("0", &port) < 0, "parse_port(\"0\") is refused");
        ok(parse_port("65536", &port) < 0, "parse_port(\"65536\") is refused");
        ok(parse_port("80x", &port) < 0, "parse_port(\"80x\") is refused");
}

static void test_name_is_valid(void) {
        static const char *const good[] = { "a", "0", "reviewer", "web-app_2", "a-", "a_", "9lives" };
        static const char *const bad[] = { "", "-a", "_a", "A", "Reviewer", "a.b", "a b", "a/b",
                                           "a:b", "\xc3\xa4", "a@b", "a\n" };
        char n63[64], n64[65];

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ok(name_is_valid(good[i]), "name_is_valid(\"%s\")", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ok(!name_is_valid(bad[i]), "!name_is_valid(\"%s\")", bad[i]);

        memset(n63, 'a', 63);
        n63[63] = 0;
        memset(n64, 'a', 64);
        n64[64] = 0;
        ok(name_is_valid(n63), "a name of 63 characters is valid");
        ok(!name_is_valid(n64), "a name of 64 characters is not");
}

static void test_path_check(void) {
        static const char *const good[] = { "/", "/srv/in", "/srv/my.data/x-1_2+3,4@5~6", "/a/.hidden",
                                            "/a/..x", "/a/...", "/opt/agents/review.py" };
        static const char *const bad[] = { "", "srv", "./srv", "/srv//x", "/srv/", "/a/./b", "/a/../b",
                                           "/a/..", "/a/.", "/a b", "/a$b", "/a%b", "/a:b", "/a\"b",
                                           "/a\\b", "/a\nb", "/a;b", "/a'b" };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ok(path_check(good[i]) == NULL, "path_check(\"%s\") accepts", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                const char *reason = path_check(bad[i]);
                ok(reason && *reason, "path_check(\"%s\") refuses (%s)", bad[i], reason ?: "no reason");
        }
}

static void test_unit_name_path_escape(void) {
        static const struct { const char *in, *out; } cases[] = {
                { "/run/cloister/var-tmp/x", "run-cloister-var\\x2dtmp-x" },
                { "/run/cloister/tmp/reviewer", "run-cloister-tmp-reviewer" },
                { "/", "-" },
                { "/srv/my dir", "srv-my\\x20dir" },
                { "/.hidden", "\\x2ehidden" },
                { "/a/.b", "a-.b" },
                { "/a_b:c", "a_b:c" },
                { "/a\\b", "a\\x5cb" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *e = unit_name_path_escape(cases[i].in);
                is_str(e, cases[i].out, "unit_name_path_escape(\"%s\")", cases[i].in);
                free(e);
        }
}

int main(void) {
        test_parse_boolean();
        test_parse_size();
        test_parse_timespan();
        test_format_timespan();
        test_parse_cpus();
        test_parse_uint_and_port();
        test_name_is_valid();
        test_path_check();
        test_unit_name_path_escape();
        return tap_done();
}
