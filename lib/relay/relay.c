/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "log.h"
#include "relay.h"

#define PIPE_SIZE (256 * 1024)

typedef struct Direction {
        int from, to;           /* borrowed from the connection */
        int pipe[2];
        size_t capacity;        /* what the kernel gave the pipe (F_GETPIPE_SZ) */
        size_t in_pipe;
        bool full;              /* splice-in said EAGAIN with bytes in the pipe: wait for out */
        bool eof;               /* `from` said EOF */
        bool shut;              /* `to` was shut down for writing */
        bool failed;            /* `to` went away (EPIPE/ECONNRESET): this direction is over */
} Direction;

typedef struct Connection {
        Relay *relay;
        int client_fd, server_fd;
        sd_event_source *client_source, *server_source;
        Direction up, down;     /* client → server, server → client */
        bool connecting;
        struct Connection *next, *prev;
} Connection;

struct Relay {
        sd_event *event;
        char *target;           /* for messages */
        union {
                struct sockaddr sa;
                struct sockaddr_un un;
                struct sockaddr_in in;
                struct sockaddr_in6 in6;
        } address;
        socklen_t address_len;
        sd_event_source *listen_source;
        Connection *connections;
        unsigned n_connections;
        relay_ended_t ended;
        void *userdata;
};

/* `connect_error` > 0: the target refused, and the client's fd goes to the `ended` callback
 * (when there is one) instead of being closed. */
static void connection_end(Connection *c, int connect_error) {
        Relay *r = c->relay;
        int handed_back = -1;

        if (connect_error > 0 && r->ended)
                handed_back = TAKE_FD(c->client_fd);

        sd_event_source_disable_unref(c->client_source);
        sd_event_source_disable_unref(c->server_source);
        for (Direction *d = &c->up; d; d = d == &c->up ? &c->down : NULL) {
                if (d->pipe[0] >= 0)
                        close(d->pipe[0]);
                if (d->pipe[1] >= 0)
                        close(d->pipe[1]);
        }
        if (c->client_fd >= 0)
                close(c->client_fd);
        if (c->server_fd >= 0)
                close(c->server_fd);
        if (c->prev)
                c->prev->next = c->next;
        else
                r->connections = c->next;
        if (c->next)
                c->next->prev = c->prev;
        r->n_connections--;
        free(c);
        if (r->ended)
                r->ended(r, handed_back, connect_error, r->userdata);
}

static void connection_free(Connection *c) {
        connection_end(c, 0);
}

static bool direction_done(const Direction *d) {
        return d->failed || d->shut;
}

/* Moves what it can in one direction. Returns <0 on a hard error. */
static int direction_pump(Direction *d) {
        if (d->failed)
                return 0;
        for (;;) {
                ssize_t n;
                bool progress = false;

                if (!d->eof && !d->full && d->in_pipe < d->capacity) {
                        n = splice(d->from, NULL, d->pipe[1], NULL, d->capacity - d->in_pipe,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                        if (n == 0)
                                d->eof = true;
                        else if (n > 0) {
                                d->in_pipe += (size_t) n;
                                progress = true;
                        } else if (errno == EAGAIN && d->in_pipe > 0)
                                d->full = true; /* out of pipe slots: small packets use one each */
                        else if (errno != EAGAIN && errno != EINTR)
                                return -errno;
                }
                if (d->in_pipe > 0) {
                        n = splice(d->pipe[0], NULL, d->to, NULL, d->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                        if (n > 0) {
                                d->in_pipe -= (size_t) n;
                                d->full = false;
                                progress = true;
                        } else if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
                                /* the far side left: what goes the other way may still matter
                                 * (an early error answer to a long upload) */
                                d->failed = true;
                                return 0;
                        } else if (n < 0 && errno != EAGAIN && errno != EINTR)
                                return -errno;
                }
                if (d->eof && d->in_pipe == 0 && !d->shut) {
                        (void) shutdown(d->to, SHUT_WR); /* pass the half-close on */
                        d->shut = true;
                }
                if (!progress)
                        return 0;
        }
}

static uint32_t wanted_events(const Direction *in, const Direction *out) {
        /* For one fd: readable if its inbound direction has room; writable if its outbound
         * direction holds bytes for it. `in` reads from this fd, `out` writes to it. */
        uint32_t e = 0;

        if (!in->failed && !in->eof && !in->full && in->in_pipe < in->capacity)
                e |= EPOLLIN;
        if (!out->failed && out->in_pipe > 0)
                e |= EPOLLOUT;
        return e;
}

/* An fd with nothing to wait for is switched off: epoll reports HUP regardless of the mask,
 * and a peer that closed while the other side idles would otherwise wake us forever. */
static void watch(sd_event_source *s, uint32_t events) {
        if (events == 0) {
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                return;
        }
        (void) sd_event_source_set_io_events(s, events);
        (void) sd_event_source_set_enabled(s, SD_EVENT_ON);
}

static int connection_update(Connection *c) {
        int r;

        if (c->connecting)
                return 0;
        r = direction_pump(&c->up);
        if (r >= 0)
                r = direction_pump(&c->down);
        if (r < 0 || (direction_done(&c->up) && direction_done(&c->down))) {
                if (r < 0 && r != -ECONNRESET && r != -EPIPE)
                        log_debug("relay: connection closed: %s", strerror(-r));
                connection_free(c);
                return 0;
        }
        watch(c->client_source, wanted_events(&c->up, &c->down));
        watch(c->server_source, wanted_events(&c->down, &c->up));
        return 0;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Connection *c = userdata;

        if (c->connecting && fd == c->client_fd) {
                /* nothing to do with the client's bytes yet; connection_update() switches
                 * it back on once connected (level-triggered, it would spin meanwhile) */
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                return 0;
        }
        if (c->connecting && fd == c->server_fd) {
                int err = 0;
                socklen_t len = sizeof err;
                (void) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err != 0) {
                        if (!c->relay->ended)
                                log_warning("relay: cannot connect to %s: %s", c->relay->target, strerror(err));
                        connection_end(c, err);
                        return 0;
                }
                c->connecting = false;
        }
        return connection_update(c);
}

