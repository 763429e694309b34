/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "proxy.h"
#include "readiness.h"
#include "relay.h"
#include "unavailable.h"

#define TIMER_ACCURACY_USEC 1000

/* A connection accepted while the runtime is not (known to be) ready. */
typedef struct Held {
        Proxy *proxy;
        int fd;
        sd_event_source *hangup;        /* the client gave up waiting */
        struct Held *next, *prev;
} Held;

struct Proxy {
        sd_event *event;
        ProxyOptions options;
        sd_event_source **listeners;
        size_t n_listeners;
        bool accepting;
        Relay *relay;
        Readiness *readiness;
        bool ready;
        Held *held, *held_tail;
        unsigned n_held;
        sd_event_source *deadline;      /* StartTimeout= for the connections held now */
        usec_t waiting_since;
};

static unsigned proxy_connections(const Proxy *p) {
        return p->n_held + relay_connections(p->relay);
}

/* On changes of state only, not per connection: a relayed connection costs no message. */
static void proxy_status(const Proxy *p) {
        if (p->n_held > 0)
                (void) sd_notifyf(false, "STATUS=Waiting for the runtime to be ready (%u connection%s held).",
                                  p->n_held, p->n_held == 1 ? "" : "s");
        else
                (void) sd_notify(false, p->ready ? "STATUS=Runtime ready; relaying." : "STATUS=Runtime not ready.");
}

/* Over the cap, new connections stay in the listening socket's backlog (as with
 * systemd-socket-proxyd --connections-max=): they are served when a slot frees up, or
 * time out on the client's side. */
static void update_accepting(Proxy *p) {
        bool on = proxy_connections(p) < p->options.max_connections;

        if (on != p->accepting) {
                for (size_t i = 0; i < p->n_listeners; i++)
                        (void) sd_event_source_set_enabled(p->listeners[i], on ? SD_EVENT_ON : SD_EVENT_OFF);
                p->accepting = on;
                if (!on)
                        log_notice("%s: %u connections open, MaxConnections= reached; new ones wait in the backlog.",
                                   p->options.name, proxy_connections(p));
        }
}

/* Returns the fd, which the caller now owns. */
static int held_remove(Held *h) {
        Proxy *p = h->proxy;
        int fd = h->fd;

        sd_event_source_disable_unref(h->hangup);
        if (h->prev)
                h->prev->next = h->next;
        else
                p->held = h->next;
        if (h->next)
                h->next->prev = h->prev;
        else
                p->held_tail = h->prev;
        p->n_held--;
        free(h);
        return fd;
}

static int on_held_hangup(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Held *h = userdata;
        Proxy *p = h->proxy;

        close(held_remove(h));
        update_accepting(p);
        proxy_status(p);
        return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Proxy *p = userdata;
        _cleanup_free_ char *span = format_timespan(p->options.start_timeout), *message = NULL;
        const char *why = readiness_last_error(p->readiness);

        readiness_stop(p->readiness);
        message = strprintf("sidecar %s: the runtime did not become ready within StartTimeout=%s (%s)",
                            p->options.name, strempty(span), why ?: "no probe finished");
        log_error("%s: the runtime on 127.0.0.1:%u was not ready after StartTimeout=%s (%u probes; last: %s); "
                  "answering %u waiting connection%s with 503.",
                  p->options.name, (unsigned) p->options.port, strempty(span),
                  readiness_probes(p->readiness), why ?: "no probe finished",
                  p->n_held, p->n_held == 1 ? "" : "s");
        while (p->held)
                (void) unavailable_reply(held_remove(p->held), message ?: "sidecar runtime unavailable");
        update_accepting(p);
        proxy_status(p);
        return 0;
}

static void hold(Proxy *p, int fd) {
        Held *h = calloc(1, sizeof(Held));

        if (!h || sd_event_add_io(p->event, &h->hangup, fd, 0, on_held_hangup, h) < 0) {
                log_oom();
                free(h);
                close(fd);
                return;
        }
        h->proxy = p;
        h->fd = fd;
        h->prev = p->held_tail;
        if (p->held_tail)
                p->held_tail->next = h;
        else
                p->held = h;
        p->held_tail = h;
        p->n_held++;

        /* StartTimeout= counts from the first connection that waits, and ends the wait
         * for all of them: a runtime is ready for everybody or for nobody. */
        if (sd_event_source_get_enabled(p->deadline, NULL) == 0) {
                (void) sd_event_now(p->event, CLOCK_MONOTONIC, &p->waiting_since);
                (void) sd_event_source_set_time(p->deadline, p->waiting_since + p->options.start_timeout);
                (void) sd_event_source_set_enabled(p->deadline, SD_EVENT_ONESHOT);
                if (p->options.health)
                        log_info("%s: waiting for GET %s on 127.0.0.1:%u to answer 200.", p->options.name,
                                 p->options.health, (unsigned) p->options.port);
                else
                        log_info("%s: waiting for 127.0.0.1:%u to accept connections.", p->options.name,
                                 (unsigned) p->options.port);
        }
        if (readiness_start(p->readiness) < 0)
                log_warning("%s: cannot start the readiness probes.", p->options.name);
        proxy_status(p);
}

