/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the broker's rewrite of an OpenAI request body, usage accounting of a
 * non-streamed answer and the /v1/models filter (cloister-broker(8)). The first byte picks the options.
 * Invariants: with a model override, what goes upstream (rewritten or as sent) is one JSON
 * object naming exactly that model; a streamed request always asks for the usage chunk; the models list holds
 * only the role's model. A body forwarded as sent means the same to a reader that matches
 * keys ignoring case: "stream" is what the broker read. The usage of an answer read as it
 * passes (usage-scan.c), in pieces, is the usage of the answer parsed whole. */
#include <json-c/json.h>

#include "fuzz-json.h"
#include "fuzz-util.h"
#include "openai-body.h"
#include "usage-scan.h"

static const char *str_member(struct json_object *o, const char *key) {
        struct json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
                json_object_get_string(v) : NULL;
}

static void check_case_blind_stream(const uint8_t *data, size_t size, bool stream) {
        struct json_object *o = NULL, *v = NULL;

        if (openai_json_parse_object((const char *) data, size, &o) < 0)
                return;
        fuzz_assert(stream == (json_get_case_blind(o, "stream", &v) && json_object_is_type(v, json_type_boolean) &&
                               json_object_get_boolean(v)),
                    "a case-blind upstream streams (or not) unlike the broker's reading");
        json_object_put(o);
}

static void check_usage_scan(const uint8_t *data, size_t size, uint8_t opt) {
        _cleanup_(usage_scan_freep) UsageScan *s = usage_scan_new();
        TokenUsage whole = {}, scanned = {};
        size_t piece = (size_t) (opt >> 2) + 1;
        int r;

        fuzz_assert(s, "out of memory");
        for (size_t i = 0; i < size; i += piece)
                fuzz_assert(usage_scan_feed(s, (const char *) data + i, piece < size - i ? piece : size - i) >= 0, "feed");
        r = usage_scan_result(s, &scanned);
        if (openai_response_usage((const char *) data, size, &whole) == -EBADMSG)
                return; /* not JSON: the scan's reading is its own */
        if (memmem(data, size, "\\u0000", 6))
                return; /* json-c cuts a key at an escaped NUL ("usage\u0000" is "usage" to it); the scan does not */
        fuzz_assert((r >= 0) == whole.seen && scanned.prompt_tokens == whole.prompt_tokens &&
                    scanned.completion_tokens == whole.completion_tokens,
                    "usage read in pieces of %zu differs from the whole answer's", piece);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *body = NULL;
        const char *override;
        OpenAIRequest req = {};
        TokenUsage usage = {};
        struct json_object *o = NULL, *v, *so;
        size_t n = 0;
        uint8_t opt;

        if (size < 1)
                return 0;
        opt = data[0];
        data++, size--;
        override = opt & 1 ? "model-x" : NULL;

        if (openai_request_rewrite((const char *) data, size, override, &req, &body, &n) >= 0) {
                if (override && size > 0) {
                        fuzz_assert(!body || strlen(body) == n, "the rewritten body's length");
                        fuzz_assert(streq_ptr(req.model, override), "model %s", req.model);
                        if (!body) {
                                /* passed on as sent: it must name the override already */
                                fuzz_assert(openai_json_parse_object((const char *) data, size, &o) >= 0 &&
                                            streq_ptr(str_member(o, "model"), override),
                                            "a body passed on unchanged names another model");
                                json_object_put(o);
                                o = NULL;
                        }
                }
                if (body) {
                        fuzz_assert(openai_json_parse_object(body, n, &o) >= 0, "the rewritten body is one JSON object: %s", body);
                        if (override)
                                fuzz_assert(streq_ptr(str_member(o, "model"), override), "upstream sees model %s", str_member(o, "model"));
                        if (req.stream)
                                fuzz_assert(json_object_object_get_ex(o, "stream_options", &so) &&
                                            json_object_object_get_ex(so, "include_usage", &v) && json_object_get_boolean(v),
                                            "a streamed request asks for usage");
                        json_object_put(o);
                }
                fuzz_assert(!req.strip_usage_chunk || req.stream, "strip only for streams");
                if (!body && size > 0)
                        check_case_blind_stream(data, size, req.stream);
                openai_request_done(&req);
        }
        body = mfree(body);

        if (openai_response_usage((const char *) data, size, &usage) >= 0)
                fuzz_assert(usage.seen, "usage returned but not seen");
        check_usage_scan(data, size, opt);

        if (openai_models_filter((const char *) data, size, opt & 2 ? "model-x" : NULL, &body, &n) >= 0) {
                struct json_object *list;
                fuzz_assert(body && strlen(body) == n, "models list length");
                fuzz_assert(openai_json_parse_object(body, n, &o) >= 0, "models list is JSON: %s", body);
                fuzz_assert(json_object_object_get_ex(o, "data", &list) && json_object_is_type(list, json_type_array),
                            "models list has data[]");
                if (opt & 2) {
                        fuzz_assert(json_object_array_length(list) >= 1, "the role's model is listed");
                        for (size_t i = 0; i < json_object_array_length(list); i++)
                                fuzz_assert(streq_ptr(str_member(json_object_array_get_idx(list, i), "id"), "model-x"),
                                            "a model other than the role's is listed");
                }
                json_object_put(o);
        }
        return 0;
}
