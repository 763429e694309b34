/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/broker/policy/sse-filter.c: a streamed LLM response passes byte for byte, whatever the chunking, with
 * its usage read on the way; with strip_usage_chunk exactly the usage-only chunk we asked for
 * on the caller's behalf is dropped (cloister-broker(8)). */

#include "mcp-policy.h"
#include "sse-filter.h"
#include "tap.h"

#define CHUNK(s) "data: " s "\n\n"
#define FIRST CHUNK("{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"usage\":null}")
#define HELLO CHUNK("{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi \\\"usage\\\"\"}}],\"usage\":null}")
#define STOP  CHUNK("{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}")
#define USAGE CHUNK("{\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}")
#define DONE  "data: [DONE]\n\n"

static const char stream[] = ": OPENROUTER PROCESSING\n\n" FIRST HELLO "event: message\n" STOP USAGE DONE;
static const char stripped[] = ": OPENROUTER PROCESSING\n\n" FIRST HELLO "event: message\n" STOP DONE;

typedef enum Chunking { ONE_BYTE, RANDOM, WHOLE } Chunking;

typedef struct Run {
        char *out;
        size_t n;
        TokenUsage usage;
        int r;
} Run;

/* Feeds `in` in the given chunking, then finishes. */
static Run run(const char *in, size_t n, bool strip, Chunking how, unsigned seed) {
        _cleanup_(sse_filter_freep) SseFilter *f = sse_filter_new(strip);
        Run x = {};

        if (!f)
                tap_bail_out("out of memory");
        srand(seed);
        for (size_t i = 0, l; i < n && x.r >= 0; i += l) {
                l = how == ONE_BYTE ? 1 : how == WHOLE ? n : 1 + (size_t) rand() % 97;
                if (l > n - i)
                        l = n - i;
                x.r = sse_filter_feed(f, in + i, l, &x.out, &x.n);
        }
        if (x.r >= 0)
                x.r = sse_filter_finish(f, &x.out, &x.n);
        x.usage = *sse_filter_usage(f);
        return x;
}

static bool same(const Run *x, const char *expected, size_t n) {
        return x->r == 0 && x->n == n && (n == 0 || memcmp(x->out, expected, n) == 0);
}

static void test_pass_through_is_byte_identical(void) {
        static const char crlf[] = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\r\n\r\n: c\r\rdata: x\r\n\n\r";
        Run x = run(stream, strlen(stream), false, ONE_BYTE, 0);

        ok(same(&x, stream, strlen(stream)), "without strip, one byte at a time: output equals input");
        ok(x.usage.seen, "without strip, usage is read from a copy");
        is_u64(x.usage.prompt_tokens, 9, "prompt_tokens from the usage chunk");
        is_u64(x.usage.completion_tokens, 2, "completion_tokens from the usage chunk");
        free(x.out);

        for (unsigned seed = 1; seed <= 200; seed++) {
                x = run(stream, strlen(stream), false, RANDOM, seed);
                if (!ok(same(&x, stream, strlen(stream)) && x.usage.prompt_tokens == 9,
                        "without strip, random chunks (seed %u): output equals input, usage read", seed))
                        diag("got %zu bytes: %s", x.n, strempty(x.out));
                free(x.out);
        }

        x = run(crlf, strlen(crlf), false, ONE_BYTE, 0);
        ok(same(&x, crlf, strlen(crlf)), "without strip, CR/CRLF stream: output equals input");
        is_u64(x.usage.prompt_tokens, 1, "usage read from a CRLF event");
        free(x.out);
}

