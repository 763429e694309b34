/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Byte-relay benchmark client and backend for bench/relay.sh: what a relay adds to a byte
 * stream, whatever the protocol. Loopback TCP and Unix sockets only.
 *
 *   relay-load backend --port N [--listen-after-ms MS]
 *        127.0.0.1:N, a thread per connection. The first byte a client sends picks what the
 *        connection does: 'U' + 8-byte count (read that many bytes, answer the count, 8 bytes;
 *        not by half-close: systemd-socket-proxyd does not pass one on), 'D' + 8-byte count
 *        (send that many bytes, close), 'E' echo until EOF, 'H' answer "h" at once.
 *        Prints "LISTEN <CLOCK_MONOTONIC ns>" once listening.
 *   relay-load bulk       TARGET --bytes N --direction up|down
 *   relay-load latency    TARGET --count N --size B         (ping-pong on one connection)
 *   relay-load connect    TARGET --count N                  (a new connection per request)
 *   relay-load concurrent TARGET --conns C --count N --size B
 *   relay-load first-byte TARGET                            (connect → first answer byte)
 *
 * TARGET is --unix PATH or --tcp PORT. Prints one line of key=value pairs; times in µs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *unix_path;
static int tcp_port;

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what) {
        fprintf(stderr, "relay-load: %s: %s\n", what, strerror(errno));
        exit(1);
}

static int dial(void) {
        int fd;

        if (unix_path) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                snprintf(sa.sun_path, sizeof sa.sun_path, "%s", unix_path);
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                        die("connect");
        } else {
                struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(tcp_port),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                        die("connect");
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
        }
        return fd;
}

static void write_all(int fd, const void *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        die("write");
                p = (const char *) p + k;
                n -= (size_t) k;
        }
}

static void read_all(int fd, void *p, size_t n) {
        while (n > 0) {
                ssize_t k = read(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        if (k == 0)
                                errno = ECONNRESET;
                        die("read");
                }
                p = (char *) p + k;
                n -= (size_t) k;
        }
}

/* --- backend ------------------------------------------------------------------------------ */
static void *serve(void *arg) {
        int fd = (int) (intptr_t) arg;
        static char buf[1 << 18];       /* contents do not matter; shared is fine */
        char mode;
        uint64_t n = 0;
        ssize_t k;

        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
        if (read(fd, &mode, 1) != 1)
                goto out;
        switch (mode) {
        case 'U': {
                uint64_t want = 0;
                read_all(fd, &want, sizeof want);
                while (n < want && (k = read(fd, buf, want - n < sizeof buf ? want - n : sizeof buf)) > 0)
                        n += (uint64_t) k;
                write_all(fd, &n, sizeof n);
                break;
        }
        case 'D':
                read_all(fd, &n, sizeof n);
                while (n > 0) {
                        k = write(fd, buf, n < sizeof buf ? n : sizeof buf);
                        if (k <= 0)
                                break;
                        n -= (uint64_t) k;
                }
                break;
        case 'E': {
                char b[65536];
                while ((k = read(fd, b, sizeof b)) > 0)
                        write_all(fd, b, (size_t) k);
                break;
        }
        case 'H':
                write_all(fd, "h", 1);
                while (read(fd, buf, sizeof buf) > 0)
                        ;
                break;
        }
out:
        close(fd);
        return NULL;
}

static _Noreturn void backend(int port, int listen_after_ms) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd;

        if (listen_after_ms > 0)
                usleep((useconds_t) listen_after_ms * 1000);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int) { 1 }, sizeof(int));
        if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, 4096) < 0)
                die("listen");
        printf("LISTEN %lld\n", (long long) now_ns());
        fflush(stdout);
        for (;;) {
                pthread_t t;
                pthread_attr_t a;
                int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0)
                        continue;
                pthread_attr_init(&a);
                pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
                pthread_attr_setstacksize(&a, 256 * 1024);
                if (pthread_create(&t, &a, serve, (void *) (intptr_t) c) != 0)
                        close(c);
                pthread_attr_destroy(&a);
        }
}

/* --- client ------------------------------------------------------------------------------- */
static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
        return x < y ? -1 : x > y;
}

static void print_percentiles(const char *prefix, int64_t *ns, size_t n) {
        qsort(ns, n, sizeof *ns, cmp_i64);
        printf("%sp50_us=%.1f %sp99_us=%.1f %smax_us=%.1f", prefix, ns[n / 2] / 1e3, prefix,
               ns[(size_t) (n * 0.99)] / 1e3, prefix, ns[n - 1] / 1e3);
}

static int bulk(uint64_t bytes, bool up) {
        static char buf[1 << 18];
        int fd = dial();
        uint64_t got = 0;
        int64_t t0 = now_ns();

        if (up) {
                write_all(fd, "U", 1);
                write_all(fd, &bytes, sizeof bytes);
                for (uint64_t left = bytes; left > 0;) {
                        size_t n = left < sizeof buf ? left : sizeof buf;
                        write_all(fd, buf, n);
                        left -= n;
                }
                read_all(fd, &got, sizeof got);
        } else {
                ssize_t k;
                write_all(fd, "D", 1);
                write_all(fd, &bytes, sizeof bytes);
                while ((k = read(fd, buf, sizeof buf)) > 0)
                        got += (uint64_t) k;
        }
        int64_t dt = now_ns() - t0;
        printf("bytes=%llu seconds=%.3f MBps=%.0f ok=%d\n", (unsigned long long) got, dt / 1e9,
               got / 1e6 / (dt / 1e9), got == bytes);
        close(fd);
        return got == bytes ? 0 : 1;
}

