/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "rate-limit.h"

#define WINDOW_SEC 60U

enum { REQUESTS, TOKENS, _COUNTERS };

typedef struct Bucket {
        uint64_t sec;           /* which second (now / USEC_PER_SEC) the counts belong to */
        uint64_t count[_COUNTERS];
} Bucket;

struct RateLimit {
        Bucket buckets[WINDOW_SEC];     /* indexed by sec % WINDOW_SEC */
        uint64_t concurrent;
        unsigned n_ref;
};

RateLimit *rate_limit_new(void) {
        RateLimit *r = calloc(1, sizeof(RateLimit));

        if (!r)
                return NULL;
        r->n_ref = 1;
        for (unsigned i = 0; i < WINDOW_SEC; i++)
                r->buckets[i].sec = UINT64_MAX;         /* never counted */
        return r;
}

RateLimit *rate_limit_ref(RateLimit *r) {
        if (r)
                r->n_ref++;
        return r;
}

RateLimit *rate_limit_free(RateLimit *r) {
        if (!r || --r->n_ref > 0)
                return NULL;
        return mfree(r);
}

static bool bucket_in_window(const Bucket *b, uint64_t sec) {
        return b->sec != UINT64_MAX && b->sec <= sec && sec - b->sec < WINDOW_SEC;
}

static Bucket *bucket_now(RateLimit *r, uint64_t now) {
        uint64_t sec = now / USEC_PER_SEC;
        Bucket *b = &r->buckets[sec % WINDOW_SEC];

        if (b->sec != sec)
                *b = (Bucket) { .sec = sec };
        return b;
}

static uint64_t saturating_add(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Seconds from `now` until the window's total of `counter` drops below `limit`; 0 if it
 * already is. Buckets leave the window oldest first, one per second. */
static unsigned wait_for(const RateLimit *r, uint64_t now, unsigned counter, uint64_t limit) {
        uint64_t sec = now / USEC_PER_SEC, total = 0;

        if (limit == UNSET_U64)
                return 0;
        for (unsigned i = 0; i < WINDOW_SEC; i++)
                if (bucket_in_window(&r->buckets[i], sec))
                        total = saturating_add(total, r->buckets[i].count[counter]);
        /* From the oldest second in the window to the newest. */
        for (uint64_t s = sec >= WINDOW_SEC - 1 ? sec - (WINDOW_SEC - 1) : 0; total >= limit && s <= sec; s++) {
                const Bucket *b = &r->buckets[s % WINDOW_SEC];
                uint64_t leaves;

                if (b->sec != s)
                        continue;
                total -= b->count[counter];
                if (total < limit) {
                        leaves = (s + WINDOW_SEC) * USEC_PER_SEC;
                        return (unsigned) ((leaves - now + USEC_PER_SEC - 1) / USEC_PER_SEC);
                }
        }
        return total >= limit ? 1 : 0;  /* limit 0: nothing ever fits */
}

int rate_limit_admit(RateLimit *r, const BrokerPolicy *p, uint64_t now, unsigned *ret_retry_after_sec) {
        unsigned wait_requests, wait_tokens, wait;

        if (p->max_concurrent != UNSET_U64 && r->concurrent >= p->max_concurrent) {
                if (ret_retry_after_sec)
                        *ret_retry_after_sec = 1;
                return -EBUSY;
        }
        wait_requests = wait_for(r, now, REQUESTS, p->requests_per_minute);
        wait_tokens = wait_for(r, now, TOKENS, p->tokens_per_minute);
        wait = wait_requests > wait_tokens ? wait_requests : wait_tokens;
        if (wait > 0) {
                if (ret_retry_after_sec)
                        *ret_retry_after_sec = wait;
                return -EAGAIN;
        }
        bucket_now(r, now)->count[REQUESTS]++;
        r->concurrent++;
        return 0;
}

void rate_limit_release(RateLimit *r) {
        if (r->concurrent > 0)
                r->concurrent--;
}

void rate_limit_add_tokens(RateLimit *r, uint64_t now, uint64_t tokens) {
        Bucket *b = bucket_now(r, now);

        b->count[TOKENS] = saturating_add(b->count[TOKENS], tokens);
}