static void test_strip_drops_only_the_usage_chunk(void) {
        Run x;

        for (Chunking how = ONE_BYTE; how <= WHOLE; how++)
                for (unsigned seed = 1; seed <= (how == RANDOM ? 200U : 1U); seed++) {
                        x = run(stream, strlen(stream), true, how, seed);
                        if (!ok(same(&x, stripped, strlen(stripped)),
                                "with strip (chunking %d, seed %u): only the usage chunk is gone", how, seed))
                                diag("got: %s", strempty(x.out));
                        ok(x.usage.seen && x.usage.prompt_tokens == 9 && x.usage.completion_tokens == 2,
                           "with strip (chunking %d, seed %u): usage still read", how, seed);
                        free(x.out);
                }
        x = run(stream, strlen(stream), true, WHOLE, 0);
        like(x.out, ": OPENROUTER PROCESSING\n\n", "comments are kept");
        like(x.out, "event: message\n", "event: lines are kept");
        like(x.out, DONE, "[DONE] is kept");
        unlike(x.out, "\"choices\":[]", "the usage-only chunk is dropped");
        free(x.out);
}

static void test_strip_keeps_other_usage(void) {
        /* vLLM and others put usage on the last chunk with choices: that is content, keep it. */
        static const char in[] =
                CHUNK("{\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}")
                CHUNK("{\"choices\":[],\"usage\":null}")
                CHUNK("{\"choices\":{},\"usage\":{\"prompt_tokens\":6}}")
                CHUNK("{\"usage\":{\"prompt_tokens\":7}}")
                CHUNK("[{\"choices\":[],\"usage\":{\"prompt_tokens\":8}}]")
                DONE;
        Run x = run(in, strlen(in), true, ONE_BYTE, 0);

        ok(same(&x, in, strlen(in)), "usage with choices, null usage, non-array choices, no choices, an array: all kept");
        is_u64(x.usage.prompt_tokens, 7, "the last usage object in a data event is the one counted");
        free(x.out);
}

/* Events are read by a validating scan, not a json-c tree; where that could read otherwise (a
 * key with an escape, a repeated key, spacing) it reads as json-c does. */
static void test_usage_chunk_read_as_json_c_reads_it(void) {
        static const char escaped[] = CHUNK("{\"choices\":[],\"u\\u0073age\":{\"prompt_tokens\":3}}") DONE;
        static const char repeated[] = CHUNK("{\"usage\":{\"prompt_tokens\":1},\"choices\":[],\"usage\":{\"prompt_tokens\":4}}") DONE;
        static const char spaced[] = CHUNK("{ \"choices\" : [ \t ] , \"usage\" : { \"prompt_tokens\" : 5 } }") DONE;
        static const char usage_not_object[] = CHUNK("{\"choices\":[],\"usage\":[1]}") DONE;
        static const char nan[] = CHUNK("{\"choices\":[],\"usage\":{\"prompt_tokens\":6},\"t\":NaN}") DONE;
        Run x;

        x = run(nan, strlen(nan), true, WHOLE, 0);
        ok(same(&x, DONE, strlen(DONE)) && x.usage.prompt_tokens == 6,
           "NaN elsewhere in the event (json-c and Python's json.dumps take it): usage counted and stripped");
        free(x.out);

        x = run(escaped, strlen(escaped), true, WHOLE, 0);
        ok(same(&x, DONE, strlen(DONE)) && x.usage.prompt_tokens == 3, "a key written with an escape is \"usage\": counted and stripped");
        free(x.out);
        x = run(repeated, strlen(repeated), true, WHOLE, 0);
        ok(same(&x, DONE, strlen(DONE)) && x.usage.prompt_tokens == 4, "a repeated \"usage\": the last one counts");
        free(x.out);
        x = run(spaced, strlen(spaced), true, WHOLE, 0);
        ok(same(&x, DONE, strlen(DONE)) && x.usage.prompt_tokens == 5, "whitespace anywhere, an empty array with a tab in it");
        free(x.out);
        x = run(usage_not_object, strlen(usage_not_object), true, WHOLE, 0);
        ok(same(&x, usage_not_object, strlen(usage_not_object)) && !x.usage.seen, "a usage that is not an object: kept, nothing counted");
        free(x.out);
}

