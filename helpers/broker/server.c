/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cloister-broker: libmicrohttpd (HTTP/1.1 on the activated Unix socket) and libcurl's
 * multi interface, both on one sd-event loop. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include "broker.h"
#include "log.h"
#include "peer.h"

static Broker *global_broker; /* for curl's completion callback */

/* sd-event's accuracy 0 means its default, 250 ms: far too coarse for a proxy. */
#define TIMER_ACCURACY_USEC 1000

static int run_httpd(Broker *b);

static int on_httpd_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        return run_httpd(userdata);
}

static int on_httpd_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        return run_httpd(userdata);
}

static int on_httpd_defer(sd_event_source *s, void *userdata) {
        return run_httpd(userdata);
}

void broker_kick(Broker *b) {
        (void) sd_event_source_set_enabled(b->httpd_defer, SD_EVENT_ONESHOT);
}

static int run_httpd(Broker *b) {
        MHD_UNSIGNED_LONG_LONG timeout;
        uint64_t now;

        if (MHD_run(b->httpd) != MHD_YES)
                log_warning("MHD_run() failed.");
        if (MHD_get_timeout(b->httpd, &timeout) != MHD_YES)
                (void) sd_event_source_set_enabled(b->httpd_timer, SD_EVENT_OFF);
        else if (timeout == 0) {
                /* more to do at once: a zero timer would wait for sd-event's accuracy */
                (void) sd_event_source_set_enabled(b->httpd_timer, SD_EVENT_OFF);
                broker_kick(b);
        } else if (sd_event_now(b->event, CLOCK_MONOTONIC, &now) >= 0) {
                (void) sd_event_source_set_time(b->httpd_timer, now + timeout * 1000);
                (void) sd_event_source_set_enabled(b->httpd_timer, SD_EVENT_ONESHOT);
        } else
                (void) sd_event_source_set_enabled(b->httpd_timer, SD_EVENT_OFF);
        return 0;
}

RateLimit *broker_role_limit(Broker *b, const Role *role) {
        for (size_t i = 0; i < b->config->n_roles; i++) {
                if (b->config->roles[i] != role)
                        continue;
                if (i >= b->n_limits) { /* a role read after start */
                        RateLimit **l = realloc(b->limits, sizeof(RateLimit *) * (i + 1));
                        if (!l)
                                return NULL;
                        b->limits = l;
                        for (; b->n_limits <= i; b->n_limits++)
                                if (!(b->limits[b->n_limits] = rate_limit_new()))
                                        return NULL;
                }
                return b->limits[i];
        }
        return NULL;
}

/* The path reaches the access handler as sent: the route parser refuses percent-encoded
 * traversal itself, and the upstream gets the bytes the caller wrote. */
static size_t unescape_nothing(void *cls, struct MHD_Connection *c, char *s) {
        return strlen(s);
}

/* Ends a connection from outside libmicrohttpd: it sees the socket shut down and closes
 * the connection itself, with all that hangs on it. */
static void connection_close(Broker *b, Peer *p) {
        p->closing = true; /* a request already read is not served either */
        (void) shutdown(p->fd, SHUT_RDWR);
        broker_kick(b);
}

static int on_header_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Peer *p = userdata;

        log_debug("Connection of %s sent no complete request headers in time: closing it.", p->unit ?: "a peer in no unit");
        p->header_deadline = sd_event_source_disable_unref(p->header_deadline);
        connection_close(global_broker, p);
        return 0;
}

void broker_headers_wait(Broker *b, Peer *p) {
        if (p->header_deadline || p->fd < 0)
                return;
        if (sd_event_add_time_relative(b->event, &p->header_deadline, CLOCK_MONOTONIC, b->config->conf->broker_header_timeout,
                                       TIMER_ACCURACY_USEC * 100, on_header_deadline, p) < 0)
                connection_close(b, p); /* fail closed: no deadline, no connection */
}

void broker_headers_done(Broker *b, Peer *p) {
        p->header_deadline = sd_event_source_disable_unref(p->header_deadline);
}

/* Who is calling is settled once per connection, right after accept(): the kernel's
 * SO_PEERCRED and the unit PID 1 put that process in (peer.c). Every request on the
 * connection uses it; a keep-alive client no longer costs /proc reads per request. The
 * unit's connections are counted: past MaxConnectionsPerCaller= a new one is closed at once,
 * so one caller cannot take the connections every caller shares. */
