/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "strv.h"

/* Splits a command line with systemd-style quoting: words separated by blanks, "…" and '…'
 * group, backslash escapes \\ \" \' \n \t \r \s \xNN. Nothing is expanded ($VAR and %
 * specifiers stay literal). Returns 0, or -EINVAL with *ret_reason set. */
int cmdline_split(const char *line, char ***ret_argv, const char **ret_reason);

/* Quotes one word for an Exec*= line of a unit file so that systemd reads back exactly
 * `word`: double quotes, C escapes, and "%%"/"$$" so no specifier or variable expands. */
char *unit_exec_quote(const char *word);

/* The same for one Environment= assignment, where "$" is literal already. */
char *unit_env_quote(const char *assignment);

/* Escapes a free-text value (Description=) for a unit-file setting where % specifiers
 * expand ("%" → "%%"); a trailing odd run of backslashes, which systemd would read as a
 * continuation onto the next line, gets one more. */
char *unit_specifier_escape(const char *s);

/* True if a line ending in `v` continues onto the next one in systemd's unit syntax (it
 * ends in an odd number of backslashes). */
bool unit_value_continues(const char *v);
