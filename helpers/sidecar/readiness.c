/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "log.h"
#include "parse-util.h"
#include "readiness.h"

/* Quick enough for a runtime that is nearly up, cheap enough for one loading a model for
 * minutes. */
#define BACKOFF_FIRST_USEC (10 * USEC_PER_MSEC)
#define BACKOFF_MAX_USEC   (500 * USEC_PER_MSEC)
/* One probe: a loading runtime answers its health path at once (with 503), a busy one may
 * take a moment. */
#define PROBE_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define TIMER_ACCURACY_USEC 1000

/* The probe is one request on the runtime's own loopback, and all it reads of the answer is
 * the status line. That, and not a general HTTP client, is why there is no libcurl here: it
 * would load some thirty shared libraries into every socket activation of the proxy (see
 * docs/benchmarks.md, Relay) for a job this small. */
struct Readiness {
        sd_event *event;
        uint16_t port;
        char *request;          /* NULL: ready when the port accepts */
        char *health;
        int fd;                 /* the probe in flight, or -1 */
        bool sent;
        char answer[128];
        size_t answer_len;
        sd_event_source *io, *timeout, *next;
        bool polling;
        usec_t backoff;
        unsigned probes;
        char last_error[256];
        readiness_ready_t ready;
        void *userdata;
};

static void probe_stop(Readiness *r) {
        r->io = sd_event_source_disable_unref(r->io);
        (void) sd_event_source_set_enabled(r->timeout, SD_EVENT_OFF);
        if (r->fd >= 0)
                close(r->fd);
        r->fd = -1;
}

static void schedule_next(Readiness *r) {
        r->backoff = r->backoff ? r->backoff * 2 : BACKOFF_FIRST_USEC;
        if (r->backoff > BACKOFF_MAX_USEC)
                r->backoff = BACKOFF_MAX_USEC;
        if (sd_event_source_set_time_relative(r->next, r->backoff) < 0 ||
            sd_event_source_set_enabled(r->next, SD_EVENT_ONESHOT) < 0)
                log_warning("Cannot schedule the next readiness probe.");
}

static void probe_failed(Readiness *r, const char *fmt, ...) _printf_(2, 3);
static void probe_failed(Readiness *r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(r->last_error, sizeof r->last_error, fmt, ap);
        va_end(ap);
        probe_stop(r);
        if (r->polling)
                schedule_next(r);
}

static void probe_succeeded(Readiness *r) {
        probe_stop(r);
        r->last_error[0] = 0;
        r->polling = false;
        r->ready(r, r->userdata);
}

/* "HTTP/1.1 200 OK": the version, one space, three digits, then a space or the line's end. */
static int status_code(const char *line) {
        if (!startswith(line, "HTTP/1.") || line[7] < '0' || line[7] > '9' || line[8] != ' ')
                return -EBADMSG;
        for (int i = 9; i < 12; i++)
                if (line[i] < '0' || line[i] > '9')
                        return -EBADMSG;
        if (line[12] != ' ' && line[12] != '\r')
                return -EBADMSG;
        return (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
}

/* Returns the status code, or 0 while the status line is not complete yet; a failure is
 * recorded in last_error and returned as < 0. */
static int read_status(Readiness *r) {
        ssize_t n = recv(r->fd, r->answer + r->answer_len, sizeof r->answer - 1 - r->answer_len, MSG_DONTWAIT);
        int status;

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n < 0) {
                snprintf(r->last_error, sizeof r->last_error, "GET %s: %s", r->health, strerror(errno));
                return -errno;
        }
        r->answer_len += (size_t) n;
        r->answer[r->answer_len] = 0;
        if (!strstr(r->answer, "\r\n")) {
                if (n > 0 && r->answer_len < sizeof r->answer - 1)
                        return 0;
                snprintf(r->last_error, sizeof r->last_error, "GET %s: %s", r->health,
                         r->answer_len == 0 ? "the connection was closed without an answer" : "no HTTP status line");
                return -EBADMSG;
        }
        status = status_code(r->answer);
        if (status < 0)
                snprintf(r->last_error, sizeof r->last_error, "GET %s: no HTTP status line", r->health);
        return status;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Readiness *r = userdata;
        int err = 0, status;
        socklen_t len = sizeof err;
        size_t n;

        if (r->sent) {
                status = read_status(r);
                if (status == 200)
                        probe_succeeded(r);
                else if (status < 0) {
                        char why[sizeof r->last_error];
                        memcpy(why, r->last_error, sizeof why); /* probe_failed() writes last_error */
                        probe_failed(r, "%s", why);
                }
                else if (status > 0)
                        probe_failed(r, "GET %s answered %d", r->health, status);
                return 0;
        }
        (void) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
                probe_failed(r, "connect to 127.0.0.1:%u: %s", (unsigned) r->port, strerror(err));
                return 0;
        }
        if (!r->request) {
                probe_succeeded(r);
                return 0;
        }
        /* a hundred bytes into a fresh socket's buffer: all or nothing */
        n = strlen(r->request);
        if (send(fd, r->request, n, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t) n) {
                probe_failed(r, "GET %s: cannot send the request: %s", r->health, strerror(errno));
                return 0;
        }
        r->sent = true;
        (void) sd_event_source_set_io_events(s, EPOLLIN);
        return 0;
}

