/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/relay: bytes both ways through a TCP→Unix relay on sd-event, with half-close. A child
 * process plays client and server; the parent runs the relay's event loop. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <unistd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "relay.h"
#include "tap.h"

static int read_all(int fd, char *buf, size_t size) {
        size_t n = 0;
        ssize_t k;

        while (n + 1 < size && (k = read(fd, buf + n, size - n - 1)) > 0)
                n += (size_t) k;
        buf[n] = 0;
        return (int) n;
}

/* Exit status: 0 if every byte arrived where it should, with EOF after it. */
static int child_io(uint16_t port, int unix_listener, size_t big, char *payload, char *got) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int c = socket(AF_INET, SOCK_STREAM, 0), s;

        memset(payload, 'x', big);
        payload[big] = 0;
        if (connect(c, (struct sockaddr *) &sa, sizeof sa) < 0)
                return 10;
        for (size_t off = 0; off < big;) {
                ssize_t k = write(c, payload + off, big - off);
                if (k <= 0)
                        return 11;
                off += (size_t) k;
                if (off == big)
                        break;
                /* the relay cannot drain while nobody reads the far side: read there too */
                if (off >= 64 * 1024)
                        break;
        }
        /* server side: the relay connected to our Unix socket */
        s = accept(unix_listener, NULL, NULL);
        if (s < 0)
                return 12;
        shutdown(c, SHUT_WR);               /* client half-close must reach the server */
        if ((size_t) read_all(s, got, big + 64) != (big < 64 * 1024 ? big : 64 * 1024))
                return 13;
        if (write(s, "pong", 4) != 4)
                return 14;
        close(s);                           /* server close must reach the client as EOF */
        if (read_all(c, got, 64) != 4 || strcmp(got, "pong") != 0)
                return 15;
        return 0;
}

/* The buffers are freed before _exit(), so that valgrind sees no leak in the child either. */
static int child(uint16_t port, int unix_listener, size_t big) {
        char *payload = malloc(big + 1), *got = malloc(big + 64);
        int r = payload && got ? child_io(port, unix_listener, big, payload, got) : 16;

        free(payload);
        free(got);
        return r;
}

static int on_child(sd_event_source *s, const siginfo_t *si, void *userdata) {
        *(int *) userdata = si->si_code == CLD_EXITED ? si->si_status : 100 + si->si_status;
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static void run_case(size_t big) {
        char dir[] = "/tmp/cloister-relay-XXXXXX", path[128];
        struct sockaddr_un un = { .sun_family = AF_UNIX };
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int tcp, ux, status = -1;
        sd_event *e = NULL;
        Relay *relay = NULL;
        sigset_t mask;
        pid_t pid;

        ok(mkdtemp(dir) != NULL, "temp dir");
        snprintf(path, sizeof path, "%s/target.sock", dir);
        strcpy(un.sun_path, path);
        ux = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ok(bind(ux, (struct sockaddr *) &un, sizeof un) == 0 && listen(ux, 8) == 0, "Unix target listens");
        tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ok(bind(tcp, (struct sockaddr *) &sa, sizeof sa) == 0 && listen(tcp, 8) == 0 &&
           getsockname(tcp, (struct sockaddr *) &sa, &len) == 0, "TCP listener on 127.0.0.1");

        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        ok(sd_event_new(&e) >= 0, "event loop");
        is_int(relay_new(e, tcp, path, &relay), 0, "relay_new()");

        pid = fork();
        if (pid == 0)
                _exit(child(ntohs(sa.sin_port), ux, big));
        ok(sd_event_add_child(e, NULL, pid, WEXITED, on_child, &status) >= 0, "watch the child");
        ok(sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, 10 * 1000000ULL, 0, NULL, NULL) >= 0, "bounded");
        sd_event_loop(e);
        is_int(status, 0, "%zu bytes one way, 4 back, half-close and EOF passed on (child status)", big);
        if (status == -1)
                kill(pid, SIGKILL);
        relay_free(relay);
        sd_event_unref(e);
        close(tcp);
        close(ux);
        unlink(path);
        rmdir(dir);
}

