/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A closed-loop HTTP/1.1 load generator for bench/broker.sh: N keep-alive connections, each
 * sending the next request as soon as the previous answer is complete, over a Unix socket or
 * loopback TCP (inside a daemon-only sandbox the broker is a Unix socket). wrk cannot use a
 * Unix socket; h2load can (-B unix:PATH --h1) but gives no latency percentiles and cannot
 * time SSE events, which is what this one is for.
 *
 *   broker-load (--unix PATH | --tcp PORT) [--conns N] [--duration S] [--warmup S]
 *               [--body BYTES] [--stream] [--events N] [--gap-us US] [--label TEXT]
 *
 * Each request is POST /v1/chat/completions with a JSON body of about BYTES bytes (one user
 * message padded with text), "model": "gpt-caller" (not the role's model: the broker's
 * override rewrites every body), "stream": true with --stream, and "bench_events"/"bench_gap_us"
 * for bench/broker-upstream.c. Only answers completed in the measured window (after
 * --warmup) count. An answer counts as an error unless its status is 200 and it is complete.
 *
 * Prints one line of key=value pairs: req/s, latency percentiles (µs, from the first byte
 * written to the last byte read), time to the first body byte, and for streams the delay of
 * each content event: the time the client read it minus the CLOCK_MONOTONIC stamp
 * "@<ns>@" the upstream put into it just before writing it. Also the window's start and end
 * (CLOCK_MONOTONIC ns), so that CPU samples taken elsewhere can be matched to it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

typedef enum { HEAD, BODY_LEN, CHUNK_SIZE, CHUNK_DATA, CHUNK_CRLF, TRAILER, DONE } State;

typedef struct Conn {
        int fd;
        size_t sent;            /* bytes of the request written */
        int64_t t_start, t_first;
        State st;
        char head[8192];
        size_t head_n;
        int status;
        uint64_t left;          /* body bytes (Content-Length) or chunk bytes left */
        char line[64];
        size_t line_n;
        bool in_mark;           /* inside "@<ns>@" */
        int64_t mark;
        unsigned events;
} Conn;

typedef struct Samples {
        int64_t *v;
        size_t n, cap, dropped;
} Samples;

static struct {
        const char *unix_path, *label;
        int tcp_port, conns, events, gap_us, body;
        double duration, warmup;
        bool stream;
} opt = { .conns = 1, .duration = 3, .warmup = 0.5, .body = 200, .events = 16, .label = "-", .tcp_port = -1 };

static char *req;
static size_t req_n, body_len;
static int ep;
static int64_t t_measure, t_end;
static bool measuring;
static Samples lat, ttfb, evdelay;
static unsigned long n_ok, n_total, n_reconnect, n_bad_status, n_incomplete, events_seen;
static uint64_t bytes_in;
static int first_bad_status;

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void add(Samples *s, int64_t v) {
        if (s->n == s->cap) {
                if (s->cap >= (64u << 20)) {
                        s->dropped++;
                        return;
                }
                size_t cap = s->cap ? s->cap * 2 : 65536;
                int64_t *p = realloc(s->v, cap * sizeof *p);
                if (!p) {
                        s->dropped++;
                        return;
                }
                s->v = p;
                s->cap = cap;
        }
        s->v[s->n++] = v;
}

static int cmp64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
        return x < y ? -1 : x > y;
}

/* nearest-rank percentile, in µs with one decimal */
static double pct(Samples *s, double p) {
        if (s->n == 0)
                return -1;
        size_t k = (size_t) (p / 100.0 * (double) s->n + 0.999999);
        if (k < 1)
                k = 1;
        if (k > s->n)
                k = s->n;
        return (double) s->v[k - 1] / 1000.0;
}

static double mean(Samples *s) {
        double t = 0;
        for (size_t i = 0; i < s->n; i++)
                t += (double) s->v[i];
        return s->n ? t / (double) s->n / 1000.0 : -1;
}