static void test_crlf_and_cr_events(void) {
        static const char in[] =
                "data: {\"choices\":[{}],\"usage\":null}\r\n\r\n"
                "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\r\n\r\n"
                "data: [DONE]\r\n\r\n";
        static const char out[] = "data: {\"choices\":[{}],\"usage\":null}\r\n\r\n" "data: [DONE]\r\n\r\n";
        static const char cr[] = ": hi\r\rdata: {\"choices\":[],\"usage\":{\"prompt_tokens\":2}}\r\rdata: [DONE]\r\r";
        static const char mixed[] = "data: a\n\r\ndata: {\"choices\":[],\r\ndata: \"usage\":{\"prompt_tokens\":1}}\r\n\ndata: b\r\n\r\n";

        for (Chunking how = ONE_BYTE; how <= WHOLE; how++) {
                Run x = run(in, strlen(in), true, how, 7);
                ok(same(&x, out, strlen(out)), "CRLF events (chunking %d): the usage event is dropped with its CRLFs", how);
                is_u64(x.usage.completion_tokens, 4, "CRLF events (chunking %d): usage read", how);
                free(x.out);

                x = run(cr, strlen(cr), true, how, 7);
                ok(same(&x, ": hi\r\rdata: [DONE]\r\r", strlen(": hi\r\rdata: [DONE]\r\r")),
                   "CR-only events (chunking %d): the usage event is dropped", how);
                is_u64(x.usage.prompt_tokens, 2, "CR-only events (chunking %d): usage read", how);
                free(x.out);

                x = run(mixed, strlen(mixed), true, how, 7);
                ok(same(&x, "data: a\n\r\ndata: b\r\n\r\n", strlen("data: a\n\r\ndata: b\r\n\r\n")),
                   "mixed line ends (chunking %d): the usage event is dropped", how);
                free(x.out);
        }
}

static void test_multi_line_data(void) {
        static const char in[] = "data: {\"choices\": [],\ndata:\"usage\":\ndata: {\"prompt_tokens\": 20,\n"
                                 "id: 1\ndata:  \"completion_tokens\": 30}}\n\n" DONE;
        Run x = run(in, strlen(in), true, ONE_BYTE, 0);

        ok(same(&x, DONE, strlen(DONE)), "a usage-only chunk split over data: lines is dropped whole");
        is_u64(x.usage.prompt_tokens, 20, "multi-line data: prompt_tokens");
        is_u64(x.usage.completion_tokens, 30, "multi-line data: completion_tokens (one space after the colon is the SSE separator)");
        free(x.out);

        static const char bare[] = "data: {\"usage\":{\"prompt_tokens\":1}\ndata\ndata: }\n\n";
        x = run(bare, strlen(bare), false, WHOLE, 0);
        is_u64(x.usage.prompt_tokens, 1, "a \"data\" line without a colon adds an empty line to the data");
        free(x.out);
}

static void test_finish(void) {
        static const char partial[] = FIRST "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}";
        static const char cr_end[] = FIRST "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4}}\r\r";
        Run x = run(partial, strlen(partial), true, ONE_BYTE, 0);

        ok(same(&x, partial, strlen(partial)), "an incomplete last event passes unchanged at finish");
        ok(!x.usage.seen, "an incomplete last event is not dispatched: its usage is not read");
        free(x.out);

        x = run(cr_end, strlen(cr_end), true, ONE_BYTE, 0);
        ok(same(&x, FIRST, strlen(FIRST)), "an event ending in \"\\r\\r\" at end of stream is complete: dropped");
        is_u64(x.usage.prompt_tokens, 4, "…and its usage read");
        free(x.out);

        x = run("", 0, true, WHOLE, 0);
        ok(x.r == 0 && x.n == 0 && !x.out, "an empty stream forwards nothing");
        free(x.out);
}