static void on_ready(Readiness *r, void *userdata) {
        Proxy *p = userdata;
        usec_t now = 0;

        (void) sd_event_now(p->event, CLOCK_MONOTONIC, &now);
        log_info("%s: the runtime is ready (after %llu ms, %u probe%s); relaying %u connection%s.",
                 p->options.name, (unsigned long long) ((now - p->waiting_since) / USEC_PER_MSEC),
                 readiness_probes(r), readiness_probes(r) == 1 ? "" : "s",
                 p->n_held, p->n_held == 1 ? "" : "s");
        p->ready = true;
        (void) sd_event_source_set_enabled(p->deadline, SD_EVENT_OFF);
        while (p->held)
                (void) relay_add(p->relay, held_remove(p->held));
        update_accepting(p);
        proxy_status(p);
}

/* A relayed connection ended. With `fd` ≥ 0 the runtime refused it: it crashed or is being
 * restarted, so the connection is held again until the runtime is ready again. */
static void on_relay_ended(Relay *r, int fd, int connect_error, void *userdata) {
        Proxy *p = userdata;

        if (fd >= 0) {
                if (p->ready)
                        log_notice("%s: the runtime on 127.0.0.1:%u refused a connection (%s); waiting for it to be ready again.",
                                   p->options.name, (unsigned) p->options.port, strerror(connect_error));
                p->ready = false;
                hold(p, fd);
        }
        update_accepting(p);
}

static int on_accept(sd_event_source *s, int listen_fd, uint32_t revents, void *userdata) {
        Proxy *p = userdata;
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0) {
                if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_warning_errno(errno, "%s: accept() failed: %m", p->options.name);
                return 0;
        }
        /* a TCP listener (systemd-socket-activate in the benchmark); a Unix one refuses this */
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
        if (p->ready)
                (void) relay_add(p->relay, fd);
        else
                hold(p, fd);
        update_accepting(p);
        return 0;
}

int proxy_new(sd_event *e, const ProxyOptions *o, const int *listen_fds, size_t n_listen_fds, Proxy **ret) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(o->port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        _cleanup_free_ char *name = strprintf("127.0.0.1:%u", (unsigned) o->port);
        Proxy *p = calloc(1, sizeof(Proxy));
        int k;

        if (!p || !name) {
                free(p);
                return -ENOMEM;
        }
        p->event = sd_event_ref(e);
        p->options = *o;
        p->accepting = true;
        /* With no health path, "ready" means the port accepts, which the relay's own connect
         * finds out: a refused connect is held and the port probed (on_relay_ended()). */
        p->ready = isempty(o->health);
        p->listeners = calloc(n_listen_fds, sizeof(sd_event_source *));
        k = p->listeners ? 0 : -ENOMEM;
        for (size_t i = 0; k >= 0 && i < n_listen_fds; i++, p->n_listeners++)
                k = sd_event_add_io(e, &p->listeners[i], listen_fds[i], EPOLLIN, on_accept, p);
        if (k >= 0)
                k = relay_new_to_address(e, (struct sockaddr *) &sa, sizeof sa, name, on_relay_ended, p, &p->relay);
        if (k >= 0)
                k = readiness_new(e, o->port, o->health, on_ready, p, &p->readiness);
        if (k >= 0)
                k = sd_event_add_time(e, &p->deadline, CLOCK_MONOTONIC, 0, TIMER_ACCURACY_USEC, on_deadline, p);
        if (k >= 0)
                k = sd_event_source_set_enabled(p->deadline, SD_EVENT_OFF);
        if (k < 0) {
                proxy_free(p);
                return k;
        }
        proxy_status(p);
        *ret = p;
        return 0;
}

Proxy *proxy_free(Proxy *p) {
        if (!p)
                return NULL;
        while (p->held)
                close(held_remove(p->held));
        relay_free(p->relay);
        readiness_free(p->readiness);
        sd_event_source_disable_unref(p->deadline);
        for (size_t i = 0; i < p->n_listeners; i++)
                sd_event_source_disable_unref(p->listeners[i]);
        free(p->listeners);
        sd_event_unref(p->event);
        return mfree(p);
}