static int latency(size_t count, size_t size) {
        char *buf = calloc(1, size), *back = malloc(size);
        int64_t *ns = calloc(count, sizeof *ns);
        int fd = dial();

        write_all(fd, "E", 1);
        for (size_t i = 0; i < count + count / 10; i++) {  /* the first tenth warms up */
                int64_t t0 = now_ns();
                write_all(fd, buf, size);
                read_all(fd, back, size);
                if (i >= count / 10)
                        ns[i - count / 10] = now_ns() - t0;
        }
        print_percentiles("", ns, count);
        printf(" count=%zu size=%zu\n", count, size);
        close(fd);
        return 0;
}

static int connect_latency(size_t count) {
        int64_t *ns = calloc(count, sizeof *ns);
        char c;

        for (size_t i = 0; i < count; i++) {
                int64_t t0 = now_ns();
                int fd = dial();
                write_all(fd, "H", 1);
                read_all(fd, &c, 1);
                ns[i] = now_ns() - t0;
                close(fd);
        }
        print_percentiles("", ns, count);
        printf(" count=%zu\n", count);
        return 0;
}

typedef struct Worker {
        pthread_t thread;
        size_t count, size;
        int64_t *ns;
        pthread_barrier_t *start;
} Worker;

static void *worker(void *arg) {
        Worker *w = arg;
        char *buf = calloc(1, w->size), *back = malloc(w->size);
        int fd = dial();

        write_all(fd, "E", 1);
        pthread_barrier_wait(w->start);        /* all connections open before the first request */
        for (size_t i = 0; i < w->count; i++) {
                int64_t t0 = now_ns();
                write_all(fd, buf, w->size);
                read_all(fd, back, w->size);
                w->ns[i] = now_ns() - t0;
        }
        close(fd);
        return NULL;
}

static int concurrent(size_t conns, size_t count, size_t size) {
        Worker *w = calloc(conns, sizeof *w);
        int64_t *all = calloc(conns * count, sizeof *all);
        pthread_barrier_t start;
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                rl.rlim_cur = rl.rlim_max;
                setrlimit(RLIMIT_NOFILE, &rl);
        }
        pthread_barrier_init(&start, NULL, (unsigned) conns + 1);
        for (size_t i = 0; i < conns; i++) {
                w[i] = (Worker) { .count = count, .size = size, .ns = all + i * count, .start = &start };
                if (pthread_create(&w[i].thread, NULL, worker, &w[i]) != 0)
                        die("pthread_create");
        }
        pthread_barrier_wait(&start);
        int64_t t0 = now_ns();
        for (size_t i = 0; i < conns; i++)
                pthread_join(w[i].thread, NULL);
        int64_t dt = now_ns() - t0;
        printf("conns=%zu rps=%.0f ", conns, conns * count / (dt / 1e9));
        print_percentiles("", all, conns * count);
        printf("\n");
        return 0;
}

static int first_byte(void) {
        int64_t t0 = now_ns();
        int fd = dial();
        char c;

        write_all(fd, "H", 1);
        read_all(fd, &c, 1);
        printf("first_byte_us=%.1f at_ns=%lld\n", (now_ns() - t0) / 1e3, (long long) now_ns());
        close(fd);
        return 0;
}

static const char *arg(int argc, char **argv, const char *name, const char *def) {
        for (int i = 2; i + 1 < argc; i++)
                if (strcmp(argv[i], name) == 0)
                        return argv[i + 1];
        return def;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: see the comment at the top of relay-load.c\n");
                return 2;
        }
        const char *cmd = argv[1];
        unix_path = arg(argc, argv, "--unix", NULL);
        tcp_port = atoi(arg(argc, argv, "--tcp", "0"));
        if (strcmp(cmd, "backend") == 0)
                backend(atoi(arg(argc, argv, "--port", "0")), atoi(arg(argc, argv, "--listen-after-ms", "0")));
        if (!unix_path && !tcp_port) {
                fprintf(stderr, "relay-load: --unix PATH or --tcp PORT\n");
                return 2;
        }
        if (strcmp(cmd, "bulk") == 0)
                return bulk(strtoull(arg(argc, argv, "--bytes", "1073741824"), NULL, 10),
                            strcmp(arg(argc, argv, "--direction", "down"), "up") == 0);
        if (strcmp(cmd, "latency") == 0)
                return latency(strtoul(arg(argc, argv, "--count", "10000"), NULL, 10),
                               strtoul(arg(argc, argv, "--size", "64"), NULL, 10));
        if (strcmp(cmd, "connect") == 0)
                return connect_latency(strtoul(arg(argc, argv, "--count", "1000"), NULL, 10));
        if (strcmp(cmd, "concurrent") == 0)
                return concurrent(strtoul(arg(argc, argv, "--conns", "256"), NULL, 10),
                                  strtoul(arg(argc, argv, "--count", "200"), NULL, 10),
                                  strtoul(arg(argc, argv, "--size", "64"), NULL, 10));
        if (strcmp(cmd, "first-byte") == 0)
                return first_byte();
        fprintf(stderr, "relay-load: unknown command %s\n", cmd);
        return 2;
}