/* relay_new_to_address() + relay_add(), as cloister-sidecar uses them: a refused connect
 * hands the client's fd back (unread bytes intact); with the target listening, bytes flow.
 * One process: the loop runs in bounded steps between the test's own non-blocking I/O. */
typedef struct Ended {
        int fd, error, calls;
} Ended;

static void on_ended(Relay *r, int fd, int connect_error, void *userdata) {
        Ended *e = userdata;

        e->fd = fd;
        e->error = connect_error;
        e->calls++;
}

static bool step_until(sd_event *e, bool (*done)(void *), void *userdata) {
        for (int i = 0; i < 300; i++) {
                if (done(userdata))
                        return true;
                (void) sd_event_run(e, 10 * 1000);
        }
        return done(userdata);
}

static bool ended_called(void *userdata) {
        return ((Ended *) userdata)->calls > 0;
}

typedef struct Pending {
        int fd;                 /* listener, then the accepted server side */
        bool accepted;
        char buf[16];
        size_t n;
} Pending;

static bool accepted(void *userdata) {
        Pending *p = userdata;
        int c;

        if (p->accepted)
                return true;
        c = accept4(p->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0)
                return false;
        p->fd = c;
        p->accepted = true;
        return true;
}

static bool got4(void *userdata) {
        Pending *p = userdata;
        ssize_t k = recv(p->fd, p->buf + p->n, 4 - p->n, MSG_DONTWAIT);

        if (k > 0)
                p->n += (size_t) k;
        return p->n >= 4;
}

static void run_to_address_case(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int pair[2], listener;
        Ended ended = { .fd = -1 };
        Pending server = {}, client = {};
        sd_event *e = NULL;
        Relay *relay = NULL;
        char c = 0;

        /* a port that nothing listens on: bind, learn the port, listen only later */
        listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ok(bind(listener, (struct sockaddr *) &sa, sizeof sa) == 0 &&
           getsockname(listener, (struct sockaddr *) &sa, &len) == 0, "a bound, not listening, TCP port");
        ok(sd_event_new(&e) >= 0, "event loop");
        is_int(relay_new_to_address(e, (struct sockaddr *) &sa, sizeof sa, "test", on_ended, &ended, &relay), 0,
               "relay_new_to_address()");
        ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) == 0, "client socket pair");
        ok(write(pair[1], "x", 1) == 1, "the client sent a byte before the relay connected");
        is_int(relay_add(relay, pair[0]), 0, "relay_add()");
        ok(step_until(e, ended_called, &ended), "refused: the ended callback ran");
        is_int(ended.fd, pair[0], "refused: the client's fd is handed back");
        is_int(ended.error, ECONNREFUSED, "refused: with ECONNREFUSED");
        is_int((int) relay_connections(relay), 0, "refused: no connection left in the relay");
        ok(read(ended.fd, &c, 1) == 1 && c == 'x', "refused: the client's byte is still unread in it");

        /* now the target listens: the same fd, added again, is relayed */
        ok(listen(listener, 8) == 0, "the target listens");
        ended = (Ended) { .fd = -1 };
        is_int(relay_add(relay, pair[0]), 0, "relay_add() again");
        server.fd = listener;
        ok(step_until(e, accepted, &server), "the relay connected to the TCP target");
        is_int((int) relay_connections(relay), 1, "one connection in the relay");
        ok(write(pair[1], "ping", 4) == 4, "client writes");
        ok(step_until(e, got4, &server) && memcmp(server.buf, "ping", 4) == 0, "client → target");
        ok(write(server.fd, "pong", 4) == 4, "target writes");
        client.fd = pair[1];
        ok(step_until(e, got4, &client) && memcmp(client.buf, "pong", 4) == 0, "target → client");
        close(server.fd);
        close(pair[1]);
        ok(step_until(e, ended_called, &ended), "both sides closed: the ended callback ran");
        is_int(ended.fd, -1, "a connection that ended normally hands nothing back");
        is_int((int) relay_connections(relay), 0, "no connection left");
        relay_free(relay);
        sd_event_unref(e);
        close(listener);
}

int main(void) {
        run_case(5);
        run_case(60 * 1024);
        run_to_address_case();
        return tap_done();
}
