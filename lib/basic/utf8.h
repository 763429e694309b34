/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The code point of the UTF-8 character at s[0..n) and its length, or -EBADMSG for a byte
 * sequence that is not one (overlong, a surrogate, above U+10FFFF, cut short, n == 0). */
int utf8_decode(const unsigned char *s, size_t n, uint32_t *ret, size_t *ret_len);
