/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "macro.h"
#include "utf8.h"

int utf8_decode(const unsigned char *s, size_t n, uint32_t *ret, size_t *ret_len) {
        /* RFC 3629's table of well-formed sequences, by lead byte */
        static const struct { unsigned char lead_min, lead_max, second_min, second_max; size_t len; } forms[] = {
                { 0xc2, 0xdf, 0x80, 0xbf, 2 },
                { 0xe0, 0xe0, 0xa0, 0xbf, 3 },  /* no overlong form */
                { 0xe1, 0xec, 0x80, 0xbf, 3 },
                { 0xed, 0xed, 0x80, 0x9f, 3 },  /* no surrogate */
                { 0xee, 0xef, 0x80, 0xbf, 3 },
                { 0xf0, 0xf0, 0x90, 0xbf, 4 },  /* no overlong form */
                { 0xf1, 0xf3, 0x80, 0xbf, 4 },
                { 0xf4, 0xf4, 0x80, 0x8f, 4 },  /* nothing above U+10FFFF */
        };

        if (n == 0)
                return -EBADMSG;
        for (size_t f = 0; f < ELEMENTSOF(forms); f++) {
                uint32_t cp;

                if (s[0] < forms[f].lead_min || s[0] > forms[f].lead_max)
                        continue;
                if (n < forms[f].len || s[1] < forms[f].second_min || s[1] > forms[f].second_max)
                        return -EBADMSG;
                cp = s[0] & (0x7f >> forms[f].len);
                for (size_t i = 1; i < forms[f].len; i++) {
                        if ((s[i] & 0xc0) != 0x80)
                                return -EBADMSG;
                        cp = cp << 6 | (s[i] & 0x3f);
                }
                *ret = cp;
                *ret_len = forms[f].len;
                return 0;
        }
        return -EBADMSG;
}
