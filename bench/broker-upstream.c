/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A fast fixed-response stand-in for an OpenAI-compatible LLM endpoint, for bench/broker.sh.
 * tests/broker/fake-openai.py is the functional fake; this one exists because a Python server
 * tops out far below what the proxies under test can do (see docs/benchmarks.md).
 *
 *   broker-upstream [--tcp-port N] [--unix PATH] [--lifetime S]
 *
 * Listens on 127.0.0.1:N (0 picks a free port; printed as "PORT n" on stdout once listening)
 * and/or on a Unix socket (mode 0666). Loopback and Unix sockets only; never connects out.
 * Single-threaded, epoll, HTTP/1.1 keep-alive; request bodies by Content-Length only.
 *
 * POST /v1/chat/completions: the body is scanned, not parsed, for
 *   "stream": true            answer as SSE (chunked), one write() per event
 *   "include_usage": true     add the usage-only chunk before [DONE] (as OpenAI does)
 *   "bench_events": N         content events in a stream (default 16)
 *   "bench_gap_us": N         pause before each content event (default 0: all at once)
 * Not streamed: one chat.completion JSON with "usage". A stream is a role chunk, N content
 * chunks, a finish chunk, [usage chunk,] "data: [DONE]". Each content chunk's text starts
 * with "@<CLOCK_MONOTONIC ns>@", taken just before its write(), so a client can tell how
 * long the event took to reach it. GET /health → 200. Anything else → 404.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_HEAD (64 * 1024)
#define MAX_BODY (64 * 1024 * 1024)

typedef struct Conn {
        int fd;
        char *in;               /* request bytes received */
        size_t in_n, in_cap;
        char *out;              /* answer bytes not yet written (kernel buffer full) */
        size_t out_n, out_off, out_cap;
        /* a stream in progress */
        bool streaming, include_usage, close_after;
        int events_left, next_index;
        int64_t gap_ns, next_at;
        unsigned long serial;
        struct Conn *next_stream, **prev_stream;
} Conn;

static int ep;
static Conn *streams;   /* connections with a paced stream waiting for its next event */
static unsigned long serial;

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what) {
        perror(what);
        exit(1);
}

static void stream_link(Conn *c) {
        c->next_stream = streams;
        if (streams)
                streams->prev_stream = &c->next_stream;
        c->prev_stream = &streams;
        streams = c;
}

static void stream_unlink(Conn *c) {
        if (!c->prev_stream)
                return;
        *c->prev_stream = c->next_stream;
        if (c->next_stream)
                c->next_stream->prev_stream = c->prev_stream;
        c->prev_stream = NULL;
        c->next_stream = NULL;
}

static void conn_close(Conn *c) {
        stream_unlink(c);
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        free(c->in);
        free(c->out);
        free(c);
}

static void want_out(Conn *c, bool on) {
        struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0), .data.ptr = c };
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes what is pending, then `data`; keeps the rest for EPOLLOUT. -1: connection gone. */
static int send_bytes(Conn *c, const char *data, size_t n) {
        if (c->out_n > c->out_off) {
                if (c->out_n + n > c->out_cap) {
                        size_t cap = (c->out_n + n) * 2;
                        char *o = realloc(c->out, cap);
                        if (!o)
                                return -1;
                        c->out = o;
                        c->out_cap = cap;
                }
                memcpy(c->out + c->out_n, data, n);
                c->out_n += n;
                return 0;
        }
        while (n > 0) {
                ssize_t k = write(c->fd, data, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        return -1;
                }
                data += k;
                n -= (size_t) k;
        }
        if (n > 0) {
                if (n > c->out_cap) {
                        char *o = realloc(c->out, n * 2);
                        if (!o)
                                return -1;
                        c->out = o;
                        c->out_cap = n * 2;
                }
                memcpy(c->out, data, n);
                c->out_off = 0;
                c->out_n = n;
                want_out(c, true);
        }
        return 0;
}

static int flush_out(Conn *c) {
        while (c->out_off < c->out_n) {
                ssize_t k = write(c->fd, c->out + c->out_off, c->out_n - c->out_off);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return -1;
                }
                c->out_off += (size_t) k;
        }
        c->out_off = c->out_n = 0;
        want_out(c, false);
        return 0;
}

