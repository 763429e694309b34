/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "network-mode.h"

/* cloisterctl run's own options, parsed with the others by main() (one option table, as
 * systemctl has) and refused with any other verb. */
typedef struct RunOptions {
        const char *role;
        const char *input;
        const char *output;
        uint64_t timeout;       /* usec; UNSET_U64: the role's */
        NetworkMode network;    /* _NETWORK_MODE_UNSET: the role's */
        bool wait, pipe, quiet;
        const char *first;      /* the first run option given, for "applies only to run" */
} RunOptions;

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
