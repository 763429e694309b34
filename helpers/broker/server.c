/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cloister-broker: libmicrohttpd (HTTP/1.1 on the activated Unix socket) and libcurl's
 * multi interface, both on one sd-event loop. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include "broker.h"
#include "event-timer.h"
#include "log.h"
#include "peer.h"

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

static void kick(Broker *b) {
        (void) sd_event_source_set_enabled(b->httpd_defer, SD_EVENT_ONESHOT);
}

/* MHD_run() takes each connection one step at a time: a streamed answer's headers, its chunk
 * and its end are three runs, and "more to do at once" (a timeout of 0) between them. A few
 * such runs are made here in a row rather than one per turn of the event loop, each turn
 * costing its own epoll_wait() and more. Bounded, so that other sources are not starved. */
#define HTTPD_RUNS_IN_A_ROW 4

static int run_httpd(Broker *b) {
        MHD_UNSIGNED_LONG_LONG timeout = 0;
        enum MHD_Result have_timeout = MHD_NO;
        uint64_t now;

        for (unsigned i = 0; i < HTTPD_RUNS_IN_A_ROW; i++) {
                if (MHD_run(b->httpd) != MHD_YES)
                        log_warning("MHD_run() failed.");
                have_timeout = MHD_get_timeout(b->httpd, &timeout);
                if (have_timeout != MHD_YES || timeout != 0)
                        break;
        }
        if (have_timeout != MHD_YES)
                (void) sd_event_source_set_enabled(b->httpd_timer, SD_EVENT_OFF);
        else if (timeout == 0) {
                /* more to do at once: a zero timer would wait for sd-event's accuracy */
                (void) sd_event_source_set_enabled(b->httpd_timer, SD_EVENT_OFF);
                kick(b);
        } else if (sd_event_now(b->event, CLOCK_MONOTONIC, &now) >= 0)
                (void) event_timer_arm_no_later(b->httpd_timer, now + timeout * 1000);
        else
                (void) sd_event_source_set_enabled(b->httpd_timer, SD_EVENT_OFF);
        return 0;
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
        kick(b);
}

/* The source stays armed across a connection's keep-alive requests (adding and removing one
 * per request moved sd-event's earliest deadline twice per request: a timerfd_settime() each);
 * when it fires it looks at the deadline of the headers awaited now, if any. */
static int on_header_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Peer *p = userdata;

        if (p->header_deadline_usec == 0)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (usec < p->header_deadline_usec) {
                if (event_timer_arm_no_later(s, p->header_deadline_usec) < 0)
                        connection_close(p->broker, p); /* fail closed: no deadline, no connection */
                return 0;
        }
        log_debug("Connection of %s sent no complete request headers in time: closing it.", p->unit ?: "a peer in no unit");
        p->header_deadline = sd_event_source_disable_unref(p->header_deadline);
        p->header_deadline_usec = 0;
        connection_close(p->broker, p);
        return 0;
}

static void headers_wait(Broker *b, Peer *p) {
        uint64_t now;

        if (p->header_deadline_usec != 0 || p->fd < 0)
                return;
        if (sd_event_now(b->event, CLOCK_MONOTONIC, &now) < 0) {
                connection_close(b, p); /* fail closed: no deadline, no connection */
                return;
        }
        p->header_deadline_usec = now + b->requests.config->conf->broker_header_timeout;
        if (p->header_deadline) {
                if (event_timer_arm_no_later(p->header_deadline, p->header_deadline_usec) < 0)
                        connection_close(b, p);
                return;
        }
        if (sd_event_add_time(b->event, &p->header_deadline, CLOCK_MONOTONIC, p->header_deadline_usec,
                              TIMER_ACCURACY_USEC * 100, on_header_deadline, p) < 0)
                connection_close(b, p);
}

static void headers_done(Broker *b, Peer *p) {
        p->header_deadline_usec = 0;    /* the armed source finds nothing awaited */
}

/* The RequestContext's calls into the server. */
static void request_kick(void *userdata) {
        kick(userdata);
}

static void request_headers_wait(void *userdata, Peer *p) {
        headers_wait(userdata, p);
}