static void test_bom_and_field_forms(void) {
        static const char in[] = "\xEF\xBB\xBF" "data:{\"choices\":[],\"usage\":{\"prompt_tokens\":11}}\n\n" DONE;
        Run x = run(in, strlen(in), true, ONE_BYTE, 0);

        ok(same(&x, DONE, strlen(DONE)), "a byte order mark and \"data:\" without a space: the usage chunk is still recognised");
        is_u64(x.usage.prompt_tokens, 11, "usage read after a byte order mark");
        free(x.out);
}

static void test_held_buffer_cap(void) {
        size_t big = SSE_FILTER_HELD_MAX + SSE_FILTER_HELD_MAX / 2;
        _cleanup_free_ char *payload = malloc(big);
        _cleanup_(sse_filter_freep) SseFilter *f = sse_filter_new(true);
        char *out = NULL;
        size_t n = 0, fed = 0;
        bool forwarded_early = false;

        if (!payload || !f)
                tap_bail_out("out of memory");
        memset(payload, 'x', big);
        memcpy(payload, "data: ", 6);
        for (size_t i = 0; i < big; i += 65536) {
                size_t l = big - i < 65536 ? big - i : 65536;
                is_int(sse_filter_feed(f, payload + i, l, &out, &n), 0, "feed 64 KiB of one unfinished event at %zu", i);
                fed += l;
                if (fed > SSE_FILTER_HELD_MAX && n == fed)
                        forwarded_early = true;
                if (fed <= SSE_FILTER_HELD_MAX)
                        is_u64(n, 0, "below the cap the unfinished event is held back");
        }
        ok(forwarded_early, "past the cap the held bytes are forwarded before the event ends");
        is_u64(n, big, "all bytes of the oversized event are forwarded");
        ok(n == big && memcmp(out, payload, big) == 0, "…unchanged");

        is_int(sse_filter_feed(f, "\n\n" USAGE DONE, strlen("\n\n" USAGE DONE), &out, &n), 0, "the rest of the stream");
        is_int(sse_filter_finish(f, &out, &n), 0, "finish");
        is_u64(n, big + strlen("\n\n" USAGE DONE), "after the cap stripping stopped: the usage chunk passes");
        like(out + big, "\"choices\":[]", "the usage-only chunk is forwarded once stripping stopped");
        is_u64(sse_filter_usage(f)->prompt_tokens, 9, "usage is still read after the cap");
        free(out);

        /* Without strip: the oversized event is skipped for parsing, the next one is read. */
        _cleanup_(sse_filter_freep) SseFilter *g = sse_filter_new(false);
        out = NULL;
        n = 0;
        for (size_t i = 0; i < big; i += 65536)
                (void) sse_filter_feed(g, payload + i, big - i < 65536 ? big - i : 65536, &out, &n);
        is_int(sse_filter_feed(g, "\r\n\r" USAGE, strlen("\r\n\r" USAGE), &out, &n), 0, "end of the oversized event, then usage");
        ok(n == big + strlen("\r\n\r" USAGE) && memcmp(out, payload, big) == 0, "without strip all bytes pass unchanged");
        is_u64(sse_filter_usage(g)->completion_tokens, 2, "the event after an oversized one is parsed");
        free(out);
}

/* Streams assembled from random pieces, heavy in CR/LF combinations: what strip forwards must
 * not depend on where the chunk boundaries fall, and pass-through must equal the input. */