static bool key_true(const char *b, size_t n, const char *key) {
        const char *p = memmem(b, n, key, strlen(key)), *e = b + n;
        if (!p)
                return false;
        p += strlen(key);
        while (p < e && (*p == ' ' || *p == ':' || *p == '\t'))
                p++;
        return e - p >= 4 && memcmp(p, "true", 4) == 0;
}

static long key_num(const char *b, size_t n, const char *key, long dflt) {
        const char *p = memmem(b, n, key, strlen(key)), *e = b + n;
        long v = 0;
        if (!p)
                return dflt;
        p += strlen(key);
        while (p < e && (*p == ' ' || *p == ':' || *p == '\t'))
                p++;
        if (p >= e || *p < '0' || *p > '9')
                return dflt;
        for (; p < e && *p >= '0' && *p <= '9'; p++)
                v = v * 10 + (*p - '0');
        return v;
}

static int send_chunk(Conn *c, const char *ev, size_t n) {
        char buf[4096];
        int h = snprintf(buf, sizeof buf, "%zx\r\n", n);
        if (n + (size_t) h + 2 > sizeof buf)
                return -1;
        memcpy(buf + h, ev, n);
        memcpy(buf + h + n, "\r\n", 2);
        return send_bytes(c, buf, (size_t) h + n + 2);
}

#define CHUNK_HEAD "data: {\"id\":\"chatcmpl-bench-%lu\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-bench\","
static const char *const words[] = { "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit" };

/* The next event of c's stream; at the end, the terminating chunk. */
static int stream_step(Conn *c) {
        char ev[1024];
        int n;

        if (c->next_index == 0)
                n = snprintf(ev, sizeof ev, CHUNK_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]%s}\n\n",
                             c->serial, c->include_usage ? ",\"usage\":null" : "");
        else if (c->events_left > 0) {
                c->events_left--;
                n = snprintf(ev, sizeof ev, CHUNK_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"@%lld@ %s\"},\"finish_reason\":null}]%s}\n\n",
                             c->serial, (long long) now_ns(), words[c->next_index % 8], c->include_usage ? ",\"usage\":null" : "");
        } else {
                /* finish, usage, [DONE], end of the chunked body: one write */
                char tail[2048];
                size_t t = 0;
                n = snprintf(ev, sizeof ev, CHUNK_HEAD "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]%s}\n\n",
                             c->serial, c->include_usage ? ",\"usage\":null" : "");
                t += (size_t) snprintf(tail + t, sizeof tail - t, "%x\r\n%s\r\n", n, ev);
                if (c->include_usage) {
                        n = snprintf(ev, sizeof ev, CHUNK_HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n",
                                     c->serial, c->next_index, 50 + c->next_index);
                        t += (size_t) snprintf(tail + t, sizeof tail - t, "%x\r\n%s\r\n", n, ev);
                }
                t += (size_t) snprintf(tail + t, sizeof tail - t, "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n");
                c->streaming = false;
                stream_unlink(c);
                return send_bytes(c, tail, t);
        }
        c->next_index++;
        return send_chunk(c, ev, (size_t) n);
}

