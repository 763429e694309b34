/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "broker.h"
#include "log.h"
#include "signal-util.h"

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

static int listen_fd(const char *listen_path) {
        int n = sd_listen_fds(true);

        if (n > 1)
                return log_error_errno(EINVAL, "Expected one socket from systemd, got %d.", n);
        if (n == 1)
                return SD_LISTEN_FDS_START;
        if (listen_path)
                return listen_on(listen_path);
        return log_error_errno(EINVAL, "No socket: start cloister-broker.socket, or pass --listen=PATH.");
}

/* SIGHUP (systemctl reload): the new config is read whole and used only if all of it is valid;
 * a refused one leaves the old one serving. Requests in flight finish under the config they
 * began with. RELOADING=1 with MONOTONIC_USEC= is what systemd 253+ waits for (it shows the unit
 * "reloading" until READY=1); 252 takes it too. */
static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Broker *b = userdata;
        uint64_t now = 0;
        int r;

        (void) sd_event_now(b->event, CLOCK_MONOTONIC, &now);
        (void) sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading the configuration.\nMONOTONIC_USEC=%" PRIu64, now);
        log_info("Reloading the configuration.");
        r = broker_reload(b);
        if (r < 0) {
                log_error("The new configuration was refused (see above); the previous one still serves %zu role(s).",
                          b->requests.config->n_roles);
                (void) sd_notify(false, "READY=1\nSTATUS=Serving; the last reload was refused (see the journal).");
                return 0;
        }
        log_info("Configuration reloaded: serving %zu role(s).", b->requests.config->n_roles);
        (void) sd_notify(false, "READY=1\nSTATUS=Serving.");
        return 0;
}

static int add_signals(Broker *b) {
        int r;

        r = sigprocmask_many(SIG_BLOCK, NULL, SIGTERM, SIGINT, SIGHUP, -1);
        if (r < 0)
                return log_error_errno(r, "Failed to block signals: %m");
        signal(SIGPIPE, SIG_IGN);
        r = sd_event_add_signal(b->event, NULL, SIGTERM, NULL, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to watch SIGTERM: %m");
        r = sd_event_add_signal(b->event, NULL, SIGINT, NULL, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to watch SIGINT: %m");
        r = sd_event_add_signal(b->event, NULL, SIGHUP, on_reload, b);
        if (r < 0)
                return log_error_errno(r, "Failed to watch SIGHUP: %m");
        return 0;
}

static int serve(Broker *b, int fd) {
        BrokerConfig *config;
        int r;

        r = broker_config_load(BROKER_CONFIG_LENIENT, &config);
        if (r < 0)
                return log_error_errno(r, "The configuration was refused; the broker cannot start.");
        broker_set_config(b, config);
        r = sd_event_default(&b->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate event loop: %m");
        r = add_signals(b);
        if (r < 0)
                return r;
        r = broker_start(b, fd);
        if (r < 0)
                return r;
        log_info("Serving %zu role(s).", b->requests.config->n_roles);
        (void) sd_notify(false, "READY=1\nSTATUS=Serving.");
        return sd_event_loop(b->event);
}

/* Request bodies and answers of 100 KiB and more come and go with every request. glibc would
 * serve each with its own mmap() (above its dynamic threshold) or give the top of the heap back
 * with brk() when it is freed, and fault fresh pages in for the next: the same memory, again
 * and again. So freed memory is kept for reuse, up to a bound: RSS stays flat at what the
 * busiest moment needed, plus at most that (docs/benchmarks.md). */
#define MALLOC_KEEP_BYTES (16 * 1024 * 1024)

static void malloc_tune(void) {
        (void) mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
        (void) mallopt(M_TRIM_THRESHOLD, MALLOC_KEEP_BYTES);
}

static int run(const char *listen_path) {
        Broker b = {};
        int fd, r;

        malloc_tune();

        fd = listen_fd(listen_path);
        if (fd < 0)
                return fd;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return log_error_errno(EIO, "curl_global_init() failed.");
        r = serve(&b, fd);
        (void) sd_notify(false, "STOPPING=1");
        broker_stop(&b);
        sd_event_unref(b.event);
        curl_global_cleanup();
        return r;
}

/* --check-config: everything a reload would read, as strictly; the errors are on stderr. */
static int check_config(void) {
        _cleanup_(broker_config_unrefp) BrokerConfig *config = NULL;
        int r;

        r = broker_config_load(BROKER_CONFIG_STRICT, &config);
        if (r < 0) {
                log_error("The configuration is not valid.");
                return r;
        }
        printf("The configuration is valid: cloister.conf and %zu role(s).\n", config->n_roles);
        return 0;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "listen",       required_argument, NULL, 'l' },
                { "check-config", no_argument,       NULL, 'c' },
                { "help",    no_argument,       NULL, 'h' },
                { "version", no_argument,       NULL, 'V' },
                {}
        };
        const char *listen_path = NULL;
        bool check = false;
        int c;

        log_set_prefix("cloister-broker");
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'l':
                        listen_path = optarg;
                        break;
                case 'c':
                        check = true;
                        break;
                case 'h':
                        printf("%s [--listen=PATH]\n%s --check-config\n\nThe daemon side of cloister: LLM, MCP and API calls for sealed agents.\n"
                               "Socket-activated by cloister-broker.socket. See cloister-broker(8).\n", argv[0], argv[0]);
                        return 0;
                case 'V':
                        puts("cloister-broker " PACKAGE_VERSION);
                        return 0;
                default:
                        return 1;
                }
        if (check)
                return check_config() < 0 ? 1 : 0;
        return run(listen_path) < 0 ? 1 : 0;
}