static void request_headers_done(void *userdata, Peer *p) {
        headers_done(userdata, p);
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
        const CloisterConf *conf = b->requests.config->conf;

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
                p->broker = b;
                *socket_context = p;
                p->caller = caller_connect(&b->callers, p->unit);
                if (!p->caller || p->caller->connections > conf->broker_caller_connections) {
                        if (p->caller && p->caller->connections == conf->broker_caller_connections + 1)
                                log_warning("%s holds %u connections to the broker (MaxConnectionsPerCaller=): closing any more at once.",
                                            p->unit ?: "A peer in no unit", p->caller->connections - 1);
                        connection_close(b, p);
                        return;
                }
                headers_wait(b, p);
        } else if (p) {
                p->header_deadline = sd_event_source_disable_unref(p->header_deadline);
                p->hangup_watch = sd_event_source_disable_unref(p->hangup_watch);
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

static int add_httpd_sources(Broker *b, int epoll_fd) {
        int r;

        r = sd_event_add_io(b->event, &b->httpd_io, epoll_fd, EPOLLIN, on_httpd_io, b);
        if (r < 0)
                return r;
        r = sd_event_add_time(b->event, &b->httpd_timer, CLOCK_MONOTONIC, 0,
                              TIMER_ACCURACY_USEC, on_httpd_timer, b);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(b->httpd_timer, SD_EVENT_OFF);
        if (r < 0)
                return r;
        r = sd_event_add_defer(b->event, &b->httpd_defer, on_httpd_defer, b);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(b->httpd_defer, SD_EVENT_OFF);
}

void broker_set_config(Broker *b, BrokerConfig *config) {
        if (b->requests.config)
                broker_config_adopt_limits(config, b->requests.config);
        broker_config_unref(b->requests.config);
        b->requests.config = config;
}

int broker_start(Broker *b, int listen_fd) {
        const union MHD_DaemonInfo *info;
        int r;

        r = curl_glue_new(b->event, request_curl_done, &b->curl);
        if (r < 0)
                return log_error_errno(r, "Failed to set up libcurl: %m");
        b->requests.event = b->event;
        b->requests.curl = b->curl;
        b->requests.kick = request_kick;
        b->requests.headers_wait = request_headers_wait;
        b->requests.headers_done = request_headers_done;
        b->requests.userdata = b;

        b->httpd = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
                                    0, NULL, NULL, request_handle, &b->requests,
                                    MHD_OPTION_LISTEN_SOCKET, listen_fd,
                                    MHD_OPTION_NOTIFY_COMPLETED, request_completed, &b->requests,
                                    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 300,
                                    MHD_OPTION_CONNECTION_LIMIT, (unsigned) 8192,
                                    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) 64 * 1024,
                                    MHD_OPTION_UNESCAPE_CALLBACK, unescape_nothing, NULL,
                                    MHD_OPTION_URI_LOG_CALLBACK, request_uri_seen, &b->requests,
                                    MHD_OPTION_NOTIFY_CONNECTION, connection_notify, b,
                                    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                                    MHD_OPTION_END);
        if (!b->httpd)
                return log_error_errno(EIO, "Failed to start the HTTP server on the activated socket.");
        info = MHD_get_daemon_info(b->httpd, MHD_DAEMON_INFO_EPOLL_FD);
        if (!info)
                return log_error_errno(EIO, "libmicrohttpd has no epoll fd.");
        r = add_httpd_sources(b, info->epoll_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to add the HTTP server to the event loop: %m");
        return run_httpd(b);
}

void broker_stop(Broker *b) {
        if (b->httpd)
                MHD_stop_daemon(b->httpd);
        sd_event_source_disable_unref(b->httpd_io);
        sd_event_source_disable_unref(b->httpd_timer);
        sd_event_source_disable_unref(b->httpd_defer);
        curl_glue_free(b->curl);
        caller_table_done(&b->callers);
        b->requests.config = broker_config_unref(b->requests.config);
}

int broker_reload(Broker *b) {
        BrokerConfig *config;
        int r;

        r = broker_config_load(BROKER_CONFIG_STRICT, &config);
        if (r < 0)
                return r;
        broker_set_config(b, config);
        return 0;
}