static int answer(Conn *c, const char *method, const char *path, const char *body, size_t body_n) {
        char buf[2048], json[1024];
        int n, j;

        if (strcmp(method, "GET") == 0 && strcmp(path, "/health") == 0) {
                n = snprintf(buf, sizeof buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 16\r\n%s\r\n{\"status\":\"ok\"}\n",
                             c->close_after ? "Connection: close\r\n" : "");
                return send_bytes(c, buf, (size_t) n);
        }
        if (strcmp(method, "POST") != 0 || strncmp(path, "/v1/chat/completions", 20) != 0 ||
            (path[20] && path[20] != '?')) {
                j = snprintf(json, sizeof json, "{\"error\":{\"message\":\"Unknown request URL\",\"type\":\"invalid_request_error\",\"code\":\"unknown_url\"}}");
                n = snprintf(buf, sizeof buf, "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s",
                             j, c->close_after ? "Connection: close\r\n" : "", json);
                return send_bytes(c, buf, (size_t) n);
        }
        c->serial = ++serial;
        if (key_true(body, body_n, "\"stream\"")) {
                c->include_usage = key_true(body, body_n, "\"include_usage\"");
                c->events_left = (int) key_num(body, body_n, "\"bench_events\"", 16);
                c->gap_ns = key_num(body, body_n, "\"bench_gap_us\"", 0) * 1000;
                c->next_index = 0;
                c->streaming = true;
                n = snprintf(buf, sizeof buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n%s\r\n",
                             c->close_after ? "Connection: close\r\n" : "");
                if (send_bytes(c, buf, (size_t) n) < 0 || stream_step(c) < 0)
                        return -1;
                if (c->gap_ns == 0) {
                        while (c->streaming)
                                if (stream_step(c) < 0)
                                        return -1;
                } else {
                        c->next_at = now_ns() + c->gap_ns;
                        stream_link(c);
                }
                return 0;
        }
        j = snprintf(json, sizeof json,
                     "{\"id\":\"chatcmpl-bench-%lu\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":\"gpt-bench\","
                     "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"lorem ipsum dolor sit amet consectetur adipiscing elit "
                     "sed do eiusmod tempor incididunt ut labore et dolore magna aliqua\"},\"finish_reason\":\"stop\"}],"
                     "\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":19,\"total_tokens\":69}}\n", c->serial);
        n = snprintf(buf, sizeof buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s",
                     j, c->close_after ? "Connection: close\r\n" : "", json);
        return send_bytes(c, buf, (size_t) n);
}

/* Handles every complete request in c->in. -1: close the connection. */
static int process(Conn *c) {
        while (!c->streaming) {
                char *end = c->in_n ? memmem(c->in, c->in_n, "\r\n\r\n", 4) : NULL;
                char method[16], path[1024];
                size_t head, body_n = 0;
                const char *p, *line;

                if (!end)
                        return c->in_n > MAX_HEAD ? -1 : 0;
                head = (size_t) (end - c->in) + 4;
                *end = 0;
                if (sscanf(c->in, "%15s %1023s", method, path) != 2)
                        return -1;
                c->close_after = false;
                for (line = strstr(c->in, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
                        p = line + 2;
                        if (strncasecmp(p, "Content-Length:", 15) == 0)
                                body_n = strtoull(p + 15, NULL, 10);
                        else if (strncasecmp(p, "Transfer-Encoding:", 18) == 0)
                                return -1; /* not needed by any client here */
                        else if (strncasecmp(p, "Connection:", 11) == 0 && strcasestr(p + 11, "close"))
                                c->close_after = true;
                }
                *end = '\r';
                if (body_n > MAX_BODY)
                        return -1;
                if (c->in_n < head + body_n) {
                        if (head + body_n > c->in_cap) {
                                char *b = realloc(c->in, head + body_n);
                                if (!b)
                                        return -1;
                                c->in = b;
                                c->in_cap = head + body_n;
                        }
                        return 0;
                }
                if (answer(c, method, path, c->in + head, body_n) < 0)
                        return -1;
                memmove(c->in, c->in + head + body_n, c->in_n - head - body_n);
                c->in_n -= head + body_n;
                if (c->close_after && !c->streaming && c->out_n == c->out_off)
                        return -1;
        }
        return 0;
}

static int on_readable(Conn *c) {
        for (;;) {
                if (c->in_cap - c->in_n < 16384) {
                        size_t cap = c->in_cap ? c->in_cap * 2 : 65536;
                        char *b = realloc(c->in, cap);
                        if (!b)
                                return -1;
                        c->in = b;
                        c->in_cap = cap;
                }
                ssize_t k = read(c->fd, c->in + c->in_n, c->in_cap - c->in_n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        return -1;
                }
                if (k == 0)
                        return -1;
                c->in_n += (size_t) k;
                if ((size_t) k < 16384)
                        break;
        }
        return process(c);
}

static int listen_tcp(int port, int *ret_port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t l = sizeof sa;
        int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        if (fd < 0)
                die("socket");
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, 4096) < 0 ||
            getsockname(fd, (struct sockaddr *) &sa, &l) < 0)
                die("tcp listen");
        *ret_port = ntohs(sa.sin_port);
        return fd;
}

