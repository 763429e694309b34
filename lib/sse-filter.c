/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-c/json.h>

#include "sse-filter.h"

struct SseFilter {
        bool strip;             /* cleared for good once an event outgrows SSE_FILTER_HELD_MAX */
        char *buf;              /* from the start of the current event: held or kept for parsing */
        size_t n, allocated;
        size_t scan;            /* bytes of buf the line state below has seen */
        bool at_line_start;     /* the last byte seen ended a line (or none seen in this event) */
        bool after_cr;          /* …with a CR: a LF right after belongs to the same line end */
        bool blank_cr;          /* a blank line ended in CR: the event ends there or after a LF */
        bool skip_event;        /* the current event outgrew buf: forwarded, not parsed */
        bool first_event;       /* a byte order mark may start the stream */
        TokenUsage usage;
};

SseFilter *sse_filter_new(bool strip_usage_chunk) {
        SseFilter *f = calloc(1, sizeof(SseFilter));

        if (!f)
                return NULL;
        f->strip = strip_usage_chunk;
        f->at_line_start = f->first_event = true;
        return f;
}

SseFilter *sse_filter_free(SseFilter *f) {
        if (f)
                free(f->buf);
        return mfree(f);
}

const TokenUsage *sse_filter_usage(const SseFilter *f) {
        return &f->usage;
}

static int append(char **out, size_t *out_n, const char *data, size_t n) {
        char *p;

        if (n == 0)
                return 0;
        p = realloc(*out, *out_n + n + 1);
        if (!p)
                return -ENOMEM;
        memcpy(p + *out_n, data, n);
        *out_n += n;
        p[*out_n] = 0;
        *out = p;
        return 0;
}

/* Advances the line state over buf; true with *ret_end set where the first complete event
 * ends. The state lives in f, not in buf, so it survives buf being emptied on overflow. */
static bool next_event(SseFilter *f, size_t *ret_end) {
        for (; f->scan < f->n; f->scan++) {
                char c = f->buf[f->scan];

                if (f->blank_cr) {
                        *ret_end = c == '\n' ? ++f->scan : f->scan;
                        f->blank_cr = f->after_cr = false;
                        f->at_line_start = true;
                        return true;
                }
                if (c == '\n' && f->after_cr) {
                        f->after_cr = false;
                        continue;
                }
                if (c != '\n' && c != '\r') {
                        f->at_line_start = f->after_cr = false;
                        continue;
                }
                if (!f->at_line_start) {
                        f->at_line_start = true;
                        f->after_cr = c == '\r';
                        continue;
                }
                if (c == '\r') {
                        f->blank_cr = true;
                        continue;
                }
                *ret_end = ++f->scan;
                f->after_cr = false;
                return true;
        }
        return false;
}

/* Appends the value of a "data" field line to the event's data, joined by "\n". */
static void add_data_line(const char *line, size_t l, char *data, size_t *n_data, bool *has_data) {
        const char *colon = memchr(line, ':', l);
        size_t name_len = colon ? (size_t) (colon - line) : l;
        const char *v = colon ? colon + 1 : line + l;

        if (name_len != 4 || memcmp(line, "data", 4) != 0)
                return;
        if (v < line + l && *v == ' ')
                v++;
        if (*has_data)
                data[(*n_data)++] = '\n';
        memcpy(data + *n_data, v, (size_t) (line + l - v));
        *n_data += (size_t) (line + l - v);
        *has_data = true;
}

/* Reads usage from a complete event; 1 if it is the usage-only chunk, 0 if not. */
static int parse_event(SseFilter *f, const char *ev, size_t len) {
        _cleanup_free_ char *data = malloc(len + 1);
        json_object *o = NULL, *choices, *usage;
        size_t i = 0, n_data = 0;
        bool has_data = false;
        TokenUsage u;
        int r;

        if (!data)
                return -ENOMEM;
        if (f->first_event && len >= 3 && memcmp(ev, "\xEF\xBB\xBF", 3) == 0)
                i = 3;
        while (i < len) {
                size_t e = i;

                while (e < len && ev[e] != '\n' && ev[e] != '\r')
                        e++;
                if (e == i)
                        break;  /* the blank line that ends the event */
                if (ev[i] != ':')
                        add_data_line(ev + i, e - i, data, &n_data, &has_data);
                i = e + (e + 1 < len && ev[e] == '\r' && ev[e + 1] == '\n' ? 2 : 1);
        }
        if (!has_data)
                return 0;
        r = openai_json_parse_object(data, n_data, &o);
        if (r == -EBADMSG)
                return 0;       /* "[DONE]", or not ours to read */
        if (r < 0)
                return r;
        if (openai_usage_from_json(o, &u))
                f->usage = u;
        r = json_object_object_get_ex(o, "choices", &choices) &&
            json_object_is_type(choices, json_type_array) && json_object_array_length(choices) == 0 &&
            json_object_object_get_ex(o, "usage", &usage) && json_object_is_type(usage, json_type_object);
        json_object_put(o);
        return r;
}

static int event_done(SseFilter *f, const char *ev, size_t len, char **out, size_t *out_n) {
        int r = 0;

        if (!f->skip_event)
                r = parse_event(f, ev, len);
        f->skip_event = f->first_event = false;
        if (r < 0)
                return r;
        if (f->strip && r == 0)
                return append(out, out_n, ev, len);
        return 0;
}

static int process(SseFilter *f, char **out, size_t *out_n) {
        size_t start = 0, end;
        int r;

        while (next_event(f, &end)) {
                r = event_done(f, f->buf + start, end - start, out, out_n);
                if (r < 0)
                        return r;
                start = end;
        }
        memmove(f->buf, f->buf + start, f->n - start);
        f->n -= start;
        f->scan -= start;

        if (f->n > SSE_FILTER_HELD_MAX) {
                if (f->strip) {
                        r = append(out, out_n, f->buf, f->n);
                        if (r < 0)
                                return r;
                        f->strip = false;
                }
                f->skip_event = true;
                f->n = f->scan = 0;
        }
        return 0;
}

int sse_filter_feed(SseFilter *f, const char *data, size_t n, char **out, size_t *out_n) {
        int r;

        if (!f->strip) {
                r = append(out, out_n, data, n);
                if (r < 0)
                        return r;
        }
        if (f->n + n > f->allocated) {
                size_t a = f->n + n > 4096 ? 2 * (f->n + n) : 4096;
                char *p = realloc(f->buf, a);

                if (!p)
                        return -ENOMEM;
                f->buf = p;
                f->allocated = a;
        }
        if (n > 0)
                memcpy(f->buf + f->n, data, n);
        f->n += n;
        return process(f, out, out_n);
}

int sse_filter_finish(SseFilter *f, char **out, size_t *out_n) {
        int r = 0;

        if (f->blank_cr)        /* complete: only the LF that might have followed is missing */
                r = event_done(f, f->buf, f->n, out, out_n);
        else if (f->strip)
                r = append(out, out_n, f->buf, f->n);
        f->n = f->scan = 0;
        f->blank_cr = f->after_cr = f->skip_event = false;
        f->at_line_start = true;
        return r;
}