static void connection_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
        Broker *b = cls;
        Peer *p = *socket_context;

        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
                if (!ci)
                        return;
                p = calloc(1, sizeof(Peer));
                if (!p) {
                        (void) shutdown(ci->connect_fd, SHUT_RDWR);
                        return;
                }
                if (peer_identify(ci->connect_fd, p) < 0)
                        peer_done(p); /* no identity: no role */
                p->fd = ci->connect_fd;
                *socket_context = p;
                p->caller = caller_connect(&b->callers, p->unit);
                if (!p->caller || p->caller->connections > b->config->conf->broker_caller_connections) {
                        if (p->caller && p->caller->connections == b->config->conf->broker_caller_connections + 1)
                                log_warning("%s holds %u connections to the broker (MaxConnectionsPerCaller=): closing any more at once.",
                                            p->unit ?: "A peer in no unit", p->caller->connections - 1);
                        connection_close(b, p);
                        return;
                }
                broker_headers_wait(b, p);
        } else if (p) {
                p->header_deadline = sd_event_source_disable_unref(p->header_deadline);
                caller_disconnect(&b->callers, p->caller);
                peer_done(p);
                free(p);
                *socket_context = NULL;
        }
}

/* libmicrohttpd's messages are about single connections ("closed when reading request"): a
 * caller that opens and drops thousands would fill the journal with them. The broker logs
 * what matters itself (its start, the caps, one audit record per request). */
static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap) {
        char line[256];

        vsnprintf(line, sizeof line, fmt, ap);
        log_debug("libmicrohttpd: %s", line);
}

static void curl_done(CurlGlue *g, CURL *easy, CURLcode result) {
        request_curl_done(g, easy, result);
        broker_kick(global_broker);
}

int broker_start(Broker *b, int listen_fd);
int broker_start(Broker *b, int listen_fd) {
        const union MHD_DaemonInfo *info;
        int r;

        global_broker = b;
        b->limits = calloc(b->config->n_roles + 1, sizeof(RateLimit *));
        if (!b->limits)
                return log_oom();
        for (size_t i = 0; i < b->config->n_roles; i++, b->n_limits++)
                if (!(b->limits[i] = rate_limit_new()))
                        return log_oom();

        r = curl_glue_new(b->event, curl_done, &b->curl);
        if (r < 0)
                return log_error_errno(r, "Failed to set up libcurl: %m");

        b->httpd = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
                                    0, NULL, NULL, request_handle, b,
                                    MHD_OPTION_LISTEN_SOCKET, listen_fd,
                                    MHD_OPTION_NOTIFY_COMPLETED, request_completed, b,
                                    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 300,
                                    MHD_OPTION_CONNECTION_LIMIT, (unsigned) 8192,
                                    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) 64 * 1024,
                                    MHD_OPTION_UNESCAPE_CALLBACK, unescape_nothing, NULL,
                                    MHD_OPTION_URI_LOG_CALLBACK, request_uri_seen, b,
                                    MHD_OPTION_NOTIFY_CONNECTION, connection_notify, b,
                                    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                                    MHD_OPTION_END);
        if (!b->httpd)
                return log_error_errno(EIO, "Failed to start the HTTP server on the activated socket.");
        info = MHD_get_daemon_info(b->httpd, MHD_DAEMON_INFO_EPOLL_FD);
        if (!info)
                return log_error_errno(EIO, "libmicrohttpd has no epoll fd.");
        r = sd_event_add_io(b->event, &b->httpd_io, info->epoll_fd, EPOLLIN, on_httpd_io, b);
        if (r >= 0)
                r = sd_event_add_time(b->event, &b->httpd_timer, CLOCK_MONOTONIC, 0,
                                      TIMER_ACCURACY_USEC, on_httpd_timer, b);
        if (r >= 0)
                r = sd_event_source_set_enabled(b->httpd_timer, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_defer(b->event, &b->httpd_defer, on_httpd_defer, b);
        if (r >= 0)
                r = sd_event_source_set_enabled(b->httpd_defer, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(r, "Failed to add the HTTP server to the event loop: %m");
        return run_httpd(b);
}

void broker_stop(Broker *b);
void broker_stop(Broker *b) {
        if (b->httpd)
                MHD_stop_daemon(b->httpd);
        sd_event_source_disable_unref(b->httpd_io);
        sd_event_source_disable_unref(b->httpd_timer);
        sd_event_source_disable_unref(b->httpd_defer);
        curl_glue_free(b->curl);
        caller_table_done(&b->callers);
        for (size_t i = 0; i < b->n_limits; i++)
                rate_limit_free(b->limits[i]);
        free(b->limits);
}