static void build_request(void) {
        char head[512], pre[256];
        const char *post = "\"}]}";
        int p = snprintf(pre, sizeof pre,
                         "{\"model\":\"gpt-caller\",%s\"bench_events\":%d,\"bench_gap_us\":%d,\"messages\":[{\"role\":\"user\",\"content\":\"",
                         opt.stream ? "\"stream\":true," : "", opt.events, opt.gap_us);
        size_t fill = (size_t) opt.body > (size_t) p + strlen(post) ? (size_t) opt.body - (size_t) p - strlen(post) : 8;
        size_t body_n = (size_t) p + fill + strlen(post);
        char *body = malloc(body_n + 1);
        static const char text[] = "the quick brown fox jumps over the lazy dog ";

        memcpy(body, pre, (size_t) p);
        for (size_t i = 0; i < fill; i++)
                body[p + i] = text[i % (sizeof text - 1)];
        memcpy(body + p + fill, post, strlen(post));
        int h = snprintf(head, sizeof head,
                         "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nUser-Agent: cloister-bench\r\n"
                         "Authorization: Bearer sk-placeholder\r\nContent-Type: application/json\r\n"
                         "Accept: %s\r\nContent-Length: %zu\r\n\r\n",
                         opt.stream ? "text/event-stream" : "application/json", body_n);
        body_len = body_n;
        req_n = (size_t) h + body_n;
        req = malloc(req_n);
        memcpy(req, head, (size_t) h);
        memcpy(req + h, body, body_n);
        free(body);
}

static int conn_open(Conn *c) {
        int fd;
        if (opt.unix_path) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                strncpy(sa.sun_path, opt.unix_path, sizeof sa.sun_path - 1);
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                        perror(opt.unix_path);
                        return -1;
                }
        } else {
                struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(opt.tcp_port),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                int one = 1;
                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                        perror("connect 127.0.0.1");
                        return -1;
                }
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        c->fd = fd;
        c->st = DONE;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
                return -1;
        return 0;
}

static void conn_fail(Conn *c);

/* Writes what is left of the request; arms EPOLLOUT if the socket is full. */
static int push(Conn *c) {
        while (c->sent < req_n) {
                ssize_t k = write(c->fd, req + c->sent, req_n - c->sent);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = c };
                                epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
                                return 0;
                        }
                        return -1;
                }
                c->sent += (size_t) k;
        }
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        return 0;
}

static int send_request(Conn *c) {
        c->sent = 0;
        c->t_start = now_ns();
        c->t_first = 0;
        c->st = HEAD;
        c->head_n = 0;
        c->status = 0;
        c->line_n = 0;
        c->in_mark = false;
        c->events = 0;
        return push(c);
}

static void scan_marks(Conn *c, const char *p, size_t n, int64_t now) {
        if (!opt.stream)
                return;
        for (size_t i = 0; i < n; i++) {
                char ch = p[i];
                if (c->in_mark) {
                        if (ch >= '0' && ch <= '9')
                                c->mark = c->mark * 10 + (ch - '0');
                        else {
                                c->in_mark = false;
                                if (ch == '@') {
                                        c->events++;
                                        if (measuring)
                                                add(&evdelay, now - c->mark);
                                }
                        }
                } else if (ch == '@') {
                        c->in_mark = true;
                        c->mark = 0;
                }
        }
}

