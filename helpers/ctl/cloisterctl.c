/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>

#include "conf-parser.h"
#include "ctl-pager.h"
#include "ctl-root.h"
#include "ctl-run.h"
#include "ctl.h"
#include "log.h"
#include "parse-util.h"

typedef struct Verb {
        const char *name;
        int (*run)(char **args, const CtlOptions *o);
        void (*help)(void);
        bool pager;             /* long output: paged as systemctl pages it */
} Verb;

static const Verb verbs[] = {
        { "verify", verb_verify, help_verify, true  },
        { "cat",    verb_cat,    help_cat,    true  },
        { "list",   verb_list,   help_list,   true  },
        { "doctor", verb_doctor, help_doctor, true  },
        { "run",    verb_run,    help_run,    false },
};

static void help(void) {
        printf("cloisterctl [OPTIONS...] COMMAND ...\n\n"
               "Inspect and run cloister agents.\n\n"
               "Commands:\n"
               "  verify [FILE|NAME...]   Check roles, projects and cloister.conf\n"
               "  cat ROLE                Show the unit text systemd sees for agent@ROLE\n"
               "  list                    List roles, sidecars and projects\n"
               "  doctor                  Diagnose every role and project\n"
               "  run [OPTIONS] -- CMD... Run CMD in a sealed transient unit\n\n"
               "Options (before or after the command):\n"
               "  -h --help               Show this help (after a command: its help)\n"
               "     --version            Show the version\n"
               "     --json               Print machine-readable JSON (see cloisterctl(1))\n"
               "     --root=DIR           Read configuration and units below DIR\n"
               "     --no-pager           Do not pipe output into a pager\n"
               "     --no-legend          Do not print table headers\n"
               "     --legend             Print table headers even when piped\n\n"
               "See cloisterctl(1).\n");
}

enum {
        ARG_VERSION = 0x100, ARG_JSON, ARG_ROOT, ARG_NO_PAGER, ARG_NO_LEGEND, ARG_LEGEND,
        ARG_ROLE, ARG_INPUT, ARG_OUTPUT, ARG_TIMEOUT, ARG_NETWORK, ARG_WAIT, ARG_PIPE,
};

static const struct option options[] = {
        { "help",      no_argument,       NULL, 'h'           },
        { "version",   no_argument,       NULL, ARG_VERSION   },
        { "json",      no_argument,       NULL, ARG_JSON      },
        { "root",      required_argument, NULL, ARG_ROOT      },
        { "no-pager",  no_argument,       NULL, ARG_NO_PAGER  },
        { "no-legend", no_argument,       NULL, ARG_NO_LEGEND },
        { "legend",    no_argument,       NULL, ARG_LEGEND    },
        /* run's */
        { "role",      required_argument, NULL, ARG_ROLE      },
        { "input",     required_argument, NULL, ARG_INPUT     },
        { "output",    required_argument, NULL, ARG_OUTPUT    },
        { "timeout",   required_argument, NULL, ARG_TIMEOUT   },
        { "network",   required_argument, NULL, ARG_NETWORK   },
        { "wait",      no_argument,       NULL, ARG_WAIT      },
        { "pipe",      no_argument,       NULL, ARG_PIPE      },
        { "quiet",     no_argument,       NULL, 'q'           },
        {}
};

typedef struct Parsed {
        bool help, version;
        int legend;             /* -1: unset */
} Parsed;

static int parse_run_option(int c, RunOptions *run) {
        switch (c) {
        case ARG_ROLE:
                if (!name_is_valid(optarg))
                        return log_error_errno(EINVAL, "--role=%s: not a role name (^[a-z0-9][a-z0-9_-]{0,62}$).", optarg);
                run->role = optarg;
                break;
        case ARG_INPUT:
                run->input = optarg;
                break;
        case ARG_OUTPUT:
                run->output = optarg;
                break;
        case ARG_TIMEOUT:
                if (parse_timespan(optarg, &run->timeout) < 0)
                        return log_error_errno(EINVAL, "--timeout=%s: not a time span.", optarg);
                break;
        case ARG_NETWORK:
                run->network = network_mode_from_string(optarg);
                if (!network_mode_is_sealed(run->network))
                        return log_error_errno(EINVAL, "--network=%s: a run narrows to none or daemon-only.", optarg);
                break;
        case ARG_WAIT:
                run->wait = true;
                break;
        case ARG_PIPE:
                run->pipe = true;
                break;
        case 'q':
                run->quiet = true;
                break;
        default:
                return -EINVAL;
        }
        if (!run->first)
                for (const struct option *p = options; p->name; p++)
                        if (p->val == c)
                                run->first = p->name;
        return 0;
}

