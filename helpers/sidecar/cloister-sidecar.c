/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "parse-util.h"
#include "proxy.h"
#include "relay.h"
#include "signal-util.h"

static int parse_args(int argc, char *argv[], ProxyOptions *o) {
        enum { ARG_PORT = 0x100, ARG_HEALTH, ARG_START_TIMEOUT, ARG_MAX_CONNECTIONS };
        static const struct option options[] = {
                { "port",            required_argument, NULL, ARG_PORT },
                { "health",          required_argument, NULL, ARG_HEALTH },
                { "start-timeout",   required_argument, NULL, ARG_START_TIMEOUT },
                { "max-connections", required_argument, NULL, ARG_MAX_CONNECTIONS },
                { "version",         no_argument,       NULL, 'V' },
                { "help",            no_argument,       NULL, 'h' },
                {}
        };
        uint64_t u;
        int c;

        while ((c = getopt_long(argc, argv, "+", options, NULL)) >= 0)
                switch (c) {
                case ARG_PORT:
                        if (parse_port(optarg, &o->port) < 0)
                                return log_error_errno(EINVAL, "Invalid --port=%s (1…65535).", optarg);
                        break;
                case ARG_HEALTH:
                        if (!isempty(optarg) && (optarg[0] != '/' || strpbrk(optarg, " \t\r\n")))
                                return log_error_errno(EINVAL, "Invalid --health=%s (an HTTP path starting with \"/\").", optarg);
                        o->health = isempty(optarg) ? NULL : optarg;
                        break;
                case ARG_START_TIMEOUT:
                        if (parse_timespan(optarg, &o->start_timeout) < 0 || o->start_timeout == 0)
                                return log_error_errno(EINVAL, "Invalid --start-timeout=%s (a time span > 0).", optarg);
                        break;
                case ARG_MAX_CONNECTIONS:
                        if (parse_uint64(optarg, &u) < 0 || u == 0 || u > 65536)
                                return log_error_errno(EINVAL, "Invalid --max-connections=%s (1…65536).", optarg);
                        o->max_connections = (unsigned) u;
                        break;
                case 'V':
                        puts("cloister-sidecar " PACKAGE_VERSION);
                        exit(0);
                case 'h':
                        printf("%s --port=PORT [--health=PATH] --start-timeout=SPAN --max-connections=N NAME\n\n"
                               "The socket-activated proxy of sidecar@NAME.service: holds connections on the\n"
                               "socket systemd passes until the runtime on 127.0.0.1:PORT is ready, then\n"
                               "relays them. See cloister-sidecar(8).\n", program_invocation_short_name);
                        exit(0);
                default:
                        return -EINVAL;
                }

        if (o->port == 0 || o->start_timeout == 0 || o->max_connections == 0)
                return log_error_errno(EINVAL, "--port=, --start-timeout= and --max-connections= are required.");
        if (optind + 1 != argc || !name_is_valid(argv[optind]))
                return log_error_errno(EINVAL, "Expected one sidecar NAME (^[a-z0-9][a-z0-9_-]{0,62}$).");
        o->name = argv[optind];
        return 0;
}

static int listen_fds(const char *name, int **ret, size_t *ret_n) {
        int n = sd_listen_fds(true), *fds;

        if (n < 0)
                return log_error_errno(n, "%s: cannot read the sockets passed by systemd: %m", name);
        if (n == 0)
                return log_error_errno(EBADF, "%s: no listening socket was passed (LISTEN_FDS): cloister-sidecar runs "
                                       "only socket-activated, as sidecar@%s.service.", name, name);
        fds = calloc((size_t) n, sizeof(int));
        if (!fds)
                return log_oom();
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i;
                if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0) {
                        free(fds);
                        return log_error_errno(EBADF, "%s: passed fd %d is not a listening stream socket.", name, fd);
                }
                (void) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
                fds[i] = fd;
        }
        *ret = fds;
        *ret_n = (size_t) n;
        return 0;
}

static int sidecar_run(const ProxyOptions *o) {
        _cleanup_free_ int *fds = NULL;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(proxy_freep) Proxy *p = NULL;   /* freed before its event loop */
        size_t n = 0;
        int r;

        r = listen_fds(o->name, &fds, &n);
        if (r < 0)
                return r;
        relay_raise_nofile(NULL);
        r = sigprocmask_many(SIG_BLOCK, NULL, SIGTERM, SIGINT, -1);
        if (r < 0)
                return log_error_errno(r, "%s: cannot block SIGTERM and SIGINT: %m", o->name);
        (void) signal(SIGPIPE, SIG_IGN);

        r = sd_event_default(&e);
        if (r < 0)
                return log_error_errno(r, "%s: cannot set up the proxy: %m", o->name);
        r = sd_event_add_signal(e, NULL, SIGTERM, NULL, NULL);
        if (r < 0)
                return log_error_errno(r, "%s: cannot set up the proxy: %m", o->name);
        r = sd_event_add_signal(e, NULL, SIGINT, NULL, NULL);
        if (r < 0)
                return log_error_errno(r, "%s: cannot set up the proxy: %m", o->name);
        r = proxy_new(e, o, fds, n, &p);
        if (r < 0)
                return log_error_errno(r, "%s: cannot set up the proxy: %m", o->name);

        (void) sd_notify(false, "READY=1");
        r = sd_event_loop(e);
        (void) sd_notify(false, "STOPPING=1");
        if (r < 0)
                return log_error_errno(r, "%s: event loop failed: %m", o->name);
        return 0;
}

int main(int argc, char *argv[]) {
        ProxyOptions o = {};

        log_set_prefix("cloister-sidecar");
        if (parse_args(argc, argv, &o) < 0)
                return EXIT_FAILURE;
        return sidecar_run(&o) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
