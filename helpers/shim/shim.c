/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <signal.h>
#include <sys/resource.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "exit-status.h"
#include "parse-util.h"
#include "profile.h"
#include "relay.h"
#include "log.h"
#include "network-mode.h"
#include "sandbox-check.h"
#include "shim-env.h"
#include "signal-util.h"
#include "strv.h"
#include "supervise.h"

typedef struct ShimArgs {
        const char *role;
        NetworkMode mode;
        usec_t timeout;
        usec_t stop_grace;
        char **setenv;
        char **argv;
        const char *unconfigured;
        const char *refuse;
        char **expect_mounts;   /* "Key=SOURCE:TARGET" */
        uint16_t loopback_port; /* daemon-only: relay 127.0.0.1:port to the broker socket */
} ShimArgs;

static int parse_args(int argc, char *argv[], ShimArgs *a) {
        enum { ARG_ROLE = 0x100, ARG_NETWORK, ARG_TIMEOUT, ARG_STOP_GRACE, ARG_SETENV, ARG_UNCONFIGURED, ARG_REFUSE, ARG_EXPECT_MOUNT, ARG_LOOPBACK_PORT };
        static const struct option options[] = {
                { "role",         required_argument, NULL, ARG_ROLE },
                { "network",      required_argument, NULL, ARG_NETWORK },
                { "timeout",      required_argument, NULL, ARG_TIMEOUT },
                { "stop-grace",   required_argument, NULL, ARG_STOP_GRACE },
                { "setenv",       required_argument, NULL, ARG_SETENV },
                { "unconfigured", required_argument, NULL, ARG_UNCONFIGURED },
                { "refuse",       required_argument, NULL, ARG_REFUSE },
                { "expect-mount", required_argument, NULL, ARG_EXPECT_MOUNT },
                { "loopback-port", required_argument, NULL, ARG_LOOPBACK_PORT },
                { "version",      no_argument,       NULL, 'V' },
                { "help",         no_argument,       NULL, 'h' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "+", options, NULL)) >= 0)
                switch (c) {
                case ARG_ROLE:
                        a->role = optarg;
                        break;
                case ARG_NETWORK:
                        a->mode = network_mode_from_string(optarg);
                        if (a->mode < 0)
                                return log_error_errno(EINVAL, "Invalid --network=%s.", optarg);
                        break;
                case ARG_TIMEOUT:
                        if (parse_timespan(optarg, &a->timeout) < 0)
                                return log_error_errno(EINVAL, "Invalid --timeout=%s.", optarg);
                        break;
                case ARG_STOP_GRACE:
                        if (parse_timespan(optarg, &a->stop_grace) < 0)
                                return log_error_errno(EINVAL, "Invalid --stop-grace=%s.", optarg);
                        break;
                case ARG_SETENV:
                        if (!strchr(optarg, '=') || strv_extend(&a->setenv, optarg) < 0)
                                return log_error_errno(EINVAL, "Invalid --setenv=%s.", optarg);
                        break;
                case ARG_LOOPBACK_PORT:
                        if (parse_port(optarg, &a->loopback_port) < 0)
                                return log_error_errno(EINVAL, "Invalid --loopback-port=%s.", optarg);
                        break;
                case ARG_UNCONFIGURED:
                        a->unconfigured = optarg;
                        break;
                case ARG_REFUSE:
                        a->refuse = optarg;
                        break;
                case ARG_EXPECT_MOUNT: {
                        const char *eq = strchr(optarg, '=');
                        if (!eq || !strchr(eq, ':') || strv_extend(&a->expect_mounts, optarg) < 0)
                                return log_error_errno(EINVAL, "Invalid --expect-mount=%s.", optarg);
                        break;
                }
                case 'V':
                        puts("cloister-shim " PACKAGE_VERSION);
                        exit(0);
                case 'h':
                        printf("%s --role=NAME --network=MODE [--timeout=SPAN] [--stop-grace=SPAN]\n"
                               "        [--setenv=NAME=VALUE…] [--expect-mount=KEY=SOURCE:TARGET…] -- PROGRAM [ARGS…]\n\n"
                               "The main process of an agent@ unit: checks its own sandbox, then runs and\n"
                               "supervises the agent. See cloister-shim(8).\n", program_invocation_short_name);
                        exit(0);
                default:
                        return -EINVAL;
                }

        if (a->unconfigured || a->refuse)
                return 0;
        if (!a->role || a->mode < 0)
                return log_error_errno(EINVAL, "--role= and --network= are required.");
        if (optind >= argc || argv[optind][0] != '/')
                return log_error_errno(EINVAL, "Expected \"-- /absolute/program [ARGS…]\".");
        a->argv = argv + optind;
        return 0;
}

