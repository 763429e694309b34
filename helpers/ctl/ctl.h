/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "run-role.h" /* RunOptions: cloisterctl run's own options, parsed with the others by main() */

/* The options of cloisterctl, parsed once by main() and handed to every verb. */
typedef struct CtlOptions {
        bool json;          /* --json: machine-readable output (json-c) */
        bool no_pager;      /* --no-pager: never start a pager */
        const char *root;   /* --root=DIR: read configuration and units below DIR */
        bool tty;           /* stdout is a terminal (or --legend): tables get a header and alignment */
        bool color;         /* ANSI colors: $SYSTEMD_COLORS, $NO_COLOR, $TERM, stdout a terminal */
        RunOptions run;
} CtlOptions;

/* Each verb gets its positional arguments (NULL-terminated, never options: main() parsed
 * those) and returns the process exit status. */
enum {
        CTL_EXIT_OK = 0,
        CTL_EXIT_FAILURE = 1,
        CTL_EXIT_USAGE = 2,
};

int verb_verify(char **args, const CtlOptions *o);
int verb_cat(char **args, const CtlOptions *o);
int verb_list(char **args, const CtlOptions *o);
int verb_doctor(char **args, const CtlOptions *o);

void help_verify(void);
void help_cat(void);
void help_list(void);
void help_doctor(void);
