/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include "macro.h"

struct json_object;

/* Token counts of one response, for the journal record and TokensPerMinute= (cloister-broker(8)). */
typedef struct TokenUsage {
        uint64_t prompt_tokens, completion_tokens;
        bool seen;
} TokenUsage;

typedef struct OpenAIRequest {
        bool stream;
        bool strip_usage_chunk; /* we asked for the usage chunk, the caller did not: drop it */
        char *model;            /* after override; NULL if the body names none */
} OpenAIRequest;

void openai_request_done(OpenAIRequest *r);

/* Checks and, where needed, edits a request body for /v1 routes. Not JSON (RFC 8259, json-scan.h)
 * or not a JSON object → -EBADMSG. Applies model_override (if non-NULL) to "model", adding it
 * if missing. If "stream": true and the caller did not set stream_options.include_usage to
 * true, sets it (so usage is counted) and sets ret->strip_usage_chunk. *ret_body is the
 * rewritten body (malloc'd, NUL-terminated, *ret_n its length) or NULL if nothing changed:
 * the body goes upstream as sent. A rewrite changes only the bytes of the values it sets and
 * puts members it adds first; every other byte is the caller's. A body that already names the
 * override, written exactly as json-c writes it, needs no rewrite: a second "model" key is
 * refused below, so no parser can read another. An empty body (n == 0) is accepted: nothing
 * to rewrite (GET /v1/models).
 * -ENOTUNIQ if the object (or its stream_options) has keys that collide ignoring case or a case
 * variant of "model", "stream", "stream_options", "include_usage" (json-keys.h); -EDOM if
 * "stream" is there and not a boolean, or "model" is there and not a string. */
int openai_request_rewrite(const char *body, size_t n, const char *model_override,
                           OpenAIRequest *ret, char **ret_body, size_t *ret_n);

/* Usage of a non-streamed response body: {"usage":{"prompt_tokens":..,"completion_tokens":..}}
 * (embeddings have prompt_tokens and total_tokens only). -ENODATA if none, -EBADMSG if the body
 * is not a JSON object. */
int openai_response_usage(const char *body, size_t n, TokenUsage *ret);

/* Filters a /v1/models response to the models a role may use: if `model` is non-NULL, keep only
 * the entry with that "id" (and if there is none, return a list with just that id, object
 * "model", owned_by "cloister"). Returns malloc'd, NUL-terminated JSON; -EBADMSG if the body is
 * not an object with a "data" array. */
int openai_models_filter(const char *body, size_t n, const char *model, char **ret_body, size_t *ret_n);

/* Shared with the SSE filter. Exactly one JSON object in s[0..n), whitespace around it allowed,
 * parsed strictly (RFC 8259, valid UTF-8), else -EBADMSG. */
int openai_json_parse_object(const char *s, size_t n, struct json_object **ret);
/* Reads o["usage"] if it is an object with a non-negative integer "prompt_tokens" or
 * "completion_tokens"; false if there is none. */
bool openai_usage_from_json(struct json_object *o, TokenUsage *ret);
/* The same, given the "usage" value itself. */
bool openai_usage_from_usage_object(struct json_object *usage, TokenUsage *ret);
