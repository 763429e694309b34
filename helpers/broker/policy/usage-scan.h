/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "openai-body.h"

/* The usage of a non-streamed answer of any size, read as it passes, in bounded memory
 * (TokensPerMinute=, cloister-broker(8)): an embeddings answer of many megabytes counts like a short one.
 * Only the top-level "usage" member's value is held (up to USAGE_SCAN_VALUE_MAX bytes) and
 * parsed by json-c, with the rules of openai_usage_from_json(); the rest is only scanned for
 * where strings and containers begin and end. As json-c does, of several "usage" members the
 * last counts. */
#define USAGE_SCAN_VALUE_MAX ((size_t) 64 * 1024)

typedef struct UsageScan UsageScan;

UsageScan *usage_scan_new(void);
UsageScan *usage_scan_free(UsageScan *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(UsageScan *, usage_scan_free);

/* Takes the next n bytes of the answer. -ENOMEM only: then the answer's usage cannot be
 * counted, and the broker ends the answer rather than pass it uncounted. */
int usage_scan_feed(UsageScan *s, const char *data, size_t n);

/* The usage found so far (of a complete top-level "usage" member); -ENODATA if none. */
int usage_scan_result(const UsageScan *s, TokenUsage *ret);
