/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "macro.h"

/* What one caller (one unit, as PID 1 attests it) holds of the broker at once, so that one
 * role's abuse does not delay another's requests: its connections, and the request bodies
 * and answer bytes held for its requests (MHD's own per-connection memory, 64 KiB, is bounded
 * by the connection cap). The caps are [Broker] MaxConnectionsPerCaller= and
 * MaxBytesPerCaller= of cloister.conf. Peers in no unit share one entry. */

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

static inline bool caller_over_bytes(const Caller *c, uint64_t max) {
        return c && c->bytes > max;
}