static void test_chunking_never_matters(void) {
        static const char *const pieces[] = {
                "\r", "\n", "\r\n", "data: x", "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3}}",
                ": c", "event: e", "data:", "\r\r", "\n\n",
        };
        char in[1024];     /* 12 pieces of at most 60 bytes */
        bool all_same = true, all_pass = true;

        srand(42);
        for (unsigned i = 0; i < 300; i++) {
                size_t n = 0;

                for (unsigned k = 0; k < 12; k++) {
                        const char *p = pieces[(size_t) rand() % ELEMENTSOF(pieces)];
                        memcpy(in + n, p, strlen(p));
                        n += strlen(p);
                }
                Run whole = run(in, n, true, WHOLE, 0), bytes = run(in, n, true, ONE_BYTE, 0),
                    random = run(in, n, true, RANDOM, i), pass = run(in, n, false, RANDOM, i);

                if (!same(&bytes, whole.out, whole.n) || !same(&random, whole.out, whole.n) ||
                    whole.usage.seen != bytes.usage.seen || whole.usage.seen != random.usage.seen) {
                        if (all_same)
                                diag("stream %u differs with chunking: \"%.*s\"", i, (int) n, in);
                        all_same = false;
                }
                all_pass = all_pass && same(&pass, in, n) && pass.usage.seen == whole.usage.seen;
                free(whole.out);
                free(bytes.out);
                free(random.out);
                free(pass.out);
        }
        ok(all_same, "300 random CR/LF-heavy streams: strip output and usage do not depend on chunking");
        ok(all_pass, "300 random CR/LF-heavy streams: pass-through output equals input");
}

/* ---- MCP: every event through mcp_sse_rewrite() -------------------------------------------- */

static char *mcp_allowed[] = { (char *) "search", NULL };

static Run run_mcp(const char *in, size_t n, Chunking how, unsigned seed) {
        _cleanup_(sse_filter_freep) SseFilter *f = sse_filter_new_rewrite(mcp_sse_rewrite, mcp_allowed);
        Run x = {};

        if (!f)
                tap_bail_out("out of memory");
        srand(seed);
        for (size_t i = 0, l; i < n && x.r >= 0; i += l) {
                l = how == ONE_BYTE ? 1 : how == WHOLE ? n : 1 + (size_t) rand() % 97;
                if (l > n - i)
                        l = n - i;
                x.r = sse_filter_feed(f, in + i, l, &x.out, &x.n);
        }
        if (x.r >= 0)
                x.r = sse_filter_finish(f, &x.out, &x.n);
        return x;
}

/* Both chunkings and 50 random ones give exactly `expected`. */
static void mcp_expect(const char *in, const char *expected, const char *what) {
        for (Chunking how = ONE_BYTE; how <= WHOLE; how++)
                for (unsigned seed = 1; seed <= (how == RANDOM ? 50U : 1U); seed++) {
                        Run x = run_mcp(in, strlen(in), how, seed);
                        bool good = same(&x, expected, strlen(expected));

                        if (how != RANDOM || !good)
                                if (!ok(good, "%s (chunking %d, seed %u)", what, how, seed))
                                        diag("got r=%d: \"%s\"", x.r, strempty(x.out));
                        free(x.out);
                }
}

#define LIST "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"search\"},{\"name\":\"rm\"}]}}"
#define LISTED "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"search\"}]}}"
#define NOTE "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}"

static void test_mcp_priming_and_answer(void) {
        /* What a 2025-11-25 server with an event store sends for tools/list (the official SDK) */
        static const char in[] =
                "id: 0b1e7a3c-prime\ndata: \n\n"
                "event: message\nid: 5f2d9c4e-answer\ndata: " LIST "\n\n";
        static const char out[] =
                "id: 0b1e7a3c-prime\ndata: \n\n"
                "event: message\nid: 5f2d9c4e-answer\ndata: " LISTED "\n\n";

        mcp_expect(in, out, "a priming event (id, empty data) passes as is; the answer after it is filtered");
        mcp_expect("id: p\nretry: 1000\ndata:\n\n", "id: p\nretry: 1000\ndata:\n\n",
                   "a priming event with retry: and \"data:\" without a space passes byte for byte");
        mcp_expect("id: p\ndata\n\n", "id: p\ndata\n\n", "a bare \"data\" field (empty data) passes");
        mcp_expect("id: p\n\n", "id: p\n\n", "an event with an id and no data passes");
        mcp_expect(": keep-alive\n\n: x\r\n\r\n", ": keep-alive\n\n: x\r\n\r\n", "comments pass byte for byte");
        mcp_expect("data: " NOTE "\n\n", "data: " NOTE "\n\n", "notifications/tools/list_changed passes byte for byte");
        mcp_expect("data: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":[]}}\r\n\r\n",
                   "data: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":[]}}\r\n\r\n",
                   "another answer passes byte for byte, CRLFs and all");
}