/* daemon-only (cloister.role(5), NETWORK MODES; cloister-shim(8), ENVIRONMENT): 127.0.0.1:port in the sandbox's own network namespace, relayed to
 * the broker socket bound in read-only. Listening before the agent starts, so its first
 * connection cannot race the relay. */
static struct rlimit saved_nofile = { RLIM_INFINITY, RLIM_INFINITY };

static int broker_relay_start(uint16_t port, Relay **ret) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        int one = 1, r;

        if (fd < 0)
                return log_error_errno(errno, "Cannot create the broker relay socket: %m");
        /* supervise() gives the agent back the soft limit it was started with */
        relay_raise_nofile(&saved_nofile);
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, SOMAXCONN) < 0)
                return log_error_errno(errno, "Cannot listen on 127.0.0.1:%u for the broker relay: %m", (unsigned) port);
        r = sd_event_default(&e);
        if (r < 0)
                return log_error_errno(r, "Cannot start the broker relay: %m");
        r = relay_new(e, fd, SANDBOX_BROKER_SOCKET, ret);
        if (r < 0)
                return log_error_errno(r, "Cannot start the broker relay: %m");
        TAKE_FD(fd); /* the relay's event source uses it for the shim's lifetime */
        return 0;
}

static int shim_run(const ShimArgs *a) {
        _cleanup_strv_free_ char **env = NULL;
        Relay *relay = NULL;
        SuperviseOptions o;
        int r;

        if (a->unconfigured) {
                log_error("agent@%s: no role \"%s\" is configured: there is no roles/%s.role, or cloister-generator refused it (see \"journalctl -k -g cloister-generator\"). Refusing to start.",
                          a->unconfigured, a->unconfigured, a->unconfigured);
                return CLOISTER_EXIT_REFUSED;
        }
        if (a->refuse) {
                log_error("agent@%s: refusing to start: %s.", strempty(a->role), a->refuse);
                return CLOISTER_EXIT_REFUSED;
        }

        r = sandbox_check(a->mode);
        if (r >= 0)
                r += sandbox_check_mounts(a->role, a->expect_mounts);
        if (r != 0) {
                log_error("agent@%s: the sandbox is not closed as Network=%s requires; refusing to start the agent.",
                          a->role, network_mode_to_string(a->mode));
                return CLOISTER_EXIT_REFUSED;
        }

        r = shim_environment(a->role, a->mode, a->setenv, &env);
        if (r < 0)
                return CLOISTER_EXIT_REFUSED;

        if (a->loopback_port > 0) {
                r = broker_relay_start(a->loopback_port, &relay);
                if (r < 0)
                        return CLOISTER_EXIT_REFUSED;
        }

        o = (SuperviseOptions) { .argv = a->argv, .envp = env, .timeout = a->timeout, .stop_grace = a->stop_grace,
                                 .nofile = saved_nofile };
        r = supervise(&o);
        relay_free(relay);
        return r;
}

int main(int argc, char *argv[]) {
        ShimArgs a = { .mode = _NETWORK_MODE_UNSET, .stop_grace = 10 * USEC_PER_SEC };
        int r;

        log_set_prefix("cloister-shim");
        r = parse_args(argc, argv, &a);
        if (r < 0)
                return CLOISTER_EXIT_REFUSED;
        r = shim_run(&a);
        strv_free(a.setenv);
        strv_free(a.expect_mounts);
        if (r >= SUPERVISE_SIGNALED) {
                /* The agent died of a signal: die of the same one, so systemd sees it. */
                int sig = r - SUPERVISE_SIGNALED;
                struct sigaction sa = { .sa_handler = SIG_DFL };

                sigaction(sig, &sa, NULL);
                (void) sigprocmask_many(SIG_UNBLOCK, NULL, sig, -1);
                raise(sig);
                return 128 + sig;
        }
        return r;
}
