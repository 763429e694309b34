/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* Global options of cloisterctl, parsed once by main() and handed to every verb. */
typedef struct CtlOptions {
        bool json;          /* --json: machine-readable output (json-c) */
        bool no_pager;      /* --no-pager: accepted for systemctl muscle memory; cloisterctl never pages */
        const char *root;   /* --root=DIR: read configuration and units below DIR */
        bool tty;           /* stdout is a terminal: tables get a header and alignment */
} CtlOptions;

/* Each verb: argv[0] is the verb name; the verb parses its own options with getopt_long
 * (after resetting optind). The return value is the process exit status. */
enum {
        CTL_EXIT_OK = 0,
        CTL_EXIT_FAILURE = 1,
        CTL_EXIT_USAGE = 2,
};

int verb_verify(int argc, char *argv[], const CtlOptions *o);
int verb_cat(int argc, char *argv[], const CtlOptions *o);
int verb_list(int argc, char *argv[], const CtlOptions *o);
int verb_doctor(int argc, char *argv[], const CtlOptions *o);
