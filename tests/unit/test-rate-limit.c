/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/broker/policy/rate-limit.c: RequestsPerMinute=, TokensPerMinute= and MaxConcurrent= of one role over a
 * sliding 60 s window, and the Retry-After the broker sends with a 429 (cloister-broker(8)). */

#include "rate-limit.h"
#include "tap.h"

#define SEC(s) ((uint64_t) (s) * USEC_PER_SEC)
#define T0 SEC(1000)    /* monotonic clocks do not start at 0 */

static BrokerPolicy policy(uint64_t rpm, uint64_t tpm, uint64_t concurrent) {
        BrokerPolicy p;

        broker_policy_init(&p);
        p.requests_per_minute = rpm;
        p.tokens_per_minute = tpm;
        p.max_concurrent = concurrent;
        return p;
}

/* Admits and releases at once, as a request that ended straight away. */
static int request(RateLimit *r, const BrokerPolicy *p, uint64_t now, unsigned *retry) {
        int k = rate_limit_admit(r, p, now, retry);

        if (k >= 0)
                rate_limit_release(r);
        return k;
}

static void test_unlimited(void) {
        _cleanup_(rate_limit_freep) RateLimit *r = rate_limit_new();
        BrokerPolicy p = policy(UNSET_U64, UNSET_U64, UNSET_U64);
        bool all = true;

        for (unsigned i = 0; i < 10000; i++)
                all = all && rate_limit_admit(r, &p, T0 + i, NULL) == 0;
        rate_limit_add_tokens(r, T0, UINT64_MAX);
        rate_limit_add_tokens(r, T0, UINT64_MAX);
        ok(all, "no limits set: 10000 concurrent requests in one second are admitted");
        is_int(rate_limit_admit(r, &p, T0, NULL), 0, "no limits set: tokens do not block");
}

static void test_requests_per_minute(void) {
        _cleanup_(rate_limit_freep) RateLimit *r = rate_limit_new();
        BrokerPolicy p = policy(3, UNSET_U64, UNSET_U64);
        unsigned retry = 0;

        is_int(request(r, &p, T0 + 500 * USEC_PER_MSEC, &retry), 0, "request 1 at 0.5 s admitted");
        is_int(request(r, &p, T0 + SEC(10), &retry), 0, "request 2 at 10 s admitted");
        is_int(request(r, &p, T0 + SEC(20), &retry), 0, "request 3 at 20 s admitted");
        is_int(request(r, &p, T0 + SEC(30), &retry), -EAGAIN, "request 4 at 30 s: RequestsPerMinute=3 reached");
        is_int(retry, 30, "Retry-After: the request of second 0 leaves the window at 60 s, 30 s later");
        is_int(request(r, &p, T0 + SEC(59) + 999999, &retry), -EAGAIN, "at 59.999999 s still refused");
        is_int(retry, 1, "Retry-After is at least 1");
        is_int(request(r, &p, T0 + SEC(60), &retry), 0, "at 60 s the oldest request left the window: admitted");
        is_int(request(r, &p, T0 + SEC(60), &retry), -EAGAIN, "at 60 s the window is full again");
        is_int(retry, 10, "…until the request of second 10 leaves at 70 s");
}

static void test_refused_requests_are_not_counted(void) {
        _cleanup_(rate_limit_freep) RateLimit *r = rate_limit_new();
        BrokerPolicy p = policy(1, UNSET_U64, UNSET_U64);
        unsigned retry;

        is_int(request(r, &p, T0, &retry), 0, "one request admitted");
        for (unsigned i = 1; i < 60; i++)
                (void) request(r, &p, T0 + SEC(i), &retry);
        is_int(request(r, &p, T0 + SEC(60), &retry), 0, "refused requests do not count: admitted when the first leaves");
}

static void test_tokens_per_minute(void) {
        _cleanup_(rate_limit_freep) RateLimit *r = rate_limit_new();
        BrokerPolicy p = policy(UNSET_U64, 1000, UNSET_U64);
        unsigned retry = 0;

        is_int(request(r, &p, T0, &retry), 0, "first request admitted: no tokens counted yet");
        rate_limit_add_tokens(r, T0 + SEC(2), 600);
        is_int(request(r, &p, T0 + SEC(3), &retry), 0, "600 of 1000 tokens: admitted");
        rate_limit_add_tokens(r, T0 + SEC(5), 400);
        is_int(request(r, &p, T0 + SEC(6), &retry), -EAGAIN, "tokens added after the fact reach 1000: the next request waits");
        is_int(retry, 56, "Retry-After: the 600 tokens of second 2 leave at 62 s");
        is_int(request(r, &p, T0 + SEC(62), &retry), 0, "at 62 s 400 tokens remain: admitted");
}

static void test_tokens_retry_after_waits_for_enough(void) {
        _cleanup_(rate_limit_freep) RateLimit *r = rate_limit_new();
        BrokerPolicy p = policy(UNSET_U64, 100, UNSET_U64);
        unsigned retry = 0;

        rate_limit_add_tokens(r, T0 + SEC(1), 1);
        rate_limit_add_tokens(r, T0 + SEC(2), 200);
        rate_limit_add_tokens(r, T0 + SEC(3), 10);
        is_int(rate_limit_admit(r, &p, T0 + SEC(10), &retry), -EAGAIN, "211 of 100 tokens: refused");
        is_int(retry, 52, "Retry-After: not when 1 token leaves (51 s) but when the 200 of second 2 do (52 s)");
}