static int direction_init(Direction *d, int from, int to) {
        *d = (Direction) { .from = from, .to = to, .pipe = { -1, -1 } };
        if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        (void) fcntl(d->pipe[1], F_SETPIPE_SZ, PIPE_SIZE); /* may fail past pipe-user-pages-soft */
        int sz = fcntl(d->pipe[1], F_GETPIPE_SZ);
        d->capacity = sz > 0 ? (size_t) sz : 4096;
        return 0;
}

static int connection_start(Relay *r, int client_fd) {
        Connection *c = calloc(1, sizeof(Connection));
        int k;

        if (!c) {
                close(client_fd);
                return -ENOMEM;
        }
        *c = (Connection) { .relay = r, .client_fd = client_fd, .server_fd = -1,
                            .up.pipe = { -1, -1 }, .down.pipe = { -1, -1 }, .next = r->connections };
        if (r->connections)
                r->connections->prev = c;
        r->connections = c;
        r->n_connections++;

        c->server_fd = socket(r->address.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c->server_fd < 0) {
                k = -errno;
                goto fail;
        }
        if (r->address.sa.sa_family != AF_UNIX)
                (void) setsockopt(c->server_fd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
        if (connect(c->server_fd, &r->address.sa, r->address_len) < 0) {
                if (errno != EINPROGRESS && errno != EAGAIN) {
                        k = -errno;
                        if (r->ended) {
                                connection_end(c, -k);
                                return 0;
                        }
                        goto fail;
                }
                c->connecting = true;
        }
        k = direction_init(&c->up, c->client_fd, c->server_fd);
        if (k >= 0)
                k = direction_init(&c->down, c->server_fd, c->client_fd);
        if (k >= 0)
                k = sd_event_add_io(r->event, &c->client_source, c->client_fd, EPOLLIN, on_io, c);
        if (k >= 0)
                k = sd_event_add_io(r->event, &c->server_source, c->server_fd,
                                    c->connecting ? EPOLLOUT : EPOLLIN, on_io, c);
        if (k < 0)
                goto fail;
        return c->connecting ? 0 : connection_update(c);
fail:
        log_warning("relay: cannot connect to %s: %s", r->target, strerror(-k));
        connection_free(c);
        return 0;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Relay *r = userdata;
        int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (cfd < 0) {
                if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_warning("relay: accept() failed: %m");
                return 0;
        }
        /* small writes (a status line, each SSE event) go out at once, not after the peer's
         * delayed ACK; a Unix listener just refuses the option */
        (void) setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
        (void) connection_start(r, cfd);
        return 0;
}

int relay_new_to_address(sd_event *e, const struct sockaddr *target, socklen_t len, const char *name,
                         relay_ended_t ended, void *userdata, Relay **ret) {
        Relay *r;

        if (len > sizeof r->address)
                return -EINVAL;
        r = calloc(1, sizeof(Relay));
        if (!r)
                return -ENOMEM;
        r->event = sd_event_ref(e);
        memcpy(&r->address, target, len);
        r->address_len = len;
        r->ended = ended;
        r->userdata = userdata;
        r->target = strdup(name);
        if (!r->target) {
                relay_free(r);
                return -ENOMEM;
        }
        *ret = r;
        return 0;
}

int relay_new(sd_event *e, int listen_fd, const char *target, Relay **ret) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        Relay *r = NULL;
        int k;

        if (strlen(target) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, target);
        k = relay_new_to_address(e, (struct sockaddr *) &sa, sizeof sa, target, NULL, NULL, &r);
        if (k < 0)
                return k;
        k = sd_event_add_io(e, &r->listen_source, listen_fd, EPOLLIN, on_accept, r);
        if (k < 0) {
                relay_free(r);
                return k;
        }
        *ret = r;
        return 0;
}

int relay_add(Relay *r, int client_fd) {
        return connection_start(r, client_fd);
}

Relay *relay_free(Relay *r) {
        if (!r)
                return NULL;
        r->ended = NULL; /* the owner is going away too */
        while (r->connections)
                connection_free(r->connections);
        sd_event_source_disable_unref(r->listen_source);
        sd_event_unref(r->event);
        free(r->target);
        return mfree(r);
}

unsigned relay_connections(const Relay *r) {
        return r->n_connections;
}

void relay_raise_nofile(struct rlimit *ret_saved) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        if (ret_saved)
                *ret_saved = rl;
        rl.rlim_cur = rl.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}