/* One pass of getopt_long over argv: "+" stops at the first non-option (the verb, or run's
 * command); otherwise glibc permutes, and the positional arguments end up from optind on. */
static int parse(int argc, char *argv[], const char *optstring, CtlOptions *o, Parsed *p) {
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, optstring, options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        p->help = true;
                        break;
                case ARG_VERSION:
                        p->version = true;
                        break;
                case ARG_JSON:
                        o->json = true;
                        break;
                case ARG_ROOT:
                        if (isempty(optarg) || optarg[0] != '/')
                                return log_error_errno(EINVAL, "--root= needs an absolute directory, got \"%s\".", optarg);
                        o->root = optarg;
                        break;
                case ARG_NO_PAGER:
                        o->no_pager = true;
                        break;
                case ARG_NO_LEGEND:
                case ARG_LEGEND:
                        p->legend = c == ARG_LEGEND;
                        break;
                case '?':
                        return -EINVAL;
                default:
                        r = parse_run_option(c, &o->run);
                        if (r < 0)
                                return r;
                }
        return optind;
}

static const Verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

/* Global options before the verb, then the verb's arguments with options anywhere among
 * them (as systemctl), except run: its command starts at the first non-option or after
 * "--" and is passed on verbatim, so "run -- grep -q x" never sets --quiet. */
static int run(int argc, char *argv[]) {
        CtlOptions o = { .tty = isatty(STDOUT_FILENO), .color = ctl_colors_enabled(),
                         .run = { .timeout = UNSET_U64, .network = _NETWORK_MODE_UNSET } };
        Parsed p = { .legend = -1 };
        const Verb *verb = NULL;
        char **args;
        int k, r;

        k = parse(argc, argv, "+hq", &o, &p);
        if (k < 0)
                return CTL_EXIT_USAGE;
        if (k < argc) {
                verb = find_verb(argv[k]);
                if (!verb && !p.help && !p.version) {
                        log_error("Unknown command \"%s\"; see cloisterctl --help.", argv[k]);
                        return CTL_EXIT_USAGE;
                }
        }
        if (verb) {
                char **verb_argv = argv + k;
                int verb_argc = argc - k;

                r = parse(verb_argc, verb_argv, verb->run == verb_run ? "+hq" : "hq", &o, &p);
                if (r < 0)
                        return CTL_EXIT_USAGE;
                args = verb_argv + r;
        }
        if (p.version) {
                printf("cloisterctl %s\n", PACKAGE_VERSION);
                return CTL_EXIT_OK;
        }
        if (p.help) {
                if (verb)
                        verb->help();
                else
                        help();
                return CTL_EXIT_OK;
        }
        if (!verb) {
                log_error("Missing command; see cloisterctl --help.");
                return CTL_EXIT_USAGE;
        }
        if (o.run.first && verb->run != verb_run) {
                log_error("--%s applies only to run.", o.run.first);
                return CTL_EXIT_USAGE;
        }
        if (p.legend >= 0)
                o.tty = p.legend;
        if (ctl_root_apply(o.root) < 0)
                return CTL_EXIT_FAILURE;
        if (verb->pager && !o.no_pager)
                (void) ctl_pager_open();
        r = verb->run(args, &o);
        ctl_pager_close();
        return r;
}

int main(int argc, char *argv[]) {
        /* no log prefix: verify prints "file:line: key: reason" as the generator does */
        return run(argc, argv);
}
