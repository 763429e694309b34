/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include "cloister-conf.h"

/* One role's RequestsPerMinute=, TokensPerMinute= and MaxConcurrent= state (cloister-broker(8)). The minute is a
 * sliding window of 60 one-second buckets, so memory is fixed whatever the request rate. */
typedef struct RateLimit RateLimit;

RateLimit *rate_limit_new(void);
/* A role's state outlives a reload of the broker's config: the old config and the new one
 * share it (and a request of the old one releases its slot in it), so each holds a reference.
 * rate_limit_free() drops one; the last frees it. */
RateLimit *rate_limit_ref(RateLimit *r);
RateLimit *rate_limit_free(RateLimit *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(RateLimit *, rate_limit_free);

/* Admits a request at `now` (CLOCK_MONOTONIC usec) under the role's policy (UNSET_U64: no
 * limit). Returns 0 and counts the request and one concurrent slot; -EBUSY if max_concurrent
 * slots are taken (*ret_retry_after_sec = 1: a slot may free up any moment); -EAGAIN if the
 * requests or tokens of the last 60 s reached their limit, with *ret_retry_after_sec set to when
 * enough counted entries have left the window to be under it again (at least 1): for requests
 * that is the oldest one, for tokens possibly later. ret_retry_after_sec may be NULL. */
int rate_limit_admit(RateLimit *r, const BrokerPolicy *p, uint64_t now, unsigned *ret_retry_after_sec);

/* A request ended: frees its slot. */
void rate_limit_release(RateLimit *r);

/* Usage counted after the fact (the response reports it): counts against later requests. */
void rate_limit_add_tokens(RateLimit *r, uint64_t now, uint64_t tokens);
