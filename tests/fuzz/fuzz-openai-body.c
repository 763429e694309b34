/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the broker's rewrite of an OpenAI request body, usage accounting of a
 * non-streamed answer and the /v1/models filter (§8). The first byte picks the options.
 * Invariants: with a model override, what goes upstream is one JSON object naming exactly
 * that model; a streamed request always asks for the usage chunk; the models list holds
 * only the role's model. */
#include <json-c/json.h>

#include "fuzz-util.h"
#include "openai-body.h"

static const char *str_member(struct json_object *o, const char *key) {
        struct json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
                json_object_get_string(v) : NULL;
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
                        fuzz_assert(body && strlen(body) == n, "an override always rewrites the body");
                        fuzz_assert(streq_ptr(req.model, override), "model %s", req.model);
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
                openai_request_done(&req);
        }
        body = mfree(body);

        if (openai_response_usage((const char *) data, size, &usage) >= 0)
                fuzz_assert(usage.seen, "usage returned but not seen");

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
