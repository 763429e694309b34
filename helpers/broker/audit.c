/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The record is written field by field into one buffer and handed to journald as one
 * datagram (sd_journal_sendv(), one sendmsg()): sd_journal_send() would format each of the
 * seventeen fields with its own vasprintf(), a malloc and a free per field per request. */
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "audit.h"
#include "macro.h"

#define AUDIT_FIELDS_MAX 20

typedef struct RecordBuffer {
        char *buf;
        size_t n, allocated;
        struct iovec iov[AUDIT_FIELDS_MAX];
        size_t n_iov;
        size_t field_start;
} RecordBuffer;

static void put(RecordBuffer *b, const char *s, size_t l) {
        /* sized beforehand (record_size()): never past the end */
        memcpy(b->buf + b->n, s, l);
        b->n += l;
}

static void put_str(RecordBuffer *b, const char *s) {
        put(b, s, strlen(s));
}

static void put_u64(RecordBuffer *b, uint64_t v) {
        char d[20];
        size_t i = sizeof d;

        do
                d[--i] = (char) ('0' + v % 10);
        while ((v /= 10) > 0);
        put(b, d + i, sizeof d - i);
}

static void field_begin(RecordBuffer *b, const char *key_eq) {
        b->field_start = b->n;
        put_str(b, key_eq);
}

static void field_end(RecordBuffer *b) {
        b->iov[b->n_iov++] = (struct iovec) { .iov_base = (void *) (uintptr_t) b->field_start, .iov_len = b->n - b->field_start };
}

static void field_str(RecordBuffer *b, const char *key_eq, const char *v) {
        field_begin(b, key_eq);
        put_str(b, strempty(v));
        field_end(b);
}

static void field_u64(RecordBuffer *b, const char *key_eq, uint64_t v) {
        field_begin(b, key_eq);
        put_u64(b, v);
        field_end(b);
}

/* An upper bound of the record's bytes: every string twice (MESSAGE= repeats them), every
 * number at its widest, every key. */
static size_t record_size(const AuditRecord *a) {
        size_t s = 1024;
        const char *strings[] = { a->role, a->unit, a->route, a->upstream, a->method, a->path, a->model, a->error };

        for (size_t i = 0; i < ELEMENTSOF(strings); i++)
                s += 2 * strlen(strempty(strings[i]));
        return s;
}

void audit_log(const AuditRecord *a) {
        _cleanup_free_ char *heap = NULL;
        char stack[4096];
        RecordBuffer b = { .buf = stack, .allocated = sizeof stack };
        size_t need = record_size(a);

        if (need > sizeof stack) {
                heap = malloc(need);
                if (!heap)
                        return (void) sd_journal_print(LOG_ERR, "cloister-broker: out of memory for an audit record");
                b.buf = heap;
                b.allocated = need;
        }

        field_begin(&b, "MESSAGE=");
        put_str(&b, a->role ?: "(unknown peer)");
        put_str(&b, " ");
        put_str(&b, strempty(a->method));
        put_str(&b, " ");
        put_str(&b, strempty(a->path));
        put_str(&b, " from ");
        put_str(&b, a->unit ?: "(no unit)");
        put_str(&b, " → ");
        put_u64(&b, a->status);
        put_str(&b, " (");
        put_str(&b, a->error ?: a->upstream ? "proxied to " : "answered by the broker");
        put_str(&b, a->error ? "" : strempty(a->upstream));
        put_str(&b, ")");
        field_end(&b);
        field_str(&b, "MESSAGE_ID=", CLOISTER_BROKER_MESSAGE_ID);
        field_u64(&b, "PRIORITY=", a->status >= 500 ? LOG_WARNING : LOG_INFO);
        field_str(&b, "CLOISTER_ROLE=", a->role);
        field_str(&b, "CLOISTER_UNIT=", a->unit);
        field_begin(&b, "CLOISTER_PEER_PID=");
        if (a->peer_pid < 0)
                put_str(&b, "-");
        put_u64(&b, (uint64_t) (a->peer_pid < 0 ? -(int64_t) a->peer_pid : a->peer_pid));
        field_end(&b);
        field_str(&b, "CLOISTER_ROUTE=", a->route);
        field_str(&b, "CLOISTER_UPSTREAM=", a->upstream);
        field_str(&b, "CLOISTER_METHOD=", a->method);
        field_str(&b, "CLOISTER_PATH=", a->path);
        field_u64(&b, "CLOISTER_STATUS=", a->status);
        field_u64(&b, "CLOISTER_BYTES_IN=", a->bytes_in);
        field_u64(&b, "CLOISTER_BYTES_OUT=", a->bytes_out);
        field_u64(&b, "CLOISTER_DURATION_USEC=", a->duration_usec);
        field_str(&b, "CLOISTER_MODEL=", a->model);
        field_u64(&b, "CLOISTER_PROMPT_TOKENS=", a->prompt_tokens);
        field_u64(&b, "CLOISTER_COMPLETION_TOKENS=", a->completion_tokens);
        if (a->error)
                field_str(&b, "CLOISTER_ERROR=", a->error);

        /* the fields were recorded as offsets: the buffer is complete now */
        for (size_t i = 0; i < b.n_iov; i++)
                b.iov[i].iov_base = b.buf + (uintptr_t) b.iov[i].iov_base;
        (void) sd_journal_sendv(b.iov, (int) b.n_iov);
}
