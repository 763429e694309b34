/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "openai-body.h"

/* A streamed (SSE) response from the LLM upstream on its way to the caller: passed through
 * byte for byte, while the usage the upstream reports is read from a copy (§8). */
typedef struct SseFilter SseFilter;

/* At most this many bytes of one unfinished event are held back or kept for parsing. Past it
 * the held bytes are forwarded as they are, stripping stops for the rest of the stream, and that
 * one event is not parsed for usage; so memory stays bounded whatever the upstream sends. */
#define SSE_FILTER_HELD_MAX ((size_t) 1024 * 1024)

SseFilter *sse_filter_new(bool strip_usage_chunk);
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
