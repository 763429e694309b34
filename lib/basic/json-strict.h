/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

/* One JSON value in s[0..n), parsed by json-c in strict mode with UTF-8 validation, and
 * nothing but whitespace after it; nesting deeper than `depth` is refused. 0 and the value
 * in *ret, -EBADMSG if the text is not exactly one valid JSON value, -ENOMEM. */
int json_parse_strict(const char *s, size_t n, int depth, json_object **ret);
