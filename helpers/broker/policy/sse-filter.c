/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-c/json.h>

#include "json-scan.h"
#include "sse-filter.h"

/* As deep as a request body may be (openai-body.c). */
#define SSE_JSON_DEPTH_MAX 128

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
        SseRewrite rewrite;     /* instead of usage and stripping: each event through this */
        void *userdata;
        int error;              /* a rewrite failed: the stream is over, nothing more passes */
};

SseFilter *sse_filter_new(bool strip_usage_chunk) {
        SseFilter *f = calloc(1, sizeof(SseFilter));

        if (!f)
                return NULL;
        f->strip = strip_usage_chunk;
        f->at_line_start = f->first_event = true;
        return f;
}

SseFilter *sse_filter_new_rewrite(SseRewrite rewrite, void *userdata) {
        SseFilter *f = sse_filter_new(true);

        if (f) {
                f->rewrite = rewrite;
                f->userdata = userdata;
        }
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

static bool is_data_line(const char *line, size_t l) {
        const char *colon = memchr(line, ':', l);
        size_t name_len = colon ? (size_t) (colon - line) : l;

        return name_len == 4 && memcmp(line, "data", 4) == 0;
}

/* Appends the value of a "data" field line to the event's data, joined by "\n". */
static void add_data_line(const char *line, size_t l, char *data, size_t *n_data, bool *has_data) {
        const char *colon = memchr(line, ':', l);
        const char *v = colon ? colon + 1 : line + l;

        if (!is_data_line(line, l))
                return;
        if (v < line + l && *v == ' ')
                v++;
        if (*has_data)
                data[(*n_data)++] = '\n';
        memcpy(data + *n_data, v, (size_t) (line + l - v));
        *n_data += (size_t) (line + l - v);
        *has_data = true;
}

/* Bytes of a byte order mark that starts the stream, at the start of its first event. */
static size_t bom_length(const SseFilter *f, const char *ev, size_t len) {
        return f->first_event && len >= 3 && memcmp(ev, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

/* The end of the line starting at i (its CR, LF or end of event), and where the next starts. */
static size_t line_end(const char *ev, size_t len, size_t i, size_t *ret_next) {
        size_t e = i;

        while (e < len && ev[e] != '\n' && ev[e] != '\r')
                e++;
        *ret_next = e >= len ? len : e + (e + 1 < len && ev[e] == '\r' && ev[e + 1] == '\n' ? 2 : 1);
        return e;
}

/* The event's data (malloc'd into *ret, NUL-terminated), *ret_has_data false without data: lines. */
static int event_data(SseFilter *f, const char *ev, size_t len, char **ret, size_t *ret_n, bool *ret_has_data) {
        _cleanup_free_ char *data = malloc(len + 1);
        size_t i = bom_length(f, ev, len), n_data = 0, next;
        bool has_data = false;

        if (!data)
                return -ENOMEM;
        for (; i < len; i = next) {
                size_t e = line_end(ev, len, i, &next);

                if (e == i)
                        break;  /* the blank line that ends the event */
                if (ev[i] != ':')
                        add_data_line(ev + i, e - i, data, &n_data, &has_data);
        }
        data[n_data] = 0;
        *ret = TAKE_PTR(data);
        *ret_n = n_data;
        *ret_has_data = has_data;
        return 0;
}

/* The usage-only chunk, read from a json-c tree: the way for an event whose top-level keys
 * hold an escape ("u\u0073age" is "usage" to json-c, as to the upstream's reader). */
static int parse_event_tree(SseFilter *f, const char *data, size_t n_data) {
        json_object *o = NULL, *choices, *usage;
        TokenUsage u;
        int r;

        r = openai_json_parse_object(data, n_data, &o);
        if (r == -EBADMSG)
                return 0;       /* not ours to read */
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

static bool empty_array(const JsonMember *m) {
        return m->kind == JSON_KIND_ARRAY && m->value_n >= 2 &&
               strspn(m->value + 1, " \t\r\n") == m->value_n - 2;
}

/* Reads usage from a complete event; 1 if it is the usage-only chunk, 0 if not. Nearly every
 * event of a stream is a content chunk without "usage": a validating scan finds that out
 * without building a json-c tree for each; only the "usage" value itself is handed to json-c. */
static int parse_event(SseFilter *f, const char *ev, size_t len) {
        _cleanup_free_ char *data = NULL;
        _cleanup_(json_scan_done) JsonScan scan = {};
        const JsonMember *choices = NULL, *usage = NULL;
        size_t n_data;
        bool has_data;
        int r;

        r = event_data(f, ev, len, &data, &n_data, &has_data);
        if (r < 0)
                return r;
        if (!has_data)
                return 0;
        r = json_scan(data, n_data, SSE_JSON_DEPTH_MAX, &scan);
        if (r == -EBADMSG)
                /* "[DONE]"; or NaN and the like, which json-c (and Python's json.dumps) take:
                 * read as before */
                return parse_event_tree(f, data, n_data);
        if (r < 0)
                return r;
        if (scan.kind != JSON_KIND_OBJECT)
                return 0;
        for (size_t i = 0; i < scan.n_members; i++) {
                const JsonMember *m = &scan.members[i];
                if (memchr(m->key, '\\', m->key_n))
                        return parse_event_tree(f, data, n_data);
                /* json-c keeps the last of two equal keys: so does this */
                if (m->key_n == 5 && memcmp(m->key, "usage", 5) == 0)
                        usage = m;
                else if (m->key_n == 7 && memcmp(m->key, "choices", 7) == 0)
                        choices = m;
        }
        if (!usage)
                return 0;
        if (usage->kind == JSON_KIND_OBJECT) {
                json_object *o = NULL;
                TokenUsage u;

                r = openai_json_parse_object(usage->value, usage->value_n, &o);
                if (r < 0)
                        return r == -EBADMSG ? 0 : r;
                if (openai_usage_from_usage_object(o, &u))
                        f->usage = u;
                json_object_put(o);
        }
        return choices && empty_array(choices) && usage->kind == JSON_KIND_OBJECT;
}

/* "data: " DATA and the line end of the data: line it replaces. */
static int append_data_line(char **out, size_t *out_n, const char *data, size_t n, const char *eol, size_t eol_n) {
        int r;

        r = append(out, out_n, "data: ", 6);
        if (r < 0)
                return r;
        r = append(out, out_n, data, n);
        if (r < 0)
                return r;
        return append(out, out_n, eol, eol_n);
}

/* Passes one event through f->rewrite: unchanged, or with its data: lines replaced. */
static int rewrite_event(SseFilter *f, const char *ev, size_t len, char **out, size_t *out_n) {
        _cleanup_free_ char *data = NULL, *new = NULL;
        size_t n_data, n_new = 0, i, next;
        bool has_data, replaced = false;
        int r;

        r = event_data(f, ev, len, &data, &n_data, &has_data);
        if (r < 0)
                return r;
        /* an empty data buffer is not dispatched (a priming event: an id and an empty data:) */
        r = n_data > 0 ? f->rewrite(data, n_data, f->userdata, &new, &n_new) : 0;
        if (r <= 0)
                return r < 0 ? r : append(out, out_n, ev, len);
        if (memchr(new, '\n', n_new) || memchr(new, '\r', n_new))
                return -EINVAL;

        next = i = bom_length(f, ev, len);
        r = append(out, out_n, ev, i);
        if (r < 0)
                return r;
        for (; i < len; i = next) {
                size_t e = line_end(ev, len, i, &next);

                if (e == i || !is_data_line(ev + i, e - i))
                        r = append(out, out_n, ev + i, next - i);      /* kept with its line end */
                else if (!replaced) {
                        replaced = true;
                        r = append_data_line(out, out_n, new, n_new, ev + e, next - e);
                }
                if (r < 0)
                        return r;
                if (e == i)
                        break;  /* the blank line that ends the event */
        }
        /* an incomplete last event: the rest (nothing, after a complete line) */
        return append(out, out_n, ev + next, len - next);
}

static int event_done(SseFilter *f, const char *ev, size_t len, char **out, size_t *out_n) {
        int r = 0;

        if (f->rewrite) {
                r = rewrite_event(f, ev, len, out, out_n);
                f->first_event = false;
                return r;
        }

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
        if (start > 0) { /* (buf is NULL until the first byte: no memmove of NULL) */
                memmove(f->buf, f->buf + start, f->n - start);
                f->n -= start;
                f->scan -= start;
        }

        if (f->rewrite && f->n > SSE_FILTER_EVENT_MAX)
                return -E2BIG;  /* an event too large to read is not passed on */
        if (!f->rewrite && f->n > SSE_FILTER_HELD_MAX) {
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

        if (f->error < 0)
                return f->error;

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
        r = process(f, out, out_n);
        if (r < 0 && f->rewrite)
                f->error = r;
        return r;
}

int sse_filter_finish(SseFilter *f, char **out, size_t *out_n) {
        int r = 0;

        if (f->error < 0)
                return f->error;

        if (f->blank_cr || (f->rewrite && f->n > 0))
                /* complete, only the LF that might have followed is missing; or, to be
                 * rewritten, unfinished: not dispatched by a client, but read all the same */
                r = event_done(f, f->buf, f->n, out, out_n);
        else if (f->strip)
                r = append(out, out_n, f->buf, f->n);
        f->n = f->scan = 0;
        f->blank_cr = f->after_cr = f->skip_event = false;
        f->at_line_start = true;
        return r;
}