static int listen_unix(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        if (fd < 0 || strlen(path) >= sizeof sa.sun_path)
                die("unix socket");
        strcpy(sa.sun_path, path);
        unlink(path);
        if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || chmod(path, 0666) < 0 || listen(fd, 4096) < 0)
                die("unix listen");
        return fd;
}

static void on_accept(int lfd, bool tcp) {
        for (;;) {
                int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), one = 1;
                if (fd < 0)
                        return;
                if (tcp)
                        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                Conn *c = calloc(1, sizeof(Conn));
                if (!c) {
                        close(fd);
                        continue;
                }
                c->fd = fd;
                struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };
                if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
                        close(fd);
                        free(c);
                }
        }
}

static volatile sig_atomic_t stop;
static void on_signal(int sig) { stop = 1; }

int main(int argc, char *argv[]) {
        const char *unix_path = NULL;
        int tcp_port = -1, port = 0, tfd = -1, ufd = -1;
        double lifetime = 3600;
        static char TCP_TAG, UNIX_TAG;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--tcp-port") == 0 && i + 1 < argc)
                        tcp_port = atoi(argv[++i]);
                else if (strcmp(argv[i], "--unix") == 0 && i + 1 < argc)
                        unix_path = argv[++i];
                else if (strcmp(argv[i], "--lifetime") == 0 && i + 1 < argc)
                        lifetime = atof(argv[++i]);
                else {
                        fprintf(stderr, "usage: %s [--tcp-port N] [--unix PATH] [--lifetime S]\n", argv[0]);
                        return 2;
                }
        }
        if (tcp_port < 0 && !unix_path)
                tcp_port = 0;
        signal(SIGPIPE, SIG_IGN);
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        ep = epoll_create1(EPOLL_CLOEXEC);
        if (tcp_port >= 0) {
                tfd = listen_tcp(tcp_port, &port);
                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &TCP_TAG };
                epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
        }
        if (unix_path) {
                ufd = listen_unix(unix_path);
                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &UNIX_TAG };
                epoll_ctl(ep, EPOLL_CTL_ADD, ufd, &ev);
        }
        if (tfd >= 0)
                printf("PORT %d\n", port);
        if (ufd >= 0)
                printf("UNIX %s\n", unix_path);
        fflush(stdout);

        int64_t end = now_ns() + (int64_t) (lifetime * 1e9);
        struct epoll_event evs[256];
        while (!stop) {
                int64_t now = now_ns(), next = end;
                if (now >= end)
                        break;
                for (Conn *c = streams; c; c = c->next_stream)
                        if (c->next_at < next)
                                next = c->next_at;
                int timeout = next <= now ? 0 : (int) ((next - now + 999999) / 1000000);
                int n = epoll_wait(ep, evs, 256, timeout);
                for (int i = 0; i < n; i++) {
                        void *p = evs[i].data.ptr;
                        if (p == &TCP_TAG) {
                                on_accept(tfd, true);
                                continue;
                        }
                        if (p == &UNIX_TAG) {
                                on_accept(ufd, false);
                                continue;
                        }
                        Conn *c = p;
                        if (evs[i].events & EPOLLOUT && flush_out(c) < 0) {
                                conn_close(c);
                                continue;
                        }
                        if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                                if (on_readable(c) < 0) {
                                        conn_close(c);
                                        continue;
                                }
                        }
                }
                /* paced streams due now (the precise moment is what the client compares) */
                now = now_ns();
                for (Conn *c = streams, *nx; c; c = nx) {
                        nx = c->next_stream;
                        if (c->next_at > now)
                                continue;
                        if (stream_step(c) < 0) {
                                conn_close(c);
                                continue;
                        }
                        if (c->streaming)
                                c->next_at += c->gap_ns;
                        else if (process(c) < 0) /* a pipelined next request */
                                conn_close(c);
                }
        }
        if (unix_path)
                unlink(unix_path);
        return 0;
}