static void test_mcp_grammar(void) {
        mcp_expect(": c\r\nevent: message\r\nid: 7\r\ndata: " LIST "\r\nretry: 5\r\n\r\n",
                   ": c\r\nevent: message\r\nid: 7\r\ndata: " LISTED "\r\nretry: 5\r\n\r\n",
                   "CRLF: every other line and its line end kept, the data line rewritten in place");
        mcp_expect("id: 7\rdata:" LIST "\r\r", "id: 7\rdata: " LISTED "\r\r", "CR-only line ends");
        mcp_expect("data: {\"jsonrpc\":\"2.0\",\"id\":2,\ndata: \"result\":{\"tools\":\n: a comment inside\n"
                   "id: 8\ndata: [{\"name\":\"rm\"},{\"name\":\"search\"}]}}\n\n",
                   "data: " LISTED "\n: a comment inside\nid: 8\n\n",
                   "multi-line data is joined, filtered and sent as one data: line where the first was");
        mcp_expect("event: surprise\ndata: " LIST "\n\n", "event: surprise\ndata: " LISTED "\n\n",
                   "an event type other than message is filtered all the same");
        mcp_expect("\xEF\xBB\xBF" "data: " LIST "\n\n", "\xEF\xBB\xBF" "data: " LISTED "\n\n",
                   "a byte order mark before the first event is kept, the event filtered");
        mcp_expect("data: [" LIST "," NOTE "]\n\n", "data: [" LISTED "," NOTE "]\n\n", "a batch in one event");
        mcp_expect("datum: " LIST "\nDATA: " LIST "\n\n", "datum: " LIST "\nDATA: " LIST "\n\n",
                   "fields that are not \"data\" (case matters in SSE) carry no data: passed");
        mcp_expect("data: " LIST, "data: " LISTED,
                   "an unfinished last event (never dispatched by a client) is filtered all the same");
        mcp_expect("data: \ndata: \n\n", "data: \ndata: \n\n", "data of whitespace only passes");
}

static void test_mcp_fails_closed(void) {
        static const char *const bad[] = {
                "data: [DONE]\n\n",
                "data: {\"id\":2,\"result\":{\"tools\":[{\"name\":\"rm\"}]},}\n\n",
                "data: {\"id\":2,\"result\":{\"tools\":[{\"name\":\"rm\"}]}} trailing\n\n",
                "data: {\"id\":2,\"result\":{\"tools\":[{\"name\":\"rm\"}]}\n\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *in = strprintf("data: " NOTE "\n\n%s: after\n\n", bad[i]);
                Run x = run_mcp(in, strlen(in), WHOLE, 0);

                ok(x.r < 0, "data that is not one JSON text ends the stream: %s", bad[i]);
                ok(x.n == strlen("data: " NOTE "\n\n") && !strstr(x.out, "\"rm\"") && !strstr(x.out, "after"),
                   "…what came before passed, nothing of it or after it");
                free(x.out);
        }

        /* an event too large to read ends the stream, and nothing more passes, not even at finish */
        size_t big = SSE_FILTER_EVENT_MAX + 1024;
        _cleanup_free_ char *payload = malloc(big);
        _cleanup_(sse_filter_freep) SseFilter *f = sse_filter_new_rewrite(mcp_sse_rewrite, mcp_allowed);
        char *out = NULL;
        size_t n = 0;
        int r = 0;

        if (!payload || !f)
                tap_bail_out("out of memory");
        memset(payload, ' ', big);
        memcpy(payload, "data: " LIST, strlen("data: " LIST));
        for (size_t i = 0; i < big && r >= 0; i += 65536)
                r = sse_filter_feed(f, payload + i, big - i < 65536 ? big - i : 65536, &out, &n);
        is_int(r, -E2BIG, "an MCP event past SSE_FILTER_EVENT_MAX ends the stream");
        is_int(sse_filter_feed(f, "\n\n", 2, &out, &n), -E2BIG, "…nothing more is read");
        is_int(sse_filter_finish(f, &out, &n), -E2BIG, "…not even at finish");
        is_u64(n, 0, "…and none of it was forwarded");
        free(out);
}

