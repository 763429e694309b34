/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>

#include "ctl-root.h"
#include "ctl-run.h"
#include "ctl.h"
#include "log.h"

typedef struct Verb {
        const char *name;
        int (*run)(int argc, char *argv[], const CtlOptions *o);
} Verb;

static const Verb verbs[] = {
        { "verify", verb_verify },
        { "cat",    verb_cat    },
        { "list",   verb_list   },
        { "doctor", verb_doctor },
        { "run",    verb_run    },
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
               "Options:\n"
               "  -h --help               Show this help\n"
               "     --version            Show the version\n"
               "     --json               Print machine-readable JSON\n"
               "     --root=DIR           Read configuration and units below DIR\n"
               "     --no-pager           Accepted; cloisterctl never pages\n"
               "     --no-legend          Do not print table headers\n\n"
               "See cloisterctl(1).\n");
}

/* Global options stop at the verb ("+"), so each verb parses the rest itself. */
static int parse_global(int argc, char *argv[], CtlOptions *o, bool *legend_set, bool *legend) {
        enum { ARG_VERSION = 0x100, ARG_JSON, ARG_ROOT, ARG_NO_PAGER, ARG_NO_LEGEND, ARG_LEGEND };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h'           },
                { "version",   no_argument,       NULL, ARG_VERSION   },
                { "json",      no_argument,       NULL, ARG_JSON      },
                { "root",      required_argument, NULL, ARG_ROOT      },
                { "no-pager",  no_argument,       NULL, ARG_NO_PAGER  },
                { "no-legend", no_argument,       NULL, ARG_NO_LEGEND },
                { "legend",    no_argument,       NULL, ARG_LEGEND    },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("cloisterctl %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_JSON:
                        o->json = true;
                        break;
                case ARG_ROOT:
                        if (isempty(optarg) || optarg[0] != '/') {
                                log_error("--root= needs an absolute directory, got \"%s\".", optarg);
                                return -EINVAL;
                        }
                        o->root = optarg;
                        break;
                case ARG_NO_PAGER:
                        o->no_pager = true;
                        break;
                case ARG_NO_LEGEND:
                case ARG_LEGEND:
                        *legend_set = true;
                        *legend = c == ARG_LEGEND;
                        break;
                default:
                        return -EINVAL;
                }
        return 1;
}

static int dispatch(int argc, char *argv[], const CtlOptions *o) {
        if (optind >= argc) {
                log_error("Missing command; see cloisterctl --help.");
                return CTL_EXIT_USAGE;
        }
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, argv[optind])) {
                        char **verb_argv = argv + optind;
                        int verb_argc = argc - optind;
                        optind = 0; /* getopt_long re-initialises for the verb's own options */
                        return verbs[i].run(verb_argc, verb_argv, o);
                }
        log_error("Unknown command \"%s\"; see cloisterctl --help.", argv[optind]);
        return CTL_EXIT_USAGE;
}

int main(int argc, char *argv[]) {
        CtlOptions o = { .tty = isatty(STDOUT_FILENO) };
        bool legend_set = false, legend = false;
        int r;

        /* no log prefix: verify prints "file:line: key: reason" as the generator does */
        r = parse_global(argc, argv, &o, &legend_set, &legend);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : CTL_EXIT_OK;
        if (legend_set)
                o.tty = legend;
        r = ctl_root_apply(o.root);
        if (r < 0)
                return CTL_EXIT_FAILURE;
        return dispatch(argc, argv, &o);
}
