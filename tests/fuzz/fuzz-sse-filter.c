/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the SSE pass-through filter and its usage accounting (cloister-broker(8)), fed the
 * upstream's stream in one piece and in two pieces split where the first byte says.
 * Invariants: without stripping, every byte passes unchanged; with it, the output is never
 * longer than the input; and where the stream is cut never changes what passes or the usage
 * counted. */
#include "fuzz-util.h"
#include "sse-filter.h"

static void run(bool strip, const char *data, size_t size, size_t split, char **out, size_t *n, TokenUsage *u) {
        _cleanup_(sse_filter_freep) SseFilter *f = sse_filter_new(strip);

        if (!f)
                abort();
        *out = NULL;
        *n = 0;
        fuzz_assert(sse_filter_feed(f, data, split, out, n) >= 0 &&
                    sse_filter_feed(f, data + split, size - split, out, n) >= 0 &&
                    sse_filter_finish(f, out, n) >= 0, "the filter fails on a stream");
        *u = *sse_filter_usage(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *whole = NULL, *cut = NULL;
        size_t n_whole, n_cut, split;
        TokenUsage u_whole, u_cut;
        bool strip;

        if (size < 1)
                return 0;
        strip = data[0] & 1;
        split = (size_t) (data[0] >> 1);
        data++, size--;
        split = size ? split % (size + 1) : 0;

        run(strip, (const char *) data, size, size, &whole, &n_whole, &u_whole);
        run(strip, (const char *) data, size, split, &cut, &n_cut, &u_cut);
        if (!strip)
                fuzz_assert(n_whole == size && (size == 0 || memcmp(whole, data, size) == 0), "pass-through changed the stream");
        fuzz_assert(n_whole <= size, "the filter added bytes");
        fuzz_assert(n_whole == n_cut && (n_whole == 0 || memcmp(whole, cut, n_whole) == 0),
                    "the output depends on where the stream was cut (at %zu)", split);
        fuzz_assert(u_whole.seen == u_cut.seen && u_whole.prompt_tokens == u_cut.prompt_tokens &&
                    u_whole.completion_tokens == u_cut.completion_tokens,
                    "the usage counted depends on where the stream was cut (at %zu)", split);
        return 0;
}
