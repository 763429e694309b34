/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "generator.h"
#include "log.h"

static void setup_logging(bool generator_mode) {
        const char *t = getenv("SYSTEMD_LOG_TARGET");

        log_set_prefix("cloister-generator");
        /* As a generator, stdout goes nowhere useful and stderr may not either: use kmsg. */
        if (generator_mode && !(t && (streq(t, "console") || streq(t, "stderr"))))
                log_set_target(LOG_TARGET_KMSG);
}

int main(int argc, char *argv[]) {
        const char *dirs[3] = {};

        if (argc == 2 && streq(argv[1], "--dry-run")) {
                setup_logging(false);
                return generator_run(dirs) == 0 ? 0 : 1;
        }
        if (argc == 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
                printf("%s NORMAL-DIR [EARLY-DIR LATE-DIR]\n%s --dry-run | --help | --version\n\n"
                       "Generates agent@<role>.service drop-ins from cloister role files and the\n"
                       "sidecar@<name>.socket/.service and sidecar-runtime@<name>.service units of\n"
                       "sidecar files.\n"
                       "See cloister-generator(8).\n", argv[0], argv[0]);
                return 0;
        }
        if (argc == 2 && streq(argv[1], "--version")) {
                printf("cloister-generator %s\n", PACKAGE_VERSION);
                return 0;
        }
        /* systemd passes three directories; one is accepted for debugging (all three the
         * same, as systemd's own generators do). Anything starting with "-" is an option we
         * do not know, never a directory. */
        for (int i = 1; i < argc; i++)
                if (argv[i][0] == '-') {
                        fprintf(stderr, "cloister-generator: unknown option \"%s\"; see --help.\n", argv[i]);
                        return 1;
                }
        if (argc != 2 && argc != 4) {
                fprintf(stderr, "cloister-generator: expected one or three directories, --dry-run, --help or --version.\n");
                return 1;
        }
        setup_logging(true);
        dirs[0] = argv[1];
        dirs[1] = argc == 4 ? argv[2] : NULL;
        dirs[2] = argc == 4 ? argv[3] : NULL;
        return generator_run(dirs) == 0 ? 0 : 1;
}
