/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: header values in both directions (cloister-broker(8)). The first byte picks the
 * direction. A caller's value passes only if it is an RFC 9110 field value (no CR, LF, NUL or
 * other control but HTAB, no DEL), and every such value passes; then "Name: value" CRLF, as
 * curl writes it, is exactly one header line on the upstream's wire. An upstream's answer
 * line passes only if the same holds and it is not a folded continuation line. */
#include "fuzz-util.h"
#include "header-filter.h"

static bool has_control(const uint8_t *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                if ((v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
                        return true;
        return false;
}

/* The bytes a value becomes on the wire hold one line ending, the last two bytes. */
static void check_one_line(const uint8_t *v, size_t n) {
        _cleanup_free_ char *line = malloc(n + sizeof "User-Agent: \r\n");
        size_t l = 0, endings = 0;

        fuzz_assert(line, "out of memory");
        memcpy(line, "User-Agent: ", 12);
        memcpy(line + 12, v, n);
        memcpy(line + 12 + n, "\r\n", 2);
        l = n + 14;
        for (size_t i = 0; i < l; i++)
                endings += line[i] == '\r' || line[i] == '\n' || line[i] == 0;
        fuzz_assert(endings == 2, "a value passed that makes %zu line breaks", endings - 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        bool response;

        if (size < 1)
                return 0;
        response = data[0] & 1;
        data++, size--;

        if (!response) {
                bool valid = header_value_valid((const char *) data, size);
                fuzz_assert(valid == !has_control(data, size), "value refused or passed wrongly (valid=%d)", valid);
                if (valid)
                        check_one_line(data, size);
        } else {
                bool valid = header_response_line_valid((const char *) data, size);
                bool folded = size > 0 && (data[0] == ' ' || data[0] == '\t');
                fuzz_assert(valid == (!has_control(data, size) && !folded), "answer line refused or passed wrongly (valid=%d)", valid);
        }
        return 0;
}
