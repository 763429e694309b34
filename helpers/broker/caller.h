/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "macro.h"

/* What one caller (one unit, as PID 1 attests it) may hold of the broker at once, so that
 * one role's abuse does not delay another's requests. Peers in no unit share one entry. */
#define CALLER_CONNECTIONS_MAX 512u
/* Request bodies and answer bytes held for a caller's requests, all together. MHD's own
 * per-connection memory (64 KiB) is bounded by the connection cap. */
#define CALLER_BYTES_MAX ((uint64_t) 64 * 1024 * 1024)
/* A connection must complete a request's headers within this of being accepted, or of its
 * previous answer ending (keep-alive). */
#define CALLER_HEADER_DEADLINE_USEC ((uint64_t) 10 * 1000000)

typedef struct Caller {
        char *unit;             /* NULL: not in a unit */
        unsigned connections;
        uint64_t bytes;
} Caller;

typedef struct CallerTable {
        Caller **callers;
        size_t n;
} CallerTable;

/* The caller for unit, added if new, with one more connection counted. NULL on OOM. */
Caller *caller_connect(CallerTable *t, const char *unit);
/* One connection fewer; the entry goes when nothing is counted for it any more. */
void caller_disconnect(CallerTable *t, Caller *c);
void caller_table_done(CallerTable *t);

static inline bool caller_over_bytes(const Caller *c) {
        return c && c->bytes > CALLER_BYTES_MAX;
}
