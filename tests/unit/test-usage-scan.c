/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/broker/policy/usage-scan.c: the usage of a non-streamed answer of any size, read as it passes
 * (TokensPerMinute=, cloister-broker(8)). It must agree with a whole-answer parse (openai_response_usage()),
 * however the answer is cut into pieces. */
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"
#include "usage-scan.h"

/* Feeds body in pieces of `step` bytes (0: all at once); -ENODATA or 0. */
static int scan(const char *body, size_t n, size_t step, TokenUsage *ret) {
        _cleanup_(usage_scan_freep) UsageScan *s = usage_scan_new();
        size_t piece = step ?: n;

        if (!s)
                tap_bail_out("out of memory");
        for (size_t i = 0; i < n; i += piece)
                if (usage_scan_feed(s, body + i, piece < n - i ? piece : n - i) < 0)
                        tap_bail_out("usage_scan_feed() failed");
        return usage_scan_result(s, ret);
}

static void agree(const char *body, const char *what) {
        TokenUsage whole = {}, u = {};
        int r = openai_response_usage(body, strlen(body), &whole);
        static const size_t steps[] = { 0, 1, 2, 3, 7, 64 };

        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                u = (TokenUsage) {};
                is_int(scan(body, strlen(body), steps[i], &u), r, "%s (pieces of %zu): as a whole-answer parse", what, steps[i]);
                ok(u.prompt_tokens == whole.prompt_tokens && u.completion_tokens == whole.completion_tokens,
                   "%s (pieces of %zu): %llu+%llu tokens", what, steps[i],
                   (unsigned long long) u.prompt_tokens, (unsigned long long) u.completion_tokens);
        }
}

static void test_agrees(void) {
        agree("{\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}", "usage alone");
        agree("{\"id\":\"x\",\"choices\":[{\"message\":{\"content\":\"a \\\"usage\\\": {\\\"prompt_tokens\\\":99}\"}}],"
              "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"total_tokens\":7}}", "usage after a string that spells it");
        agree("{\"usage\":{\"prompt_tokens\":5,\"total_tokens\":5},\"data\":[{\"embedding\":[0.1,0.2]}]}", "embeddings, usage first");
        agree("{\"data\":{\"usage\":{\"prompt_tokens\":50}},\"usage\":{\"prompt_tokens\":2}}", "a nested usage is not the answer's");
        agree("{\"data\":{\"usage\":{\"prompt_tokens\":50}}}", "only a nested usage: none");
        agree("{\"usage\":{\"prompt_tokens\":1},\"usage\":{\"prompt_tokens\":9}}", "repeated usage: the last counts, as json-c");
        agree("{\"usage\":{\"prompt_tokens\":1},\"usage\":null}", "a last usage of null");
        agree("{\"usage\":null}", "usage null");
        agree("{\"usage\":{\"prompt_tokens\":-1}}", "negative counts are none");
        agree("{\"usage\":{\"prompt_tokens\":\"7\"}}", "a string count is none");
        agree("{\"usag\":{\"prompt_tokens\":7},\"usagex\":{\"prompt_tokens\":8}}", "other keys");
        agree(" \r\n{ \"usage\" :\n { \"prompt_tokens\" : 4 , \"completion_tokens\" : 6 } \n} ", "whitespace everywhere");
        agree("{\"a\":[[[{\"usage\":1}]]],\"b\":\"}\",\"c\":\"\\\\\",\"usage\":{\"completion_tokens\":8}}", "brackets and escapes in strings");
        agree("{}", "an empty object");
        TokenUsage u;
        is_int(scan("[{\"usage\":{\"prompt_tokens\":1}}]", 30, 1, &u), -ENODATA, "an array is no answer with usage");
        is_int(scan("{\"usage\":{\"prompt_tokens\":1}", 28, 1, &u), -ENODATA, "a usage cut short is not counted");
}

/* The hole: three 12.7 MB embeddings answers with 200k tokens each all returned 200, as
 * usage was read only from answers up to 4 MiB. */
static void test_large(void) {
        size_t n = 13 * 1024 * 1024, l = 0;
        _cleanup_free_ char *body = malloc(n + 128);
        TokenUsage u = {};

        if (!body)
                tap_bail_out("out of memory");
        l += (size_t) sprintf(body, "{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":[");
        while (l < n)
                l += (size_t) sprintf(body + l, "0.0123456789,");
        l += (size_t) sprintf(body + l - 1, "]}],\"model\":\"e\",\"usage\":{\"prompt_tokens\":200000,\"total_tokens\":200000}}") - 1;
        is_int(scan(body, l, 16384, &u), 0, "a %zu MB answer's usage is read", l >> 20);
        ok(u.prompt_tokens == 200000, "200000 prompt tokens (%llu)", (unsigned long long) u.prompt_tokens);
}

static void test_usage_too_large(void) {
        size_t n = USAGE_SCAN_VALUE_MAX + 100, l = 0;
        _cleanup_free_ char *body = malloc(n + 64);
        TokenUsage u = {};

        if (!body)
                tap_bail_out("out of memory");
        l += (size_t) sprintf(body, "{\"usage\":{\"prompt_tokens\":5,\"x\":\"");
        memset(body + l, 'a', n - l);
        l = n;
        l += (size_t) sprintf(body + l, "\"}}");
        is_int(scan(body, l, 4096, &u), -ENODATA, "a usage value over USAGE_SCAN_VALUE_MAX is not held");
}

int main(void) {
        test_agrees();
        test_large();
        test_usage_too_large();
        return tap_done();
}