static void test_concurrency(void) {
        _cleanup_(rate_limit_freep) RateLimit *r = rate_limit_new();
        BrokerPolicy p = policy(UNSET_U64, UNSET_U64, 2);
        unsigned retry = 0;

        is_int(rate_limit_admit(r, &p, T0, &retry), 0, "slot 1 of 2");
        is_int(rate_limit_admit(r, &p, T0, &retry), 0, "slot 2 of 2");
        is_int(rate_limit_admit(r, &p, T0, &retry), -EBUSY, "MaxConcurrent=2: the third concurrent request is refused");
        is_int(retry, 1, "Retry-After 1 for a busy role");
        rate_limit_release(r);
        is_int(rate_limit_admit(r, &p, T0, &retry), 0, "a released slot is free again");
        is_int(rate_limit_admit(r, &p, T0 + SEC(120), &retry), -EBUSY, "slots do not expire with time, only on release");
        rate_limit_release(r);
        rate_limit_release(r);
        rate_limit_release(r);
        rate_limit_release(r);
        is_int(rate_limit_admit(r, &p, T0, &retry), 0, "more releases than admits do not underflow: 1 of 2");
        is_int(rate_limit_admit(r, &p, T0, &retry), 0, "2 of 2");
        is_int(rate_limit_admit(r, &p, T0, &retry), -EBUSY, "and the cap still holds");
}

static void test_busy_is_not_counted(void) {
        _cleanup_(rate_limit_freep) RateLimit *r = rate_limit_new();
        BrokerPolicy p = policy(2, UNSET_U64, 1);

        is_int(rate_limit_admit(r, &p, T0, NULL), 0, "one running request");
        is_int(rate_limit_admit(r, &p, T0, NULL), -EBUSY, "a second concurrent one is busy (NULL retry is fine)");
        rate_limit_release(r);
        is_int(rate_limit_admit(r, &p, T0, NULL), 0, "the busy refusal did not count against RequestsPerMinute=2");
}

static void test_window_expiry(void) {
        _cleanup_(rate_limit_freep) RateLimit *r = rate_limit_new();
        BrokerPolicy p = policy(2, 50, UNSET_U64);
        unsigned retry;

        is_int(request(r, &p, T0, &retry), 0, "request at 0 s");
        rate_limit_add_tokens(r, T0, 50);
        is_int(request(r, &p, T0 + SEC(1), &retry), -EAGAIN, "tokens full at 1 s");
        is_int(request(r, &p, T0 + SEC(3600), &retry), 0, "an hour later everything has expired");
        is_int(request(r, &p, T0 + SEC(3660), &retry), 0, "at 3660 s, in the ring bucket of 3600 s: admitted");
        is_int(request(r, &p, T0 + SEC(3661), &retry), 0, "the bucket was reset, not summed: only 3660 s counts at 3661 s");
        is_int(request(r, &p, T0 + SEC(3662), &retry), -EAGAIN, "at 3662 s the requests of 3660 s and 3661 s fill the window");
        is_int(retry, 58, "Retry-After: the request of 3660 s leaves at 3720 s");
}

static void test_at_clock_zero(void) {
        _cleanup_(rate_limit_freep) RateLimit *r = rate_limit_new();
        BrokerPolicy p = policy(1, UNSET_U64, UNSET_U64);
        unsigned retry;

        is_int(request(r, &p, 0, &retry), 0, "a request at time 0 is admitted");
        is_int(request(r, &p, SEC(1), &retry), -EAGAIN, "…and counted");
        is_int(retry, 59, "Retry-After at the start of the clock");
        ok(!rate_limit_free(NULL), "rate_limit_free(NULL) returns NULL");
}

/* A reload shares a role's state between the old config and the new one. */
static void test_shared_across_reload(void) {
        RateLimit *old = rate_limit_new(), *new;
        BrokerPolicy p = policy(UNSET_U64, UNSET_U64, 1);

        is_int(rate_limit_admit(old, &p, SEC(1), NULL), 0, "a request under the old config holds the slot");
        new = rate_limit_ref(old);
        ok(!rate_limit_free(old), "the old config lets go: the state stays for the new one");
        is_int(rate_limit_admit(new, &p, SEC(2), NULL), -EBUSY, "the new config sees the running request's slot");
        rate_limit_release(new);
        is_int(request(new, &p, SEC(3), NULL), 0, "…and its release");
        ok(!rate_limit_free(new), "the last reference frees it");
}

int main(void) {
        test_unlimited();
        test_requests_per_minute();
        test_refused_requests_are_not_counted();
        test_tokens_per_minute();
        test_tokens_retry_after_waits_for_enough();
        test_concurrency();
        test_shared_across_reload();
        test_busy_is_not_counted();
        test_window_expiry();
        test_at_clock_zero();
        return tap_done();
}