static int note_rm(const char *data, size_t n, void *userdata, char **ret, size_t *ret_n) {
        if (strstr(data, "\"rm\""))
                *(bool *) userdata = true;
        return 0;
}

/* Whether the data of any event in out[0..n) (as a client reads it) names "rm". */
static bool data_has_rm(const char *out, size_t n) {
        bool seen = false;
        _cleanup_(sse_filter_freep) SseFilter *f = sse_filter_new_rewrite(note_rm, &seen);
        char *o = NULL;
        size_t on = 0;

        if (!f || sse_filter_feed(f, out ?: "", n, &o, &on) < 0 || sse_filter_finish(f, &o, &on) < 0)
                tap_bail_out("cannot read the filter's output");
        free(o);
        return seen;
}

/* Random streams of MCP pieces: the output never depends on chunking, and no tool but "search"
 * ever appears in what passes. */
static void test_mcp_chunking_never_matters(void) {
        static const char *const pieces[] = {
                "\r", "\n", "\r\n", "data: " LIST, "data: " NOTE, ": c", "event: message", "id: 1", "data:",
                "data", "retry: 3", "\r\r", "\n\n", "data: {\"id\":2,", "data: \"result\":{\"tools\":[{\"name\":\"rm\"}]}}",
        };
        char in[2048];
        bool all_same = true, never_rm = true;

        srand(4242);
        for (unsigned i = 0; i < 300; i++) {
                size_t n = 0;

                for (unsigned k = 0; k < 12; k++) {
                        const char *p = pieces[(size_t) rand() % ELEMENTSOF(pieces)];
                        memcpy(in + n, p, strlen(p));
                        n += strlen(p);
                }
                Run whole = run_mcp(in, n, WHOLE, 0), bytes = run_mcp(in, n, ONE_BYTE, 0), random = run_mcp(in, n, RANDOM, i);

                if (whole.r != bytes.r || whole.r != random.r || whole.n != bytes.n || whole.n != random.n ||
                    (whole.n && (memcmp(whole.out, bytes.out, whole.n) || memcmp(whole.out, random.out, whole.n)))) {
                        if (all_same)
                                diag("stream %u differs with chunking: \"%.*s\"", i, (int) n, in);
                        all_same = false;
                }
                if (never_rm && data_has_rm(whole.out, whole.n)) {
                        diag("stream %u lets \"rm\" pass: \"%.*s\" -> \"%s\"", i, (int) n, in, whole.out);
                        never_rm = false;
                }
                free(whole.out);
                free(bytes.out);
                free(random.out);
        }
        ok(all_same, "300 random MCP streams: output and verdict do not depend on chunking");
        ok(never_rm, "300 random MCP streams: the tool not allowed never passes");
}

int main(void) {
        test_mcp_priming_and_answer();
        test_mcp_grammar();
        test_mcp_fails_closed();
        test_mcp_chunking_never_matters();
        test_pass_through_is_byte_identical();
        test_strip_drops_only_the_usage_chunk();
        test_strip_keeps_other_usage();
        test_usage_chunk_read_as_json_c_reads_it();
        test_crlf_and_cr_events();
        test_multi_line_data();
        test_finish();
        test_bom_and_field_forms();
        test_held_buffer_cap();
        test_chunking_never_matters();
        return tap_done();
}
