/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include "macro.h"

typedef uint64_t usec_t;
#define USEC_PER_SEC  ((usec_t) 1000000ULL)
#define USEC_PER_MSEC ((usec_t) 1000ULL)

/* All return 0 or -EINVAL/-ERANGE; none accept leading/trailing garbage. */
int parse_boolean(const char *v);                  /* 1, 0 or -EINVAL, systemd's spellings */
int parse_size(const char *v, uint64_t *ret);      /* bytes; K M G T P E are powers of 1024 */
int parse_timespan(const char *v, usec_t *ret);    /* systemd.time(7) spans; bare number = seconds */
int parse_uint64(const char *v, uint64_t *ret);
int parse_cpus(const char *v, unsigned *ret_percent); /* "1.5" → 150; > 0, at most two decimals */
int parse_port(const char *v, uint16_t *ret);      /* 1…65535 */

/* Formats so that parse_timespan() reads back the same value. */
char *format_timespan(usec_t u);

/* Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. */
bool utf8_is_valid(const char *s);

/* ^[a-z0-9][a-z0-9_-]{0,62}$ (docs/overview.md, Files and search paths). */
bool name_is_valid(const char *name);

/* Absolute, normalized (no "." / ".." / "//" / trailing "/"), and only characters that
 * need no quoting in a unit file. Returns NULL or a static reason. */
const char *path_check(const char *path);

/* Escape a path as systemd does for unit names ("/run/a-b" → "run-a\x2db"). */
char *unit_name_path_escape(const char *path);