static int parse_head(Conn *c) {
        char *p = c->head, *line;
        if (sscanf(p, "HTTP/1.%*d %d", &c->status) != 1)
                return -1;
        c->st = BODY_LEN;
        c->left = 0;
        bool have_len = false;
        for (line = strstr(p, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
                char *h = line + 2;
                if (strncasecmp(h, "Content-Length:", 15) == 0) {
                        c->left = strtoull(h + 15, NULL, 10);
                        have_len = true;
                } else if (strncasecmp(h, "Transfer-Encoding:", 18) == 0 && strcasestr(h, "chunked"))
                        c->st = CHUNK_SIZE;
        }
        if (c->st == BODY_LEN && !have_len)
                return -1; /* read-until-close answers are not used by anything measured here */
        if (c->st == BODY_LEN && c->left == 0)
                c->st = DONE;
        return 0;
}

/* Feeds answer bytes to the parser. -1: malformed or unexpected bytes. */
static int feed(Conn *c, const char *p, size_t n, int64_t now) {
        while (n > 0) {
                size_t k;
                switch (c->st) {
                case HEAD: {
                        size_t old = c->head_n, room = sizeof c->head - 1 - c->head_n;
                        k = n < room ? n : room;
                        memcpy(c->head + c->head_n, p, k);
                        c->head_n += k;
                        c->head[c->head_n] = 0;
                        char *e = memmem(c->head + (old > 3 ? old - 3 : 0), c->head_n - (old > 3 ? old - 3 : 0), "\r\n\r\n", 4);
                        if (!e) {
                                if (c->head_n >= sizeof c->head - 1)
                                        return -1;
                                p += k;
                                n -= k;
                                break;
                        }
                        size_t used = (size_t) (e + 4 - c->head) - old;
                        e[2] = 0;
                        c->t_first = now;
                        if (parse_head(c) < 0)
                                return -1;
                        p += used;
                        n -= used;
                        break;
                }
                case BODY_LEN:
                        k = n < c->left ? n : (size_t) c->left;
                        scan_marks(c, p, k, now);
                        c->left -= k;
                        p += k;
                        n -= k;
                        if (c->left == 0)
                                c->st = DONE;
                        break;
                case CHUNK_SIZE:
                case TRAILER:
                        if (*p == '\n') {
                                c->line[c->line_n] = 0;
                                if (c->line_n > 0 && c->line[c->line_n - 1] == '\r')
                                        c->line[--c->line_n] = 0;
                                if (c->st == TRAILER) {
                                        if (c->line_n == 0)
                                                c->st = DONE;
                                } else {
                                        c->left = strtoull(c->line, NULL, 16);
                                        c->st = c->left ? CHUNK_DATA : TRAILER;
                                }
                                c->line_n = 0;
                        } else if (c->line_n < sizeof c->line - 1)
                                c->line[c->line_n++] = *p;
                        p++;
                        n--;
                        break;
                case CHUNK_DATA:
                        k = n < c->left ? n : (size_t) c->left;
                        scan_marks(c, p, k, now);
                        c->left -= k;
                        p += k;
                        n -= k;
                        if (c->left == 0) {
                                c->st = CHUNK_CRLF;
                                c->left = 2;
                        }
                        break;
                case CHUNK_CRLF:
                        k = n < c->left ? n : (size_t) c->left;
                        c->left -= k;
                        p += k;
                        n -= k;
                        if (c->left == 0)
                                c->st = CHUNK_SIZE;
                        break;
                case DONE:
                        return -1; /* bytes nobody asked for */
                }
        }
        return 0;
}

static void completed(Conn *c, int64_t now) {
        if (c->status == 200)
                n_total++;
        if (now >= t_measure && now <= t_end) {
                measuring = true;
                if (c->status == 200) {
                        n_ok++;
                        add(&lat, now - c->t_start);
                        add(&ttfb, c->t_first - c->t_start);
                        events_seen += c->events;
                } else {
                        n_bad_status++;
                        if (!first_bad_status)
                                first_bad_status = c->status;
                }
        }
}

static void conn_fail(Conn *c) {
        if (now_ns() >= t_measure)
                n_incomplete++;
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
        n_reconnect++;
        if (now_ns() < t_end && conn_open(c) == 0)
                send_request(c);
}

static void on_event(Conn *c, uint32_t events) {
        static char buf[256 * 1024];

        if (events & EPOLLOUT && c->sent < req_n && push(c) < 0) {
                conn_fail(c);
                return;
        }
        if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                return;
        ssize_t k = read(c->fd, buf, sizeof buf);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (k <= 0) {
                conn_fail(c);
                return;
        }
        int64_t now = now_ns();
        measuring = now >= t_measure;
        bytes_in += (uint64_t) k;
        if (feed(c, buf, (size_t) k, now) < 0) {
                conn_fail(c);
                return;
        }
        if (c->st == DONE) {
                completed(c, now);
                if (now < t_end && send_request(c) < 0)
                        conn_fail(c);
        }
}

int main(int argc, char *argv[]) {
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (strcmp(a, "--stream") == 0) {
                        opt.stream = true;
                        continue;
                }
                if (!v)
                        goto usage;
                i++;
                if (strcmp(a, "--unix") == 0)
                        opt.unix_path = v;
                else if (strcmp(a, "--tcp") == 0)
                        opt.tcp_port = atoi(v);
                else if (strcmp(a, "--conns") == 0)
                        opt.conns = atoi(v);
                else if (strcmp(a, "--duration") == 0)
                        opt.duration = atof(v);
                else if (strcmp(a, "--warmup") == 0)
                        opt.warmup = atof(v);
                else if (strcmp(a, "--body") == 0)
                        opt.body = atoi(v);
                else if (strcmp(a, "--events") == 0)
                        opt.events = atoi(v);
                else if (strcmp(a, "--gap-us") == 0)
                        opt.gap_us = atoi(v);
                else if (strcmp(a, "--label") == 0)
                        opt.label = v;
                else
                        goto usage;
        }
        if ((!opt.unix_path) == (opt.tcp_port < 0) || opt.conns < 1)
                goto usage;

        build_request();
        ep = epoll_create1(EPOLL_CLOEXEC);
        Conn *conns = calloc((size_t) opt.conns, sizeof(Conn));
        int64_t t0 = now_ns();
        t_measure = t0 + (int64_t) (opt.warmup * 1e9);
        t_end = t_measure + (int64_t) (opt.duration * 1e9);
        for (int i = 0; i < opt.conns; i++)
                if (conn_open(&conns[i]) < 0 || send_request(&conns[i]) < 0)
                        return 1;

        struct epoll_event evs[512];
        for (;;) {
                int64_t now = now_ns();
                if (now >= t_end)
                        break;
                int n = epoll_wait(ep, evs, 512, (int) ((t_end - now) / 1000000) + 1);
                for (int i = 0; i < n; i++)
                        on_event(evs[i].data.ptr, evs[i].events);
        }
        for (int i = 0; i < opt.conns; i++)
                if (conns[i].fd >= 0)
                        close(conns[i].fd);

        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        qsort(lat.v, lat.n, sizeof *lat.v, cmp64);
        qsort(ttfb.v, ttfb.n, sizeof *ttfb.v, cmp64);
        qsort(evdelay.v, evdelay.n, sizeof *evdelay.v, cmp64);
        printf("label=%s conns=%d body=%zu stream=%d gap_us=%d ok=%lu bad_status=%lu first_bad_status=%d incomplete=%lu "
               "rps=%.1f lat_p50=%.1f lat_p90=%.1f lat_p99=%.1f lat_max=%.1f lat_mean=%.1f ttfb_p50=%.1f ttfb_p99=%.1f "
               "ev_n=%zu ev_p50=%.1f ev_p90=%.1f ev_p99=%.1f ev_max=%.1f ev_mean=%.1f events_per_req=%.2f "
               "t_start=%lld t_end=%lld bytes_in=%llu load_cpu_ms=%.0f total_ok=%lu\n",
               opt.label, opt.conns, body_len, opt.stream, opt.gap_us, n_ok, n_bad_status, first_bad_status, n_incomplete,
               (double) n_ok / opt.duration, pct(&lat, 50), pct(&lat, 90), pct(&lat, 99), pct(&lat, 100), mean(&lat),
               pct(&ttfb, 50), pct(&ttfb, 99),
               evdelay.n, pct(&evdelay, 50), pct(&evdelay, 90), pct(&evdelay, 99), pct(&evdelay, 100), mean(&evdelay),
               n_ok ? (double) events_seen / (double) n_ok : 0.0,
               (long long) t_measure, (long long) t_end, (unsigned long long) bytes_in,
               (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3, n_total);
        return 0;
usage:
        fprintf(stderr, "usage: %s (--unix PATH | --tcp PORT) [--conns N] [--duration S] [--warmup S] [--body BYTES] "
                        "[--stream] [--events N] [--gap-us US] [--label TEXT]\n", argv[0]);
        return 2;
}
