/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/broker/policy/openai-body.c: the request rewrite for /v1 (model override, usage for streams), the usage
 * of a plain response and the /v1/models filter (cloister-broker(8)). */

#include <json-c/json.h>

#include "openai-body.h"
#include "tap.h"

typedef struct Rewrite {
        int r;
        OpenAIRequest req;
        char *body;
        size_t n;
        json_object *json;      /* body parsed back, if any */
} Rewrite;

static Rewrite rewrite(const char *body, const char *override) {
        Rewrite w = {};

        w.r = openai_request_rewrite(body, strlen(body), override, &w.req, &w.body, &w.n);
        if (w.body) {
                ok(strlen(w.body) == w.n, "the rewritten body is NUL-terminated at *ret_n");
                w.json = json_tokener_parse(w.body);
        }
        return w;
}

static void rewrite_done(Rewrite *w) {
        openai_request_done(&w->req);
        free(w->body);
        json_object_put(w->json);
}

/* The JSON value at a pointer ("/stream_options/include_usage") as text, or NULL. */
static const char *at(json_object *o, const char *pointer) {
        json_object *v = NULL;

        if (!o || json_pointer_get(o, pointer, &v) < 0)
                return NULL;
        return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

static void test_model_override(void) {
        Rewrite w = rewrite("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "qwen3:8b");

        is_int(w.r, 0, "a chat request with an override is accepted");
        ok(w.body, "the override rewrites the body");
        is_str(at(w.json, "/model"), "\"qwen3:8b\"", "the override replaces the caller's model");
        is_str(at(w.json, "/messages/0/content"), "\"hi\"", "the messages are kept");
        is_str(w.req.model, "qwen3:8b", "ret->model is the model after the override");
        ok(!w.req.stream && !w.req.strip_usage_chunk, "not a stream");
        ok(!at(w.json, "/stream_options"), "no stream_options added to a non-stream request");
        rewrite_done(&w);

        w = rewrite("{\"messages\":[]}", "qwen3:8b");
        is_int(w.r, 0, "a body without a model is accepted");
        is_str(at(w.json, "/model"), "\"qwen3:8b\"", "the override adds the model when the body has none");
        is_str(w.req.model, "qwen3:8b", "ret->model is the added model");
        rewrite_done(&w);

        w = rewrite("{\"model\":\"a\",\"model\":\"qwen3:8b\"}", "qwen3:8b");
        is_int(w.r, -ENOTUNIQ, "duplicate model keys are refused, even with an override");
        ok(!w.body, "a refused body leaves nothing to send");
        rewrite_done(&w);
}

static void test_no_change(void) {
        Rewrite w = rewrite("{\"model\":\"gpt-4o\",\"temperature\":0.7}", NULL);

        is_int(w.r, 0, "a request without override is accepted");
        ok(!w.body && w.n == 0, "nothing changed: no rewritten body");
        is_str(w.req.model, "gpt-4o", "ret->model is the caller's model");
        rewrite_done(&w);

        w = rewrite("{\"messages\":[]}", NULL);
        ok(w.r == 0 && !w.body && !w.req.model, "no model and no override: ret->model is NULL");
        rewrite_done(&w);

        w = rewrite("{\"model\":\"m\",\"stream\":false}", NULL);
        ok(w.r == 0 && !w.body && !w.req.stream, "\"stream\": false changes nothing");
        rewrite_done(&w);

        w = rewrite("{\"model\":\"m\",\"stream\":\"true\"}", NULL);
        ok(w.r == -EDOM && !w.body && !w.req.stream, "\"stream\": \"true\" (a string) is refused: the upstream might stream");
        rewrite_done(&w);

        OpenAIRequest req = { .model = (char *) "poison" };
        char *body = (char *) "poison";
        size_t n = 99;
        is_int(openai_request_rewrite(NULL, 0, "qwen3:8b", &req, &body, &n), 0, "an empty body (GET /v1/models) is accepted");
        ok(!body && n == 0 && !req.model && !req.stream, "an empty body: nothing to rewrite");
}

static void test_stream_usage(void) {
        Rewrite w = rewrite("{\"model\":\"m\",\"stream\":true}", NULL);

        is_int(w.r, 0, "a stream request is accepted");
        ok(w.req.stream, "ret->stream is set");
        ok(w.req.strip_usage_chunk, "we asked for usage on the caller's behalf: strip the usage chunk");
        is_str(at(w.json, "/stream_options/include_usage"), "true", "stream_options.include_usage is set");
        is_str(at(w.json, "/model"), "\"m\"", "the model is kept");
        rewrite_done(&w);

        w = rewrite("{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}", NULL);
        ok(w.r == 0 && w.req.stream, "a stream that asks for usage is accepted");
        ok(!w.req.strip_usage_chunk, "the caller asked for usage: its chunk is not stripped");
        ok(!w.body, "the caller asked for usage: nothing to rewrite");
        rewrite_done(&w);

        w = rewrite("{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":false,\"x\":1}}", NULL);
        ok(w.r == 0 && w.req.strip_usage_chunk, "include_usage: false by the caller: we set it and strip");
        is_str(at(w.json, "/stream_options/include_usage"), "true", "include_usage: false becomes true");
        is_str(at(w.json, "/stream_options/x"), "1", "other stream_options are kept");
        rewrite_done(&w);

        w = rewrite("{\"model\":\"m\",\"stream\":true,\"stream_options\":null}", NULL);
        ok(w.r == 0 && w.req.strip_usage_chunk, "stream_options: null: we set include_usage and strip");
        is_str(at(w.json, "/stream_options/include_usage"), "true", "stream_options: null is replaced");
        rewrite_done(&w);

        w = rewrite("{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":\"yes\"}}", NULL);
        ok(w.r == 0 && w.req.strip_usage_chunk, "include_usage: \"yes\" (not a boolean) is not a request for usage");
        rewrite_done(&w);

        w = rewrite("{\"stream\":true}", "qwen3:8b");
        ok(w.r == 0 && w.req.stream && w.req.strip_usage_chunk, "a stream with an override");
        is_str(at(w.json, "/model"), "\"qwen3:8b\"", "…gets the model");
        is_str(at(w.json, "/stream_options/include_usage"), "true", "…and include_usage");
        rewrite_done(&w);
}

/* The rewrite edits the bytes of the members it changes; everything else reaches the upstream
 * as the caller wrote it (numbers json-c would print otherwise, escapes, keys deep inside). */
static void test_rewrite_keeps_bytes(void) {
        static const char rest[] = "\"messages\":[{\"role\":\"user\",\"content\":\"caf\\u00e9 \xc3\xa9\",\"role\":\"x\"}],"
                                   "\"temperature\":1.0e0,\"seed\":123456789012345678901234567890, \"n\" : 1";
        char body[512], expected[600];
        Rewrite w;

        snprintf(body, sizeof body, "{\"model\":\"gpt-4o\",%s}", rest);
        w = rewrite(body, "qwen3:8b");
        is_int(w.r, 0, "rewritten");
        snprintf(expected, sizeof expected, "{\"model\":\"qwen3:8b\",%s}", rest);
        ok(streq_ptr(w.body, expected), "only the model's value changed: the rest byte for byte");
        rewrite_done(&w);

        w = rewrite(body, "gpt-4o");
        ok(w.r == 0 && !w.body && streq_ptr(w.req.model, "gpt-4o"), "the body already names the override: passed on as sent");
        rewrite_done(&w);

        snprintf(body, sizeof body, "{\"stream\":true,%s}", rest);
        w = rewrite(body, "m\"x");
        snprintf(expected, sizeof expected, "{\"model\":\"m\\\"x\",\"stream_options\":{\"include_usage\":true},\"stream\":true,%s}", rest);
        ok(streq_ptr(w.body, expected), "new members go first, an override with a quote is escaped, the rest is untouched");
        ok(streq_ptr(at(w.json, "/model"), "\"m\\\"x\""), "the upstream reads the override");
        rewrite_done(&w);

        w = rewrite("{\"stream\":true,\"stream_options\":{}}", NULL);
        ok(streq_ptr(w.body, "{\"stream\":true,\"stream_options\":{\"include_usage\":true}}"), "into an empty stream_options");
        rewrite_done(&w);

        w = rewrite("{}", "m");
        ok(streq_ptr(w.body, "{\"model\":\"m\"}"), "into an empty object: no comma");
        rewrite_done(&w);

        w = rewrite("{\"model\":\"a\\u0062\"}", NULL);
        ok(w.r == 0 && streq_ptr(w.req.model, "ab") && !w.body, "the model's name read with its escapes resolved");
        rewrite_done(&w);
}

static void test_refused(void) {
        static const char *const bad[] = {
                "not json", "[1,2]", "\"model\"", "42", "null", "true", "{", "{\"model\":\"m\"", "{\"model\":\"m\"}x",
                "{\"model\":\"m\"}{}", "{'model':'m'}", "{\"model\":\"m\",}", "{\"a\":\"\xff\"}", " ",
        };
        OpenAIRequest req = {};
        char *body = NULL;
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                is_int(openai_request_rewrite(bad[i], strlen(bad[i]), "m", &req, &body, &n), -EBADMSG,
                       "body \"%s\" is refused with -EBADMSG", bad[i]);
        is_int(openai_request_rewrite("{}\0{}", 5, NULL, &req, &body, &n), -EBADMSG, "a body with a NUL byte is refused");
        ok(!body && !req.model, "a refused body leaves nothing to free");

        Rewrite w = rewrite(" \r\n{\"model\":\"m\"}\n", NULL);
        is_int(w.r, 0, "whitespace around the object is accepted");
        rewrite_done(&w);

        /* Nesting is bounded (128 levels), well above what tool schemas need. */
        char deep[2 + 2 * 200 + 8];
        for (unsigned levels = 100; levels <= 200; levels += 100) {
                size_t l = 0;
                l += (size_t) sprintf(deep + l, "{\"a\":");
                for (unsigned i = 0; i < levels; i++)
                        deep[l++] = '[';
                for (unsigned i = 0; i < levels; i++)
                        deep[l++] = ']';
                deep[l++] = '}';
                deep[l] = 0;
                w = rewrite(deep, NULL);
                is_int(w.r, levels == 100 ? 0 : -EBADMSG, "%u nested arrays are %s", levels,
                       levels == 100 ? "accepted" : "refused");
                rewrite_done(&w);
        }
}

/* A body forwarded as sent (no override, no stream) must mean upstream what it meant here. */
static void test_ambiguous(void) {
        static const struct { const char *body; int r; } cases[] = {
                { "{\"model\":\"m\",\"stream\":1}", -EDOM },
                { "{\"model\":\"m\",\"stream\":\"true\"}", -EDOM },
                { "{\"model\":\"m\",\"stream\":null}", -EDOM },
                { "{\"model\":\"m\",\"stream\":[true]}", -EDOM },
                { "{\"model\":7}", -EDOM },
                { "{\"model\":null}", -EDOM },
                { "{\"model\":\"m\",\"Stream\":true}", -ENOTUNIQ },
                { "{\"model\":\"m\",\"stream\":false,\"stream\":true}", -ENOTUNIQ },
                { "{\"model\":\"m\",\"stream\":false,\"STREAM\":true}", -ENOTUNIQ },
                { "{\"model\":\"m\",\"model\":\"other\"}", -ENOTUNIQ },
                { "{\"Model\":\"m\"}", -ENOTUNIQ },
                { "{\"model\":\"m\",\"\\u0073tream\":true}", -ENOTUNIQ },
                { "{\"model\":\"m\",\"\xc5\xbftream\":true}", -ENOTUNIQ },
                { "{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true,\"Include_Usage\":false}}", -ENOTUNIQ },
                { "{\"model\":\"m\",\"stream\":true,\"Stream_Options\":{\"include_usage\":false}}", -ENOTUNIQ },
                { "{\"model\":\"m\",\"temperature\":1,\"Temperature\":2}", -ENOTUNIQ },
                { "{\"model\":\"m\",\"stream\":true}", 0 },
                { "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"Role\":\"x\",\"content\":\"\\\"Stream\\\":1\"}]}", 0 },
                { "{\"model\":\"m\",\"metadata\":{\"k\":\"a\",\"K\":\"b\"},\"max_tokens\":5}", 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Rewrite w = rewrite(cases[i].body, NULL);
                is_int(w.r, cases[i].r, "%s → %d", cases[i].body, cases[i].r);
                rewrite_done(&w);
                w = rewrite(cases[i].body, "override");
                is_int(w.r, cases[i].r, "with a Model= override too: %s", cases[i].body);
                rewrite_done(&w);
        }
}

static void test_response_usage(void) {
        static const char chat[] = "{\"id\":\"x\",\"choices\":[{\"message\":{\"content\":\"hi\"}}],"
                                   "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":34,\"total_tokens\":46}}";
        static const char embeddings[] = "{\"object\":\"list\",\"data\":[{\"embedding\":[0.1]}],"
                                         "\"usage\":{\"prompt_tokens\":8,\"total_tokens\":8}}";
        TokenUsage u = {};

        is_int(openai_response_usage(chat, strlen(chat), &u), 0, "a chat response has usage");
        ok(u.seen, "usage seen");
        is_u64(u.prompt_tokens, 12, "chat prompt_tokens");
        is_u64(u.completion_tokens, 34, "chat completion_tokens");

        u = (TokenUsage) {};
        is_int(openai_response_usage(embeddings, strlen(embeddings), &u), 0, "an embeddings response has usage");
        is_u64(u.prompt_tokens, 8, "embeddings prompt_tokens");
        is_u64(u.completion_tokens, 0, "embeddings have no completion_tokens");
        ok(u.seen, "embeddings usage seen");

        static const char *const none[] = {
                "{}", "{\"usage\":null}", "{\"usage\":{}}", "{\"usage\":{\"prompt_tokens\":-1}}",
                "{\"usage\":{\"prompt_tokens\":\"12\"}}", "{\"usage\":[1]}",
        };
        for (size_t i = 0; i < ELEMENTSOF(none); i++) {
                u = (TokenUsage) {};
                is_int(openai_response_usage(none[i], strlen(none[i]), &u), -ENODATA, "%s has no usage", none[i]);
                ok(!u.seen, "%s: usage untouched", none[i]);
        }
        is_int(openai_response_usage("oops", 4, &u), -EBADMSG, "a non-JSON response is -EBADMSG");
        is_int(openai_response_usage("", 0, &u), -EBADMSG, "an empty response is -EBADMSG");
}

static void test_models_filter(void) {
        static const char list[] = "{\"object\":\"list\",\"data\":["
                                   "{\"id\":\"gpt-4o\",\"object\":\"model\",\"owned_by\":\"openai\"},"
                                   "{\"id\":\"qwen3:8b\",\"object\":\"model\",\"owned_by\":\"library\"},"
                                   "{\"id\":\"llama3\",\"object\":\"model\",\"owned_by\":\"library\"}]}";
        json_object *o = NULL;
        char *body = NULL;
        size_t n = 0;

        is_int(openai_models_filter(list, strlen(list), "qwen3:8b", &body, &n), 0, "filter to an offered model");
        ok(body && strlen(body) == n, "the filtered list is NUL-terminated at *ret_n");
        o = json_tokener_parse(body);
        is_int(json_object_array_length(json_object_object_get(o, "data")), 1, "only one model is listed");
        is_str(at(o, "/data/0/id"), "\"qwen3:8b\"", "the role's model is the one listed");
        is_str(at(o, "/data/0/owned_by"), "\"library\"", "the upstream's entry is kept as is");
        is_str(at(o, "/object"), "\"list\"", "the list object is kept");
        json_object_put(o);
        body = mfree(body);

        is_int(openai_models_filter(list, strlen(list), "mistral", &body, &n), 0, "filter to a model the upstream does not list");
        o = json_tokener_parse(body);
        is_int(json_object_array_length(json_object_object_get(o, "data")), 1, "one synthesized entry");
        is_str(at(o, "/data/0/id"), "\"mistral\"", "synthesized id");
        is_str(at(o, "/data/0/object"), "\"model\"", "synthesized object");
        is_str(at(o, "/data/0/owned_by"), "\"cloister\"", "synthesized owned_by");
        json_object_put(o);
        body = mfree(body);

        is_int(openai_models_filter(list, strlen(list), NULL, &body, &n), 0, "no model: the list is kept");
        o = json_tokener_parse(body);
        is_int(json_object_array_length(json_object_object_get(o, "data")), 3, "no model: all three models are listed");
        json_object_put(o);
        body = mfree(body);

        is_int(openai_models_filter("{\"data\":[]}", 11, "m", &body, &n), 0, "an empty list gets the role's model");
        like(body, "\"id\":\"m\"", "the role's model is synthesized into an empty list");
        body = mfree(body);

        is_int(openai_models_filter("[]", 2, "m", &body, &n), -EBADMSG, "a non-object list is -EBADMSG");
        is_int(openai_models_filter("{\"data\":{}}", 11, "m", &body, &n), -EBADMSG, "\"data\" not an array is -EBADMSG");
        is_int(openai_models_filter("{\"object\":\"list\"}", 17, "m", &body, &n), -EBADMSG, "no \"data\" is -EBADMSG");
        ok(!body, "nothing returned on error");
}

int main(void) {
        test_model_override();
        test_no_change();
        test_stream_usage();
        test_rewrite_keeps_bytes();
        test_refused();
        test_ambiguous();
        test_response_usage();
        test_models_filter();
        return tap_done();
}
