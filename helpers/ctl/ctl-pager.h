/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* Output conventions shared with systemctl, implemented here in a few lines of our own. */

/* Colors: $SYSTEMD_COLORS (a boolean, or "16"/"256"/"24bit" for on) decides if set; else
 * none when $NO_COLOR is set and not empty, $TERM is "dumb" or stdout is not a terminal. */
bool ctl_colors_enabled(void);

/* If stdout is a terminal, pipe it into $SYSTEMD_PAGER, else $PAGER, else less, else more
 * (none if the variable is empty or "cat"), with $LESS set to $SYSTEMD_LESS or "FRSXMK".
 * Returns 1 if a pager was started, 0 if not, negative errno on failure (output then goes
 * to the terminal directly). */
int ctl_pager_open(void);

/* Flushes and closes our end of the pipe and waits for the pager to exit. No-op without one. */
void ctl_pager_close(void);
