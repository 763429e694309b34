/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "broker.h"
#include "log.h"

int broker_start(Broker *b, int listen_fd);
void broker_stop(Broker *b);

/* Outside systemd (tests, benchmarks): listen on a path ourselves. */
static int listen_on(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (strlen(path) >= sizeof sa.sun_path)
                return log_error_errno(ENAMETOOLONG, "Socket path too long: %s", path);
        strcpy(sa.sun_path, path);
        (void) unlink(path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || chmod(path, 0666) < 0 ||
            listen(fd, SOMAXCONN) < 0)
                return log_error_errno(errno, "Cannot listen on %s: %m", path);
        return fd;
}

static int run(const char *listen_path) {
        Broker b = {};
        int fd, n, r;

        n = sd_listen_fds(true);
        if (n > 1)
                return log_error_errno(EINVAL, "Expected one socket from systemd, got %d.", n);
        if (n == 1)
                fd = SD_LISTEN_FDS_START;
        else if (listen_path)
                fd = listen_on(listen_path);
        else
                return log_error_errno(EINVAL, "No socket: start cloister-broker.socket, or pass --listen=PATH.");
        if (fd < 0)
                return fd;

        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return log_error_errno(EIO, "curl_global_init() failed.");
        r = broker_config_load(&b.config);
        if (r < 0)
                return r;
        r = sd_event_default(&b.event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate event loop: %m");
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        (void) sd_event_add_signal(b.event, NULL, SIGTERM, NULL, NULL);
        (void) sd_event_add_signal(b.event, NULL, SIGINT, NULL, NULL);
        signal(SIGPIPE, SIG_IGN);

        r = broker_start(&b, fd);
        if (r >= 0) {
                log_info("Serving %zu role(s).", b.config->n_roles);
                (void) sd_notify(false, "READY=1\nSTATUS=Serving.");
                r = sd_event_loop(b.event);
        }
        (void) sd_notify(false, "STOPPING=1");
        broker_stop(&b);
        broker_config_free(b.config);
        sd_event_unref(b.event);
        curl_global_cleanup();
        return r;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "listen",  required_argument, NULL, 'l' },
                { "help",    no_argument,       NULL, 'h' },
                { "version", no_argument,       NULL, 'V' },
                {}
        };
        const char *listen_path = NULL;
        int c;

        log_set_prefix("cloister-broker");
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'l':
                        listen_path = optarg;
                        break;
                case 'h':
                        printf("%s [--listen=PATH]\n\nThe daemon side of cloister: LLM, MCP and API calls for sealed agents.\n"
                               "Socket-activated by cloister-broker.socket. See cloister-broker(8).\n", argv[0]);
                        return 0;
                case 'V':
                        puts("cloister-broker " PACKAGE_VERSION);
                        return 0;
                default:
                        return 1;
                }
        return run(listen_path) < 0 ? 1 : 0;
}
