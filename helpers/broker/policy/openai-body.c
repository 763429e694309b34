/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-c/json.h>
#include <limits.h>

#include "json-keys.h"
#include "json-scan.h"
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
        json_object *usage;

        if (!json_object_object_get_ex(o, "usage", &usage))
                return false;
        return openai_usage_from_usage_object(usage, ret);
}

bool openai_usage_from_usage_object(json_object *usage, TokenUsage *ret) {
        TokenUsage u = { .seen = true };
        bool any;

        if (!json_object_is_type(usage, json_type_object))
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

/* One change to a request body: `del` bytes at `off` become `text`. */
typedef struct BodyEdit {
        size_t off, del;
        const char *text;
} BodyEdit;

/* The body with the edits made (they do not overlap), in one new buffer. */
static int splice(const char *body, size_t n, BodyEdit *edits, size_t n_edits, char **ret, size_t *ret_n) {
        size_t total = n, k = 0, from = 0;
        char *out;

        /* at most three: insertion sort by offset */
        for (size_t i = 1; i < n_edits; i++)
                for (size_t j = i; j > 0 && edits[j - 1].off > edits[j].off; j--) {
                        BodyEdit t = edits[j];
                        edits[j] = edits[j - 1];
                        edits[j - 1] = t;
                }
        for (size_t i = 0; i < n_edits; i++)
                total = total - edits[i].del + strlen(edits[i].text);
        out = malloc(total + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n_edits; i++) {
                size_t l = strlen(edits[i].text);
                memcpy(out + k, body + from, edits[i].off - from);
                k += edits[i].off - from;
                memcpy(out + k, edits[i].text, l);
                k += l;
                from = edits[i].off + edits[i].del;
        }
        memcpy(out + k, body + from, n - from);
        k += n - from;
        out[k] = 0;
        *ret = out;
        *ret_n = k;
        return 0;
}

/* s as a JSON string, quotes included, written by json-c. */
static char *json_quote(const char *s) {
        _cleanup_json_ json_object *o = json_object_new_string(s);
        const char *t;

        if (!o)
                return NULL;
        t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        return t ? strdup(t) : NULL;
}

/* A string member's value as text (its escapes resolved), by json-c. */
static int member_string(const JsonMember *m, char **ret) {
        _cleanup_json_ json_object *o = NULL;
        int r;

        r = json_parse_strict(m->value, m->value_n, 1, &o);
        if (r < 0)
                return r;
        if (!json_object_is_type(o, json_type_string))
                return -EBADMSG;
        *ret = strdup(json_object_get_string(o));
        return *ret ? 0 : -ENOMEM;
}

static const char * const request_keys[] = { "model", "stream", "stream_options", NULL };
static const char * const stream_options_keys[] = { "include_usage", NULL };

int openai_request_rewrite(const char *body, size_t n, const char *model_override,
                           OpenAIRequest *ret, char **ret_body, size_t *ret_n) {
        _cleanup_(json_scan_done) JsonScan scan = {}, opts_scan = {};
        _cleanup_free_ char *quoted = NULL, *head = NULL;
        _cleanup_(openai_request_done) OpenAIRequest req = {};
        const JsonMember *model, *stream, *opts, *usage = NULL;
        const char *head_model = NULL, *head_opts = NULL;
        BodyEdit edits[3];
        size_t n_edits = 0;
        int r;

        *ret_body = NULL;
        *ret_n = 0;
        if (n == 0) {
                *ret = req;
                return 0;
        }
        /* Validated whole, read where the policy reads, changed only there: the rest goes
         * upstream byte for byte. */
        r = json_scan(body, n, JSON_DEPTH_MAX, &scan);
        if (r < 0)
                return r;
        if (scan.kind != JSON_KIND_OBJECT)
                return -EBADMSG;
        /* a body forwarded as sent must mean to the upstream what it meant here */
        r = json_keys_check_members(scan.members, scan.n_members, request_keys);
        if (r < 0)
                return r;
        model = json_scan_member(&scan, "model");
        stream = json_scan_member(&scan, "stream");
        opts = json_scan_member(&scan, "stream_options");
        if (opts && opts->kind == JSON_KIND_OBJECT) {
                r = json_scan(opts->value, opts->value_n, JSON_DEPTH_MAX, &opts_scan);
                if (r < 0)
                        return r;
                r = json_keys_check_members(opts_scan.members, opts_scan.n_members, stream_options_keys);
                if (r < 0)
                        return r;
                usage = json_scan_member(&opts_scan, "include_usage");
        }
        /* "stream": 1 or "true" would be a stream upstream and not here (no usage asked for) */
        if (stream && stream->kind != JSON_KIND_BOOLEAN)
                return -EDOM;
        if (model && model->kind != JSON_KIND_STRING)
                return -EDOM;

        if (model_override) {
                quoted = json_quote(model_override);
                req.model = strdup(model_override);
                if (!quoted || !req.model)
                        return -ENOMEM;
                if (!model)
                        head_model = quoted;
                else if (model->value_n != strlen(quoted) || memcmp(model->value, quoted, model->value_n) != 0)
                        edits[n_edits++] = (BodyEdit) { model->value - body, model->value_n, quoted };
        } else if (model) {
                r = member_string(model, &req.model);
                if (r < 0)
                        return r;
        }

        req.stream = stream && stream->value[0] == 't';
        if (req.stream && !(usage && usage->kind == JSON_KIND_BOOLEAN && usage->value[0] == 't')) {
                req.strip_usage_chunk = true;
                if (usage)
                        edits[n_edits++] = (BodyEdit) { usage->value - body, usage->value_n, "true" };
                else if (opts && opts->kind == JSON_KIND_OBJECT)
                        edits[n_edits++] = (BodyEdit) { opts->value + 1 - body, 0,
                                opts_scan.n_members > 0 ? "\"include_usage\":true," : "\"include_usage\":true" };
                else if (opts)
                        edits[n_edits++] = (BodyEdit) { opts->value - body, opts->value_n, "{\"include_usage\":true}" };
                else
                        head_opts = "\"stream_options\":{\"include_usage\":true}";
        }
        if (head_model || head_opts) {
                /* new members go first, so nothing after them needs to move twice */
                head = strprintf("%s%s%s%s%s", head_model ? "\"model\":" : "", strempty(head_model),
                                 head_model && head_opts ? "," : "", strempty(head_opts),
                                 scan.n_members > 0 ? "," : "");
                if (!head)
                        return -ENOMEM;
                edits[n_edits++] = (BodyEdit) { scan.open + 1 - body, 0, head };
        }
        if (n_edits > 0) {
                r = splice(body, n, edits, n_edits, ret_body, ret_n);
                if (r < 0)
                        return r;
        }
        *ret = req;
        req = (OpenAIRequest) {};
        return 0;
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