static int on_probe_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Readiness *r = userdata;

        probe_failed(r, r->request && r->sent ? "GET %s: no answer within 5s" : "connect to %s: no answer within 5s",
                     r->request && r->sent ? r->health : "the runtime's port");
        return 0;
}

static int probe_start(Readiness *r) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(r->port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int k;

        r->probes++;
        r->sent = false;
        r->answer_len = 0;
        r->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (r->fd < 0)
                return -errno;
        if (connect(r->fd, (struct sockaddr *) &sa, sizeof sa) < 0 && errno != EINPROGRESS) {
                probe_failed(r, "connect to 127.0.0.1:%u: %s", (unsigned) r->port, strerror(errno));
                return 0;
        }
        k = sd_event_add_io(r->event, &r->io, r->fd, EPOLLOUT, on_io, r);
        if (k >= 0)
                k = sd_event_source_set_time_relative(r->timeout, PROBE_TIMEOUT_USEC);
        if (k >= 0)
                k = sd_event_source_set_enabled(r->timeout, SD_EVENT_ONESHOT);
        if (k < 0)
                probe_stop(r);
        return k;
}

static int on_next(sd_event_source *s, uint64_t usec, void *userdata) {
        Readiness *r = userdata;
        int k = probe_start(r);

        if (k < 0)
                probe_failed(r, "cannot start a probe: %s", strerror(-k));
        return 0;
}

int readiness_new(sd_event *e, uint16_t port, const char *health, readiness_ready_t ready, void *userdata,
                  Readiness **ret) {
        Readiness *r = calloc(1, sizeof(Readiness));
        int k = 0;

        if (!r)
                return -ENOMEM;
        r->event = sd_event_ref(e);
        r->fd = -1;
        r->port = port;
        r->ready = ready;
        r->userdata = userdata;
        if (!isempty(health)) {
                r->health = strdup(health);
                r->request = strprintf("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nUser-Agent: cloister-sidecar\r\n"
                                       "Accept: */*\r\nConnection: close\r\n\r\n", health, (unsigned) port);
                if (!r->health || !r->request)
                        k = -ENOMEM;
        }
        if (k >= 0)
                k = sd_event_add_time(e, &r->next, CLOCK_MONOTONIC, 0, TIMER_ACCURACY_USEC, on_next, r);
        if (k >= 0)
                k = sd_event_source_set_enabled(r->next, SD_EVENT_OFF);
        if (k >= 0)
                k = sd_event_add_time(e, &r->timeout, CLOCK_MONOTONIC, 0, TIMER_ACCURACY_USEC, on_probe_timeout, r);
        if (k >= 0)
                k = sd_event_source_set_enabled(r->timeout, SD_EVENT_OFF);
        if (k < 0) {
                readiness_free(r);
                return k;
        }
        *ret = r;
        return 0;
}

Readiness *readiness_free(Readiness *r) {
        if (!r)
                return NULL;
        probe_stop(r);
        sd_event_source_disable_unref(r->next);
        sd_event_source_disable_unref(r->timeout);
        sd_event_unref(r->event);
        free(r->request);
        free(r->health);
        return mfree(r);
}

int readiness_start(Readiness *r) {
        if (r->polling)
                return 0;
        r->polling = true;
        r->backoff = 0;
        r->probes = 0;
        r->last_error[0] = 0;
        /* first probe on the next loop iteration, not from inside the caller */
        if (sd_event_source_set_time_relative(r->next, 0) < 0)
                return -EIO;
        return sd_event_source_set_enabled(r->next, SD_EVENT_ONESHOT);
}

void readiness_stop(Readiness *r) {
        r->polling = false;
        probe_stop(r);
        (void) sd_event_source_set_enabled(r->next, SD_EVENT_OFF);
}

const char *readiness_last_error(const Readiness *r) {
        return r->last_error[0] ? r->last_error : NULL;
}

unsigned readiness_probes(const Readiness *r) {
        return r->probes;
}
