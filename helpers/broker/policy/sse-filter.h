/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "openai-body.h"

/* A streamed (SSE) response from an upstream on its way to the caller. From the LLM: passed
 * through byte for byte, while the usage the upstream reports is read from a copy (cloister-broker(8)). From
 * an MCP upstream: each event's data goes through a rewrite function (sse_filter_new_rewrite()). */
typedef struct SseFilter SseFilter;

/* At most this many bytes of one unfinished event are held back or kept for parsing. Past it
 * the held bytes are forwarded as they are, stripping stops for the rest of the stream, and that
 * one event is not parsed for usage; so memory stays bounded whatever the upstream sends. */
#define SSE_FILTER_HELD_MAX ((size_t) 1024 * 1024)

/* At most this many bytes of one event are held for a rewrite function; past it the stream
 * fails (-E2BIG): an event that cannot be read is not passed on. */
#define SSE_FILTER_EVENT_MAX ((size_t) 4 * 1024 * 1024)

SseFilter *sse_filter_new(bool strip_usage_chunk);

/* Looks at the data of one dispatched event: the event's data: field values joined with "\n"
 * as the SSE grammar says (never empty: an event whose data is empty is not dispatched, so
 * not shown to the function). Returns 0 to pass the event unchanged, 1 with *ret (malloc'd,
 * *ret_n bytes, no CR or LF in it) to replace its data, or a negative errno to end the stream. */
typedef int (*SseRewrite)(const char *data, size_t n, void *userdata, char **ret, size_t *ret_n);

/* A filter that holds each event until it is complete and passes it through `rewrite`: an
 * event passes byte for byte, or with its data: lines replaced by one "data: " line holding
 * the new data, at the place of the first (its id:, event:, retry:, comment and unknown lines,
 * and every line end, unchanged). An unfinished last event is judged the same way at finish.
 * Usage is not read. */
SseFilter *sse_filter_new_rewrite(SseRewrite rewrite, void *userdata);
SseFilter *sse_filter_free(SseFilter *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(SseFilter *, sse_filter_free);

/* Feeds upstream bytes; appends the bytes to forward to *out (realloc'd buffer with length
 * *out_n, kept NUL-terminated; caller frees). Without strip_usage_chunk, every byte is forwarded
 * immediately, unchanged. With it, bytes are forwarded up to the end of the last complete event
 * (an event ends at a blank line: "\n\n", "\r\n\r\n" or "\r\r"); an event whose data is a JSON
 * object with "choices": [] and a non-null "usage" object — the chunk we asked for on the
 * caller's behalf — is dropped whole; everything else (comments, "event:" lines, "[DONE]")
 * passes unchanged. */
int sse_filter_feed(SseFilter *f, const char *data, size_t n, char **out, size_t *out_n);

/* End of stream: flushes what is held (an incomplete last event passes unchanged and, as the
 * SSE spec says, is not dispatched, so its usage is not read). */
int sse_filter_finish(SseFilter *f, char **out, size_t *out_n);

/* Usage seen so far: the last "usage" object found in any data: event (multi-line data: fields
 * are joined with "\n" per the SSE spec). */
const TokenUsage *sse_filter_usage(const SseFilter *f);
