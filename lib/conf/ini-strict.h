/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>
#include "macro.h"

/* Called once per "[Section]" line with key == value == NULL, then once per assignment.
 * Returns 0 or a negative errno after logging "path:line: …" itself. */
typedef int (*ini_strict_handler)(void *userdata, const char *path, unsigned line,
                                  const char *section, const char *key, const char *value);

/* Parses `f` with inih's ini_parse_stream() through a reader that refuses every line inih
 * would not read literally (too long for its buffer, " ;" inline comments, indented
 * continuation lines, a byte-order mark, control characters, "Key:Value" syntax).
 * Returns 0, or a negative errno once any line or handler call failed; every error has
 * been logged with path:line. */
int ini_strict_parse(const char *path, FILE *f, ini_strict_handler handler, void *userdata);

/* The longest line (without its newline) that inih reads in one piece here. */
size_t ini_strict_max_line(void);
