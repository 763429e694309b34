/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-c/json.h>
#include <limits.h>

#include "json-keys.h"
#include "json-strict.h"
#include "openai-body.h"

/* Deep enough for nested tool schemas; the tokener keeps its own stack, so this bounds memory. */
#define JSON_DEPTH_MAX 128

static void json_object_unrefp(json_object **o) {
        if (*o)
                json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_object_unrefp)

void openai_request_done(OpenAIRequest *r) {
        if (r)
                r->model = mfree(r->model);
}

int openai_json_parse_object(const char *s, size_t n, json_object **ret) {
        json_object *o = NULL;
        int r;

        if (n == 0)
                return -EBADMSG;
        r = json_parse_strict(s, n, JSON_DEPTH_MAX, &o);
        if (r < 0)
                return r;
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EBADMSG;
        }
        *ret = o;
        return 0;
}

static int serialize(json_object *o, char **ret, size_t *ret_n) {
        const char *s;
        size_t l;
        char *copy;

        s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &l);
        if (!s)
                return -ENOMEM;
        copy = malloc(l + 1);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, s, l + 1);
        *ret = copy;
        *ret_n = l;
        return 0;
}

static bool get_count(json_object *usage, const char *key, uint64_t *ret) {
        json_object *v;
        int64_t i;

        if (!json_object_object_get_ex(usage, key, &v) || !json_object_is_type(v, json_type_int))
                return false;
        i = json_object_get_int64(v);
        if (i < 0)
                return false;
        *ret = (uint64_t) i;
        return true;
}

bool openai_usage_from_json(json_object *o, TokenUsage *ret) {
        TokenUsage u = { .seen = true };
        json_object *usage;
        bool any;

        if (!json_object_object_get_ex(o, "usage", &usage) || !json_object_is_type(usage, json_type_object))
                return false;
        any = get_count(usage, "prompt_tokens", &u.prompt_tokens);
        any = get_count(usage, "completion_tokens", &u.completion_tokens) || any;
        if (!any)
                return false;
        *ret = u;
        return true;
}

static int add_value(json_object *o, const char *key, json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* stream_options.include_usage: true unless the caller already asked for it. Returns whether
 * it changed the body. */
static int request_usage(json_object *o) {
        json_object *opts, *v;

        if (json_object_object_get_ex(o, "stream_options", &opts) &&
            json_object_is_type(opts, json_type_object)) {
                if (json_object_object_get_ex(opts, "include_usage", &v) &&
                    json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v))
                        return 0;
        } else {
                opts = json_object_new_object();
                if (add_value(o, "stream_options", opts) < 0)
                        return -ENOMEM;
        }
        if (add_value(opts, "include_usage", json_object_new_boolean(true)) < 0)
                return -ENOMEM;
        return 1;
}

static const JsonKeyRule stream_options_rule = {
        .keys = (const char * const[]) { "include_usage", NULL },
};
static const JsonKeyRule request_rule = {
        .keys = (const char * const[]) { "model", "stream", "stream_options", NULL },
        .nested = "stream_options",
        .nested_rule = &stream_options_rule,
};

int openai_request_rewrite(const char *body, size_t n, const char *model_override,
                           OpenAIRequest *ret, char **ret_body, size_t *ret_n) {
        _cleanup_json_ json_object *o = NULL;
        OpenAIRequest req = {};
        json_object *v;
        bool changed = false;
        int r;

        if (n == 0) {
                *ret = req;
                *ret_body = NULL;
                *ret_n = 0;
                return 0;
        }
        r = openai_json_parse_object(body, n, &o);
        if (r < 0)
                return r;
        /* a body forwarded as sent must mean to the upstream what it meant here */
        r = json_keys_check(body, n, &request_rule);
        if (r < 0)
                return r;
        /* "stream": 1 or "true" would be a stream upstream and not here (no usage asked for) */
        if (json_object_object_get_ex(o, "stream", &v) && !json_object_is_type(v, json_type_boolean))
                return -EDOM;
        if (json_object_object_get_ex(o, "model", &v) && !json_object_is_type(v, json_type_string))
                return -EDOM;

        if (model_override) {
                r = add_value(o, "model", json_object_new_string(model_override));
                if (r < 0)
                        return r;
                changed = true;
        }
        if (json_object_object_get_ex(o, "model", &v) && json_object_is_type(v, json_type_string)) {
                req.model = strdup(json_object_get_string(v));
                if (!req.model)
                        return -ENOMEM;
        }

        req.stream = json_object_object_get_ex(o, "stream", &v) &&
                     json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
        if (req.stream) {
                r = request_usage(o);
                if (r < 0)
                        goto fail;
                req.strip_usage_chunk = r > 0;
                changed = changed || r > 0;
        }

        *ret_body = NULL;
        *ret_n = 0;
        if (changed) {
                r = serialize(o, ret_body, ret_n);
                if (r < 0)
                        goto fail;
        }
        *ret = req;
        return 0;
fail:
        openai_request_done(&req);
        return r;
}

int openai_response_usage(const char *body, size_t n, TokenUsage *ret) {
        _cleanup_json_ json_object *o = NULL;
        int r;

        r = openai_json_parse_object(body, n, &o);
        if (r < 0)
                return r;
        return openai_usage_from_json(o, ret) ? 0 : -ENODATA;
}

static json_object *model_entry_new(const char *model) {
        json_object *e = json_object_new_object();

        if (!e)
                return NULL;
        if (add_value(e, "id", json_object_new_string(model)) < 0 ||
            add_value(e, "object", json_object_new_string("model")) < 0 ||
            add_value(e, "created", json_object_new_int64(0)) < 0 ||
            add_value(e, "owned_by", json_object_new_string("cloister")) < 0) {
                json_object_put(e);
                return NULL;
        }
        return e;
}

int openai_models_filter(const char *body, size_t n, const char *model, char **ret_body, size_t *ret_n) {
        _cleanup_json_ json_object *o = NULL, *kept = NULL;
        json_object *data, *e, *id;
        int r;

        r = openai_json_parse_object(body, n, &o);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(o, "data", &data) || !json_object_is_type(data, json_type_array))
                return -EBADMSG;
        if (!model)
                return serialize(o, ret_body, ret_n);

        kept = json_object_new_array();
        if (!kept)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(data); i++) {
                e = json_object_array_get_idx(data, i);
                if (!json_object_object_get_ex(e, "id", &id) || !json_object_is_type(id, json_type_string) ||
                    !streq(json_object_get_string(id), model))
                        continue;
                if (json_object_array_add(kept, json_object_get(e)) < 0) {
                        json_object_put(e);
                        return -ENOMEM;
                }
                break;
        }
        if (json_object_array_length(kept) == 0) {
                e = model_entry_new(model);
                if (!e || json_object_array_add(kept, e) < 0) {
                        json_object_put(e);
                        return -ENOMEM;
                }
        }
        if (json_object_object_add(o, "data", kept) < 0)
                return -ENOMEM;
        TAKE_PTR(kept);         /* o owns it now */
        return serialize(o, ret_body, ret_n);
}
