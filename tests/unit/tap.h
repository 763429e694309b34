/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A minimal TAP producer (https://testanything.org). Test points go to stdout, diagnostics are
 * "# " lines on stdout too, so that meson shows them next to the failing point. The plan is
 * printed at the end (tap_done()), so a crash half-way leaves no plan and meson reports it. */

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned tap_count, tap_failed;

static inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...) {
        char buf[4096];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        /* Every line of a multi-line message gets its own "#". */
        for (char *line = buf, *nl; line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = 0;
                if (*line || nl)
                        printf("# %s\n", line);
        }
        fflush(stdout);
}

static inline bool tap_ok(bool pass, const char *file, int line, const char *expr,
                          const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static inline bool tap_ok(bool pass, const char *file, int line, const char *expr,
                          const char *fmt, ...) {
        char desc[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(desc, sizeof desc, fmt, ap);
        va_end(ap);
        for (char *p = desc; *p; p++)   /* a '#' would start a TAP directive */
                if (*p == '#' || *p == '\n')
                        *p = ' ';
        tap_count++;
        printf("%sok %u - %s\n", pass ? "" : "not ", tap_count, desc);
        if (!pass) {
                tap_failed++;
                diag("  Failed at %s:%d: %s", file, line, expr);
        }
        fflush(stdout);
        return pass;
}

/* ok(condition, "description", ...) */
#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

#define is_int(got, expected, ...) ({                                                   \
        long long _g = (long long) (got), _e = (long long) (expected);                  \
        bool _p = tap_ok(_g == _e, __FILE__, __LINE__, #got " == " #expected, __VA_ARGS__); \
        if (!_p)                                                                        \
                diag("       got: %lld\n  expected: %lld", _g, _e);                     \
        _p; })

#define is_u64(got, expected, ...) ({                                                   \
        uint64_t _g = (uint64_t) (got), _e = (uint64_t) (expected);                     \
        bool _p = tap_ok(_g == _e, __FILE__, __LINE__, #got " == " #expected, __VA_ARGS__); \
        if (!_p)                                                                        \
                diag("       got: %" PRIu64 "\n  expected: %" PRIu64, _g, _e);          \
        _p; })

#define is_str(got, expected, ...) ({                                                   \
        const char *_g = (got), *_e = (expected);                                       \
        bool _p = tap_ok(_g && _e ? strcmp(_g, _e) == 0 : _g == _e,                     \
                         __FILE__, __LINE__, #got " eq " #expected, __VA_ARGS__);       \
        if (!_p)                                                                        \
                diag("       got: \"%s\"\n  expected: \"%s\"", _g ?: "(null)", _e ?: "(null)"); \
        _p; })

/* like(haystack, needle, ...): the haystack contains the needle. */
#define like(hay, needle, ...) ({                                                       \
        const char *_h = (hay), *_n = (needle);                                         \
        bool _p = tap_ok(_h && strstr(_h, _n), __FILE__, __LINE__,                      \
                         #hay " contains " #needle, __VA_ARGS__);                        \
        if (!_p)                                                                        \
                diag("  \"%s\"\n  does not contain \"%s\"", _h ?: "(null)", _n);        \
        _p; })

#define unlike(hay, needle, ...) ({                                                     \
        const char *_h = (hay), *_n = (needle);                                         \
        bool _p = tap_ok(!_h || !strstr(_h, _n), __FILE__, __LINE__,                    \
                         #hay " lacks " #needle, __VA_ARGS__);                           \
        if (!_p)                                                                        \
                diag("  \"%s\"\n  contains \"%s\"", _h ?: "(null)", _n);                            \
        _p; })

static inline void tap_skip(const char *reason) {
        tap_count++;
        printf("ok %u # SKIP %s\n", tap_count, reason);
        fflush(stdout);
}

static inline void tap_bail_out(const char *reason) {
        printf("Bail out! %s\n", reason);
        fflush(stdout);
        _exit(99);
}

/* Prints the plan; returns the exit status for main(). */
static inline int tap_done(void) {
        printf("1..%u\n", tap_count);
        if (tap_failed)
                diag("%u of %u tests failed", tap_failed, tap_count);
        fflush(stdout);
        return tap_failed ? 1 : 0;
}
